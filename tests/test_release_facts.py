"""Release facts (model/releases.py): the table itself, each fact's value per release against SPEC.md, and
a lint that keeps profile-name comparisons and name-keyed behaviour tables out of the oracle side."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from core.types import Errors, GroupState
from impl.profiles import PROFILES as IMPL_PROFILES
from model.releases import (FACTS, KNOWN, MODELLED, RELEASES, RUNNABLE, UnknownFactError, UnknownReleaseError, all_of,
                            everywhere, fact, get_fact, profiles_where, release, since, unless, version, when)
from properties.catalog import CATALOG

REPO = Path(__file__).resolve().parent.parent


# -- the release table ---------------------------------------------------------------------------------------
def test_releases_are_in_version_order_and_the_runnable_ones_are_impl_profiles() -> None:
    assert KNOWN == ("0.10.0", "2.4.1", "2.7.0", "3.9", "4.1")
    assert [version(n) for n in KNOWN] == sorted(version(n) for n in KNOWN)
    assert RUNNABLE == ("0.10.0", "2.4.1", "2.7.0", "3.9") == tuple(sorted(IMPL_PROFILES, key=version))
    assert [r.era for r in RELEASES] == ["E0", "E3", "E4", "E5", "4x"]   # SPEC.md §0 eras, SPEC-4x.md
    assert not release("4.1").runnable     # the world drives it; the catalog and the refinement do not judge it yet
    assert MODELLED == RUNNABLE + ("4.1",)  # ... but the model has its profile: graph, pinned counts, Z3 proofs


def test_version_reads_dotted_release_numbers() -> None:
    assert version("0.10.0") == (0, 10, 0) and version("3.9") == version("3.9.0") == (3, 9, 0)
    assert version("0.10.0") < version("0.10.1") < version("0.11.0") < version("2.4.1") < version("3.9")
    for bad in ("trunk", "3", "3.9-rc1", ""):
        with pytest.raises(UnknownReleaseError, match="cannot read a Kafka release"):
            version(bad)
    with pytest.raises(UnknownReleaseError, match=r"unknown release '2\.5'; kgc knows 0\.10\.0, 2\.4\.1"):
        release("2.5")


def test_since_compares_versions_not_names() -> None:
    assert since("2.2.0")("3.9") and not since("2.2.0")("0.10.0") and since("2.2.0")("2.4.1")
    assert since("3.9")("3.9.0") and since("3.9.0")("3.9") and not since("3.9.1")("3.9")
    assert since("2.6.1")("2.7.0") and not since("2.6.1")("2.6.0")
    with pytest.raises(UnknownReleaseError):
        since("two")


def test_predicates_and_profiles_where() -> None:
    assert profiles_where(when("delayed-sync")) == ("3.9",)
    assert profiles_where(unless("delayed-sync")) == ("0.10.0", "2.4.1", "2.7.0")
    assert profiles_where(everywhere) == RUNNABLE
    assert profiles_where(when("pending-members"), among=reversed(KNOWN)) == ("2.4.1", "2.7.0", "3.9", "4.1")
    assert profiles_where(all_of(when("pending-members"), unless("heartbeat-satisfied-flag")), among=KNOWN) \
        == ("2.4.1",)
    with pytest.raises(UnknownFactError, match="unknown release fact 'pending-member'"):
        when("pending-member")
    with pytest.raises(UnknownFactError, match="model/releases.py states"):
        fact("no-such-fact", "3.9")


def test_every_fact_cites_spec_and_names_a_readable_release() -> None:
    for f in FACTS.values():
        assert "SPEC.md §" in f.source, f.name
        assert re.match(r"^[a-z0-9]+(-[a-z0-9]+)+$", f.name) and f.claim.endswith("."), f.name
        version(f.since)
        assert get_fact(f.name) is f


# -- each fact on each known release, against SPEC.md -----------------------------------------------------------
#: fact -> (since, on 0.10.0, 2.4.1, 2.7.0, 3.9, 4.1, where SPEC.md / SPEC-4x.md says so). 2.4.1/2.7.0 follow
#: DESIGN.md §3's table; 4.1 has every earlier fact (a later one may refine it: sync-while-loading-load-in-progress
#: replaces loading-checked-first's SyncGroup answer) and the 4.x ones of SPEC-4x.md.
EXPECTED: dict[str, tuple[str, tuple[bool, bool, bool, bool], str]] = {
    "commit-is-liveness": ("0.10.0", (True, True, True, True, True), "§3.5 KAFKA-3470 (0.10.0)"),
    "empty-state": ("0.10.1", (False, True, True, True, True), "§1.1 Empty added 0.10.1, KAFKA-2720; §1.2 columns"),
    "rebalance-timeout": ("0.10.1", (False, True, True, True, True), "§4.9 0.10.1+ rebalanceTimeoutMs; 0.9 session"),
    "heartbeat-resets-in-preparing-rebalance": ("0.10.1", (False, True, True, True, True),
                                                "§3.3 0.9.0 vs 0.10.1 column"),
    "parked-sync-keeps-timer": ("0.10.1", (False, True, True, True, True), "§3.2 step 5 (2.4.0) parks only"),
    "initial-delayed-join": ("0.11.0", (False, True, True, True, True), "§4.5 KAFKA-4925, 0.11.0.0"),
    "empty-group-needs-protocols": ("1.0.0", (False, True, True, True, True), "§3.6 KAFKA-6005, 1.0.0"),
    "loading-checked-first": ("2.0.0", (False, True, True, True, True), "§3.0 before 2.0 the order was opposite"),
    "removal-completes-heartbeat": ("2.1.0", (False, True, True, True, True), "§4.4 step 1 [2.1.0+ KAFKA-7196]"),
    "new-member-timeout": ("2.1.1", (False, True, True, True, True), "§2 isNew 2.1.1/2.2.0 (KAFKA-7610)"),
    "pending-members": ("2.2.0", (False, True, True, True, True), "§4.7 KIP-394, 2.2.0"),
    "no-generation-is-minus-one": ("2.2.0", (False, True, True, True, True), "§3.1 'it was 0 before 2.2'"),
    "removal-answers-parked-join": ("2.2.0", (False, True, True, True, True),
                                    "§3.4 removeMemberAndUpdateGroup [2.2.0+]"),
    "dead-group-not-available": ("2.3.0", (False, True, True, True, True),
                                 "§3.0 KAFKA-8386 (2.3.0); ≤ 2.2 UNKNOWN_MEMBER_ID"),
    "heartbeat-op-looks-up-member": ("2.3.1", (False, True, True, True, True), "§2 note: KAFKA-8896 (2.3.1/2.4.0)"),
    "group-max-size": ("2.2.0", (False, True, True, True, True), "§0 group.max.size (2.2.0+), §3.1 J4 2.2–2.5"),
    "batch-leave-group": ("2.4.0", (False, True, True, True, True), "§3.4 2.4.0+ (LeaveGroup v3, KAFKA-8221)"),
    "new-member-checked-first": ("2.4.1", (False, True, True, True, True),
                                 "§2 table: 2.4.1 row (KAFKA-9232), 2.5.0+ row"),
    "missing-member-completes-heartbeat": ("2.5.0", (False, False, True, True, True),
                                           "§2 note: '2.5+: not found counts'"),
    "join-response-protocol-type": ("2.5.0", (False, False, True, True, True), "§3.1 'protocol type from 2.5'; §3.2 4"),
    "accept-joining-member": ("2.6.0", (False, False, True, True, True), "§3.1 J4 2.6.0+ (KAFKA-9885)"),
    "heartbeat-checks-member-first": ("2.3.0", (False, True, True, True, True),
                                      "§3.3 'In 0.9–2.2 the state was first'"),
    "commit-checks-member-first": ("2.4.0", (False, True, True, True, True), "§3.5 KAFKA-8487 moved it in 2.4.0"),
    "heartbeat-satisfied-flag": ("2.5.0", (False, False, True, True, True), "§2 predicates: 2.5.0+ KAFKA-9752"),
    "heartbeat-in-completing-rebalance": ("2.6.1", (False, False, True, True, True), "§3.3 2.6.1/2.7.0+ KAFKA-10134"),
    "delayed-sync": ("2.8.1", (False, False, False, True, True), "§4.8 KAFKA-12890; 2.8.1 and 3.0.0+"),
    "rejoin-updates-timeouts": ("3.3.2", (False, False, False, True, True),
                                "§2 sessionTimeoutMs 3.3.2/3.4.0 KAFKA-14009"),
    "static-membership": ("2.3.0", (False, True, True, True, True), "§2 groupInstanceId 2.3.0 (KIP-345)"),
    "static-rejoin-rebalances-in-completing-rebalance": ("2.5.0", (False, False, True, True, True),
                                                         "§3.1 J5a 4: CompletingRebalance 2.5.0+ (KAFKA-9801)"),
    "static-rejoin-persisted-in-stable": ("2.6.1", (False, False, True, True, True),
                                          "§3.1 J5a 4: Stable 2.6.1/2.7.0+ (KAFKA-10284)"),
    "validate-current-member": ("3.0.0", (False, False, False, True, True), "§3.1 J5b 4 and §3.4 tag it 3.x"),
    "static-rejoin-skips-assignment": ("3.2.0", (False, False, False, True, True),
                                       "§3.1 J5a 4 [3.2+, KIP-814], Corrections 1"),
    "group-remove-drops-static-mapping": ("2.8.0", (False, False, False, True, True),
                                          "§3.1 J4 silent; GroupCoordinator.scala 2.4.1/2.7.0, commit 6d411620ddb"),
    "group-remove-drops-pending": ("3.0.0", (False, False, False, True, True), "§3.1 J4 '(also clears pending)' [3.x]"),
    "client-join-group-v4": ("2.2.0", (False, True, True, True, True), "§7 MEMBER_ID_REQUIRED (KIP-394)"),
    "client-generation-guard": ("2.6.0", (False, False, True, True, True), "§7 2.6+ (KAFKA-9823)"),
    "client-keeps-member-id": ("3.2.0", (False, False, False, True, True), "§7 3.2+ (KAFKA-13419)"),
    "keyed-timers": ("4.0.0", (False, False, False, False, True), "SPEC-4x.md R1, R13"),
    "batched-log-writes": ("4.0.0", (False, False, False, False, True), "SPEC-4x.md R2, R5"),
    "write-timeout": ("4.0.0", (False, False, False, False, True), "SPEC-4x.md R2"),
    "answers-wait-for-commit": ("4.0.0", (False, False, False, False, True), "SPEC-4x.md R3 (corrected)"),
    "describe-reads-committed-creation": ("4.0.0", (False, False, False, False, True), "SPEC-4x.md R4, R16"),
    "sync-while-loading-load-in-progress": ("4.0.0", (False, False, False, False, True), "SPEC-4x.md R6"),
    "session-timeout-checked-before-partition": ("4.0.0", (False, False, False, False, True), "SPEC-4x.md R7"),
    "store-timeout-not-available": ("4.0.0", (False, False, False, False, True), "SPEC-4x.md R8"),
    "stable-sync-keeps-session-timer": ("4.0.0", (False, False, False, False, True), "SPEC-4x.md R9"),
    "max-size-refusal-skips-join-check": ("4.0.0", (False, False, False, False, True), "SPEC-4x.md R10"),
    "hash-order-choices": ("4.0.0", (False, False, False, False, True), "SPEC-4x.md R11"),
    "static-replacement-is-a-new-member": ("4.0.0", (False, False, False, False, True), "SPEC-4x.md R12"),
    "join-group-v0-v1-removed": ("4.0.0", (False, False, False, False, True), "SPEC-4x.md R14 (4.0.0)"),
    "join-group-v0-v1-restored": ("4.0.1", (False, False, False, False, True), "SPEC-4x.md R14 (KAFKA-19444)"),
    "commit-to-missing-group-not-found": ("4.0.0", (False, False, False, False, True), "SPEC-4x.md R15"),
    # found by the state refinement of the Java runtime (README "Kafka 4.x", phase C); not in SPEC-4x.md
    "new-member-added-in-initial-rebalance": ("4.0.0", (False, False, False, False, True),
                                              "GroupMetadataManager.java@4.1.1:6819-6822"),
    "expiry-completes-initial-join": ("4.0.0", (False, False, False, False, True),
                                      "GroupMetadataManager.java@4.1.1:6728-6732"),
    "pending-leave-rebalances": ("4.0.0", (False, False, False, False, True),
                                 "GroupMetadataManager.java@4.1.1:7898-7950"),
}


def test_the_expectations_cover_every_fact() -> None:
    assert sorted(EXPECTED) == sorted(FACTS)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fact_value_on_each_release(name: str) -> None:
    introduced, values, _spec = EXPECTED[name]
    assert FACTS[name].since == introduced
    assert tuple(fact(name, r) for r in KNOWN) == values


# -- the catalog reads facts ------------------------------------------------------------------------------------
def test_every_catalog_property_is_gated_by_a_release_predicate() -> None:
    for prop in CATALOG.values():
        assert prop.applies_when is not None, prop.name
        # both levels read their predicates over the modelled releases: the abstract rows judge the model, the
        # concrete ones 4.1's runtime too (through properties/observation_4x.py)
        among = MODELLED
        assert prop.applies_to == profiles_where(prop.applies_when, among=among), prop.name


def test_fact_gated_properties_keep_their_profiles() -> None:
    assert CATALOG["members-owing-a-sync-are-watched-by-a-delayed-sync"].applies_to == ("3.9", "4.1")
    assert CATALOG["model-no-pending-member-before-kip-394"].applies_to == ("0.10.0",)
    assert CATALOG["leader-is-a-member"].applies_to == ("0.10.0", "2.4.1", "2.7.0", "3.9", "4.1")
    # R10 keeps this one off 4.1 (finding max-size-refusal-leaves-the-join-waiting)
    assert CATALOG["delayed-join-completes-once-all-rejoined"].applies_to == ("0.10.0", "2.4.1", "2.7.0", "3.9")
    assert CATALOG["model-leader-exists-iff-a-member-exists"].applies_to == ("0.10.0", "2.4.1", "2.7.0", "3.9", "4.1")


# -- the lint: no profile names on the oracle side ----------------------------------------------------------------
#: the layers that must decide by release facts (tests and the example generator may name profiles)
ORACLE_LAYERS = ("properties", "harness", "model", "explore", "stateful_tests", "wire", "reports", "kgc")
#: files that may spell release numbers: the registry itself
REGISTRY = ("model/releases.py",)
SKIPPED_DIRS = ("reports/examples/", "reports/findings/")
RELEASE_LITERAL = re.compile(r"^\d+\.\d+(\.\d+)?$")
#: (file, literal) that look like release numbers but name something else: kgc's own version, and the
#: display names of the Java consumer generations (ClientVersion.name; which one a release gets is a fact)
NOT_PROFILES = frozenset({("kgc/cli.py", "0.1.0"), ("harness/client_versions.py", "0.10"),
                          ("harness/client_versions.py", "2.4"), ("harness/client_versions.py", "2.7")})


def _profile_expr(node: ast.AST) -> bool:
    """``profile``, ``obs.profile``, ``spec.profile``, ``world.profile.name``, ``profile_name`` …"""
    if isinstance(node, ast.Attribute) and node.attr == "name":
        node = node.value
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return "profile" in name


def _allowed_literal(node: ast.Constant, parents: dict[ast.AST, ast.AST]) -> bool:
    """A release number may name a *default* (a parameter default, a class-level ``profile = …``, an argparse
    ``default=``, a ``getattr`` fallback) — never a behaviour."""
    parent = parents.get(node)
    if isinstance(parent, ast.arguments):
        return True
    if isinstance(parent, ast.keyword) and parent.arg == "default":
        return True
    if isinstance(parent, (ast.Assign, ast.AnnAssign)) and isinstance(parents.get(parent), ast.ClassDef):
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        return all(isinstance(t, ast.Name) and t.id == "profile" for t in targets)
    return (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "getattr"
            and len(parent.args) == 3 and parent.args[2] is node)


def lint_source(source: str, rel: str = "") -> list[tuple[int, str]]:
    """(line, what) for every profile-name decision in ``source`` (the file ``rel``)."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and RELEASE_LITERAL.match(node.value)
                and (rel, node.value) not in NOT_PROFILES and not _allowed_literal(node, parents)):
            found.append((node.lineno, f"release name {node.value!r} (use a fact of model/releases.py)"))
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for op, a, b in zip(node.ops, operands[:-1], operands[1:], strict=True):
                if isinstance(op, (ast.Eq, ast.NotEq)) and (_profile_expr(a) or _profile_expr(b)) and not any(
                        isinstance(x, ast.Constant) and x.value is None for x in (a, b)):
                    found.append((node.lineno, "profile compared by name"))
                if isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) and any(
                        isinstance(x, ast.Tuple) and x.elts and all(isinstance(e, ast.Constant) for e in x.elts)
                        for x in (a, b)):
                    found.append((node.lineno, "hand-rolled version cut (use since() / a fact)"))
    return found


