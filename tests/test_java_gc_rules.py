"""The 4.1 runtime (impl/java_gc) against SPEC-4x.md's rules R1-R16 as checked at Kafka 4.1.1: each test pins one
rule — the value Kafka's code gives, read from GMM/GCS/CR at tag 4.1.1 (bench/results/spec-4x-check-*.md)."""
from __future__ import annotations

import pytest

from core.types import Errors, GroupState
from impl import PROFILES, CoordinatorConfig, GroupCoordinator, UnknownProfileError
from impl.java_gc import JavaGroupCoordinator
from impl.java_gc.choices import java_hashmap_order
from impl.java_gc.versions import RELEASE_4_0_0, RELEASE_4_0_1, RELEASE_4_1
from impl.mutants import all_mutants
from tests.kafka_suites.gmm_context import GROUP, context, create_group, group, heartbeat, hb_key, join, sync

E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)


def stable_pair(c: JavaGroupCoordinator, session: int = 10000, rebalance: int = 10000) -> tuple[str, str]:
    """Two dynamic members through one rebalance to CompletingRebalance (generation 1): (leader, follower); the
    second join extends the initial delay once, so the join phase ends at 6000."""
    create_group(c)
    a, b = join(c, session=session, rebalance=rebalance), join(c, session=session, rebalance=rebalance)
    c.advance(3000)
    c.advance(3000)
    assert a.result.error is Errors.NONE and b.result.error is Errors.NONE and group(c).state is CR
    return a.result.leader_id, next(r.member_id for r in (a.result, b.result) if r.member_id != a.result.leader_id)


def test_registration_builds_the_java_runtime_but_keeps_4_1_out_of_the_profiles() -> None:
    assert isinstance(GroupCoordinator(CoordinatorConfig(profile="4.1")), JavaGroupCoordinator)
    assert "4.1" not in PROFILES and type(GroupCoordinator(CoordinatorConfig())) is GroupCoordinator
    assert type(GroupCoordinator(CoordinatorConfig(profile=PROFILES["3.9"]))) is GroupCoordinator   # a Profile value
    with pytest.raises(UnknownProfileError):   # a Scala-shaped mutant is never redirected to the sibling runtime
        next(m for m in all_mutants() if issubclass(m.cls, GroupCoordinator)).cls(CoordinatorConfig(profile="4.1"))


def test_r1_a_timer_event_whose_key_was_rescheduled_meanwhile_is_dropped() -> None:
    for heartbeat_between in (False, True):
        c = context("4.1")
        leader, follower = stable_pair(c, session=6000)
        assert sync(c, leader, 1, assignments={}).result.error is Errors.NONE   # propagation: both rescheduled
        c.advance_time(6000)   # both session timers expire into the queue; nothing ran yet
        queued = {t.key: t for t in c.timers() if t.status == "queued"}
        assert set(queued) == {hb_key(leader), hb_key(follower)}
        if heartbeat_between:   # the follower's heartbeat reaches the loop first and replaces its key
            assert heartbeat(c, follower, 1) is Errors.NONE
            assert [t.status for t in c.timers() if t.seq == queued[hb_key(follower)].seq] == ["stale"]
        c.fire_timer(queued[hb_key(follower)].seq)
        assert group(c).has_member(follower) is heartbeat_between
        assert c.take_fired()[-1] == (hb_key(follower), "heartbeat", not heartbeat_between)


def test_r2_a_write_not_committed_within_offsets_commit_timeout_answers_coordinator_not_available() -> None:
    c = context("4.1", append_mode="deferred")
    leader, follower = stable_pair(c)
    c.complete_appends()
    s = sync(c, leader, 1, assignments={leader: b"a", follower: b"b"})   # the assignment write stays pending
    h = c.heartbeat(GROUP, follower, 1)
    assert not s.done and not h.done   # R3: the heartbeat waits for the earlier write
    c.advance(c.offsets_commit_timeout_ms)
    assert h.result.error is Errors.COORDINATOR_NOT_AVAILABLE   # REQUEST_TIMED_OUT, mapped
    assert s.result.error is Errors.COORDINATOR_NOT_AVAILABLE   # R8: not 3.9's REBALANCE_IN_PROGRESS
    assert group(c).state is PR   # the failed assignment write rebalances the group
    c.complete_appends()   # the record still commits later: it answers nobody twice
    assert c.group_record(GROUP)[4][0][7] in (b"a", b"b")


