"""Kafka's own guards (impl/guards.py), per release, through the coordinator: where each one fires, what the request
in progress is answered, and that the coordinator logs it (its error log and an ``IllegalState`` event, which the
gate's ``no-illegal-state-error`` reads) — including a response callback that throws, re-answered
UNKNOWN_SERVER_ERROR from 3.3.2 (SPEC.md correction 5) and left parked before.

Expected values come from Kafka's source at each tag (cited per test), never from impl/profiles.py.
"""
from __future__ import annotations

from typing import Hashable

import pytest

from core.events import IllegalState
from core.types import Errors, GroupState
from impl import CoordinatorConfig, GroupCoordinator, ResponseFuture
from impl.group import GroupMetadata
from impl.guards import GuardAssertionError, IllegalArgumentError, IllegalStateError, ResponseCallbackError
from impl.profiles import get_profile
from tests.failing_callbacks import FailingFuture

PROFILES = ("2.4.1", "2.7.0", "3.9")
#: 3.3.2+ catches a throwing callback (GroupMetadata.scala 3.3.2 546-578, #12910); 2.4.1/2.7.0 let it go up
ANSWERS_FAILED_CALLBACK = {"2.4.1": False, "2.7.0": False, "3.9": True}
#: 3.0.0+ (#9958): GroupMetadata keeps pendingMembers itself; add() of a mapped instance id and addPendingMember()
#: of a member throw
KEEPS_ID_SETS = {"2.4.1": False, "2.7.0": False, "3.9": True}
PR, CR, S = GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE, GroupState.STABLE
PROTOS = [("range", b"r")]


class FailingCallbacks(GroupCoordinator):
    """A coordinator whose responses to the requests in ``failing`` cannot be sent the first time (Kafka's response
    callback throwing, as in KAFKA-14422)."""

    failing: frozenset[Hashable] = frozenset()

    def _future(self, request_key: Hashable | None, api: str) -> ResponseFuture:
        if request_key in self.failing:
            return FailingFuture(request_key, api, self._outbox)
        return super()._future(request_key, api)


def failing(profile: str, *keys: str) -> FailingCallbacks:
    coord = FailingCallbacks(CoordinatorConfig(profile=profile), record_events=True)
    coord.failing = frozenset(keys)
    return coord


def logged(coord: GroupCoordinator) -> list[str]:
    return [e.message for e in coord.events if isinstance(e, IllegalState)]


def join(coord: GroupCoordinator, client: str, key: str, member_id: str = "", **kw: object) -> ResponseFuture:
    return coord.join_group("g", member_id, 10000, 20000, "consumer", PROTOS, client_id=client, request_key=key,
                            **kw)   # type: ignore[arg-type]


# -- a response callback that throws (SPEC.md §3.8, correction 5) --------------------------------------------------
@pytest.mark.parametrize("profile", PROFILES)
def test_a_join_callback_that_throws_at_join_completion(profile: str) -> None:
    coord = failing(profile, "b-join")
    b, x = join(coord, "b", "b-join"), join(coord, "x", "x-join")   # member ids b-… < x-…: b is answered first
    coord.advance(3001)   # the initial delay, extended once for the member added during it: the join completes
    coord.advance(3001)
    group = coord.groups["g"]
    b_id, x_id = sorted(group.members)
    assert group.state is CR and len(logged(coord)) == 1 and "could not be sent" in logged(coord)[0]
    if ANSWERS_FAILED_CALLBACK[profile]:
        # 3.9 GM 537-551: logged, answered again with JoinGroupResult(memberId, UNKNOWN_SERVER_ERROR), unparked
        assert (b.result.error, b.result.generation_id, b.result.member_id) == (Errors.UNKNOWN_SERVER_ERROR, -1, b_id)
        assert x.result.error is Errors.NONE and x.result.generation_id == 1
        assert group.get(b_id).awaiting_join is None and group.num_members_awaiting_join == 0
    else:
        # 2.4.1 GM 500-507: the throw leaves onCompleteJoin's loop; b stays parked, the members after it unanswered
        assert not b.done and not x.done
        assert group.get(b_id).awaiting_join is b and group.get(x_id).awaiting_join is x
        assert group.num_members_awaiting_join == 2
        # not forever (SPEC.md §3.8 says "stays parked forever"): b is still new (isNew is cleared after the answer
        # the throw skipped), so its 5-minute new-member op removes it, answering its join UNKNOWN_MEMBER_ID with
        # member id "" (removeMemberAndUpdateGroup); the rebalance that follows answers x, which is still parked
        coord.advance(300_001)
        assert (b.result.error, b.result.member_id) == (Errors.UNKNOWN_MEMBER_ID, "")
        assert (x.result.error, x.result.generation_id) == (Errors.NONE, 2) and set(group.members) == {x_id}


