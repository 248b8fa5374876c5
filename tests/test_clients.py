"""The client models' rule tables: each response moves a client to a known state, per client generation."""
from __future__ import annotations

import pytest

from harness.client_versions import (
    CLIENT_0_10, CLIENT_2_4, CLIENT_2_7, CLIENT_3_X, ClientVersion, client_version_for)
from harness.clients import (
    ADVERSARY_VARIANTS, AdversarialClient, ClientConfig, JavaConsumer, round_robin_assignment)
from harness.messages import Request, Response

V3, V010 = CLIENT_3_X, CLIENT_0_10


def consumer(version: ClientVersion = V3, **kw: object) -> JavaConsumer:
    cfg = ClientConfig(index=0, client_id="c0", protocols=(("range", b"c0"),), version=version, **kw)  # type: ignore[arg-type]
    return JavaConsumer(cfg)


def answer(req: Request, error: str = "NONE", **kw: object) -> Response:
    return Response(req.api, req.client, req.corr, error, **kw)  # type: ignore[arg-type]


def to_completing(c: JavaConsumer, gen: int = 2, leader: bool = True) -> None:
    req = c.send("JoinGroup", 0, 0)
    members = ("m", "x") if leader else ()
    c.on_response(answer(req, generation_id=gen, member_id="m", leader_id="m" if leader else "x",
                         members=members), 0)
    assert c.state == "COMPLETING_REBALANCE"


def to_stable(c: JavaConsumer, gen: int = 2) -> None:
    to_completing(c, gen)
    c.on_response(answer(c.send("SyncGroup", 0, 0), assignment=b"p0"), 0)
    assert c.state == "STABLE"


def fields(c: JavaConsumer) -> tuple[str, str, int]:
    return (c.state, c.member_id, c.generation_id)


# --- the happy path, per generation ------------------------------------------------------

def test_3x_consumer_joins_with_member_id_required_then_syncs() -> None:
    c = consumer(V3)
    assert c.wants(0) == [("JoinGroup", 0)]
    first = c.send("JoinGroup", 0, 0)
    assert (first.member_id, first.require_known_member_id, c.state) == ("", True, "PREPARING_REBALANCE")
    c.on_response(answer(first, "MEMBER_ID_REQUIRED", member_id="c0-1"), 0)
    assert fields(c) == ("UNJOINED", "c0-1", -1)
    second = c.send("JoinGroup", 0, 0)
    assert second.member_id == "c0-1"
    c.on_response(answer(second, generation_id=1, member_id="c0-1", leader_id="c0-1", members=("c0-1", "c1-2")), 0)
    assert fields(c) == ("COMPLETING_REBALANCE", "c0-1", 1) and c.leader
    # 2.6.1/2.7+: heartbeats are sent in COMPLETING_REBALANCE too
    assert c.wants(0) == [("SyncGroup", 0), ("Heartbeat", 0), ("LeaveGroup", 0)]
    sync = c.send("SyncGroup", 0, 0)
    assert sync.assignments == round_robin_assignment(("c0-1", "c1-2")) and sync.generation_id == 1
    c.on_response(answer(sync, assignment=b"p0,p2,p4"), 0)
    assert fields(c) == ("STABLE", "c0-1", 1) and c.assignment == b"p0,p2,p4"


def test_010_consumer_sends_v0_join_and_heartbeats_only_when_stable() -> None:
    c = consumer(V010, session_timeout_ms=7000, rebalance_timeout_ms=60000)
    req = c.send("JoinGroup", 0, 0)
    assert not req.require_known_member_id
    assert req.rebalance_timeout_ms == 7000          # JoinGroup v0 has no rebalance timeout
    c.on_response(answer(req, generation_id=1, member_id="c0-1", leader_id="c1-1"), 0)
    assert c.state == "COMPLETING_REBALANCE" and not c.leader
    assert c.wants(0) == [("SyncGroup", 0), ("LeaveGroup", 0)]
    assert c.send("SyncGroup", 0, 0).assignments == ()    # followers send no assignment
    c.on_response(answer(Request("SyncGroup", 0, 2), assignment=b"p1"), 0)
    assert c.state == "STABLE" and ("Heartbeat", 0) in c.wants(0)


def test_stable_consumer_may_rejoin_keeping_its_id() -> None:
    c = consumer(V3)
    to_stable(c)
    assert ("JoinGroup", 0) in c.wants(0)
    req = c.send("JoinGroup", 0, 0)
    assert (req.member_id, c.state) == ("m", "PREPARING_REBALANCE")
    assert ("JoinGroup", 0) not in c.wants(0)
    quiet = consumer(V3, rejoins=False)
    to_stable(quiet)
    assert ("JoinGroup", 0) not in quiet.wants(0)


