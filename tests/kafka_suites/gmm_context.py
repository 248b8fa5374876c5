"""The restated GroupMetadataManagerTest's fixture: a 4.1 coordinator set up as Kafka's test context sets up
its GroupMetadataManager, and the context's helpers, in our words, through kgc's public surface.

Kafka's test context calls GroupMetadataManager directly: no GroupCoordinatorService checks (its requests use a
500 ms session timeout, below the 6 s minimum the service enforces), JoinGroup v3 unless v4 is asked for, and a
MockCoordinatorTimer firing tasks at their deadline. We drive the coordinator through the service, so the context
lowers the minimum session timeout; its appends commit at once unless a test asks for the deferred mode.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.types import Errors, GroupState
from impl import CoordinatorConfig, GroupCoordinator, JoinGroupResult, ResponseFuture

GROUP = "group-id"
INITIAL_DELAY_MS = 3000             # group.initial.rebalance.delay.ms default (GroupCoordinatorConfig.java:146)
NEW_MEMBER_JOIN_TIMEOUT_MS = 300000
TOPICS = ("foo", "bar", "baz")


def context(profile: str, append_mode: str = "sync", **config: Any) -> Any:
    """A coordinator like GroupMetadataManagerTestContext's (default broker settings, lenient session bounds)."""
    settings: dict[str, Any] = {"group_min_session_timeout_ms": 1, "group_max_session_timeout_ms": 1800000}
    settings.update(config)
    return GroupCoordinator(CoordinatorConfig(profile=profile, append_mode=append_mode, **settings))


def protocols(*names: str) -> list[tuple[str, bytes]]:
    """toProtocols: each protocol's metadata a subscription to foo, bar, baz in turn (here: the topic's bytes)."""
    return [(name, TOPICS[i % len(TOPICS)].encode()) for i, name in enumerate(names)]


def join(c: Any, member_id: str = "", group_id: str = GROUP, *, instance: str | None = None,
         names: tuple[str, ...] = ("range",), protocol_type: str = "consumer", session: int = 500,
         rebalance: int = 500, known: bool = False, skip: bool = False,
         protocol_list: list[tuple[str, bytes]] | None = None) -> ResponseFuture:
    """sendClassicGroupJoin: v3 by default, v4+ (``known``), v9 (``skip``)."""
    return c.join_group(group_id, member_id, session, rebalance, protocol_type,
                        protocol_list if protocol_list is not None else protocols(*names),
                        group_instance_id=instance, require_known_member_id=known or skip,
                        support_skipping_assignment=skip)


def sync(c: Any, member_id: str, generation: int, group_id: str = GROUP, *, instance: str | None = None,
         assignments: dict[str, bytes] | None = None, protocol_type: str | None = "consumer",
         protocol_name: str | None = "range") -> ResponseFuture:
    """sendClassicGroupSync with SyncGroupRequestBuilder's defaults (protocol type consumer, name range)."""
    return c.sync_group(group_id, generation, member_id, assignments or {}, instance, protocol_type, protocol_name)


def written(c: Any) -> None:
    """"Simulate a successful write to the log": in deferred mode the pending writes commit."""
    if c.config.append_mode == "deferred":
        c.complete_appends()


def heartbeat(c: Any, member_id: str, generation: int, group_id: str = GROUP,
              instance: str | None = None) -> Errors:
    f = c.heartbeat(group_id, member_id, generation, instance)
    assert f.done
    return f.result.error


def state(c: Any, group_id: str = GROUP) -> GroupState:
    return c.describe(group_id).state


def timer(c: Any, key: str) -> Any:
    """The live task under ``key`` (MockCoordinatorTimer.timeout), or None."""
    found = [t for t in c.timers() if t.key == key and t.status == "scheduled"]
    return found[0] if found else None


def hb_key(member_id: str, group_id: str = GROUP) -> str:
    return f"heartbeat-{group_id}-{member_id}"


