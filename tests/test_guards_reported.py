"""Every guard of impl/guards.py, tripped by a planted bug on a checked walk, is reported like any IllegalStateError:
the checker flags ``no-illegal-state-error`` at the step and the logged message names the guard (the refinement,
which predicts no such error, stops judging answers from there). The same walk of the reference trips nothing.

Each planted bug is a realistic mistake that Kafka's guard would catch at that release (the guards themselves:
tests/test_guards.py). Three of them are gate mutants (impl/mutants/guard_bugs.py), which ``kgc check --mutant``
must kill by ``no-illegal-state-error`` (tests/test_gate_mutants.py); the 2.x mutant static-restart-added-as-new-member
is caught on 3.9 by the guard of GroupMetadata.add (below).
"""
from __future__ import annotations

import random
from typing import Any, Hashable

import pytest

from harness.excuses import unexcused
from harness.scope import Scope
from harness.world import World
from impl.coordinator import GroupCoordinator
from impl.group import GroupMetadata, MemberMetadata
from impl.mutants import coordinator_class
from impl.results import ResponseFuture
from kgc.gate import STATIC_WALKS, WALK_SCOPES
from kgc.runs import CheckedRun
from tests.failing_callbacks import FailingFuture

PROP = "no-illegal-state-error"
MIXED = ("java", "java", "adversarial")


# -- the planted bugs -----------------------------------------------------------------------------------------------
MemberIdIsClientId = coordinator_class("member-id-is-client-id")
SyncUnpendsBeforeValidation = coordinator_class("sync-unpends-before-validation")
MemberAddedWithoutProtocolType = coordinator_class("member-added-without-protocol-type")


class _EmptyGenerationGroup(GroupMetadata):
    __slots__ = ()

    def init_next_generation(self, now_ms: int) -> None:
        self.protocol_name = self.select_protocol()   # the members-present branch taken for an emptied group
        super().init_next_generation(now_ms)


class ProtocolForEmptyGeneration(GroupCoordinator):
    """A new generation selects a protocol before looking whether anyone is left (2.4.1 GM 407-409, 3.9 434-436)."""

    group_class = _EmptyGenerationGroup


class _StaticMapKeptGroup(GroupMetadata):
    __slots__ = ()

    def remove(self, member_id: str) -> None:
        kept = dict(self.static_members)
        super().remove(member_id)
        self.static_members = kept                     # 2.x's removeStaticMember call forgotten


class StaticMapKeptOnRemoval(GroupCoordinator):
    """A removed static member keeps its instance id mapped: its restart replaces a member id the group no longer
    has (IllegalArgumentException, 2.4.1 GM 302-303, 3.9 GM 324-325)."""

    group_class = _StaticMapKeptGroup


class _ProtocolsCountedTwiceGroup(GroupMetadata):
    __slots__ = ()

    def update_member(self, member: MemberMetadata, protocols: tuple[tuple[str, bytes], ...],
                      rebalance_timeout_ms: int, session_timeout_ms: int, callback: ResponseFuture | None) -> None:
        for name in member.protocol_names:   # the old protocols' decrement is missing
            self.supported_protocols[name] = self.supported_protocols.get(name, 0) + 1
        super().update_member(member, protocols, rebalance_timeout_ms, session_timeout_ms, callback)


class RejoinCountsProtocolsTwice(GroupCoordinator):
    """updateMember counts a rejoining member's protocols without uncounting its old ones: no protocol is then
    supported by exactly every member, and no member can vote (MemberMetadata.vote, IllegalArgumentException,
    3.9 MM 134-139)."""

    group_class = _ProtocolsCountedTwiceGroup


class _DefaultProtocolGroup(GroupMetadata):
    __slots__ = ()

    def current_member_metadata(self) -> tuple[tuple[str, str | None, bytes], ...]:
        return tuple((m.member_id, m.group_instance_id, m.metadata("roundrobin")) for m in self.all_members())


class LeaderListUsesDefaultProtocol(GroupCoordinator):
    """The leader's member list reads each member's metadata for a default assignor, not the selected protocol
    (MemberMetadata.metadata, IllegalArgumentException, 3.9 MM 85-90)."""

    group_class = _DefaultProtocolGroup


class UnsendableResponses(GroupCoordinator):
    """Every first answer to client 0 cannot be sent (its response callback throws, KAFKA-14422): re-answered
    UNKNOWN_SERVER_ERROR from 3.3.2 (#12910), left to the request handler before — logged either way."""

    def _future(self, request_key: Hashable | None, api: str) -> ResponseFuture:
        if isinstance(request_key, tuple) and request_key[:1] == (0,):
            return FailingFuture(request_key, api, self._outbox)
        return super()._future(request_key, api)


# -- the walks ------------------------------------------------------------------------------------------------------
def checked(profile: str, cls: type[GroupCoordinator], scope: Scope, clients: Any) -> CheckedRun:
    world = World(profile, scope, clients=clients, seed=0, record=True)
    world.coordinator_class = cls
    world.coord = cls(world.coord.config, record_events=True)
    return CheckedRun(world)


def walk(run: CheckedRun, seed: int, steps: int) -> int | None:
    """Uniform random steps (the gate's walk) until ``PROP`` is violated; the step index, or None."""
    rng = random.Random(seed)
    for _ in range(steps):
        choices = run.world.enabled()
        if not choices or run.over:
            break
        for v in run.step(choices[rng.randrange(len(choices))]):
            if v.property == PROP:
                return v.step
    return None


