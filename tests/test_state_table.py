"""impl's valid-previous-states table, per profile, against the table in SPEC.md §1.2 itself.

The expected sets are parsed out of the document at test time (not copied here), so an edit of
either SPEC.md or impl/profiles.py that makes them disagree fails this file. Column
"Allowed previous states (0.10.1+)" is the 3.9 profile; column "0.9.0.0" is the 0.10.0 profile
(era E0, whose table SPEC.md §0 places with 0.9): "same" there means the 0.10.1+ set, and
"(state did not exist)" means the target is not a state of that release.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from impl import GroupState, IllegalStateError, get_profile
from impl.group import GroupMetadata

PROFILE_COLUMN = {"3.9": "Allowed previous states (0.10.1+)", "0.10.0": "0.9.0.0"}
#: names used in the table; AwaitingSync is CompletingRebalance's name until 1.0 (SPEC.md §1.1)
STATE_NAMES = {s.value: s for s in GroupState} | {"AwaitingSync": GroupState.COMPLETING_REBALANCE}


def _spec_path() -> Path:
    repo = Path(__file__).resolve().parents[1]
    # the clone sits beside shared/ (as CI places it); KGC_SPEC overrides
    candidates = [os.environ.get("KGC_SPEC", ""), str(repo.parent / "shared" / "SPEC.md"),
                  str(repo / "shared" / "SPEC.md")]
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    looked = [c for c in candidates if c]
    raise AssertionError(f"SPEC.md not found (looked at {looked}); set KGC_SPEC to its path.")


def _section_1_2_rows() -> tuple[list[str], list[list[str]]]:
    """Header cells and body rows of the first Markdown table under the '### 1.2' heading."""
    lines = _spec_path().read_text(encoding="utf-8").splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("### 1.2")), None)
    assert start is not None, "SPEC.md has no '### 1.2' section"
    table: list[list[str]] = []
    for line in lines[start + 1:]:
        if line.startswith("#"):
            break
        if line.startswith("|"):
            table.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif table:
            break
    assert len(table) >= 3, "no table found in SPEC.md §1.2"
    header, separator, *body = table
    assert set("".join(separator)) <= set("-: "), f"unexpected table separator {separator}"
    return header, body


def _parse_cell(cell: str) -> frozenset[GroupState] | None:
    """'{A, B} (note)' → {A, B}; '(state did not exist)' → None."""
    if "did not exist" in cell:
        return None
    match = re.search(r"\{([^}]*)\}", cell)
    assert match is not None, f"cannot read a state set from {cell!r}"
    names = [name.strip() for name in match.group(1).split(",") if name.strip()]
    unknown = [n for n in names if n not in STATE_NAMES]
    assert not unknown, f"unknown state names {unknown} in {cell!r}"
    return frozenset(STATE_NAMES[n] for n in names)


def spec_previous_states(profile: str) -> dict[GroupState, frozenset[GroupState]]:
    """SPEC.md §1.2 for the profile's release: target → allowed previous states (targets that exist only)."""
    header, body = _section_1_2_rows()
    base_col = header.index(PROFILE_COLUMN["3.9"])
    col = header.index(PROFILE_COLUMN[profile])
    table: dict[GroupState, frozenset[GroupState]] = {}
    for row in body:
        target = STATE_NAMES[row[0]]
        cell = row[col]
        allowed = _parse_cell(row[base_col]) if cell.strip().lower() == "same" else _parse_cell(cell)
        if allowed is not None:
            table[target] = allowed
    return table


def _group(profile: str, state: GroupState) -> GroupMetadata:
    group = GroupMetadata("g", get_profile(profile), incarnation=1, now_ms=0)
    group.state = state   # test set-up: the state table is tested in isolation from the handlers
    return group


PROFILE_NAMES = tuple(PROFILE_COLUMN)
GRID = [(p, src, dst) for p in PROFILE_NAMES for src in GroupState for dst in GroupState
        if src in spec_previous_states(p)]   # a source state must exist in the release


