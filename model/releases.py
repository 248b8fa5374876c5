"""Kafka releases in version order and the behaviour facts that tell them apart, each stated once.

A fact is a behaviour with the release that introduced it and where SPEC.md (and the KIP or KAFKA
ticket) says so; a profile *has* the fact when its release is that one or later. The oracle side
(model/, properties/, harness/, explore/) decides behaviour by facts — ``fact("pending-members",
profile)``, ``applies_to=when("delayed-sync")`` — never by comparing profile names, so a new release
is one line in ``RELEASES`` (and its impl profile), not an edit to every check. impl/ states the same
switches on its own (it is the system under test); tests/test_model_profiles.py compares them.
Standard library only.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Callable, Iterable, Mapping

Version = tuple[int, ...]
#: a predicate over profile names: ``since("2.2.0")``, ``when("pending-members")``, ``unless(...)``
Predicate = Callable[[str], bool]

_DOTTED = re.compile(r"^\d+(\.\d+){1,3}$")
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)+$")


class UnknownReleaseError(ValueError):
    """A profile name that is not a dotted Kafka release number."""


class UnknownFactError(LookupError):
    """A fact name that is not in ``FACTS``."""


def version(name: str) -> Version:
    """'0.10.0' -> (0, 10, 0); '3.9' -> (3, 9, 0): padded to three parts, so '3.9' and '3.9.0' are equal."""
    if not _DOTTED.match(name):
        raise UnknownReleaseError(f"cannot read a Kafka release from profile name {name!r}; expected a dotted "
                                  f"release number such as {', '.join(KNOWN)}.")
    parts = tuple(int(p) for p in name.split("."))
    return parts + (0,) * (3 - len(parts))


@dataclass(frozen=True, slots=True)
class Release:
    name: str          # the profile name (the release it reproduces)
    era: str           # SPEC.md §0 eras
    runnable: bool     # impl/ and model/ carry a profile for it; False = known, not yet a profile
    what: str
    #: the model has a profile for it (graph, pinned counts, Z3 proofs) — every runnable release, and a known one
    #: whose coordinator the catalog and the labelled refinement do not judge yet
    modelled: bool = False

    def __post_init__(self) -> None:
        if self.runnable:
            object.__setattr__(self, "modelled", True)


#: every release kgc knows, oldest first; ``runnable`` ones have an impl and a model profile
RELEASES: tuple[Release, ...] = (
    Release("0.10.0", "E0", True, "the release the seed documents describe"),
    Release("2.4.1", "E3", True, "pending members, new-member timeout with the KAFKA-9232 keep-alive predicate"),
    Release("2.7.0", "E4", True, "heartbeatSatisfied liveness, heartbeats answered NONE in CompletingRebalance"),
    Release("3.9", "E5", True, "the last Scala classic coordinator: DelayedSync, timeouts updated on rejoin"),
    # Kafka 4.1.1: classic groups served by the Java group coordinator (SPEC-4x.md; impl/java_gc). The world drives
    # it (harness/world.py) and the model has its profile (graph, proofs: model/profiles.py), but the catalog and the
    # labelled refinement do not judge its runtime yet: modelled, not runnable.
    Release("4.1", "4x", False, "classic groups in the Java group coordinator: keyed timers, every request a "
                                "log write, answers held behind uncommitted writes (impl/java_gc)", modelled=True),
)
KNOWN: tuple[str, ...] = tuple(r.name for r in RELEASES)
RUNNABLE: tuple[str, ...] = tuple(r.name for r in RELEASES if r.runnable)
#: the releases the model has a profile for (runnable ones and those only modelled so far)
MODELLED: tuple[str, ...] = tuple(r.name for r in RELEASES if r.modelled)


def release(name: str) -> Release:
    """The known release called ``name``; an unknown one is a clear error listing the known ones."""
    for r in RELEASES:
        if r.name == name:
            return r
    raise UnknownReleaseError(f"unknown release {name!r}; kgc knows {', '.join(KNOWN)}.")


@dataclass(frozen=True, slots=True)
class Fact:
    """A behaviour every release from ``since`` on has (the earliest release when a fix was backported)."""

    name: str
    since: str
    claim: str
    source: str    # SPEC.md section, and the KIP / KAFKA ticket

    def __call__(self, profile: str) -> bool:
        return Since(self.since)(profile)


_FACTS: tuple[Fact, ...] = (
    # -- group states and the join phase ------------------------------------------------------------------
    Fact("commit-is-liveness", "0.10.0",
         "A member's OffsetCommit in Stable or PreparingRebalance reschedules its heartbeat.",
         "SPEC.md §3.5 (KAFKA-3470, 0.10.0), §4.6 callers"),
    Fact("empty-state", "0.10.1",
         "Groups have an Empty state: a new group starts Empty and a rebalance that ends with no members "
         "leaves it Empty (E0: starts Stable, dies); validPreviousStates is the 0.10.1+ column "
         "(Empty edges, Dead → Dead allowed); a generation −1 commit to an absent group creates it Empty.",
         "SPEC.md §1.1 (KAFKA-2720, 0.10.1), §1.2 table, §3.5, §4.4 last line"),
    Fact("rebalance-timeout", "0.10.1",
         "Members carry a rebalance timeout; the join phase lasts the maximum rebalance timeout "
         "(E0: the maximum session timeout).",
         "SPEC.md §1.4 rebalanceTimeoutMs, §4.4, §4.9 (KIP-62, 0.10.1)"),
    Fact("heartbeat-resets-in-preparing-rebalance", "0.10.1",
         "A valid Heartbeat in PreparingRebalance resets the member's heartbeat timer (still answered "
         "REBALANCE_IN_PROGRESS).",
         "SPEC.md §3.3 table (0.10.1–2.2 column), §0 era E1"),
    Fact("parked-sync-keeps-timer", "0.10.1",
         "A SyncGroup parked in CompletingRebalance does not reschedule the member's heartbeat (E0 does, "
         "seed 000). Derived: SPEC.md states it for the 2.4.0 baseline only; taken from E1 (KIP-62's "
         "heartbeat rework), which no runnable or known release depends on.",
         "SPEC.md §3.2 step 5 (2.4.0 baseline); seed 000 for 0.10.0"),
    Fact("initial-delayed-join", "0.11.0",
         "A rebalance that starts from Empty waits group.initial.rebalance.delay.ms in an InitialDelayedJoin, "
         "whose tryComplete is always false.",
         "SPEC.md §4.5 (KAFKA-4925, 0.11.0)"),
    Fact("empty-group-needs-protocols", "1.0.0",
         "A member-less group accepts a JoinGroup only with a protocol type and a non-empty protocol list.",
         "SPEC.md §3.6 (KAFKA-6005, 1.0.0)"),
    Fact("loading-checked-first", "2.0.0",
         "The loading check comes before the ownership check, so a loading partition answers "
         "COORDINATOR_LOAD_IN_PROGRESS (SyncGroup: REBALANCE_IN_PROGRESS, Heartbeat: NONE) instead of "
         "NOT_COORDINATOR.",
         "SPEC.md §3.0 (fix 8662a022, 2.0)"),
    # -- membership and liveness ---------------------------------------------------------------------------
    Fact("removal-completes-heartbeat", "2.1.0",
         "Removing a member that did not rejoin completes its DelayedHeartbeat, so no op outlives its member.",
         "SPEC.md §4.4 step 1 (KAFKA-7196, 2.1.0)"),
    Fact("new-member-timeout", "2.1.1",
         "A member added by a JoinGroup is isNew until its join response and gets a 5-minute heartbeat op; "
         "only its own heartbeats keep it alive meanwhile.",
         "SPEC.md §2 isNew and liveness predicates, §4.9 (KAFKA-7610, 2.1.1/2.2.0)"),
    Fact("pending-members", "2.2.0",
         "A dynamic member's first JoinGroup (v4+) only adds a pending member id answered MEMBER_ID_REQUIRED, "
         "with its own expiration; pending members block hasAllMembersJoined.",
         "SPEC.md §3.1 J5a.5, §4.4 tryComplete, §4.7 (KIP-394, 2.2.0)"),
    Fact("no-generation-is-minus-one", "2.2.0",
         "JoinGroup error answers carry generation −1 (NoGeneration); 0 before.",
         "SPEC.md §3.1 (join error shape)"),
    Fact("removal-answers-parked-join", "2.2.0",
         "removeMemberAndUpdateGroup answers the removed member's parked JoinGroup UNKNOWN_MEMBER_ID (a parked "
         "SyncGroup is never answered there).",
         "SPEC.md §3.4 (removeMemberAndUpdateGroup, 2.2.0+)"),
    Fact("dead-group-not-available", "2.3.0",
         "A request that finds the group Dead is answered COORDINATOR_NOT_AVAILABLE, tested before the protocol and "
         "member checks (before: UNKNOWN_MEMBER_ID).",
         "SPEC.md §3.0 last paragraph, §3.1 J5a.1/J5b.1, §3.2 step 1, §3.9 last line (KAFKA-8386, 2.3.0)"),
    Fact("heartbeat-op-looks-up-member", "2.3.1",
         "A heartbeat op looks its member up by id when checked or expired, so once the member is gone the op "
         "never removes anything (2.4.0: a check returns false and the expiry only logs), and an op of a Dead group "
         "completes when checked (so unloading a Stable or CompletingRebalance group completes its members' ops); "
         "E0's op held the member object and its expiry ran onMemberFailure again.",
         "SPEC.md §2 note under the liveness table, §4.6 and Corrections 4 (KAFKA-8896, 2.2.2/2.3.1/2.4.0; "
         "GroupCoordinator.scala 2.4.1 lines 1113-1118); KAFKA-7196 for E0"),
    Fact("heartbeat-checks-member-first", "2.3.0",
         "Heartbeat checks member and generation before switching on the group state (0.9–2.2: state first).",
         "SPEC.md §3.3 (validation order 2.3.0+)"),
    Fact("commit-checks-member-first", "2.4.0",
         "OffsetCommit checks member and generation before CompletingRebalance (0.9–2.3: state first).",
         "SPEC.md §3.5 (KAFKA-8487, 2.4.0)"),
    Fact("group-max-size", "2.2.0",
         "group.max.size bounds the member table: JoinGroup answers GROUP_MAX_SIZE_REACHED (2.2–2.5: an unknown id "
         "when |members| ≥ max, or a known member not awaiting join of an over-capacity group) and loading an "
         "over-capacity group rebalances it.",
         "SPEC.md §3.1 J4, §3.7 onGroupLoaded, §0 broker defaults (2.2.0)"),
    Fact("batch-leave-group", "2.4.0",
         "LeaveGroup v3 carries a list of identities, each answered on its own under a top-level error.",
         "SPEC.md §3.4 (KAFKA-8221, 2.4.0)"),
    Fact("new-member-checked-first", "2.4.1",
         "The keep-alive predicate tests isNew before awaiting join/sync: a new member is kept only by its own "
         "liveness events even while its JoinGroup is parked (2.4.1: latestHeartbeat + 300000 > deadline, so the "
         "session-timeout op armed at join completion, while the member is still new, completes at birth).",
         "SPEC.md §2 liveness table rows 2.4.1 (KAFKA-9232) and 2.5.0+, §4.4 step 5 ordering, §4.6"),
    Fact("heartbeat-satisfied-flag", "2.5.0",
         "Liveness is the heartbeatSatisfied flag (hasSatisfiedHeartbeat) instead of the deadline arithmetic "
         "latestHeartbeat + session > deadline, whose strict '>' keeps two ops alive after two reschedules in "
         "one millisecond.",
         "SPEC.md §2 liveness predicates, §4.6 (KAFKA-9752, 2.5.0)"),
    Fact("missing-member-completes-heartbeat", "2.5.0",
         "A heartbeat op completes when checked if its member is missing (a Dead group's op completes since "
         "KAFKA-8896: heartbeat-op-looks-up-member).",
         "SPEC.md §2 note under the liveness table ('2.5+: not found counts as complete'), §4.6 (KAFKA-9752)"),
    Fact("join-response-protocol-type", "2.5.0",
         "JoinGroup answers carry the protocol type and SyncGroup (v5) refuses a protocol type or name other than "
         "the group's with INCONSISTENT_GROUP_PROTOCOL.",
         "SPEC.md §3.1 success response, §3.2 step 4 (KIP-559, 2.5.0)"),
    Fact("accept-joining-member", "2.6.0",
         "group.max.size uses acceptJoiningMember: Empty accepts; PreparingRebalance accepts a member already "
         "awaiting join or while fewer than max await; CompletingRebalance/Stable accept an existing member or "
         "while |members| < max.",
         "SPEC.md §3.1 J4 (KAFKA-9885, 2.6.0)"),
    Fact("heartbeat-in-completing-rebalance", "2.6.1",
         "A valid Heartbeat in CompletingRebalance is answered NONE and resets the timer (before: "
         "REBALANCE_IN_PROGRESS, not reset).",
         "SPEC.md §3.3 table (2.6.1/2.7.0+ column, KAFKA-10134)"),
    Fact("delayed-sync", "2.8.1",
         "After a join phase a DelayedSync (the group's rebalance timeout) removes the members that have not "
         "sent SyncGroup (pendingSyncMembers).",
         "SPEC.md §4.8, §4.9 sync-phase bound (KAFKA-12890, 2.8.1/3.0.0)"),
    Fact("rejoin-updates-timeouts", "3.3.2",
         "A known member's JoinGroup copies the session and rebalance timeouts it carries (before: a rejoin "
         "with new values was ignored).",
         "SPEC.md §2 sessionTimeoutMs / rebalanceTimeoutMs, §3.1 J5a.4 (KAFKA-14009, 3.3.2/3.4.0)"),
    # -- static membership (KIP-345) -----------------------------------------------------------------------
    Fact("static-membership", "2.3.0",
         "Members may carry a group.instance.id: a JoinGroup with a known instance id and member id \"\" replaces "
         "the member's id (its old incarnation's parked requests are answered FENCED_INSTANCE_ID), a request whose "
         "instance id maps to another member id is answered FENCED_INSTANCE_ID, and static members that did not "
         "rejoin survive join completion (before: an instance id is answered UNSUPPORTED_VERSION).",
         "SPEC.md §2 groupInstanceId, §3.1 J5a step 4, J5b step 4, §3.8, §4.4 step 1 (KIP-345, 2.3.0)"),
    Fact("static-rejoin-rebalances-in-completing-rebalance", "2.5.0",
         "A known static instance rejoining with member id \"\" in CompletingRebalance prepares a rebalance "
         "(before: answered at once with the current generation).",
         "SPEC.md §3.1 J5a step 4, §1.3 (KAFKA-9801, 2.5.0)"),
    Fact("static-rejoin-persisted-in-stable", "2.6.1",
         "A known static instance rejoining with member id \"\" in Stable is stored with its new member id and "
         "answered from the store callback, or rebalances if its metadata changes the protocol (before: "
         "answered at once, no log write).",
         "SPEC.md §3.1 J5a step 4 (KAFKA-10284, 2.6.1/2.7.0)"),
    Fact("static-rejoin-skips-assignment", "3.2.0",
         "A known static instance rejoining with member id \"\" in Stable with a JoinGroup v9+ is answered with the "
         "real leader id, the member list if it is the leader, and skipAssignment = it is the leader (a follower: "
         "false, no list); before (or with an older request) the answer names the leader of when the id was replaced.",
         "SPEC.md §3.1 J5a step 4 and Corrections 1 (KIP-814, 3.2.0; GroupCoordinator.scala 3.9.0-rc3 lines "
         "1407-1422)"),
    Fact("group-remove-drops-static-mapping", "2.8.0",
         "GroupMetadata.remove drops the removed member's static mapping itself, so a JoinGroup refused with "
         "GROUP_MAX_SIZE_REACHED no longer drops the mapping of the instance id the request carried (2.3.0–2.7.x: "
         "handleJoinGroup called removeStaticMember(groupInstanceId) after remove, so a static restart refused at "
         "capacity left its instance's member without a static mapping).",
         "SPEC.md §3.1 J4 (silent); GroupCoordinator.scala 2.4.1 lines 161-167, 2.7.0 lines 184-187; commit "
         "6d411620ddb (2.8.0)"),
    Fact("group-remove-drops-pending", "3.0.0",
         "GroupMetadata.remove also drops the id from pendingMembers, so a pending member id refused with "
         "GROUP_MAX_SIZE_REACHED stops being pending (before: it stays pending until it rejoins, leaves or expires).",
         "SPEC.md §3.1 J4 '(also clears pending)'; GroupMetadata.scala 2.7.0 remove (no pendingMembers), 3.0.0 remove"),
    Fact("validate-current-member", "3.0.0",
         "A request whose group.instance.id maps to no member is answered UNKNOWN_MEMBER_ID (validateCurrentMember; "
         "2.x judges the member id alone).",
         "SPEC.md §3.1 J5b step 4, §3.4 [3.x]"),
    # -- Kafka 4.x: the Java group coordinator serving classic groups (SPEC-4x.md R1-R16, checked against 4.1.1 in
    #    bench/results/spec-4x-check-2026-11-27.md). 4.0.0 is the first release whose brokers serve classic groups
    #    with it by default; R9 and R10 read the same at 4.0.0 (GroupMetadataManager.java@4.0.0:4474-4479,
    #    5755-5763) as at 4.1.1.
    Fact("keyed-timers", "4.0.0",
         "Timers are keyed per offsets partition: scheduling a key replaces the task under it, an expired task only "
         "queues an event, and an event whose key was replaced or cancelled meanwhile is dropped; a task expires "
         "once the clock reaches its deadline (not strictly after it, as the Scala MockTimer).",
         "SPEC.md §4.1-4.3 (purgatory) vs SPEC-4x.md R1, R13; CoordinatorRuntime.java@4.1.1:356-425"),
    Fact("batched-log-writes", "4.0.0",
         "Every classic request and timer runs as a write event: its records join the partition's open batch, "
         "which is flushed (or fails, reverting the batch and failing every write in it) and later committed; "
         "a new group is written at its first JoinGroup and reverted if that batch fails.",
         "SPEC.md §5.2 (deferred appends) vs SPEC-4x.md R2, R5; CoordinatorRuntime.java@4.1.1:779-854, 948-1086; "
         "GroupMetadataManager.java@4.1.1:6156-6177"),
    Fact("write-timeout", "4.0.0",
         "A write event not completed within offsets.commit.timeout.ms is answered COORDINATOR_NOT_AVAILABLE "
         "(REQUEST_TIMED_OUT mapped), without reverting or removing its records.",
         "SPEC.md §3.2 (no timeout on Join/Heartbeat) vs SPEC-4x.md R2; CoordinatorRuntime.java@4.1.1:1146-1166, "
         "1412-1419; CoordinatorOperationExceptionHelper.java@4.1.1"),
    Fact("answers-wait-for-commit", "4.0.0",
         "Heartbeat, LeaveGroup and OffsetCommit answers, and the SyncGroups the leader's assignment write answers, "
         "are sent only once every earlier write of the partition is committed; JoinGroup and SyncGroup answers "
         "completed inside the operation, and thrown errors, are sent at once.",
         "SPEC.md §5 (answers under the group lock) vs SPEC-4x.md R3 as corrected; CoordinatorRuntime.java@4.1.1:"
         "922-932, 1421-1423; GroupCoordinatorService.java@4.1.1:873-937"),
    Fact("describe-reads-committed-creation", "4.0.0",
         "DescribeGroups finds a group only once its creation is committed (then reads its live fields); an unknown "
         "group is Dead, with GROUP_ID_NOT_FOUND from DescribeGroups v6.",
         "SPEC.md §3.9 (live state) vs SPEC-4x.md R4, R16; GroupMetadataManager.java@4.1.1:737-790, 1078-1088"),
    Fact("sync-while-loading-load-in-progress", "4.0.0",
         "A SyncGroup to a loading partition is answered COORDINATOR_LOAD_IN_PROGRESS (3.x: REBALANCE_IN_PROGRESS, "
         "for older clients).",
         "SPEC.md §3.0 vs SPEC-4x.md R6; CoordinatorRuntime.java@4.1.1:2149-2167"),
    Fact("session-timeout-checked-before-partition", "4.0.0",
         "JoinGroup's session-timeout range is checked by the service before the partition's NOT_COORDINATOR / "
         "COORDINATOR_LOAD_IN_PROGRESS checks.",
         "SPEC.md §3.0, §3.1 vs SPEC-4x.md R7; GroupCoordinatorService.java@4.1.1:851-871"),
    Fact("store-timeout-not-available", "4.0.0",
         "The leader's assignment write failing with REQUEST_TIMED_OUT answers COORDINATOR_NOT_AVAILABLE (3.x: "
         "REBALANCE_IN_PROGRESS); NOT_ENOUGH_REPLICAS_AFTER_APPEND passes through.",
         "SPEC.md §3.2 store-error mapping vs SPEC-4x.md R8; GroupMetadataManager.java@4.1.1:7498-7517"),
    Fact("stable-sync-keeps-session-timer", "4.0.0",
         "A SyncGroup in Stable answers the member's assignment without rescheduling its session timer.",
         "SPEC.md §3.2 step 6 vs SPEC-4x.md R9; GroupMetadataManager.java@4.1.1:7415-7424, @4.0.0:5755-5763"),
    Fact("max-size-refusal-skips-join-check", "4.0.0",
         "A JoinGroup refused with GROUP_MAX_SIZE_REACHED removes the member without checking whether the join "
         "phase can now complete.",
         "SPEC.md §3.1 J4 vs SPEC-4x.md R10; GroupMetadataManager.java@4.1.1:6134-6139, @4.0.0:4474-4479"),
    Fact("hash-order-choices", "4.0.0",
         "A protocol tie and the pick of a new leader follow Java HashMap order over protocol names and random "
         "member ids: nondeterministic choices (3.x: the first voting member's order).",
         "SPEC.md §3.6 vs SPEC-4x.md R11; ClassicGroup.java@4.1.1:488-538, 1006-1026"),
    Fact("static-replacement-is-a-new-member", "4.0.0",
         "A static restart builds a new member object, never new (isNew false), instead of re-keying the old one.",
         "SPEC.md §3.1 J5a step 4 vs SPEC-4x.md R12; ClassicGroup.java@4.1.1:549-597"),
    Fact("new-member-added-in-initial-rebalance", "4.0.0",
         "A member added while the group is PreparingRebalance marks newMemberAdded (the initial delay may extend) "
         "when that rebalance started from Empty, whatever the generation (3.x: only at generation 0).",
         "SPEC.md §4.5 vs GroupMetadataManager.java@4.1.1:6819-6822 (previousState == EMPTY); "
         "GroupCoordinator.scala@3.9.1:1329-1331 (generationId == 0); not in SPEC-4x.md"),
    Fact("expiry-completes-initial-join", "4.0.0",
         "A member or pending member removed by its session timer in PreparingRebalance completes the join phase once "
         "every remaining member has joined, even during the initial delay (3.x: an InitialDelayedJoin never "
         "completes early; a LeaveGroup checks maybeCompleteJoinPhase, which waits, in both).",
         "SPEC.md §4.5 (InitialDelayedJoin.tryComplete is false) vs GroupMetadataManager.java@4.1.1:6728-6732, "
         "6749-6753 (no previousState check) and 6188-6208 (maybeCompleteJoinPhase checks it); not in SPEC-4x.md"),
    Fact("pending-leave-rebalances", "4.0.0",
         "A LeaveGroup that removes a pending member id counts as a member leaving: in Stable or CompletingRebalance "
         "the group rebalances (3.x: the pending id is dropped and only the join phase re-checked).",
         "SPEC.md §3.4 (removePendingMemberAndUpdateGroup) vs GroupMetadataManager.java@4.1.1:7898-7950; "
         "GroupCoordinator.scala@3.9.1 handleLeaveGroup; not in SPEC-4x.md"),
    Fact("join-group-v0-v1-removed", "4.0.0",
         "Brokers no longer accept JoinGroup v0-v1 (KIP-896).",
         "SPEC.md §7 vs SPEC-4x.md R14; JoinGroupRequest.json@4.0.0"),
    Fact("join-group-v0-v1-restored", "4.0.1",
         "JoinGroup v0-v1 are accepted again (KAFKA-19444).",
         "SPEC.md §7 vs SPEC-4x.md R14; JoinGroupRequest.json@4.0.1"),
    Fact("commit-to-missing-group-not-found", "4.0.0",
         "An OffsetCommit v9+ with a generation >= 0 to a missing group is answered GROUP_ID_NOT_FOUND (older "
         "versions: ILLEGAL_GENERATION).",
         "SPEC.md §3.5 vs SPEC-4x.md R15; OffsetMetadataManager.java@4.1.1:456-479"),
    # -- the Java consumer that talks to the release (SPEC.md §7) ------------------------------------------
    Fact("client-join-group-v4", "2.2.0",
         "The consumer sends JoinGroup v4+ (require a known member id: MEMBER_ID_REQUIRED is stored and "
         "retried) and v1+ rebalance timeouts; older releases get the 0.10 client.",
         "SPEC.md §7 JoinGroup errors (KIP-394, 2.2.0)"),
    Fact("client-generation-guard", "2.6.0",
         "The consumer ignores reset errors whose generation moved on, heartbeats in COMPLETING_REBALANCE and "
         "retries a join REBALANCE_IN_PROGRESS (the 2.7 client).",
         "SPEC.md §7 heartbeat thread step 2, heartbeat responses (KAFKA-9823; KAFKA-10134, 2.6.1/2.7)"),
    Fact("client-keeps-member-id", "3.2.0",
         "The consumer keeps its member id on ILLEGAL_GENERATION and only resets the generation.",
         "SPEC.md §7 heartbeat responses (KAFKA-13419, 3.2)"),
)

FACTS: Mapping[str, Fact] = MappingProxyType({f.name: f for f in _FACTS})


def _check_table() -> None:
    """The table's own rules: kebab-case unique names, readable release numbers, ordered releases."""
    if len(FACTS) != len(_FACTS):
        raise ValueError("model/releases.py states a fact name twice.")
    for f in _FACTS:
        if not (_NAME.match(f.name) and f.claim and f.source and version(f.since)):
            raise ValueError(f"release fact {f.name!r} needs a kebab-case name, a claim and a source.")
    if [version(r.name) for r in RELEASES] != sorted(version(r.name) for r in RELEASES):
        raise ValueError("model/releases.py: RELEASES must be listed oldest first.")


