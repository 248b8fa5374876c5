"""Every state and step property fails on a corrupted real observation, and holds on the original.

The observations come from the seed scenarios and witness scripts run under the Checker; a case picks the
first (before, step, after) where its corruption is meaningful, changes one thing, and expects a violation
whose witness names what is wrong. This shows each check *can* fail for the reason its claim gives,
independently of the mutants (tests/test_properties_mutants.py).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Callable

import pytest

from core.events import (GenerationStarted, HeartbeatCompletedAtBirth, HeartbeatScheduled, IllegalState, MemberLeaves,
                         MemberNotRejoined, OperationCompleted, RebalancePrepared, StepEvent, StoreCallbackIgnored,
                         first_of, of_kind)
from core.responses import Response
from core.trace import Step
from core.types import GroupState
from properties.catalog import CATALOG
from properties.observation import GroupObs, MemberObs, Observation, OpObs, delivered_key
from tests.property_runs import WITNESS_SCRIPTS, Triple, all_scenario_runs, run

E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)


@functools.cache
def triples(profile: str) -> tuple[Triple, ...]:
    out: list[Triple] = []
    for _name, driver in all_scenario_runs(profile):
        out.extend(driver.triples)
    for script in WITNESS_SCRIPTS.values():
        if profile in script.profiles:
            out.extend(run(script, profile).triples)
    return tuple(out)


# -- corruption helpers ----------------------------------------------------------------------------------
def with_group(obs: Observation, **changes: object) -> Observation:
    assert obs.group is not None
    g = replace(obs.group, **changes)
    return replace(obs, group=g, groups=tuple(g if x.incarnation == g.incarnation else x for x in obs.groups))


def with_member(obs: Observation, member_id: str, **changes: object) -> Observation:
    assert obs.group is not None
    members = tuple(replace(m, **changes) if m.member_id == member_id else m for m in obs.group.members)
    return with_group(obs, members=members)


def idle(g: GroupObs | None) -> MemberObs | None:
    return next((m for m in g.members if not m.awaiting), None) if g is not None else None


def has(kind: type[StepEvent], step: Step) -> bool:
    return any(isinstance(e, kind) for e in step.events)


def insert_after(step: Step, kind: type[StepEvent], event: StepEvent) -> Step:
    events = list(step.events)
    at = next(i for i, e in enumerate(events) if isinstance(e, kind))
    return replace(step, events=tuple(events[:at + 1] + [event] + events[at + 1:]))


def map_events(step: Step, kind: type[StepEvent], change: Callable[..., StepEvent]) -> Step:
    """The step with every event of type ``kind`` changed by ``change``."""
    return replace(step, events=tuple(change(e) if isinstance(e, kind) else e for e in step.events))


def map_responses(step: Step, select: Callable[[Response], bool], **changes: object) -> Step:
    """The step with ``changes`` made to every response ``select`` picks."""
    return replace(step, responses=tuple(replace(r, **changes) if select(r) else r for r in step.responses))


def scheduled(step: Step) -> str:
    """The member of the step's first DelayedHeartbeat reschedule."""
    found = first_of(step.events, HeartbeatScheduled)
    assert found is not None
    return found[1].member_id


def response_of(step: Step, api: str, error: str | None = None) -> Response | None:
    return next((r for r in step.responses if r.api == api and (error is None or r.error == error)), None)


def delivered(t: Triple, api: str) -> bool:
    key = delivered_key(t[1].action)
    req = t[0].request(key) if key else None
    return req is not None and req.api == api


def live_group(obs: Observation) -> GroupObs | None:
    return obs.group if obs.group is not None and obs.group.state is not D else None


@dataclass(frozen=True)
class Case:
    name: str
    profile: str
    select: Callable[[Triple], bool]
    corrupt: Callable[[Triple], Triple]
    key: str                            # a witness key the violation must show


def _a(f: Callable[[Observation], Observation]) -> Callable[[Triple], Triple]:
    """Corrupt the after-observation only."""
    return lambda t: (t[0], t[1], f(t[2]))


def _dup_op(obs: Observation, op: OpObs) -> Observation:
    return replace(obs, ops=obs.ops + (replace(op, seq=op.seq + 10**6),))


def _first_member(obs: Observation) -> str:
    assert obs.group is not None
    return obs.group.members[0].member_id


