"""Each output rule of the labelled refinement (harness/answers.py RULES) has a seeded mutant that only it catches
(impl/mutants/answer_bugs.py): on a served session that reaches the mutant's seam, the run passes the whole catalog
and every other rule with that rule switched off, and with it on refinement rejects the step, naming the rule.
tests/test_gate_mutants.py shows `kgc check` kills each one; bench/results/output-rules.json that the gate does not
with the rule off."""
from __future__ import annotations

from typing import Callable

import pytest

from harness.answers import RULES, rules_off
from impl.mutants import all_mutants, get_mutant
from kgc.runs import CheckedRun
from tests.test_live_session import _form_group
from tests.test_serve_static import _join, _static_group
from wire.session import LiveSession


def _restart_leader(s: LiveSession) -> None:
    joined = _static_group(s)
    leader = next(c for c, r in joined.items() if r.leader_id == r.member_id)
    _join(s, leader, f"i{leader}")


def _restart_follower_v9(s: LiveSession) -> None:
    joined = _static_group(s)
    follower = next(c for c, r in joined.items() if r.leader_id != r.member_id)
    _join(s, follower, f"i{follower}", support_skipping_assignment=True)


def _restart_a_parked_leader(s: LiveSession) -> None:
    """The leader rejoins a Stable group (→ PreparingRebalance, its JoinGroup parked), then restarts: the parked join
    of the old incarnation is fenced (SPEC.md §3.1 J5a step 4)."""
    joined = _static_group(s)
    leader = next(c for c, r in joined.items() if r.leader_id == r.member_id)
    _join(s, leader, f"i{leader}", member_id=joined[leader].member_id)
    _join(s, leader, f"i{leader}")


def _restart_preferring_another_protocol(s: LiveSession) -> None:
    """Three members offer (range, roundrobin) and elect range; one restarts preferring roundrobin: two votes stay
    with range, so the election keeps it and the restart is stored (SPEC.md §3.1 J5a step 4, §3.6)."""
    joined = _static_group(s, protocols=[("range", b"r"), ("roundrobin", b"x")])
    follower = next(c for c, r in joined.items() if r.leader_id != r.member_id)
    _join(s, follower, f"i{follower}", protocols=[("roundrobin", b"x"), ("range", b"r")])


def _batch_leave(s: LiveSession) -> None:
    joined = _static_group(s)
    s.submit(0, "LeaveGroup", group_id="g", members=[(joined[1].member_id, "i1"), ("nobody", None)])


def _form(s: LiveSession) -> None:
    if s.profile == "0.10.0":
        _form_group(s, v4=False)
    else:
        _static_group(s)


#: mutant -> (its rule, the session that reaches its seam)
CASES: dict[str, tuple[str, Callable[[LiveSession], None]]] = {
    "static-answer-names-the-new-leader-id": ("join-leader-id", _restart_leader),
    "fenced-join-without-its-member-id": ("join-member-id", _restart_a_parked_leader),
    "skip-assignment-for-every-static-member": ("join-skip-assignment", _restart_follower_v9),
    "static-restart-rebalances-on-own-choice": ("static-protocol-selection",
                                                            _restart_preferring_another_protocol),
    "member-list-without-instance-ids": ("join-member-list", _form),
    "join-answer-without-protocol-type": ("join-protocol", _form),
    "stable-sync-answers-no-assignment": ("sync-assignment", _form),
    "leave-error-folded-into-the-top-level": ("leave-member-errors", _batch_leave),
    "group-record-of-the-previous-generation": ("stored-record", _form),
}


def test_every_output_rule_has_a_mutant_and_every_answer_mutant_a_rule() -> None:
    answer_mutants = {m.name for m in all_mutants() if m.cls.__module__ == "impl.mutants.answer_bugs"}
    assert answer_mutants == set(CASES)
    assert {rule for rule, _ in CASES.values()} == set(RULES)


@pytest.mark.parametrize("mutant,profile", [(m, p) for m in sorted(CASES) for p in get_mutant(m).profiles])
def test_the_mutant_is_caught_by_its_rule_and_by_nothing_else(mutant: str, profile: str) -> None:
    rule, scenario = CASES[mutant]
    with rules_off(rule):
        quiet = LiveSession(profile, mutant=mutant, checked=CheckedRun)
        scenario(quiet)
        assert quiet.violations == [], [v.message[:300] for v in quiet.violations]
    caught = LiveSession(profile, mutant=mutant, checked=CheckedRun)
    scenario(caught)
    assert [v.property for v in caught.violations][:1] == ["refines-the-abstract-model"]
    assert f"rule {rule}" in caught.violations[0].message, caught.violations[0].message


@pytest.mark.parametrize("profile", ["0.10.0", "2.4.1", "2.7.0", "3.9"])
def test_the_reference_passes_every_rule_on_the_same_sessions(profile: str) -> None:
    for _, scenario in {(r, s) for r, s in CASES.values()}:
        if scenario is not _form and profile == "0.10.0":
            continue
        s = LiveSession(profile, checked=CheckedRun)
        scenario(s)
        assert s.violations == [], [v.message[:300] for v in s.violations]