def test_r3_heartbeats_wait_for_earlier_writes_but_join_answers_do_not() -> None:
    c = context("4.1", append_mode="deferred")
    first = join(c, known=True)
    # the new group's record is pending, yet the JoinGroup is answered now (GMM completes it in the write)
    assert first.result.error is Errors.MEMBER_ID_REQUIRED and [a.kind for a in c.pending_appends()] == ["new-group"]
    second = join(c, first.result.member_id, known=True)
    c.advance(3000)
    assert second.result.error is Errors.NONE and c.pending_appends()   # still nothing committed
    h = c.heartbeat(GROUP, second.result.member_id, 1)
    assert not h.done
    c.flush()
    assert not h.done   # written, not yet committed
    c.commit()
    assert h.result.error is Errors.NONE


def test_r4_describe_group_sees_committed_creations_and_live_fields() -> None:
    c = context("4.1", append_mode="deferred")
    f = join(c)
    assert c.describe_group(GROUP).error is Errors.GROUP_ID_NOT_FOUND and c.describe(GROUP).state is PR
    c.complete_appends()
    c.advance(3000)
    leader = f.result.member_id
    sync(c, leader, 1, assignments={leader: b"x"})   # uncommitted: the group is still CompletingRebalance
    described = c.describe_group(GROUP)
    assert (described.error, described.state) == (Errors.NONE, "CompletingRebalance")
    join(c, session=500)   # a new member: uncommitted-free change, visible at once
    assert c.describe_group(GROUP).state == "PreparingRebalance"


def test_r5_a_failed_new_group_write_reverts_the_group_but_not_an_answer_already_sent() -> None:
    c = context("4.1", append_mode="deferred")
    first = join(c, known=True)
    parked = join(c, instance="static-1")
    assert first.result.error is Errors.MEMBER_ID_REQUIRED and not parked.done
    c.flush(error=Errors.NOT_ENOUGH_REPLICAS)
    assert c.describe(GROUP) is None and c.describe_group(GROUP).error is Errors.GROUP_ID_NOT_FOUND
    assert first.result.error is Errors.MEMBER_ID_REQUIRED   # answered before: stays answered
    assert parked.result.error is Errors.COORDINATOR_NOT_AVAILABLE
    assert join(c, first.result.member_id, known=True).result.error is Errors.UNKNOWN_MEMBER_ID


def test_r6_requests_to_a_loading_partition() -> None:
    c = context("4.1")
    leader, _ = stable_pair(c)
    c.set_loading(GROUP, True)
    assert sync(c, leader, 1).result.error is Errors.COORDINATOR_LOAD_IN_PROGRESS   # 3.9: REBALANCE_IN_PROGRESS
    assert heartbeat(c, leader, 1) is Errors.NONE   # answered blindly
    assert join(c).result.error is Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert c.leave_group(GROUP, [(leader, None)]).result.error is Errors.COORDINATOR_LOAD_IN_PROGRESS
    c.unload_group(GROUP)
    assert sync(c, leader, 1).result.error is Errors.NOT_COORDINATOR


def test_r7_the_service_checks_precede_the_partition_checks() -> None:
    c = context("4.1", group_min_session_timeout_ms=6000)
    c.set_loading(GROUP, True)
    assert join(c, session=500).result.error is Errors.INVALID_SESSION_TIMEOUT   # 3.9: LOAD_IN_PROGRESS first
    c.unload_group(GROUP)
    assert join(c, session=500).result.error is Errors.INVALID_SESSION_TIMEOUT   # 3.9: NOT_COORDINATOR first
    assert join(c, group_id="").result.error is Errors.INVALID_GROUP_ID
    c.set_active(False)
    assert join(c, group_id="").result.error is Errors.COORDINATOR_NOT_AVAILABLE


def test_r8_a_failed_assignment_write_maps_its_error() -> None:
    for error, answered in ((Errors.REQUEST_TIMED_OUT, Errors.COORDINATOR_NOT_AVAILABLE),
                            (Errors.NOT_LEADER_OR_FOLLOWER, Errors.NOT_COORDINATOR)):
        c = context("4.1", append_mode="deferred")
        leader, follower = stable_pair(c)
        c.complete_appends()
        waiting = sync(c, follower, 1)
        s = sync(c, leader, 1)
        c.complete_appends(ok=False, error=error)
        assert s.result.error is answered and waiting.result.error is answered and group(c).state is PR