def test_follower_sends_empty_assignments_and_leader_assigns_round_robin() -> None:
    assert round_robin_assignment(("b", "a")) == (("a", b"p0,p2,p4"), ("b", b"p1,p3,p5"))
    assert round_robin_assignment(()) == ()


# --- rule tables ----------------------------------------------------------------------------

HEARTBEAT_IN_STABLE = [
    (V3, "NONE", ("STABLE", "m", 2)),
    (V3, "REBALANCE_IN_PROGRESS", ("UNJOINED", "m", 2)),
    (V3, "ILLEGAL_GENERATION", ("UNJOINED", "m", -1)),        # 3.2+ keeps the id
    (V3, "UNKNOWN_MEMBER_ID", ("UNJOINED", "", -1)),
    (V3, "FENCED_INSTANCE_ID", ("FAILED", "m", 2)),
    (V3, "NOT_COORDINATOR", ("STABLE", "m", 2)),
    (CLIENT_2_4, "ILLEGAL_GENERATION", ("UNJOINED", "", -1)),  # 2.4 resets the id too
    (V010, "NONE", ("STABLE", "m", 2)),
    (V010, "REBALANCE_IN_PROGRESS", ("UNJOINED", "m", 2)),
    (V010, "ILLEGAL_GENERATION", ("UNJOINED", "m", 2)),        # 0.10: rejoin keeping the id
    (V010, "UNKNOWN_MEMBER_ID", ("UNJOINED", "", -1)),
    (V010, "COORDINATOR_NOT_AVAILABLE", ("STABLE", "m", 2)),
]


@pytest.mark.parametrize("version, error, expected", HEARTBEAT_IN_STABLE)
def test_heartbeat_answer_in_stable(version: ClientVersion, error: str, expected: tuple[str, str, int]) -> None:
    c = consumer(version)
    to_stable(c)
    c.on_response(answer(c.send("Heartbeat", 0, 0), error), 0)
    assert fields(c) == expected


@pytest.mark.parametrize("version, expected", [(V3, "COMPLETING_REBALANCE"), (CLIENT_2_7, "COMPLETING_REBALANCE")])
def test_heartbeat_rebalance_in_progress_ignored_while_completing(version: ClientVersion, expected: str) -> None:
    c = consumer(version)
    to_completing(c)
    c.on_response(answer(c.send("Heartbeat", 0, 0), "REBALANCE_IN_PROGRESS"), 0)
    assert c.state == expected


SYNC_IN_COMPLETING = [
    (V3, "REBALANCE_IN_PROGRESS", ("UNJOINED", "m", 2)),
    (V3, "ILLEGAL_GENERATION", ("UNJOINED", "m", -1)),
    (V3, "UNKNOWN_MEMBER_ID", ("UNJOINED", "", -1)),
    (V3, "NOT_COORDINATOR", ("UNJOINED", "m", 2)),
    (V3, "UNKNOWN_SERVER_ERROR", ("FAILED", "m", 2)),
    (V010, "ILLEGAL_GENERATION", ("UNJOINED", "", -1)),        # 0.10 resets the id on sync errors
    (V010, "REBALANCE_IN_PROGRESS", ("UNJOINED", "m", 2)),
]


@pytest.mark.parametrize("version, error, expected", SYNC_IN_COMPLETING)
def test_sync_error(version: ClientVersion, error: str, expected: tuple[str, str, int]) -> None:
    c = consumer(version)
    to_completing(c)
    c.on_response(answer(c.send("SyncGroup", 0, 0), error), 0)
    assert fields(c) == expected


JOIN_ERRORS = [
    (V3, "UNKNOWN_MEMBER_ID", ("UNJOINED", "", -1)),
    (V3, "REBALANCE_IN_PROGRESS", ("UNJOINED", "m", 2)),
    (V3, "COORDINATOR_LOAD_IN_PROGRESS", ("UNJOINED", "m", 2)),
    (V3, "NOT_COORDINATOR", ("UNJOINED", "m", 2)),
    (V3, "INCONSISTENT_GROUP_PROTOCOL", ("FAILED", "m", 2)),
    (V3, "INVALID_SESSION_TIMEOUT", ("FAILED", "m", 2)),
    (V3, "GROUP_MAX_SIZE_REACHED", ("FAILED", "m", 2)),
    (V3, "FENCED_INSTANCE_ID", ("FAILED", "m", 2)),
    (V3, "INVALID_GROUP_ID", ("FAILED", "m", 2)),
    (CLIENT_2_4, "REBALANCE_IN_PROGRESS", ("FAILED", "m", 2)),   # unexpected in 2.4
    (V010, "UNKNOWN_MEMBER_ID", ("UNJOINED", "", -1)),
    (V010, "COORDINATOR_LOAD_IN_PROGRESS", ("UNJOINED", "m", 2)),
]