_check_table()


def get_fact(name: str) -> Fact:
    try:
        return FACTS[name]
    except KeyError:
        raise UnknownFactError(f"unknown release fact {name!r}; model/releases.py states "
                               f"{', '.join(sorted(FACTS))}.") from None


@cache
def fact(name: str, profile: str) -> bool:
    """Whether release ``profile`` has the behaviour ``name`` (``FACTS``)."""
    return get_fact(name)(profile)


@dataclass(frozen=True, slots=True)
class Since:
    """The predicate 'the profile is release ``release`` or later'."""

    release: str

    def __call__(self, profile: str) -> bool:
        return version(profile) >= version(self.release)


@dataclass(frozen=True, slots=True)
class When:
    """The predicate 'the profile has fact ``name``' (``negated``: has not)."""

    name: str
    negated: bool = False

    def __call__(self, profile: str) -> bool:
        return fact(self.name, profile) != self.negated


def since(release_name: str) -> Predicate:
    version(release_name)   # a typo is an error now, not a silently false predicate later
    return Since(release_name)


def when(name: str) -> Predicate:
    get_fact(name)
    return When(name)


def unless(name: str) -> Predicate:
    get_fact(name)
    return When(name, negated=True)


@dataclass(frozen=True, slots=True)
class AllOf:
    """The predicate 'every one of ``parts`` holds'."""

    parts: tuple[Predicate, ...]

    def __call__(self, profile: str) -> bool:
        return all(p(profile) for p in self.parts)


def all_of(*parts: Predicate) -> Predicate:
    return AllOf(parts)


@dataclass(frozen=True, slots=True)
class AnyOf:
    """The predicate 'at least one of ``parts`` holds'."""

    parts: tuple[Predicate, ...]

    def __call__(self, profile: str) -> bool:
        return any(p(profile) for p in self.parts)


def any_of(*parts: Predicate) -> Predicate:
    return AnyOf(parts)


def everywhere(profile: str) -> bool:
    """The predicate that holds on every release."""
    version(profile)
    return True


def profiles_where(predicate: Predicate, among: Iterable[str] = RUNNABLE) -> tuple[str, ...]:
    """The releases of ``among`` (the runnable profiles by default), in version order, where ``predicate`` holds."""
    return tuple(sorted((p for p in among if predicate(p)), key=version))