def test_r9_a_sync_in_stable_does_not_extend_the_session() -> None:
    c = context("4.1")
    leader, follower = stable_pair(c, session=10000)   # both session timers end at 6000 + 10000
    assert sync(c, leader, 1).result.error is Errors.NONE and group(c).state is S   # the leader's is rescheduled
    c.advance(5000)
    assert sync(c, follower, 1).result.error is Errors.NONE   # late sync in Stable: no reschedule
    assert heartbeat(c, leader, 1) is Errors.NONE
    c.advance(5000)   # 16000: the follower's session, counted from join completion, is over
    assert not group(c).has_member(follower) and group(c).state is PR   # 3.9 would keep it until 21000


def test_r10_a_refused_join_does_not_complete_the_join_phase() -> None:
    c = context("4.1", group_max_size=2)
    members = tuple((f"m{i}", None, "client", "/127.0.0.1", 20000, 60000, b"foo", b"") for i in range(3))
    from tests.kafka_suites.gmm_context import load_record
    load_record(c, GROUP, (1, "consumer", "range", "m0", members))
    assert group(c).state is PR   # loaded over capacity: a non-initial rebalance
    a, b = join(c, "m0", rebalance=20000, session=60000), join(c, "m1", rebalance=20000, session=60000)
    refused = join(c, "m2", rebalance=20000, session=60000)
    assert refused.result.error is Errors.GROUP_MAX_SIZE_REACHED and not group(c).has_member("m2")
    assert group(c).has_all_members_joined() and group(c).state is PR   # every member joined, nothing completes
    assert not a.done and not b.done
    c.advance(20000)   # the join timer (rebalance timeout) completes it
    assert a.result.error is Errors.NONE and b.result.error is Errors.NONE and group(c).state is CR


def test_r11_a_protocol_tie_is_a_choice_point_defaulting_to_javas_hashmap_order() -> None:
    # Java 17's HashMap<String, Integer> iterates these keys in this order (checked with a JDK)
    assert java_hashmap_order(("roundrobin", "range")) == ("range", "roundrobin")
    assert java_hashmap_order(("cooperative-sticky", "range")) == ("range", "cooperative-sticky")
    assert java_hashmap_order(("zeta", "alpha")) == ("zeta", "alpha")
    picked = []
    for script in ([], [1]):
        c = context("4.1")
        a = join(c, names=("range", "roundrobin"))
        join(c, names=("roundrobin", "range"))
        c.force_choices(script)
        c.advance(3000)
        points = [p for p in c.take_choices() if p.kind == "protocol-tie"]
        assert [p.options for p in points] == [("range", "roundrobin")]
        picked.append(a.result.protocol_name)
    assert picked == ["range", "roundrobin"]


def test_r12_a_static_replacement_is_never_a_new_member() -> None:
    c = context("4.1")
    first = join(c, instance="i", session=6000, rebalance=400000)
    assert group(c).members[group(c).static_members["i"]].is_new
    second = join(c, instance="i", session=6000, rebalance=400000)
    assert first.result.error is Errors.FENCED_INSTANCE_ID and not second.done
    new_id = group(c).static_members["i"]
    assert not group(c).members[new_id].is_new
    c.advance(6000)   # its session timer fires during the rebalance: parked and not new, it stays
    assert group(c).has_member(new_id)


def test_r13_constants_and_the_keep_alive_rule() -> None:
    c = context("4.1")
    f = join(c)
    member_id = group(c).leader_id
    task = next(t for t in c.timers() if t.key == hb_key(member_id))
    assert task.deadline_ms == 300000 and not f.done   # the new-member join timeout
    assert CoordinatorConfig(profile="4.1").group_initial_rebalance_delay_ms == 3000
    assert (CoordinatorConfig().group_min_session_timeout_ms, CoordinatorConfig().group_max_session_timeout_ms) == \
        (6000, 1800000)