@pytest.mark.parametrize("version, error, expected", JOIN_ERRORS)
def test_rejoin_error(version: ClientVersion, error: str, expected: tuple[str, str, int]) -> None:
    c = consumer(version)
    to_stable(c)
    c.on_response(answer(c.send("Heartbeat", 0, 0), "REBALANCE_IN_PROGRESS"), 0)
    assert c.state == "UNJOINED"
    req = c.send("JoinGroup", 0, 0)
    assert req.member_id == "m"
    c.on_response(answer(req, error), 0)
    assert fields(c) == expected


COMMIT_IN_STABLE = [
    (V3, "NONE", ("STABLE", "m", 2)),
    (V3, "REBALANCE_IN_PROGRESS", ("UNJOINED", "m", 2)),
    (V3, "ILLEGAL_GENERATION", ("UNJOINED", "m", -1)),
    (V3, "UNKNOWN_MEMBER_ID", ("UNJOINED", "", -1)),
    (V010, "ILLEGAL_GENERATION", ("UNJOINED", "m", 2)),
    (V010, "UNKNOWN_MEMBER_ID", ("UNJOINED", "m", 2)),
]


@pytest.mark.parametrize("version, error, expected", COMMIT_IN_STABLE)
def test_commit_answer(version: ClientVersion, error: str, expected: tuple[str, str, int]) -> None:
    c = consumer(version, commits=True)
    to_stable(c)
    assert ("OffsetCommit", 0) in c.wants(0)
    c.on_response(answer(c.send("OffsetCommit", 0, 0), error), 0)
    assert fields(c) == expected


def test_kafka_9823_stale_heartbeat_error_ignored_by_3x_not_by_010() -> None:
    for version, expected in ((V3, ("COMPLETING_REBALANCE", "m", 3)), (V010, ("UNJOINED", "", -1))):
        c = consumer(version, commits=True)
        to_stable(c, gen=2)
        hb = c.send("Heartbeat", 0, 0)               # sent with generation 2
        c.on_response(answer(c.send("OffsetCommit", 0, 0), "REBALANCE_IN_PROGRESS"), 0)
        to_completing(c, gen=3)                      # a rebalance completed meanwhile: generation 3
        c.on_response(answer(hb, "UNKNOWN_MEMBER_ID"), 0)
        assert fields(c) == expected, version.name


def test_3x_reset_while_join_in_flight_makes_join_answer_ignored() -> None:
    c = consumer(V3, commits=True)
    to_stable(c)
    hb = c.send("Heartbeat", 0, 0)
    c.on_response(answer(c.send("OffsetCommit", 0, 0), "REBALANCE_IN_PROGRESS"), 0)   # rejoin
    join = c.send("JoinGroup", 0, 0)
    c.on_response(answer(hb, "ILLEGAL_GENERATION"), 0)   # generation unchanged: reset applies
    assert fields(c) == ("UNJOINED", "m", -1)
    assert c.wants(0) == [("LeaveGroup", 0)]              # no second JoinGroup while one is in flight
    c.on_response(answer(join, generation_id=3, member_id="m", leader_id="m"), 0)
    assert fields(c) == ("UNJOINED", "m", -1)             # UnjoinedGroupException: join again
    assert ("JoinGroup", 0) in c.wants(0)


def test_stale_response_with_other_corr_is_ignored() -> None:
    c = consumer(V3)
    to_stable(c)
    hb = c.send("Heartbeat", 0, 0)
    c.on_response(Response("Heartbeat", 0, hb.corr + 100, "UNKNOWN_MEMBER_ID"), 0)
    assert fields(c) == ("STABLE", "m", 2) and "Heartbeat" in c.inflight


# --- timeouts, leave, crash, timing -----------------------------------------------------------

def test_timeouts() -> None:
    c = consumer(V3)
    join = c.send("JoinGroup", 0, 0)
    c.on_timeout("JoinGroup", join.corr, 0)
    assert c.state == "UNJOINED" and c.wants(0) == [("JoinGroup", 0)]
    to_completing(c)
    sync = c.send("SyncGroup", 0, 0)
    c.on_timeout("SyncGroup", sync.corr, 0)
    assert fields(c) == ("UNJOINED", "m", 2)          # rejoin with the same id
    c2 = consumer(V3)
    to_stable(c2)
    hb = c2.send("Heartbeat", 0, 0)
    c2.on_timeout("Heartbeat", hb.corr, 0)
    assert c2.state == "STABLE" and ("Heartbeat", 0) in c2.wants(0)


def test_leave_closes_the_client() -> None:
    c = consumer(V3)
    to_stable(c)
    leave = c.send("LeaveGroup", 0, 0)
    assert (leave.member_id, c.state, c.wants(0)) == ("m", "CLOSED", [])
    c.on_response(answer(leave), 0)
    assert c.state == "CLOSED"
    assert consumer(V3, leaves=False).wants(0) == [("JoinGroup", 0)]