def join_as_dynamic_and_complete_join(c: Any, group_id: str = GROUP, session: int = 5000,
                                      rebalance: int = 10000, names: tuple[str, ...] = ("range",)) -> JoinGroupResult:
    """joinClassicGroupAsDynamicMemberAndCompleteJoin: MEMBER_ID_REQUIRED, rejoin, the initial delay passes."""
    first = join(c, "", group_id, names=names, session=session, rebalance=rebalance, known=True)
    assert first.done and first.result.error is Errors.MEMBER_ID_REQUIRED
    second = join(c, first.result.member_id, group_id, names=names, session=session, rebalance=rebalance, known=True)
    assert not second.done
    c.advance(INITIAL_DELAY_MS)
    assert second.done and second.result.error is Errors.NONE
    return second.result


def join_as_dynamic_and_complete_rebalance(c: Any, group_id: str = GROUP) -> JoinGroupResult:
    """joinClassicGroupAsDynamicMemberAndCompleteRebalance: one member, generation 1, Stable."""
    if c.describe(group_id) is None:
        create_group(c, group_id)
    leader = join_as_dynamic_and_complete_join(c, group_id)
    assert leader.generation_id == 1 and state(c, group_id) is GroupState.COMPLETING_REBALANCE
    f = sync(c, leader.member_id, leader.generation_id, group_id)
    written(c)
    assert f.done and f.result.error is Errors.NONE and state(c, group_id) is GroupState.STABLE
    return leader


@dataclass(frozen=True)
class Rebalanced:
    generation_id: int
    leader_id: str
    leader_assignment: bytes
    follower_id: str
    follower_assignment: bytes


def static_members_join_and_rebalance(c: Any, leader_instance: str, follower_instance: str,
                                      group_id: str = GROUP, rebalance: int = 10000, session: int = 5000) -> Rebalanced:
    """staticMembersJoinAndRebalance: two static members (protocols range and roundrobin), the initial delay
    twice, the leader assigns [1] and [2], both sync; Stable at generation 1."""
    names = ("range", "roundrobin")
    create_group(c, group_id)
    lj = join(c, "", group_id, instance=leader_instance, names=names, rebalance=rebalance, session=session)
    fj = join(c, "", group_id, instance=follower_instance, names=names, rebalance=rebalance, session=session)
    assert not lj.done and not fj.done
    c.advance(INITIAL_DELAY_MS)
    c.advance(INITIAL_DELAY_MS)
    assert lj.result.error is Errors.NONE and fj.result.error is Errors.NONE
    assert lj.result.generation_id == fj.result.generation_id == 1
    assert state(c, group_id) is GroupState.COMPLETING_REBALANCE
    leader_id, follower_id = lj.result.member_id, fj.result.member_id
    ls = sync(c, leader_id, 1, group_id, instance=leader_instance,
              assignments={leader_id: b"\x01", follower_id: b"\x02"})
    written(c)
    assert ls.result.error is Errors.NONE and state(c, group_id) is GroupState.STABLE
    fs = sync(c, follower_id, 1, group_id, instance=follower_instance)
    assert fs.result.error is Errors.NONE
    assert len(c.describe(group_id).members) == 2 and c.describe(group_id).generation_id == 1
    return Rebalanced(1, leader_id, ls.result.assignment, follower_id, fs.result.assignment)


def join_with_n_members(c: Any, n: int, rebalance: int, session: int, group_id: str = GROUP) -> list[JoinGroupResult]:
    """joinWithNMembers: n members through MEMBER_ID_REQUIRED, then the initial delay, then the rebalance
    timeout completes the join phase."""
    ids = []
    for _ in range(n):
        f = join(c, "", group_id, session=session, rebalance=rebalance, known=True)
        assert f.done
        ids.append(f.result.member_id)
    second = [join(c, m, group_id, session=session, rebalance=rebalance, known=True) for m in ids]
    assert not any(f.done for f in second)
    c.advance(INITIAL_DELAY_MS)
    assert not any(f.done for f in second)
    c.advance(rebalance)
    assert all(f.done and f.result.error is Errors.NONE for f in second)
    assert len(c.describe(group_id).members) == n and state(c, group_id) is GroupState.COMPLETING_REBALANCE
    return [f.result for f in second]


@dataclass(frozen=True)
class PendingGroup:
    leader_id: str
    follower_id: str
    pending_member_id: str