CASES: tuple[Case, ...] = (
    # -- always ------------------------------------------------------------------------------------------
    Case("awaiting-join-counter-matches-members", "3.9", lambda t: bool(live_group(t[2]) and t[2].group.members),
         _a(lambda o: with_group(o, num_members_awaiting_join=o.group.num_members_awaiting_join + 1)),
         "num_members_awaiting_join"),
    Case("supported-protocol-counts-match-members", "0.10.0", lambda t: bool(live_group(t[2]) and t[2].group.members),
         _a(lambda o: with_group(o, supported_protocols=(("range", 99),))), "supported_protocols"),
    Case("leader-is-a-member", "3.9", lambda t: bool(live_group(t[2]) and t[2].group.members),
         _a(lambda o: with_group(o, leader_id="ghost-1")), "leader_id"),
    Case("pending-members-are-not-members", "3.9", lambda t: bool(live_group(t[2]) and t[2].group.members),
         _a(lambda o: with_group(o, pending_members=frozenset({_first_member(o)}))), "pending_and_member"),
    Case("parked-join-only-in-preparing-rebalance", "0.10.0",
         lambda t: bool(t[2].group and t[2].group.state is PR and any(p.api == "JoinGroup" for p in t[2].parked)),
         _a(lambda o: with_group(o, state=CR)), "awaiting_join"),
    Case("parked-sync-only-in-completing-rebalance", "3.9",
         lambda t: bool(t[2].group and t[2].group.state is CR and any(p.api == "SyncGroup" for p in t[2].parked)),
         _a(lambda o: with_group(o, state=S)), "awaiting_sync"),
    Case("empty-group-has-no-members-and-no-protocol", "3.9", lambda t: bool(t[2].group and t[2].group.state is E),
         _a(lambda o: with_group(o, protocol_name="range")), "protocol"),
    Case("stable-or-completing-group-has-members-and-a-common-protocol", "0.10.0",
         lambda t: bool(t[2].group and t[2].group.state is S and t[2].group.members),
         _a(lambda o: with_group(o, protocol_name="roundrobin")), "common_protocols"),
    Case("idle-member-has-a-live-heartbeat-expiration", "0.10.0", lambda t: idle(live_group(t[2])) is not None,
         _a(lambda o: replace(o, ops=tuple(op for op in o.ops if op.kind != "DelayedHeartbeat"))),
         "live_heartbeat_deadlines"),
    Case("at-most-one-live-heartbeat-per-member", "3.9",
         lambda t: any(op.kind == "DelayedHeartbeat" and t[2].group and op.member_id in t[2].group.member_ids
                       for op in t[2].ops),
         _a(lambda o: _dup_op(o, next(op for op in o.ops if op.kind == "DelayedHeartbeat"
                                      and op.member_id in o.group.member_ids))), "live_heartbeats"),
    Case("one-delayed-join-per-group", "0.10.0", lambda t: any(op.kind == "DelayedJoin" for op in t[2].ops),
         _a(lambda o: _dup_op(o, next(op for op in o.ops if op.kind == "DelayedJoin"))), "live_delayed_joins"),
    Case("preparing-rebalance-has-a-live-delayed-join", "3.9", lambda t: bool(t[2].group and t[2].group.state is PR),
         _a(lambda o: replace(o, ops=tuple(op for op in o.ops if "Join" not in op.kind))), "live_delayed_joins"),
    Case("delayed-join-completes-once-all-rejoined", "3.9",
         lambda t: bool(t[2].group and t[2].group.state is PR and not t[2].group.pending_members
                        and any(op.kind == "DelayedJoin" for op in t[2].ops)),
         _a(lambda o: with_group(o, members=tuple(replace(m, awaiting_join=m.awaiting_join or (9, 9))
                                                  for m in o.group.members))), "all_rejoined"),
    Case("delayed-operation-completes-at-most-once", "0.10.0", lambda t: bool(t[2].ops),
         _a(lambda o: replace(o, ops=(replace(o.ops[0], complete_count=1),) + o.ops[1:])), "complete_count"),
    Case("parked-request-belongs-to-a-current-member", "3.9", lambda t: bool(t[2].parked),
         _a(lambda o: replace(o, parked=(replace(o.parked[0], in_table=False),) + o.parked[1:])),
         "holder_in_member_table"),
    Case("parked-response-is-not-yet-answered", "0.10.0", lambda t: bool(t[2].parked),
         _a(lambda o: replace(o, parked=(replace(o.parked[0], completions=1, done=True),) + o.parked[1:])),
         "completions"),
    Case("new-member-has-a-parked-join", "3.9", lambda t: idle(live_group(t[2])) is not None,
         _a(lambda o: with_member(o, idle(o.group).member_id, is_new=True)), "is_new"),  # type: ignore[union-attr]
    Case("members-owing-a-sync-are-watched-by-a-delayed-sync", "3.9",
         lambda t: bool(live_group(t[2]) and t[2].group.pending_sync_members),
         _a(lambda o: replace(o, ops=tuple(op for op in o.ops if op.kind != "DelayedSync"))), "live_delayed_syncs"),
    Case("dead-group-is-not-cached", "0.10.0", lambda t: t[2].group is not None,
         _a(lambda o: with_group(o, state=D)), "cached"),
    # a step property: the step's IllegalStateError (and the error log after it)
    Case("no-illegal-state-error", "3.9", lambda t: True,
         lambda t: (t[0], replace(t[1], events=t[1].events + (IllegalState("group g should be in one of [...]"),)),
                    replace(t[2], errors=1, last_error="7 group g should be in one of [...]")), "last_error"),
    # -- always_step --------------------------------------------------------------------------------------
    Case("delayed-join-completes-only-when-all-rejoined", "0.10.0",
         lambda t: any(e.kind == "DelayedJoin" and e.how == "condition" for _, e in of_kind(t[1].events,
                                                                                              OperationCompleted)),
         lambda t: (t[0], insert_after(t[1], OperationCompleted, MemberNotRejoined("z-9")), t[2]),
         "removed_for_not_rejoining"),
    Case("member-kept-alive-while-callback-pending", "3.9",
         lambda t: t[1].action.kind == "FireTimer" and any(
             op.seq == t[1].action.arg and op.kind == "DelayedHeartbeat" and t[0].group is not None
             and (m := t[0].group.member(op.member_id)) is not None and m.awaiting and not m.is_new
             for op in t[0].ops),
         lambda t: (t[0], t[1], with_group(t[2], members=tuple(
             m for m in t[2].group.members if m.member_id != t[0].op(t[1].action.arg).member_id))),  # type: ignore
         "removed"),
    Case("rebalance-timeout-is-the-maximum", "0.10.0",
         lambda t: any(e.op_kind == "DelayedJoin" for _, e in of_kind(t[1].events, RebalancePrepared)),
         lambda t: (t[0], map_events(t[1], RebalancePrepared, lambda e: replace(e, delay_ms=e.delay_ms + 1)), t[2]),
         "expected_ms"),
    Case("fresh-heartbeat-not-completed-by-its-own-watch", "3.9",
         lambda t: delivered(t, "Heartbeat") and has(HeartbeatScheduled, t[1])
         and all(not m.awaiting for g in (t[0].group, t[2].group) if g for m in g.members
                 if m.member_id == scheduled(t[1])),
         lambda t: (t[0], insert_after(t[1], HeartbeatScheduled, HeartbeatCompletedAtBirth(scheduled(t[1]))), t[2]),
         "awaiting_before"),
    Case("join-completion-removes-every-member-that-did-not-rejoin", "3.9",
         lambda t: bool((g := first_of(t[1].events, GenerationStarted)) and g[1].state == "CompletingRebalance"),
         lambda t: (t[0], t[1], with_group(t[2], members=t[2].group.members + (
             replace(t[2].group.members[0], member_id="z-9", awaiting_join=None),))),
         "members_without_join_response"),
    Case("join-response-reschedules-the-heartbeat", "0.10.0", lambda t: has(GenerationStarted, t[1]),
         lambda t: (t[0], replace(t[1], events=tuple(e for e in t[1].events if not isinstance(e, HeartbeatScheduled))),
                    t[2]),
         "rescheduled_deadline"),
    Case("initial-rebalance-waits-the-initial-delay", "3.9",
         lambda t: any(e.kind == "InitialDelayedJoin" for _, e in of_kind(t[1].events, OperationCompleted)),
         lambda t: (t[0], map_events(t[1], OperationCompleted, lambda e: replace(e, how="condition")), t[2]), "how"),
    Case("state-moves-only-along-spec-edges", "3.9",
         lambda t: ("g", "PreparingRebalance", "CompletingRebalance") in t[2].transitions,
         lambda t: (t[0], t[1], replace(t[2], transitions=tuple(
             (g, a, "Stable" if b == "CompletingRebalance" else b) for g, a, b in t[2].transitions))),
         "in_spec_table"),
    Case("generation-never-decreases-while-group-lives", "0.10.0",
         lambda t: bool(t[0].group and t[2].group and t[0].group.incarnation == t[2].group.incarnation
                        and t[0].group.generation_id > 0),
         lambda t: (t[0], t[1], with_group(t[2], generation_id=t[0].group.generation_id - 1)), "generation_after"),
    Case("each-new-generation-increments-the-generation-id", "3.9", lambda t: has(GenerationStarted, t[1]),
         lambda t: (t[0], t[1], with_group(t[2], generation_id=t[2].group.generation_id + 1)), "generation_events"),
    Case("each-request-is-answered-at-most-once", "0.10.0", lambda t: bool(t[1].responses),
         lambda t: (t[0], replace(t[1], responses=t[1].responses + t[1].responses[:1]), t[2]),
         "answered_twice_in_step"),
    Case("parked-request-is-answered-not-dropped", "3.9",
         lambda t: any(p.key not in t[2].parked_keys for p in t[0].parked) and not has(MemberLeaves, t[1]),
         lambda t: (t[0], replace(t[1], responses=()), t[2]), "still_parked"),
    Case("delivered-request-is-answered-or-parked-on-its-member", "0.10.0", lambda t: delivered(t, "Heartbeat"),
         lambda t: (t[0], replace(t[1], responses=()), t[2]), "parked_on"),
    Case("sync-in-preparing-rebalance-answers-rebalance-in-progress", "3.9",
         lambda t: delivered(t, "SyncGroup") and bool(response_of(t[1], "SyncGroup", "REBALANCE_IN_PROGRESS"))
         and t[0].group is not None and t[0].group.state is PR,
         lambda t: (t[0], map_responses(t[1], lambda r: r.error == "REBALANCE_IN_PROGRESS", error="NONE"), t[2]),
         "answer"),
    Case("heartbeat-answer-follows-the-state-table", "0.10.0",
         lambda t: delivered(t, "Heartbeat") and bool(response_of(t[1], "Heartbeat", "NONE")),
         lambda t: (t[0], map_responses(t[1], lambda r: r.error == "NONE", error="REBALANCE_IN_PROGRESS"), t[2]),
         "expected"),
    Case("commit-in-completing-rebalance-answers-rebalance-in-progress", "0.10.0",
         lambda t: delivered(t, "OffsetCommit") and bool(response_of(t[1], "OffsetCommit", "NONE")),
         lambda t: (with_group(t[0], state=CR), t[1], t[2]), "answer"),
    Case("join-response-carries-the-group-generation-and-leader", "3.9",
         lambda t: bool(response_of(t[1], "JoinGroup", "NONE")),
         lambda t: (t[0], map_responses(t[1], lambda r: r.api == "JoinGroup" and r.generation_id >= 0,
                                        generation_id=99), t[2]), "group_generation"),
    Case("only-the-leader-receives-the-member-list", "0.10.0",
         lambda t: any(r.members for r in t[1].responses),
         lambda t: (t[0], map_responses(t[1], lambda r: bool(r.members), members=()), t[2]), "member_list"),
    Case("store-callback-generation-guard", "3.9",
         lambda t: t[1].action.kind == "CompleteAppend" and has(StoreCallbackIgnored, t[1]),
         lambda t: (t[0], t[1], with_group(t[2], state=S)), "group_changed"),
    Case("unload-answers-every-parked-request-not-coordinator", "0.10.0",
         lambda t: t[1].action.kind == "UnloadGroup" and bool(t[0].parked),
         lambda t: (t[0], replace(t[1], responses=()), t[2]), "answer"),
    # -- static membership (properties/concrete_static.py; the static witness script of tests/property_runs.py) --
    Case("at-most-one-member-per-instance-id", "3.9", lambda t: len(_static_members(t[2])) >= 2,
         _a(lambda o: with_member(o, _static_members(o)[1].member_id,
                                  group_instance_id=_static_members(o)[0].group_instance_id)),
         "members_carrying_it"),
    Case("fenced-instance-id-never-succeeds", "3.9",   # a delivered request fenced (not a replacement's parked one)
         lambda t: any(r.error == "FENCED_INSTANCE_ID" and r.key == delivered_key(t[1].action) for r in t[1].responses),
         lambda t: (t[0], map_responses(t[1], lambda r: r.error == "FENCED_INSTANCE_ID", error="NONE"), t[2]),
         "instance_maps_to"),
    Case("static-member-survives-join-completion", "3.9",
         lambda t: has(GenerationStarted, t[1]) and any(m.awaiting_join is None for m in _static_members(t[0])),
         lambda t: (t[0], replace(t[1], events=t[1].events + (MemberNotRejoined(next(
             m.member_id for m in _static_members(t[0]) if m.awaiting_join is None)),)), t[2]), "instance_id"),
)