def test_crash_loses_state_but_not_the_corr_counter() -> None:
    c = consumer(V3)
    to_stable(c)
    hb = c.send("Heartbeat", 0, 0)
    c.crash()
    assert (c.state, c.wants(0), c.inflight) == ("CRASHED", [], {})
    c.restart(0)
    assert fields(c) == ("UNJOINED", "", -1)
    c.on_response(answer(hb, "UNKNOWN_MEMBER_ID"), 0)    # an old response: stale
    assert c.send("JoinGroup", 0, 0).corr > hb.corr


def test_timed_heartbeats_wait_for_the_interval() -> None:
    c = consumer(V3, timed=True, heartbeat_interval_ms=3000)
    c.send("JoinGroup", 0, 0)
    c.on_response(answer(Request("JoinGroup", 0, 1), generation_id=1, member_id="m", leader_id="m"), 1000)
    assert ("Heartbeat", 0) not in c.wants(3999) and c.heartbeat_due_ms() == 4000
    assert ("Heartbeat", 0) in c.wants(4000)
    c.send("Heartbeat", 0, 4500)
    assert c.heartbeat_due_ms() is None
    c.on_response(Response("Heartbeat", 0, 2), 4600)
    assert c.heartbeat_due_ms() == 7500


def test_state_round_trip() -> None:
    c = consumer(V3)
    to_stable(c)
    c.send("Heartbeat", 0, 0)
    copy = JavaConsumer.from_state(c.config, c.to_state())
    assert copy.to_state() == c.to_state() and copy.describe() == "STABLE m g2"


# --- adversarial client ------------------------------------------------------------------------

def adversary() -> AdversarialClient:
    return AdversarialClient(ClientConfig(index=1, client_id="c1", protocols=(("range", b"c1"),), commits=True))


def test_adversary_variants() -> None:
    a = adversary()
    assert a.wants(0) == [(api, v) for api, vs in ADVERSARY_VARIANTS.items() for v in vs]
    join = a.send("JoinGroup", 3, 0, peer_member_id="c2-1")
    assert join.member_id == "c2-1" and all(api != "JoinGroup" for api, _ in a.wants(0))
    a.on_response(answer(join, generation_id=4, member_id="c1-7", leader_id="c1-7", members=("c1-7",)), 0)
    assert (a.member_id, a.generation_id, a.leader) == ("c1-7", 4, True)
    hb = a.send("Heartbeat", 0, 0)
    assert (hb.member_id, hb.generation_id) == ("c1-7", 4)
    a.on_timeout("Heartbeat", hb.corr, 0)
    blank = a.send("Heartbeat", 1, 0)
    assert (blank.member_id, blank.generation_id) == ("", -1)
    a.on_response(answer(blank, "UNKNOWN_MEMBER_ID"), 0)
    ahead = a.send("Heartbeat", 2, 0)
    assert (ahead.member_id, ahead.generation_id) == ("c1-7", 5)
    assert a.send("SyncGroup", 0, 0).assignments == round_robin_assignment(("c1-7",))


def test_adversary_never_reacts() -> None:
    a = adversary()
    a.member_id, a.generation_id = "c1-1", 2
    a.on_response(answer(a.send("Heartbeat", 0, 0), "UNKNOWN_MEMBER_ID"), 0)
    a.on_response(answer(a.send("JoinGroup", 0, 0), "INCONSISTENT_GROUP_PROTOCOL"), 0)
    assert (a.state, a.member_id, a.generation_id) == ("ADVERSARY", "c1-1", 2)


def test_client_version_for_profiles() -> None:
    assert client_version_for("0.10.0") is V010
    assert client_version_for("2.4.1") is CLIENT_2_4
    assert client_version_for("2.7.0") is CLIENT_2_7
    assert client_version_for("3.9") is V3
    with pytest.raises(ValueError, match="cannot read a Kafka release"):
        client_version_for("trunk")



@pytest.mark.parametrize("profile", ["0.10.0", "2.4.1", "2.7.0", "3.9"])
def test_each_release_client_sends_its_brokers_join_group_version(profile: str) -> None:
    """SPEC.md §7 / §3.1: the Java consumer of a release sends the highest JoinGroup version its broker accepts
    (wire/versions.py's table); v1+ carries the rebalance timeout (KIP-62), v4+ requires a known member id."""
    from wire.versions import broker_max, release_of
    client = client_version_for(profile)
    assert client.join_group_version == broker_max("JoinGroup", release_of(profile))
    assert client.join_group_v1 == (client.join_group_version >= 1)
    assert client.join_group_v4 == (client.join_group_version >= 4)
    assert {"0.10.0": 0, "2.4.1": 6, "2.7.0": 7, "3.9": 9}[profile] == client.join_group_version
