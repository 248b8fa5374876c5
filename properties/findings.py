"""Documented findings: where the reference coordinator does not satisfy a catalog property, and why.

Each finding is real behaviour of the release a profile stands for (derived from the code SPEC.md
describes), shown by a test in tests/test_properties_findings.py. A property that a finding breaks
either stays off that profile (``applies_to``) or, when the break only follows another finding, stays
on and the finding names the trigger so that a checker can tell the two apart.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from pathlib import Path

from core.events import IllegalState
from core.trace import Step, Violation
from harness.excuses import excused
from model.releases import KNOWN, all_of, everywhere, get_fact, profiles_where, unless, when
from properties.catalog import CATALOG, Property, for_profile

#: where each gate-enforced finding keeps, per profile, the counterexample the tool found for it (with its
#: reports and generated regression test): reports/findings/<name>/<profile>/
RECORDS = Path(__file__).resolve().parent.parent / "reports" / "findings"


@dataclass(frozen=True, slots=True)
class Finding:
    name: str
    profiles: tuple[str, ...]
    properties: tuple[str, ...]     # catalog properties (or seed rules) it breaks
    summary: str                    # what happens, in a few sentences
    shown_by: str                   # the test that reproduces it
    #: the release fact (model/releases.py) whose arrival ends it, None if the last Scala coordinator still has it
    fixed_by: str | None = None
    #: False for a finding about a seed rule rather than a catalog property: its test shows it, the gate cannot
    gated: bool = True

    @property
    def fixed_in(self) -> str | None:
        """The first release where it no longer occurs."""
        return get_fact(self.fixed_by).since if self.fixed_by else None

    def record(self, profile: str) -> Path:
        """The directory of this finding's recorded counterexample on ``profile``."""
        return RECORDS / self.name / profile