def _oracle_files() -> list[Path]:
    files = []
    for layer in ORACLE_LAYERS:
        for path in sorted((REPO / layer).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel in REGISTRY or rel.startswith(SKIPPED_DIRS):
                continue
            if layer == "stateful_tests" and path.name.startswith("test_"):
                continue
            files.append(path)
    return files


def test_no_profile_name_decisions_on_the_oracle_side() -> None:
    problems = [f"{p.relative_to(REPO)}:{line}: {what}"
                for p in _oracle_files()
                for line, what in lint_source(p.read_text(encoding="utf-8"), p.relative_to(REPO).as_posix())]
    assert problems == []


def test_the_lint_catches_each_way_back() -> None:
    bad = '''
if obs.profile == "3.9": pass
HEARTBEAT = {"0.10.0": 1, "3.9": 2}
@always("x", applies_to=("3.9",))
def f(): pass
excused = {p for p, profile in PAIRS if profile == spec.profile}
if world.profile.name != other: pass
if release < (2, 2): pass
'''
    assert sorted(line for line, _ in lint_source(bad)) == [2, 2, 3, 3, 4, 6, 7, 8]   # line 2: name and compare
    fine = '''
def run(profile: str = "3.9", *, other: str = "0.10.0"): pass
class Spec:
    profile: str = "3.9"
p.add_argument("--profile", default="3.9")
name = getattr(session, "profile", "3.9")
if profile is None or args.profile == None: pass
if fact("delayed-sync", obs.profile): pass
'''
    assert lint_source(fine) == []
    assert len(_oracle_files()) > 50 and REPO / "properties" / "concrete_steps.py" in _oracle_files()


# -- a known release is one derivation away from a model profile ---------------------------------------------------
def test_model_profiles_derive_for_the_known_releases_as_design_section_3_says() -> None:
    """DESIGN.md §3 profile table: 2.4.1 has pending members, the new-member timeout, the initial delay, heartbeat
    in CompletingRebalance → REBALANCE_IN_PROGRESS without reset and no DelayedSync; 2.7.0 the heartbeatSatisfied
    flag and heartbeat in CompletingRebalance → NONE with reset, still no DelayedSync."""
    from model.profiles import MODEL_PROFILES, model_profile
    from model.state import COMPLETING, EMPTY, PREPARING, STABLE
    assert {name: model_profile(name) for name in MODELLED} == dict(MODEL_PROFILES)
    e3, e4 = model_profile("2.4.1"), model_profile("2.7.0")
    for p in (e3, e4):
        assert (p.created_state, p.pending_members, p.new_member_timeout, p.initial_delay, p.delayed_sync) == (
            EMPTY, True, True, True, False)
    assert not e3.satisfied_flag and e4.satisfied_flag
    assert e3.heartbeat_answers[COMPLETING] == "REBALANCE_IN_PROGRESS" and e3.heartbeat_resets == {STABLE, PREPARING}
    assert e4.heartbeat_answers[COMPLETING] == "NONE" and e4.heartbeat_resets == {STABLE, PREPARING, COMPLETING}


#: impl Profile switch -> the fact it states independently (those without a ModelProfile twin, which
#: tests/test_model_profiles.py already compares)
IMPL_TWINS: dict[str, tuple[str, bool]] = {   # field -> (fact, whether the field is the fact's negation)
    "update_timeouts_on_rejoin": ("rejoin-updates-timeouts", False),
    "remove_answers_parked_join": ("removal-answers-parked-join", False),
    "complete_removed_heartbeats": ("removal-completes-heartbeat", False),
    "heartbeat_state_check_first": ("heartbeat-checks-member-first", True),
    "commit_state_check_first": ("commit-checks-member-first", True),
    "not_coordinator_before_loading": ("loading-checked-first", True),
    "sync_checks_loading": ("loading-checked-first", False),
    "batch_leave": ("batch-leave-group", False),
    "dead_check_first": ("dead-group-not-available", False),
    "join_response_has_protocol_type": ("join-response-protocol-type", False),
}


@pytest.mark.parametrize("profile", RUNNABLE)
def test_facts_agree_with_the_independent_impl_profiles(profile: str) -> None:
    impl = IMPL_PROFILES[profile]
    for field_name, (name, negated) in IMPL_TWINS.items():
        assert getattr(impl, field_name) == (fact(name, profile) != negated), (field_name, name)
    assert (impl.rebalance_timeout_source == "rebalance") == fact("rebalance-timeout", profile)
    assert (impl.join_error_generation == -1) == fact("no-generation-is-minus-one", profile)
    assert (impl.dead_group_error.name == "COORDINATOR_NOT_AVAILABLE") == fact("dead-group-not-available", profile)
    # SPEC.md §2 table: the predicate is a fact pair (isNew first since 2.4.1, the flag since 2.5.0)
    assert impl.liveness == ("satisfied" if fact("heartbeat-satisfied-flag", profile) else
                             "new_member_deadline" if fact("new-member-checked-first", profile) else "deadline")
    assert impl.missing_member_heartbeat == ("complete" if fact("missing-member-completes-heartbeat", profile) else
                                             "idle" if fact("heartbeat-op-looks-up-member", profile) else "held")
    assert impl.max_group_size == ("accept_joining_member" if fact("accept-joining-member", profile) else
                                   "over_capacity" if fact("group-max-size", profile) else "off")
    assert impl.heartbeat_answers[GroupState.COMPLETING_REBALANCE] == (
        (Errors.NONE, True) if fact("heartbeat-in-completing-rebalance", profile)
        else (Errors.REBALANCE_IN_PROGRESS, False))