@pytest.mark.parametrize("profile", PROFILES)
def test_a_sync_callback_that_throws_when_the_assignment_is_stored(profile: str) -> None:
    coord = failing(profile, "a-sync")
    x, a = join(coord, "x", "x-join"), join(coord, "a", "a-join")   # x joins first and leads; a-… sorts first
    coord.advance(3001)
    coord.advance(3001)
    group = coord.groups["g"]
    leader, follower = x.result.member_id, a.result.member_id
    a_id, x_id = follower, leader
    assert group.leader_id == leader and follower < leader   # the follower's SyncGroup is answered first
    f_sync = coord.sync_group("g", 1, follower, request_key="a-sync")
    l_sync = coord.sync_group("g", 1, leader, {a_id: b"A", x_id: b"X"}, request_key="x-sync")
    assert len(logged(coord)) == 1
    if ANSWERS_FAILED_CALLBACK[profile]:
        # 3.9 GM 556-572: the follower is answered SyncGroupResult(UNKNOWN_SERVER_ERROR), the leader its assignment
        assert f_sync.result.error is Errors.UNKNOWN_SERVER_ERROR and l_sync.result.error is Errors.NONE
        assert group.state is S and group.get(follower).awaiting_sync is None
    else:
        # 2.4.1: setAndPropagateAssignment throws before transitionTo(Stable); the leader's SyncGroup, still being
        # handled, is answered UNKNOWN_SERVER_ERROR by the request handler; the follower stays parked
        assert not f_sync.done and l_sync.result.error is Errors.UNKNOWN_SERVER_ERROR
        assert group.state is CR and group.get(follower).awaiting_sync is f_sync


# -- GroupMetadata's membership guards ------------------------------------------------------------------------------
def group_of(profile: str) -> GroupMetadata:
    return GroupMetadata("g", get_profile(profile), 1)


def member(member_id: str, instance: str | None = None, protocol_type: str = "consumer",
           protocols: tuple[tuple[str, bytes], ...] = (("range", b""),)):   # type: ignore[no-untyped-def]
    from impl.group import MemberMetadata
    return MemberMetadata(member_id, "c", "h", 10000, 20000, protocol_type, protocols, instance)


@pytest.mark.parametrize("profile", PROFILES)
def test_a_second_member_with_a_mapped_instance_id(profile: str) -> None:
    group = group_of(profile)
    group.add(member("m1", "i"))
    if KEEPS_ID_SETS[profile]:
        with pytest.raises(IllegalStateError):        # 3.9 GM 242-246
            group.add(member("m2", "i"))
        assert set(group.members) == {"m1"} and group.static_members == {"i": "m1"}
    else:                                             # 2.4.1 GM 233-248: add() does not look at instance ids
        group.add(member("m2", "i"))
        assert set(group.members) == {"m1", "m2"}


@pytest.mark.parametrize("profile", PROFILES)
def test_a_member_id_made_pending(profile: str) -> None:
    group = group_of(profile)
    group.add(member("m1"))
    if KEEPS_ID_SETS[profile]:
        with pytest.raises(IllegalStateError):        # 3.9 GM 344-350
            group.add_pending_member("m1")
        assert not group.pending_members
    else:                                             # 2.4.1 GM 329: a plain add to the set
        group.add_pending_member("m1")
        assert group.pending_members == {"m1"}


@pytest.mark.parametrize("protocol_type,protocols", [("other", (("range", b""),)), ("consumer", (("other", b""),))])
@pytest.mark.parametrize("profile", PROFILES)
def test_a_member_the_group_does_not_support(profile: str, protocol_type: str,
                                              protocols: tuple[tuple[str, bytes], ...]) -> None:
    group = group_of(profile)
    group.add(member("m1"))
    group.transition_to(PR, 0)
    with pytest.raises(GuardAssertionError):          # Scala asserts: 2.4.1 GM 238-239, 3.9 GM 252-253
        group.add(member("m2", protocol_type=protocol_type, protocols=protocols))
    assert set(group.members) == {"m1"}


@pytest.mark.parametrize("profile", PROFILES)
def test_the_guards_kafka_has_at_every_release(profile: str) -> None:
    group = group_of(profile)
    with pytest.raises(IllegalStateError):            # selectProtocol: 2.4.1 GM 407-409, 3.9 GM 434-436
        group.select_protocol()
    with pytest.raises(IllegalArgumentError):         # replaceGroupInstance: 2.4.1 GM 302-303, 3.9 GM 324-325
        group.replace_static_member("i", "gone", "new")
    group.add(member("m1"))
    with pytest.raises(IllegalStateError):            # currentMemberMetadata: 2.4.1 GM 539-541, 3.9 GM 591-593
        group.current_member_metadata()
    with pytest.raises(IllegalArgumentError):         # MemberMetadata.metadata: 3.9 MM 85-90
        group.get("m1").metadata("roundrobin")


def test_pending_sync_bookkeeping_of_a_non_member_on_3_9() -> None:
    group = group_of("3.9")                           # 3.9 GM 352-366 (KAFKA-12890)
    with pytest.raises(IllegalStateError):
        group.add_pending_sync_member("m1")
    with pytest.raises(IllegalStateError):
        group.remove_pending_sync_member("m1")