FINDINGS: tuple[Finding, ...] = (
    Finding(
        "two-live-heartbeats-in-one-millisecond", profiles_where(unless("heartbeat-satisfied-flag")),
        ("at-most-one-live-heartbeat-per-member",),
        "≤ 2.4 keeps a member iff latestHeartbeat + session > deadline (strict). Two reschedules in the same "
        "millisecond give two ops with the same deadline; the second's checkAndComplete cannot complete the first, "
        "so both stay live and both expire (the second one re-runs onMemberFailure on a removed member: KAFKA-7196).",
        "test_0_10_0_keeps_two_live_heartbeats_after_two_reschedules_in_one_millisecond",
        fixed_by="heartbeat-satisfied-flag"),
    Finding(
        "fresh-heartbeat-completed-at-birth", profiles_where(everywhere),
        ("seed 004: 第二步一定不会完成新创建的延迟心跳",),
        "The seed's rule that tryCompleteElseWatch never completes the op it just created holds only for a member "
        "without a parked request: awaiting ⇒ keep, so the new op completes at once (0.10.0: a follower's parked "
        "SyncGroup reschedules after setting the callback; 3.9: a heartbeat in CompletingRebalance from a member "
        "whose SyncGroup is parked). The catalog states the rule with that qualification.",
        "test_raw_seed_rule_fails_for_members_with_a_parked_request", gated=False),
    Finding(
        "dead-to-dead-on-an-unloaded-group", profiles_where(unless("empty-state")),   # the 0.9 §1.2 table
        ("no-illegal-state-error", "each-request-is-answered-at-most-once", "parked-response-is-not-yet-answered",
         "delayed-join-completes-once-all-rejoined"),
        "E0 sends a group that a join phase empties to Dead. The DelayedJoin of a group unloaded in "
        "PreparingRebalance stays in the purgatory under the group's key; when it completes — by expiry, or by its "
        "condition once the stale group's members have expired, through a request to the reloaded group — "
        "onCompleteJoin removes everyone and asserts Dead → Dead (IllegalStateException). Inside a request the "
        "exception aborts it half-way: the JoinGroup is answered UNKNOWN_SERVER_ERROR while the member it added stays "
        "parked on that answered request (later answered again), and the join re-check of the new group is skipped.",
        "test_0_10_0_dead_to_dead_on_expiry and test_0_10_0_dead_to_dead_inside_a_request_answers_twice",
        fixed_by="empty-state"),
    Finding(
        "no-liveness-op-after-the-join-response",
        profiles_where(all_of(when("new-member-checked-first"), unless("heartbeat-satisfied-flag"))),
        ("idle-member-has-a-live-heartbeat-expiration", "fresh-heartbeat-not-completed-by-its-own-watch",
         "silent-member-is-removed-within-its-session-timeout", "parked-request-is-answered-within-its-phase-bound"),
        "2.4.1 (KAFKA-9232) keeps a new member iff latestHeartbeat + 300000 > deadline, tested before awaiting, and "
        "onCompleteJoin reschedules with the session timeout before clearing isNew (SPEC.md §2, §4.4 step 5): the "
        "session op completes at birth, so a member past its join response has no expiration due within its session "
        "timeout — none at all, or only its 5-minute op when it was added in the join's millisecond — until its next "
        "heartbeat, sync or commit; one that goes silent stays a member, and a SyncGroup parked behind a leader that "
        "never syncs is not bounded by the others' session timeouts (KAFKA-9752 fixed it in 2.5.0).",
        "test_2_4_1_member_past_its_join_response_has_no_session_expiration", fixed_by="heartbeat-satisfied-flag"),
    Finding(
        "stale-join-completes-reloaded-heartbeats", profiles_where(when("removal-completes-heartbeat")),
        ("refines-the-abstract-model",),
        "The same stale DelayedJoin after 2.1.0 (KAFKA-7196): when it expires, onCompleteJoin removes the unloaded "
        "group object's members and removeHeartbeatForLeavingMember runs checkAndComplete(MemberKey(group, member)), "
        "a key the reloaded group's heartbeat ops share — so a reloaded member with the same id that awaits a join or "
        "sync loses its heartbeat op (hasSatisfiedHeartbeat) until the next join completes. The model treats a stale "
        "incarnation's ops as inert; refinement accepts exactly this change (harness.labels.stale_completion). Found "
        "on 3.9 by the gate's directed phase (partition scope), on 2.4.1 and 2.7.0 by its reload walk.",
        "stale_join_completes_reloaded_heartbeats"),
    Finding(
        "instance-id-with-a-pending-member-id-throws",
        profiles_where(all_of(when("static-membership"), when("pending-members")), among=KNOWN),
        ("no-illegal-state-error", "no-illegal-state-in-an-event"),
        "A JoinGroup that carries a group.instance.id together with a member id the group holds as *pending* (a "
        "dynamic consumer's id from MEMBER_ID_REQUIRED, which any client can send) makes doJoinGroup / "
        "doCurrentMemberJoinGroup throw IllegalStateException — the check for a pending id comes before static "
        "fencing, and a pending id is assumed never to be static (SPEC.md §3.1 J5b step 3). The request handler "
        "answers UNKNOWN_SERVER_ERROR and nothing changes; the model predicts exactly that answer. 2.4.1 and 2.7.0 "
        "throw the same way on a LeaveGroup of such an identity that passed the fencing check (§3.4 [2.4], "
        "GroupCoordinator.scala@2.4.1 L471-474, @2.7.0 L477-480; Kafka's "
        "staticMemberLeaveWithIllegalStateAsPendingMember). Only a client that forges identities reaches it (the "
        "gate's mixed static walk, kgc/gate.py STATIC_WALKS). Kafka 4.1 throws the same on the JoinGroup "
        "(GroupMetadataManager.java@4.1.1:6398-6402): there the runtime rule no-illegal-state-in-an-event sees it.",
        "instance_id_with_a_pending_member_id_throws"),
    Finding(
        "sync-in-stable-keeps-the-session-timer",
        profiles_where(when("stable-sync-keeps-session-timer"), among=KNOWN),
        ("sync-in-stable-extends-the-session",),
        "Kafka 4.x answers a SyncGroup that finds the group Stable with the member's stored assignment and leaves its "
        "session timer as the join completion scheduled it (GroupMetadataManager.java@4.1.1:7415-7424, the same at "
        "4.0.0:5755-5763); 3.x reschedules it there (SPEC.md §3.2, GroupCoordinator.scala@3.9.1:643). A member whose "
        "SyncGroup arrives after the leader's and that sends nothing else is expired a session after the join "
        "completed, not after its sync (SPEC-4x.md R9, found by reading; no ticket). The world's own Java consumers "
        "reach it: a follower's SyncGroup delivered after the leader's. A runtime rule of 4.1 "
        "(properties/runtime_4x.py), checked where the runtime is; no catalog property states the 3.x rule (the "
        "catalog judges 4.1's walks, properties/observation_4x.py, but does not see R9).",
        "test_4_1_sync_in_stable_keeps_the_session_timer"),
    Finding(
        "max-size-refusal-leaves-the-join-waiting",
        profiles_where(when("max-size-refusal-skips-join-check"), among=KNOWN),
        ("max-size-refusal-completes-the-join", "delayed-join-completes-once-all-rejoined"),
        "Kafka 4.x refuses a JoinGroup at group.max.size by removing the member and answering "
        "GROUP_MAX_SIZE_REACHED "
        "without checking whether the join phase can complete (GroupMetadataManager.java@4.1.1:6134-6139, 4.0.0:"
        "4474-4479); 3.x checks after every JoinGroup (GroupCoordinator.scala@3.9.1:194-196, 228-231). When the "
        "refused "
        "member was the last one the rebalance waited for — a pending member (KIP-394) refused in a non-initial "
        "PreparingRebalance, or a group loaded over capacity — the join completes only at the rebalance timeout "
        "(SPEC-4x.md R10, found by reading; bench/results/spec-4x-check-2026-11-27.md widened it to pending members). "
        "The world's Java consumers reach it with group.max.size 2 (kgc/gate.py MAX_SIZE_WALKS).",
        "test_4_1_max_size_refusal_leaves_the_join_waiting"),
    Finding(
        "failed-static-store-reverts-protocols-after-a-rebalance",
        profiles_where(when("batched-log-writes"), among=KNOWN),
        ("stable-or-completing-group-has-members-and-a-common-protocol",),
        "A static member restarting in Stable with another assignor list that leaves the selected protocol as it is "
        "gets its new member id stored by a write; the write's append callback, if the batch fails, puts the old "
        "member id back with the old protocols, unconditionally (GroupMetadataManager.java@4.1.1:7218-7228). In 4.x "
        "that write waits in the open batch while later events run (CoordinatorRuntime.java@4.1.1:948-1086, 848-854; "
        "SPEC-4x.md R5): a LeaveGroup of the other members completes a rebalance that selects a protocol only the new "
        "list has, then the batch fails — the group is CompletingRebalance (or later Stable) with a protocol its "
        "member does not support (SPEC.md §1.5 I7), until the next rebalance. Found by the catalog on 4.1 (the gate's "
        "static-partition walk, a failed FlushBatch). The catalog excuses exactly a group whose members lacking its "
        "protocol are all static.",
        "test_4_1_failed_static_store_reverts_protocols_after_a_rebalance"),
    Finding(
        "reverted-group-join-timer-fires-on-its-successor",
        profiles_where(when("keyed-timers"), among=KNOWN),
        ("no-illegal-state-in-an-event",),
        "A failed append reverts the batch's snapshot, so a group created in it leaves the map (CoordinatorRuntime."
        "java@4.1.1:846-853), but the timers it scheduled stay under its key. A group of the same id created again and "
        "still Empty without members when the old join timer fires is looked up by that id (GroupMetadataManager.java@"
        "4.1.1:6523-6532, 6937-6966) and completeClassicGroupJoin runs on it with no state check: initNextGeneration "
        "raises the generation, then Empty → Empty throws IllegalStateException (ClassicGroup.java@4.1.1:1290-1302, "
        "991-996). The runtime only logs the failed timer event (CR:384-405, 1421-1423; no revert: the generation is a "
        "plain field), leaving the group Empty at generation 1. The world reaches it with a failed FlushBatch under "
        "faults. A runtime rule of 4.1 (properties/runtime_4x.py), excused only for a join timer firing on an "
        "Empty member-less group after a failed flush.",
        "test_4_1_reverted_group_join_timer_fires_on_its_successor"),
    Finding(
        "leave-of-a-pending-member-id-ignores-its-instance-id", profiles_where(when("validate-current-member")),
        ("fenced-instance-id-never-succeeds",),
        "3.x LeaveGroup removes an identity whose member id is pending before validateCurrentMember looks at its "
        "group.instance.id (SPEC.md §3.4 [3.x]), so a LeaveGroup naming a pending member id with an instance id "
        "that maps to another member is answered NONE instead of FENCED_INSTANCE_ID (2.4–2.7 check fencing first). "
        "Nothing of the static member is touched: only the pending id goes. Found by the gate's mixed static walk.",
        "leave_of_a_pending_member_id_ignores_its_instance_id"),
    Finding(
        "failed-static-store-answers-the-captured-join", profiles_where(when("static-rejoin-persisted-in-stable")),
        ("each-request-is-answered-at-most-once", "parked-request-is-answered-not-dropped",
         "fenced-instance-id-never-succeeds"),
        "A static restart in Stable (KAFKA-10284, 2.6.1+) parks its JoinGroup on the member and stores the group; "
        "the store callback holds that JoinGroup's response callback itself (SPEC.md §3.1 J5a step 4; "
        "GroupCoordinator.updateStaticMemberAndRebalance, 2.7.0 lines 1056–1072, 3.9.0-rc3 lines 1378–1395). A "
        "failed store reverts the replacement — updateMember(..., null) clears the member's parked JoinGroup "
        "unanswered — and calls that captured callback. So when the member's JoinGroup was answered meanwhile (a join "
        "completion after the DelayedSync of members that owed a SyncGroup, a leave, an expiry) the same request is "
        "answered twice, the second time with the store error and member id \"\"; and when a later JoinGroup of the "
        "member parked over it, that later one is dropped — not fenced by the revert's replaceStaticMember, which "
        "comes after updateMember cleared it. The model predicts the captured answer; the excuses "
        "(properties/concrete_requests.py reverted_join) are exactly a failed append that reverts a replacement, "
        "answering a JoinGroup with an error or dropping the reverted member's parked JoinGroup. Found by the static "
        "walk and the static scope's sweep once they reached Stable.",
        "failed_static_store_answers_the_captured_join"),
    Finding(
        "static-store-answer-leaves-no-expiration", profiles_where(when("static-rejoin-persisted-in-stable")),
        ("idle-member-has-a-live-heartbeat-expiration", "silent-member-is-removed-within-its-session-timeout"),
        "A static restart in Stable (KAFKA-10284, 2.6.1+) reschedules the member's heartbeat, parks its JoinGroup "
        "and stores the group; the store callback answers the JoinGroup without rescheduling (GroupCoordinator."
        "updateStaticMemberAndRebalance, 2.7.0 lines 1073–1087, 3.9.0-rc3 lines 1396–1440). Meanwhile the member "
        "awaits a join, so its op's expiry keeps it and a heartbeat's new op completes at birth "
        "(hasSatisfiedHeartbeat, SPEC.md §4.6): once answered it is idle with no live expiration until its next "
        "heartbeat — a static member that then goes silent stays a member. The model has it "
        "(properties/abstract_static.py: model-idle-member-has-liveness-watch on 2.6.1+); found "
        "concretely by the static scope's sweep once it "
        "reached Stable.",
        "static_store_answer_leaves_no_expiration"),
    Finding(
        "failed-static-store-of-a-departed-member-throws", profiles_where(when("static-rejoin-persisted-in-stable")),
        ("no-illegal-state-error",),
        "The store callback of a static restart in Stable (KAFKA-10284, 2.6.1+) reverts a failed store by replacing "
        "the new member id with the old one; when the new id has left the group meanwhile — its LeaveGroup, an "
        "expiry, a join completion that removed it, another restart — replaceGroupInstance / replaceStaticMember "
        "throws IllegalArgumentException (\"Cannot replace non-existing member id\", GroupMetadata.scala 2.7.0 lines "
        "311–312, 3.9.0-rc3 lines 324–325) inside the callback, and nothing is answered. The model predicts it "
        "(model/static.py complete_static_append: a failure for an id that is gone since cannot revert). Found by the "
        "static scope's sweep once it reached Stable.",
        "failed_static_store_of_a_departed_member_throws"),
    Finding(
        "static-store-answers-the-next-restart-with-its-old-id",
        profiles_where(all_of(when("static-rejoin-persisted-in-stable"), unless("static-replacement-is-a-new-member"))),
        ("join-response-carries-the-group-generation-and-leader",),
        "A static member restarts in Stable and its store waits; the same instance restarts again before the store "
        "completes (a client that gave up on its JoinGroup and sent another). replaceStaticMember re-keys the same "
        "member object (GroupMetadata.scala 3.9.0-rc3 lines 319-340, 2.7.0 lines 305-326), and the first store's "
        "callback closes over that object: its success answers the *second* restart's parked JoinGroup NONE with the "
        "first restart's member id — no member any more — and the leader of when the first id was given "
        "(GroupCoordinator.scala 3.9.0-rc3 lines 1410-1440, 2.7.0 lines 1074-1082). The client then speaks with an "
        "id its instance no longer maps to and is fenced (FENCED_INSTANCE_ID, fatal to a Java consumer). The model "
        "has it (model/static.py _rekeyed). Found by reading the source (issue 27 §3), witnessed by the gate.",
        "test_a_successful_store_answers_the_next_restart_with_its_old_id",
        fixed_by="static-replacement-is-a-new-member"),
    Finding(
        "failed-static-store-drops-the-next-restarts-join",
        profiles_where(all_of(when("static-rejoin-persisted-in-stable"), unless("static-replacement-is-a-new-member"))),
        ("parked-request-is-answered-not-dropped", "idle-member-has-a-live-heartbeat-expiration"),
        "The failing case of static-store-answers-the-next-restart-with-its-old-id: the first store fails, and its "
        "revert first updates the member object — now the second restart's — with no callback and the first "
        "restart's timeouts (GroupCoordinator.scala 3.9.0-rc3 line 1383, 2.7.0 line 1061), which drops the second "
        "restart's parked JoinGroup unanswered (the client waits out its request timeout) and shortens the session "
        "without rescheduling its expiration, then throws on replaceStaticMember (finding "
        "failed-static-store-of-a-departed-member-throws). The model has it (model/static.py _rekeyed). Found by "
        "reading the source, witnessed by the gate.",
        "test_a_failed_store_drops_the_next_restarts_join",
        fixed_by="static-replacement-is-a-new-member"),
    Finding(
        "static-restart-keeps-a-protocol-it-does-not-support",
        profiles_where(all_of(when("static-membership"), unless("static-rejoin-persisted-in-stable"))),
        ("stable-or-completing-group-has-members-and-a-common-protocol",),
        "Before KAFKA-9801 (2.5.0) in CompletingRebalance and before KAFKA-10284 (2.6.1) in Stable, a static member's "
        "restart (member id \"\", known group.instance.id) is answered at once with the current generation and the "
        "group's protocol, after updateMember stored the protocols it brought (GroupCoordinator.scala 2.4.1 lines "
        "205-234). The JoinGroup's protocol check only asks for a protocol common to the request and the other "
        "members, so a consumer restarted with another assignor list (a rolling bounce that changes "
        "partition.assignment.strategy) stays in a group whose selected protocol it does not support, until the next "
        "rebalance. Found by the gate's static walk once restarts could change the assignor list (Scope."
        "assignor_upgrades).",
        "static_restart_keeps_a_protocol_it_does_not_support", fixed_by="static-rejoin-persisted-in-stable"),
    Finding(
        "unload-leaves-a-static-restarts-join-parked", profiles_where(when("static-rejoin-persisted-in-stable")),
        ("unload-answers-every-parked-request-not-coordinator", "parked-request-belongs-to-a-current-member",
         "join-response-carries-the-group-generation-and-leader", "fresh-heartbeat-not-completed-by-its-own-watch"),
        "A static restart in Stable (KAFKA-10284, 2.6.1+) parks its JoinGroup until the store callback of its id "
        "replacement answers it. onGroupUnloaded answers the parked requests of a Stable group's members with "
        "maybeInvokeSyncCallback only (SPEC.md §3.7; GroupCoordinator.onGroupUnloaded, 3.9.0-rc3 lines 1202–1206, "
        "2.7.0 from line 869), so that JoinGroup stays parked on the unloaded group object — no longer the cached "
        "group — until the store callback, which acts on "
        "that object, answers it — with that object's generation and leader, or, failing, reverts there and "
        "reschedules on the Dead object, whose new heartbeat op completes at birth (§4.6, correction 4). The model "
        "has it (model/static.py: an orphan static append answers the join its object still holds). Found by the "
        "static walk with partition moves.",
        "unload_leaves_a_static_restarts_join_parked"),
    Finding(
        "unloaded-skip-assignment-leader-store-throws",
        profiles_where(all_of(when("static-rejoin-persisted-in-stable"), when("static-rejoin-skips-assignment"))),
        ("no-illegal-state-error", "parked-join-only-in-preparing-rebalance",
         "parked-request-belongs-to-a-current-member", "parked-request-is-answered-not-dropped"),
        "The case of unload-leaves-a-static-restarts-join-parked where the restart is the leader's with a JoinGroup "
        "v9+ (KIP-814, 3.2+): the store callback succeeds on the unloaded group object, now Dead, and its "
        "supportSkippingAssignment branch lists the members for the leader with currentMemberMetadata before it "
        "answers — which throws IllegalStateException on a Dead group (GroupCoordinator.scala 3.9.0-rc3 lines "
        "1396–1423, 3.9.1 lines 1398–1425 under the lock KAFKA-18263 added, no state check either; GroupMetadata.scala "
        "3.9.0-rc3 and 3.9.1 lines 591–593). The exception leaves the callback: the JoinGroup is never answered and "
        "stays parked on the Dead object — until that object goes out of reach (its last op fires), unanswered; "
        "nothing else changes. The list is built before the callback looks at whether the join still waits, so it "
        "throws also when a rebalance on the object answered the join before the unload (walk static-partition seed "
        "25 of `kgc check --profile 3.9`). The model predicts it (model/outputs.py "
        "answerable_on_a_dead_group: an orphan static append answers no v9 leader). Found by the gate's static walk "
        "with partition moves (walk static-partition seed 0).",
        "unloaded_skip_assignment_leader_store_throws"),
    Finding(
        "v9-leader-store-throws-in-a-new-rebalance",
        profiles_where(all_of(when("static-rejoin-persisted-in-stable"), when("static-rejoin-skips-assignment"))),
        ("no-illegal-state-error",),
        "The same callback as unloaded-skip-assignment-leader-store-throws, with no unload: a static member restarts "
        "in Stable with a JoinGroup v9+ (KIP-814) and its store waits; meanwhile the leader leaves (a static "
        "LeaveGroup), the rebalance completes at once with the restarted member as leader and answers its join, "
        "and another member's JoinGroup starts the next rebalance. The store then succeeds; the callback lists the "
        "members for the leader before it looks at whether the join still waits (GroupCoordinator.scala 3.9.0-rc3 "
        "lines 1409-1414), and currentMemberMetadata throws IllegalStateException in PreparingRebalance as on Dead "
        "(GroupMetadata.scala 3.9.0-rc3 lines 591-593). Nothing else changes; a join still parked would stay parked "
        "for the rebalance to answer. The model predicts it (model/static.py _store_ok offers the callback that "
        "answers nothing to a leader in PreparingRebalance). Found by `kgc check --profile 3.9 --seed 1` (walk "
        "static-partition seed 100024).",
        "v9_leader_store_throws_in_a_new_rebalance"),
    Finding(
        "static-restart-leaves-its-old-id-owing-a-sync",
        profiles_where(all_of(when("static-membership"), when("delayed-sync"))),
        ("members-owing-a-sync-are-watched-by-a-delayed-sync",),
        "A static member that restarts (JoinGroup with member id \"\" and its group.instance.id) while its old member "
        "id still owes a SyncGroup of the current generation (3.0+, KAFKA-12890's pendingSyncMembers): "
        "replaceStaticMember re-keys the member and fences the old id's parked requests but leaves pendingSyncMembers "
        "untouched (SPEC.md Corrections 3; GroupMetadata.scala 3.9.0-rc3 lines 319-340, unchanged in 3.9.1), so the "
        "set holds an id that is no member, and the new id's SyncGroup cannot clear it — the DelayedSync expires and "
        "rebalances the group (GroupCoordinator.scala 3.9.0-rc3 lines 1656-1687). The model has it (model/static.py "
        "_leave_ops_behind: a free slot keeps the owed SyncGroup). Found by the gate's static walk with partition "
        "moves once the v9 leader's finding let it run on.",
        "static_restart_leaves_its_old_id_owing_a_sync"),
)