def setup_group_with_pending_member(c: Any, group_id: str = GROUP) -> PendingGroup:
    """setupGroupWithPendingMember: a Stable group of two, the leader rejoins (PreparingRebalance), a v4 member
    gets a pending id (session 2.5 s), the follower rejoins."""
    leader = join_as_dynamic_and_complete_join(c, group_id)
    assert sync(c, leader.member_id, leader.generation_id, group_id,
                assignments={leader.member_id: b""}).result.error is Errors.NONE
    follower_join = join(c, "", group_id, session=5000, rebalance=10000)
    assert not follower_join.done
    leader_join = join(c, leader.member_id, group_id, session=5000, rebalance=10000)
    assert leader_join.done and follower_join.done and state(c, group_id) is GroupState.COMPLETING_REBALANCE
    assert leader_join.result.leader_id == follower_join.result.leader_id == leader.member_id
    generation, follower_id = leader_join.result.generation_id, follower_join.result.member_id
    assert sync(c, leader.member_id, generation, group_id,
                assignments={leader.member_id: b""}).result.error is Errors.NONE
    assert state(c, group_id) is GroupState.STABLE
    rejoin = join(c, leader.member_id, group_id, session=5000, rebalance=10000)
    assert not rejoin.done and state(c, group_id) is GroupState.PREPARING_REBALANCE
    pending = join(c, "", group_id, session=2500, rebalance=10000, known=True)
    assert pending.result.error is Errors.MEMBER_ID_REQUIRED
    assert len(c.describe(group_id).pending_members) == 1
    follower_rejoin = join(c, follower_id, group_id, session=5000, rebalance=10000)
    assert not follower_rejoin.done and len(c.describe(group_id).members) == 2
    return PendingGroup(leader.member_id, follower_id, pending.result.member_id)


def load_record(c: Any, group_id: str, record: tuple[Any, ...]) -> None:
    """``context.replay`` of a GroupMetadata record then ``onLoaded``: the partition's log holds ``record`` as
    its last committed record for the group and the broker (re)loads the partition."""
    c.unload_group(group_id)
    c.durable.setdefault(c.partition_for(group_id), {})[group_id] = record
    c.load_group(group_id)


def group(c: Any, group_id: str = GROUP) -> Any:
    """The live ClassicGroup object (Kafka's tests read and drive the group object directly too)."""
    return c._group(group_id)


def create_group(c: Any, group_id: str = GROUP) -> Any:
    """``createClassicGroup``: an Empty group without members, made here by an offset commit of generation -1
    (a "simple" group) — the public way a group exists before any JoinGroup."""
    f = c.commit_offsets(group_id, "", -1, offsets=())
    assert f.done and f.result.error is Errors.NONE
    return group(c, group_id)


def join_errors(futures: list[ResponseFuture], successes: int, failure: Errors) -> list[str]:
    """verifyClassicGroupJoinResponses: every future answered, ``successes`` with NONE, the rest ``failure``;
    the member ids answered, in order."""
    assert all(f.done for f in futures)
    assert sum(f.result.error is Errors.NONE for f in futures) == successes
    assert all(f.result.error in (Errors.NONE, failure) for f in futures)
    return [f.result.member_id for f in futures]


def check_join(result: Any, expected: JoinGroupResult, c: Any, expected_state: GroupState,
               instance_ids: set[str | None]) -> None:
    """checkJoinGroupResponse: the answer, the group's state, the instance ids in the answer's member list."""
    assert result == expected, f"{result} != {expected}"
    assert state(c) is expected_state
    assert {i for _, i, _ in result.members} == instance_ids


def response_members(c: Any, group_id: str = GROUP) -> tuple[tuple[str, str | None, bytes], ...]:
    """toJoinResponseMembers: the group's members with the selected protocol's metadata."""
    return group(c, group_id).current_members()


def join_and_complete(c: Any, *, known: bool, skip: bool, instance: str | None = None, advance: int = INITIAL_DELAY_MS,
                      **request: Any) -> JoinGroupResult:
    """joinClassicGroupAndCompleteJoin: a dynamic v4 member goes through MEMBER_ID_REQUIRED; otherwise one
    JoinGroup, the clock moves ``advance`` and the answer must be NONE."""
    if known and instance is None:
        return join_as_dynamic_and_complete_join(c, session=request.get("session", 500),
                                                 rebalance=request.get("rebalance", 500),
                                                 names=request.get("names", ("range",)))
    f = join(c, instance=instance, known=known, skip=skip, **request)
    c.advance(advance)
    assert f.done and f.result.error is Errors.NONE, f.result
    return f.result