def test_spec_table_is_readable() -> None:
    """The parser reads what §1.2 plainly says (guards against a parser that returns nothing)."""
    modern, old = spec_previous_states("3.9"), spec_previous_states("0.10.0")
    assert set(modern) == set(GroupState)
    assert modern[GroupState.DEAD] == frozenset(GroupState)          # "self-loop allowed"
    assert GroupState.EMPTY not in old                                # "(state did not exist)"
    assert old[GroupState.STABLE] == modern[GroupState.STABLE]        # "same"
    assert GroupState.DEAD not in old[GroupState.DEAD]


@pytest.mark.parametrize("profile", PROFILE_NAMES)
def test_profile_table_equals_spec(profile: str) -> None:
    assert dict(get_profile(profile).previous_states) == spec_previous_states(profile)


@pytest.mark.parametrize("profile", PROFILE_NAMES)
def test_profile_states_are_the_release_states(profile: str) -> None:
    # the release's states are exactly the targets the column describes (0.9/0.10.0: no Empty)
    assert set(get_profile(profile).states) == set(spec_previous_states(profile))


@pytest.mark.parametrize("profile,source,target", GRID, ids=lambda v: getattr(v, "value", v))
def test_transition(profile: str, source: GroupState, target: GroupState) -> None:
    allowed = source in spec_previous_states(profile).get(target, frozenset())
    group = _group(profile, source)
    assert group.can_transition_to(target) is allowed
    if allowed:
        group.transition_to(target, now_ms=42)
        assert group.state is target
        assert group.state_timestamp_ms == 42     # transitionTo stamps currentStateTimestamp (§1.2)
    else:
        with pytest.raises(IllegalStateError):
            group.transition_to(target, now_ms=42)
        assert group.state is source
        assert group.state_timestamp_ms == 0


@pytest.mark.parametrize("profile,state", [(p, s) for p in PROFILE_NAMES for s in spec_previous_states(p)],
                         ids=lambda v: getattr(v, "value", v))
def test_can_rebalance_iff_previous_of_preparing_rebalance(profile: str, state: GroupState) -> None:
    # §1.2: canRebalance ⇔ current state ∈ PreparingRebalance's set
    expected = state in spec_previous_states(profile)[GroupState.PREPARING_REBALANCE]
    assert _group(profile, state).can_rebalance is expected


def test_can_rebalance_modern_set_is_the_documented_one() -> None:
    # §1.2: "i.e. Stable, CompletingRebalance or Empty (so maybe prepare rebalance is a no-op while
    # already PreparingRebalance or Dead)"
    rebalancing = {s for s in GroupState if _group("3.9", s).can_rebalance}
    assert rebalancing == {GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY}


@pytest.mark.parametrize("profile", PROFILE_NAMES)
def test_new_group_can_start_its_first_rebalance(profile: str) -> None:
    # §3.1 J3 creates GroupMetadata(Empty) (0.10.1+). In 0.9/0.10.0 Empty did not exist, and the first
    # member must be able to rebalance: the only state that can reach PreparingRebalance without a
    # rebalance having happened before is Stable (AwaitingSync itself needs PreparingRebalance first).
    expected = GroupState.EMPTY if profile == "3.9" else GroupState.STABLE
    group = GroupMetadata("g", get_profile(profile), incarnation=1)
    assert group.state is expected
    assert group.can_rebalance


@pytest.mark.parametrize("profile", PROFILE_NAMES)
def test_dead_is_terminal(profile: str) -> None:
    # §1.3 "Dead is terminal": Dead is in no previous-set except (0.10.1+) its own self-loop
    for target in spec_previous_states(profile):
        group = _group(profile, GroupState.DEAD)
        if target is GroupState.DEAD and profile == "3.9":
            group.transition_to(target, 1)
        else:
            with pytest.raises(IllegalStateError):
                group.transition_to(target, 1)