# -- the coordinator: a guard that fires is logged and the request answered UNKNOWN_SERVER_ERROR ------------------
@pytest.mark.parametrize("error", [IllegalStateError, IllegalArgumentError, GuardAssertionError,
                                   ResponseCallbackError])
def test_any_guard_inside_a_request_is_logged_and_answered_unknown_server_error(
        error: type[Exception], monkeypatch: pytest.MonkeyPatch) -> None:
    coord = GroupCoordinator(CoordinatorConfig(profile="3.9"), record_events=True)

    def trips(*args: object, **kwargs: object) -> None:
        raise error("planted")
    monkeypatch.setattr(GroupCoordinator, "do_join_group", trips)
    f = join(coord, "c", "k")
    assert f.result.error is Errors.UNKNOWN_SERVER_ERROR
    [message] = logged(coord)
    assert message.endswith("planted") and coord.errors == [f"0 {message}"]
    # the Java exception's name is logged with it, except IllegalStateException's (bare, as the logs always had it)
    assert message.startswith(error.kafka_exception) != (error is IllegalStateError)   # type: ignore[attr-defined]


# -- GroupCoordinator: a LeaveGroup naming a pending member id with a group.instance.id ------------------------------
#: 2.4.1 GC 471-474, 2.7.0 GC 477-480: IllegalStateException (a pending id is never static); 3.x removes the pending
#: id before validateCurrentMember reads the instance id (finding leave-of-a-pending-member-id-ignores-its-instance-id)
LEAVE_OF_PENDING_THROWS = {"2.4.1": True, "2.7.0": True, "3.9": False}


@pytest.mark.parametrize("profile", PROFILES)
def test_a_leave_of_a_pending_member_id_with_an_instance_id(profile: str) -> None:
    coord = GroupCoordinator(CoordinatorConfig(profile=profile), record_events=True)
    pending = join(coord, "c", "k", require_known_member_id=True).result.member_id
    assert coord.describe("g").pending_members == {pending}
    # Kafka's testPendingMemberWithUnexpectedInstanceIdBatchLeaveGroup: an unknown instance first, then the pending id
    answer = coord.leave_group("g", [("", "unknown-instance"), (pending, "instanceId")]).result
    if LEAVE_OF_PENDING_THROWS[profile]:
        assert answer.error is Errors.UNKNOWN_SERVER_ERROR and coord.describe("g").pending_members == {pending}
        [message] = logged(coord)
        assert pending in message and "instanceId" in message
    else:
        assert answer.error is Errors.NONE and not logged(coord)
        assert [e for _, _, e in answer.member_errors] == [Errors.UNKNOWN_MEMBER_ID, Errors.NONE]
        assert coord.describe("g").pending_members == frozenset()


# -- who keeps pendingMembers: GroupMetadata from 3.0.0 (#9958), the coordinator before ---------------------------
@pytest.mark.parametrize("profile", PROFILES)
def test_remove_drops_a_pending_id_only_from_3_0(profile: str) -> None:
    """3.9 GM 277-281 (remove() also forgets a pending id; GroupMetadataTest.testRemovalFromPendingWhenMemberIsRemoved);
    2.4.1 GM 250-259 (it does not: pending ids are the coordinator's, removePendingMember)."""
    group = group_of(profile)
    group.add_pending_member("p")
    group.remove("p")
    assert group.is_pending_member("p") != KEEPS_ID_SETS[profile]


@pytest.mark.parametrize("profile", PROFILES)
def test_a_pending_id_refused_at_group_max_size(profile: str) -> None:
    """acceptJoiningMember refuses a pending id when the rebalance already holds group.max.size members, and the
    coordinator calls group.remove(memberId) (2.7.0 GC 184-187, 3.9 GC 193-195): 3.x's remove() drops the pending id,
    2.7.0's keeps it pending, so the join phase waits for it until its pending expiration (SPEC.md §3.1 J4 says
    "also clears pending" for 2.6.0+). 2.4.1's over-capacity rule never refuses a pending id (2.4.1 GC 162-164)."""
    coord = GroupCoordinator(CoordinatorConfig(profile=profile, group_max_size=1), record_events=True)
    pending = join(coord, "b", "b1", require_known_member_id=True).result.member_id   # while the group is Empty
    first = join(coord, "a", "a1", require_known_member_id=True).result.member_id
    join(coord, "a", "a2", member_id=first)                          # a member, parked in PreparingRebalance
    assert coord.describe("g").state is PR and coord.describe("g").pending_members == {pending}
    answer = join(coord, "b", "b2", member_id=pending)
    if profile == "2.4.1":
        assert answer.result is None and pending in coord.describe("g").members   # admitted, parked
        return
    assert answer.result.error is Errors.GROUP_MAX_SIZE_REACHED
    assert (pending in coord.describe("g").pending_members) != KEEPS_ID_SETS[profile]