def test_r14_api_versions_per_release() -> None:
    assert RELEASE_4_0_0.api_versions["JoinGroup"] == (2, 9)
    assert RELEASE_4_0_1.api_versions["JoinGroup"] == (0, 9)
    assert RELEASE_4_1.api_versions["JoinGroup"] == (0, 9)
    # OffsetCommitRequest.json / OffsetFetchRequest.json @4.1.1: validVersions 2-10 / 1-10, but v10 is
    # "latestVersionUnstable": a broker with its default settings (unstable.api.versions.enable=false,
    # ServerConfigs.java@4.1.1:152) accepts and advertises up to v9 (ApiVersionManager.java@4.1.1:63)
    assert RELEASE_4_1.api_versions["OffsetCommit"] == (2, 9) and RELEASE_4_0_1.api_versions["OffsetCommit"] == (2, 9)
    assert RELEASE_4_1.api_versions["OffsetFetch"] == (1, 9)
    assert dict(RELEASE_4_1.unstable_versions) == {"OffsetCommit": 10, "OffsetFetch": 10}
    assert RELEASE_4_1.api_versions["DescribeGroups"] == (0, 6) and RELEASE_4_1.api_versions["SyncGroup"] == (0, 5)


def test_r15_offset_commit_to_a_missing_group() -> None:
    c = context("4.1")
    assert c.commit_offsets(GROUP, "m", 1, api_version=9).result.error is Errors.GROUP_ID_NOT_FOUND
    assert c.commit_offsets(GROUP, "m", 1, api_version=8).result.error is Errors.ILLEGAL_GENERATION
    assert c.commit_offsets(GROUP, "", -1, api_version=8).result.error is Errors.NONE
    assert c.describe(GROUP).state is E and c.describe(GROUP).protocol_type is None   # a "simple" group


def test_r16_describe_group_versions() -> None:
    c = context("4.1")
    assert c.describe_group("nope", 6).error is Errors.GROUP_ID_NOT_FOUND
    assert c.describe_group("nope", 5).error is Errors.NONE
    assert {c.describe_group("nope", v).state for v in (5, 6)} == {"Dead"}
    assert c.describe_group(None).error is Errors.INVALID_GROUP_ID


def test_unload_fails_pending_writes_and_load_rebuilds_from_committed_records() -> None:
    c = context("4.1", append_mode="deferred")
    leader, follower = stable_pair(c)
    c.complete_appends()
    sync(c, leader, 1, assignments={leader: b"a", follower: b"b"})
    c.complete_appends()   # generation 1, Stable, committed
    rejoin = [join(c, m, session=10000, rebalance=10000) for m in (leader, follower)]
    assert all(f.result.error is Errors.NONE for f in rejoin) and group(c).generation_id == 2
    s = sync(c, leader, 2, assignments={leader: b"c", follower: b"d"})
    c.unload_group(GROUP)
    assert s.result.error is Errors.NOT_COORDINATOR and c.describe(GROUP) is None
    c.load_group(GROUP)
    view = c.describe(GROUP)   # rebuilt from the last committed record: generation 2's write was lost
    assert (view.state, view.generation_id) == (S, 1)
    assert {m: v.assignment for m, v in view.members.items()} == {leader: b"a", follower: b"b"}


def test_r10_without_a_load_a_refused_pending_member_leaves_the_join_phase_waiting() -> None:
    """R10 is reachable with KIP-394 pending members alone: max size 2, a Stable group of one, two v4 members get
    pending ids, the leader's JoinGroup starts a rebalance, the first pending member is added, the second is
    refused — and with it the last thing the join phase waited for is gone, unnoticed until the rebalance timeout."""
    c = context("4.1", group_max_size=2)
    create_group(c)
    first = join(c, session=30000, rebalance=20000)
    c.advance(3000)
    leader = first.result.member_id
    assert sync(c, leader, 1).result.error is Errors.NONE and group(c).state is S
    b, d = (join(c, session=30000, rebalance=20000, known=True) for _ in range(2))
    assert b.result.error is Errors.MEMBER_ID_REQUIRED and d.result.error is Errors.MEMBER_ID_REQUIRED
    rejoin = join(c, leader, session=30000, rebalance=20000)
    assert group(c).state is PR and not rejoin.done
    added = join(c, b.result.member_id, session=30000, rebalance=20000, known=True)
    refused = join(c, d.result.member_id, session=30000, rebalance=20000, known=True)
    assert refused.result.error is Errors.GROUP_MAX_SIZE_REACHED
    assert group(c).has_all_members_joined() and group(c).state is PR and not added.done and not rejoin.done
    c.advance(20000 - 1)
    assert not rejoin.done   # 3.9 would have completed the join phase at the refused JoinGroup
    c.advance(1)
    assert rejoin.result.error is Errors.NONE and added.result.error is Errors.NONE and group(c).state is CR