#: the finding whose IllegalStateError the properties below may follow
_ILLEGAL_STATE = next(f for f in FINDINGS if f.name == "dead-to-dead-on-an-unloaded-group")
#: (property, profile) pairs a finding breaks only after the coordinator hit an IllegalStateError
_EXCUSED = frozenset({"each-request-is-answered-at-most-once", "parked-response-is-not-yet-answered",
                      "delayed-join-completes-once-all-rejoined"})
AFTER_ILLEGAL_STATE: frozenset[tuple[str, str]] = frozenset(
    (p, profile) for p in _EXCUSED for profile in _ILLEGAL_STATE.profiles)


def excused_after_illegal_state(profile: str) -> frozenset[str]:
    """The properties whose violations on ``profile`` are explained once an IllegalStateError happened."""
    return _EXCUSED if profile in _ILLEGAL_STATE.profiles and excused(_ILLEGAL_STATE.name) else frozenset()


def undocumented(profile: str, steps: Sequence[Step], violations: Sequence[Violation]) -> list[Violation]:
    """The violations no finding explains: on 0.10.0 some follow an IllegalStateError (see above)."""
    if not excused(_ILLEGAL_STATE.name):
        return list(violations)
    first_error = next((st.index for st in steps if any(isinstance(e, IllegalState) for e in st.events)), None)
    return [v for v in violations
            if not ((v.property, profile) in AFTER_ILLEGAL_STATE and first_error is not None and v.step >= first_error)]


def get_finding(name: str) -> Finding:
    try:
        return next(f for f in FINDINGS if f.name == name)
    except StopIteration:
        raise LookupError(f"unknown finding {name!r}; properties/findings.py documents "
                          f"{', '.join(f.name for f in FINDINGS if f.gated)}.") from None


def gated(profile: str) -> tuple[Finding, ...]:
    """The findings the gate must reproduce on ``profile``, in FINDINGS order."""
    return tuple(f for f in FINDINGS if f.gated and profile in f.profiles)


def concrete_properties(profile: str) -> tuple[Property, ...]:
    """The concrete properties checked on ``profile``: the catalog's, plus those a finding of this profile
    breaks while its excuse is switched off (``harness.excuses.unexcused``) — off its ``applies_to``
    because of that very finding."""
    props = for_profile(profile, level="concrete")
    have = {p.name for p in props}
    extra = [CATALOG[name] for f in FINDINGS if profile in f.profiles and not excused(f.name)
             for name in f.properties if name in CATALOG and name not in have and CATALOG[name].level == "concrete"]
    return props + tuple(sorted(set(extra), key=lambda p: p.order))