def _static_members(obs: Observation) -> list[MemberObs]:
    return [m for m in obs.group.members if m.group_instance_id is not None] if obs.group is not None else []


def _check(name: str, t: Triple) -> dict[str, object]:
    prop = CATALOG[name]
    if prop.kind == "always":
        return prop.explain(t[2])
    return prop.explain(*t)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.name}[{c.profile}]")
def test_corruption_is_reported_and_the_original_is_not(case: Case) -> None:
    prop = CATALOG[case.name]
    assert prop.applies(case.profile) and prop.kind in ("always", "always_step")
    chosen = next((t for t in triples(case.profile) if case.select(t) and not _check(case.name, t)), None)
    assert chosen is not None, f"no run of {case.profile} offers the situation {case.name} needs"
    witness = _check(case.name, case.corrupt(chosen))
    assert witness and case.key in witness, witness
    message = prop.check(case.corrupt(chosen)[2]) if prop.kind == "always" else prop.check(*case.corrupt(chosen))
    assert message is not None and message.startswith(f"{case.name}: ") and f"{case.key}=" in message


def test_impl_state_table_equals_the_hand_written_spec_table() -> None:
    """SPEC.md §1.2 written out in concrete_steps.SPEC_EDGES equals the coordinator's own validPreviousStates;
    the comparison is the property's, so a wrong impl table makes it fail (shown with a doctored table)."""
    from properties.concrete_steps import SPEC_EDGES
    from harness.world import World
    for profile in ("0.10.0", "3.9"):
        table = World(profile).profile.previous_states
        impl_edges = {(a, b) for b, previous in table.items() for a in previous}
        assert impl_edges == set(SPEC_EDGES[profile]), profile
    t = next(t for t in triples("3.9") if ("g", "PreparingRebalance", "CompletingRebalance") in t[2].transitions)
    assert CATALOG["state-moves-only-along-spec-edges"].explain(*t) == {}
    doctored = {b: frozenset(a for a in prev if b is not CR) for b, prev in t[2].previous_states.items()}
    witness = CATALOG["state-moves-only-along-spec-edges"].explain(t[0], t[1], replace(t[2], previous_states=doctored))
    assert witness == {"group": "g", "from": "PreparingRebalance", "to": "CompletingRebalance",
                       "in_spec_table": True, "in_impl_table": False}