STATIC_SCOPE, STATIC_CLIENTS = STATIC_WALKS["static"]
CALM, CHURN, FAULTS = WALK_SCOPES["calm"], WALK_SCOPES["churn"], WALK_SCOPES["faults"]
#: (planted bug, profile, scope, clients, the guard's words in the log, walk seed, steps): gate walk scopes and
#: clients, each with a seed that trips the guard within a few hundred steps (they all do, given more steps)
CASES = [
    (MemberIdIsClientId, "3.9", FAULTS, MIXED, "cannot add pending member", 0, 200),
    (SyncUnpendsBeforeValidation, "3.9", CHURN, MIXED, "cannot remove a pending sync", 0, 1000),
    (MemberAddedWithoutProtocolType, "2.4.1", CHURN, MIXED, "AssertionError: member", 1, 50),
    (MemberAddedWithoutProtocolType, "3.9", CHURN, MIXED, "AssertionError: member", 1, 50),
    (ProtocolForEmptyGeneration, "2.7.0", CHURN, MIXED, "cannot select a protocol", 1, 100),
    (StaticMapKeptOnRemoval, "2.7.0", STATIC_SCOPE, STATIC_CLIENTS, "IllegalArgumentException: cannot replace", 1,
     100),
    (RejoinCountsProtocolsTwice, "3.9", CALM, 3, "IllegalArgumentException: member", 1, 100),
    (LeaderListUsesDefaultProtocol, "2.4.1", CHURN, MIXED, "does not support protocol roundrobin", 1, 100),
    (UnsendableResponses, "2.4.1", CHURN, MIXED, "could not be sent", 1, 50),
    (UnsendableResponses, "3.9", CHURN, MIXED, "could not be sent", 1, 50),
]


@pytest.mark.parametrize("bug,profile,scope,clients,words,seed,steps", CASES,
                         ids=[f"{c[0].__name__}-{c[1]}" for c in CASES])
def test_a_planted_bug_that_trips_a_guard_is_reported(bug: type[GroupCoordinator], profile: str, scope: Scope,
                                                      clients: Any, words: str, seed: int, steps: int) -> None:
    run = checked(profile, bug, scope, clients)
    step = walk(run, seed, steps)
    assert step is not None, f"{bug.__name__} tripped no guard in {steps} steps on {profile}"
    assert any(words in e for e in run.world.coord.errors), run.world.coord.errors
    # the model predicts no such error: the refinement stops judging answers after it (the coordinator was left
    # half-way), unless the step was no model edge at all (refines-the-abstract-model) or the bug left a state the
    # abstraction has no image for (checker-observes-every-state)
    refuted = any(v.property == "refines-the-abstract-model" and v.step == step for v in run.violations)
    assert run.refinement is not None and (run.refinement.halfway or refuted or run.unobservable)
    reference = checked(profile, GroupCoordinator, scope, clients)
    assert walk(reference, seed, step + 1) is None and not reference.world.coord.errors


def test_the_static_restart_added_as_a_new_member_trips_3_9s_guard() -> None:
    """The seeded mutant static-restart-added-as-new-member (a restart not looked up by instance id): 3.x's add()
    refuses the second member with that instance id (3.9 GM 242-246); 2.x's adds it (the mutant's catch there is
    at-most-one-member-per-instance-id)."""
    scope, clients = STATIC_WALKS["static"]
    world = World("3.9", scope, clients=clients, seed=0, record=True, mutant="static-restart-added-as-new-member")
    assert world.coordinator_class is coordinator_class("static-restart-added-as-new-member")
    run = CheckedRun(world)
    step = walk(run, 0, 800)
    assert step is not None and any("cannot be added to group" in e for e in world.coord.errors)
    instances = [m.group_instance_id for m in world.coord.groups[world.group_id].all_members()]
    assert len(instances) == len(set(instances))   # the guard kept the second member out


@pytest.mark.parametrize("profile", ["2.4.1", "2.7.0"])
def test_a_leave_of_a_pending_id_with_an_instance_id_is_the_documented_finding_before_3_0(profile: str) -> None:
    """The static adversary sends its forged instance id with a Java consumer's pending member id in a LeaveGroup
    before anyone holds that instance id: 2.x throws (GroupCoordinator.scala 2.4.1 471-474). The gate reports it
    with the finding's excuse off, and excuses it as instance-id-with-a-pending-member-id-throws otherwise."""
    scope, clients = STATIC_WALKS["static-mixed"]
    script = [("JoinGroup", 0, None), ("DeliverRequest", 0, None), ("DeliverResponse", 0, None),
              ("LeaveGroup", 2, 3), ("DeliverRequest", 2, None)]

    def run_script() -> CheckedRun:
        run = CheckedRun(World(profile, scope, clients=clients, seed=0, record=True))
        for kind, client, arg in script:
            [action] = [a for a in run.world.enabled()
                        if a.kind == kind and a.client == client and (arg is None or a.arg == arg)][:1]
            run.step(action)
        return run
    with unexcused(["instance-id-with-a-pending-member-id-throws"]):
        run = run_script()
    assert [(v.property, v.step) for v in run.violations] == [(PROP, 4)]
    assert run.world.steps[4].responses[0].error == "UNKNOWN_SERVER_ERROR"
    assert run.refinement is not None and not run.refinement.halfway   # the model predicts this answer (J4 2.x)
    assert run_script().violations == []