def test_every_state_and_step_property_has_a_corruption_case() -> None:
    # checker-observes-every-state is violated by the runners when reading a state raises, never by a
    # triple: a corrupted observation cannot show it; tests/test_never_crash.py plants coordinators that do
    covered = {c.name for c in CASES} | {"checker-observes-every-state"}
    missing = {p.name for p in CATALOG.values() if p.level == "concrete" and p.kind in ("always", "always_step")}
    assert missing - covered == set()


def test_an_owing_id_a_static_replacement_left_behind_is_allowed_and_no_other() -> None:
    """SPEC.md Corrections 3: replaceStaticMember leaves the old id in pendingSyncMembers (GroupMetadata.scala
    3.9.0-rc3 319-340 touches no pending-sync set), so a non-member id owing a SyncGroup is Kafka's in a group with
    static members; in a group with none, or as a pending member id, it is still a violation."""
    name = "members-owing-a-sync-are-watched-by-a-delayed-sync"
    chosen = next(t for t in triples("3.9") if live_group(t[2]) is not None and t[2].group.pending_sync_members
                  and not _check(name, t))
    g = chosen[2].group
    assert g is not None

    def owing(**changes: object) -> dict[str, object]:
        return CATALOG[name].explain(with_group(chosen[2], pending_sync_members=g.pending_sync_members | {"gone-9"},
                                                **changes))
    assert "members" in owing(static_members=())
    assert owing(static_members=(("i0", sorted(g.member_ids)[0]),)) == {}
    assert "members" in owing(static_members=(("i0", sorted(g.member_ids)[0]),),
                              pending_members=g.pending_members | {"gone-9"})
