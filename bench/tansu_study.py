"""A behaviour study of tansu's classic group coordinator: edge-case requests over a raw socket, answers as JSON.

Each probe uses its own group on one fresh broker and records what tansu answered (error code names, generation,
timings). bench/results/tansu-study-2026-11-24.md compares them with SPEC.md's 3.9 column. Run from the repo
root: ``PYTHONPATH=$PWD .venv/bin/python bench/tansu_study.py [OUT_DIR]`` (about two minutes).
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

from kafka.protocol.consumer import (HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest, OffsetCommitRequest,
                                     SyncGroupRequest)
from kafka.protocol.metadata import FindCoordinatorRequest
from kafka.protocol.old.consumer_protocol import ConsumerProtocolMemberMetadata_v0

from core.types import Errors
from wire.tansu import TansuBroker
from wire.tansu_probe import Probe, ProbeClosed, api_versions, create_topic

META = ConsumerProtocolMemberMetadata_v0(0, ["t"], b"").encode()
PARKED = "parked"          # no answer within the wait: the broker holds the request (or never answers)
GROUP_APIS = {"OffsetCommit": 8, "OffsetFetch": 9, "FindCoordinator": 10, "JoinGroup": 11, "Heartbeat": 12,
              "LeaveGroup": 13, "SyncGroup": 14, "DescribeGroups": 15, "ListGroups": 16}


def err(code: int) -> str:
    try:
        return Errors(code).name
    except ValueError:
        return f"code {code}"


class Member:
    """One client connection and the member id the broker gave it."""

    def __init__(self, bootstrap: str, group: str, version: int = 5, session: int = 10000, rebalance: int = 10000,
                 instance: str | None = None, client_id: str = "kgc-probe") -> None:
        self.bootstrap, self.client_id = bootstrap, client_id
        self.probe = Probe(bootstrap, timeout_s=30.0, client_id=client_id)
        self.group, self.version, self.session, self.rebalance, self.instance = \
            group, version, session, rebalance, instance
        self.member_id, self.generation, self.leader = "", -1, ""

    def join_request(self, protocol_type: str = "consumer",
                     protocols: tuple[tuple[str, bytes], ...] = (("range", META),)) -> Any:
        return JoinGroupRequest[self.version](
            group_id=self.group, session_timeout_ms=self.session, rebalance_timeout_ms=self.rebalance,
            member_id=self.member_id, group_instance_id=self.instance, protocol_type=protocol_type, reason=None,
            protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name=n, metadata=m) for n, m in protocols])

    def join(self, wait_s: float = 30.0, **kw: Any) -> dict[str, Any]:
        request = self.join_request(**kw)
        self.probe.send(request)
        return self.finish_join(request, wait_s)

    def finish_join(self, request: Any, wait_s: float = 30.0, started: float | None = None) -> dict[str, Any]:
        t0 = time.monotonic() if started is None else started
        try:
            r = self.probe.recv(request, timeout_s=wait_s)
        except ProbeClosed as e:
            self.reconnect()
            return {"answer": PARKED if "timeout" in str(e) else "closed", "after_s": round(time.monotonic() - t0, 2)}
        if r.member_id:
            self.member_id = r.member_id
        if r.error_code == 0:
            self.generation, self.leader = r.generation_id, r.leader
        return {"answer": err(r.error_code), "generation": r.generation_id, "member_id": r.member_id,
                "leader": r.leader == r.member_id if r.error_code == 0 else None,
                "members": len(r.members), "after_s": round(time.monotonic() - t0, 2)}

    def sync(self, assignments: dict[str, bytes] | None = None, generation: int | None = None, wait_s: float = 30.0,
             member_id: str | None = None) -> dict[str, Any]:
        v = min(self.version, 5)
        request = SyncGroupRequest[v](
            group_id=self.group, generation_id=self.generation if generation is None else generation,
            member_id=self.member_id if member_id is None else member_id, group_instance_id=self.instance,
            protocol_type="consumer", protocol_name="range",
            assignments=[SyncGroupRequest.SyncGroupRequestAssignment(member_id=m, assignment=a)
                         for m, a in (assignments or {}).items()])
        t0 = time.monotonic()
        try:
            r = self.probe.call(request, timeout_s=wait_s)
        except ProbeClosed as e:
            self.reconnect()
            return {"answer": PARKED if "timeout" in str(e) else "closed", "after_s": round(time.monotonic() - t0, 2)}
        return {"answer": err(r.error_code), "assignment": bytes(r.assignment).decode("latin-1"),
                "after_s": round(time.monotonic() - t0, 2)}

    def heartbeat(self, generation: int | None = None, member_id: str | None = None, version: int | None = None
                  ) -> str:
        v = min(self.version, 4) if version is None else version
        r = self.probe.call(HeartbeatRequest[v](
            group_id=self.group, generation_id=self.generation if generation is None else generation,
            member_id=self.member_id if member_id is None else member_id, group_instance_id=self.instance),
            timeout_s=10.0)
        return err(r.error_code)

    def commit(self, generation: int | None = None, member_id: str | None = None, version: int = 8) -> str:
        topic = OffsetCommitRequest.OffsetCommitRequestTopic
        part = topic.OffsetCommitRequestPartition
        r = self.probe.call(OffsetCommitRequest[version](
            group_id=self.group, generation_id_or_member_epoch=self.generation if generation is None else generation,
            member_id=self.member_id if member_id is None else member_id, group_instance_id=self.instance,
            retention_time_ms=-1, topics=[topic(name="t", partitions=[part(
                partition_index=0, committed_offset=1, committed_leader_epoch=-1, commit_timestamp=-1,
                committed_metadata="")])]), timeout_s=10.0)
        return err(r.topics[0].partitions[0].error_code)

    def leave(self, version: int = 0, members: list[tuple[str, str | None]] | None = None) -> dict[str, Any]:
        identity = LeaveGroupRequest.MemberIdentity
        ids = members if members is not None else [(self.member_id, self.instance)]
        r = self.probe.call(LeaveGroupRequest[version](      # v0-v2 carry one member id: the first identity's
            group_id=self.group, member_id=ids[0][0],
            members=[identity(member_id=m, group_instance_id=i, reason=None) for m, i in ids]), timeout_s=10.0)
        out: dict[str, Any] = {"answer": err(r.error_code)}
        if version >= 3:
            out["members"] = [err(m.error_code) for m in r.members]
        return out

    def reconnect(self) -> None:
        """A fresh connection: a parked request's late answer must not be read as the next one's."""
        self.probe.close()
        self.probe = Probe(self.bootstrap, timeout_s=30.0, client_id=self.client_id)

    def close(self) -> None:
        self.probe.close()


def form(bootstrap: str, group: str, n: int, **kw: Any) -> list[Member]:
    """n dynamic members through MEMBER_ID_REQUIRED, joined together, leader syncs, followers sync."""
    members = [Member(bootstrap, group, **kw) for _ in range(n)]
    for m in members:
        m.join()                                          # MEMBER_ID_REQUIRED (tansu: at every version)
    requests = [m.join_request() for m in members]
    t0 = time.monotonic()
    for m, r in zip(members, requests, strict=True):
        m.probe.send(r)
    for m, r in zip(members, requests, strict=True):
        m.finish_join(r, started=t0)
    leader = next(m for m in members if m.member_id == m.leader)
    leader.sync({m.member_id: m.member_id.encode()[-4:] for m in members})
    for m in members:
        if m is not leader:
            m.sync()
    return members


# --- the probes ---------------------------------------------------------------------------------------------
def probe_api_versions(b: str) -> dict[str, Any]:
    versions = api_versions(b)
    return {api: versions.get(key) for api, key in GROUP_APIS.items()}


def probe_find_coordinator(b: str) -> dict[str, Any]:
    out = {}
    with Probe(b) as p:
        for v in range(0, 5):
            r = p.call(FindCoordinatorRequest[v](key="g-fc", key_type=0, coordinator_keys=["g-fc"]))
            out[f"v{v}"] = (r.to_dict()["coordinators"][0] if v >= 4 else
                            {k: r.to_dict()[k] for k in ("error_code", "node_id", "host", "port")})
    return out


def probe_join_empty_member_id(b: str) -> dict[str, Any]:
    out = {}
    for v in range(0, 10):
        m = Member(b, f"g-empty-v{v}", version=v)
        out[f"v{v}"] = m.join(wait_s=2.0)
        out[f"v{v}"].pop("member_id", None)
        m.close()
    m = Member(b, "g-empty-unknown-id", version=5)
    m.member_id = "never-issued"
    out["v5 unknown non-empty member id, absent group"] = m.join(wait_s=2.0)
    return out


def probe_initial_delay(b: str) -> dict[str, Any]:
    """How long the first member's (second) JoinGroup of a fresh group is held, per timeout pair."""
    out = {}
    for session, rebalance in ((10000, 10000), (6000, 1000), (30000, 60000), (45000, 3000)):
        m = Member(b, f"g-delay-{session}-{rebalance}", session=session, rebalance=rebalance)
        m.join()
        out[f"session {session} rebalance {rebalance}"] = m.join()
        out[f"session {session} rebalance {rebalance}"].pop("member_id", None)
        m.close()
    return out


def probe_session_bounds(b: str) -> dict[str, Any]:
    """Session timeouts around Kafka's [6000, 1800000]: answered at the first and at the second JoinGroup."""
    out = {}
    for session in (0, 1, 5999, 6000, 1800000, 1800001, 2147483647):
        m = Member(b, f"g-session-{session}", session=session)
        first = m.join(wait_s=2.0)
        second = m.join(wait_s=1.0) if first["answer"] == "MEMBER_ID_REQUIRED" else None
        out[str(session)] = {"first": first["answer"], "second": None if second is None else second["answer"]}
        m.close()
    return out


def probe_protocols(b: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, kw in (("first member, empty protocol type", {"protocol_type": ""}),
                     ("first member, no protocols", {"protocols": ()})):
        m = Member(b, f"g-proto-{len(out)}")
        first = m.join(wait_s=2.0, **kw)
        second = m.join(wait_s=8.0, **kw) if first["answer"] == "MEMBER_ID_REQUIRED" else None
        out[name] = {"first": first["answer"], "second": second and second["answer"],
                     "broker still answers ApiVersions": bool(api_versions(b))}
        m.close()
    for name, kw in (("protocol type 'connect' vs group's 'consumer'", {"protocol_type": "connect"}),
                     ("protocols ['roundrobin'] vs group's ['range']", {"protocols": (("roundrobin", META),)})):
        group = f"g-proto-stable-{len(out)}"
        stable = form(b, group, 1)[0]
        m = Member(b, group)
        first = m.join(wait_s=20.0, **kw)
        second = m.join(wait_s=15.0, **kw) if first["answer"] == "MEMBER_ID_REQUIRED" else None
        out[name] = {"first": first, "second": second,
                     "existing member's heartbeat after": stable.heartbeat(),
                     "existing member rejoins": stable.join(wait_s=15.0)}
        m.close()
    return out


def probe_sync_order(b: str) -> dict[str, Any]:
    """Both members joined (CompletingRebalance); the follower syncs first."""
    members = [Member(b, "g-sync-order") for _ in range(2)]
    for m in members:
        m.join()
    reqs = [m.join_request() for m in members]
    for m, r in zip(members, reqs, strict=True):
        m.probe.send(r)
    joins = [m.finish_join(r) for m, r in zip(members, reqs, strict=True)]
    leader = next(m for m in members if m.member_id == m.leader)
    follower = next(m for m in members if m is not leader)
    out: dict[str, Any] = {"join answers": [j["answer"] for j in joins], "generation": leader.generation}
    out["follower heartbeat in CompletingRebalance"] = follower.heartbeat()
    v = min(follower.version, 5)
    request = SyncGroupRequest[v](group_id=follower.group, generation_id=follower.generation,
                                  member_id=follower.member_id, group_instance_id=None, protocol_type="consumer",
                                  protocol_name="range", assignments=[])
    t0 = time.monotonic()
    follower.probe.send(request)
    try:
        r = follower.probe.recv(request, timeout_s=1.5)
        out["follower sync before leader"] = {"answer": err(r.error_code), "assignment": bytes(r.assignment).hex(),
                                              "after_s": round(time.monotonic() - t0, 2)}
        answered_early = True
    except ProbeClosed:
        out["follower sync before leader"] = {"answer": PARKED, "waited_s": 1.5}
        answered_early = False
    out["leader sync"] = leader.sync({leader.member_id: b"L", follower.member_id: b"F"})
    if not answered_early:
        r = follower.probe.recv(request, timeout_s=5.0)
        out["follower's parked sync, after the leader's"] = {"answer": err(r.error_code),
                                                              "assignment": bytes(r.assignment).decode()}
    out["follower sync again (Stable)"] = follower.sync()
    out["heartbeats after"] = [m.heartbeat() for m in members]
    return out


def probe_generations(b: str) -> dict[str, Any]:
    members = form(b, "g-gen", 1)
    m = members[0]
    g = m.generation
    return {"generation": g,
            "heartbeat gen+1": m.heartbeat(g + 1), "heartbeat gen-1": m.heartbeat(g - 1),
            "sync gen+1": m.sync(generation=g + 1, wait_s=15.0),
            "commit gen+1": m.commit(g + 1), "commit gen-1 (=-1 when gen 0)": m.commit(g - 1),
            "commit right gen": m.commit(),
            "commit gen -1, member '' (non-empty group)": m.commit(-1, ""),
            "heartbeat right gen": m.heartbeat()}


def probe_unknown_member(b: str) -> dict[str, Any]:
    members = form(b, "g-unknown", 1)
    m = members[0]
    ghost = "ghost-member"
    existing = {"heartbeat": m.heartbeat(member_id=ghost), "sync": m.sync(member_id=ghost, wait_s=10.0),
                "commit": m.commit(member_id=ghost), "leave v0": m.leave(0, [(ghost, None)])["answer"],
                "leave v3 [ghost]": m.leave(3, [(ghost, None)]),
                "member's heartbeat after": m.heartbeat()}
    j = Member(b, "g-unknown")
    j.member_id = ghost
    existing["join with unknown non-empty id"] = j.join(wait_s=15.0)
    a = Member(b, "g-absent")
    absent = {"heartbeat": a.heartbeat(generation=1, member_id=ghost),
              "sync": a.sync(generation=1, member_id=ghost, wait_s=10.0),
              "commit gen 1": a.commit(1, ghost), "leave v0": a.leave(0, [(ghost, None)])["answer"],
              "leave v3": a.leave(3, [(ghost, None)])}
    s = Member(b, "g-simple")
    absent["commit gen -1, member '' (simple consumer)"] = s.commit(-1, "")
    return {"existing group": existing, "absent group": absent}


def probe_leave(b: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for v in (0, 1, 2):
        members = form(b, f"g-leave-v{v}", 2)
        leaver, stayer = members
        out[f"v{v} known member"] = leaver.leave(v)["answer"]
        out[f"v{v} stayer heartbeat after"] = stayer.heartbeat()
        out[f"v{v} same member leaves again"] = leaver.leave(v)["answer"]
    members = form(b, "g-leave-v3", 3)
    a, c = members[1], members[2]
    out["v3 batch [known, unknown, known]"] = members[0].leave(3, [(a.member_id, None), ("ghost", None),
                                                                   (c.member_id, None)])
    out["v3 stayer heartbeat after"] = members[0].heartbeat()
    out["v3 batch [instance id only, unknown]"] = members[0].leave(3, [("", "no-such-instance")])
    for v in (4, 5):
        try:
            out[f"v{v} [known]"] = Member(b, "g-leave-v3").leave(v, [(members[0].member_id, None)])
        except Exception as e:          # noqa: BLE001 — record what happened, whatever it is
            out[f"v{v} [known]"] = repr(e)
    return out


def probe_static(b: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    s1 = Member(b, "g-static", instance="inst-1")
    out["v5 static first join, empty member id"] = s1.join(wait_s=8.0)
    if out["v5 static first join, empty member id"]["answer"] == "MEMBER_ID_REQUIRED":
        out["v5 static second join"] = s1.join(wait_s=8.0)
    out["leader sync"] = s1.sync({s1.member_id: b"S1"})
    old_id, old_gen = s1.member_id, s1.generation
    s1b = Member(b, "g-static", instance="inst-1")
    out["same instance rejoins with empty member id (Stable)"] = s1b.join(wait_s=8.0)
    if out["same instance rejoins with empty member id (Stable)"]["answer"] == "MEMBER_ID_REQUIRED":
        out["same instance second join"] = s1b.join(wait_s=8.0)
    out["new member id differs"] = s1b.member_id != old_id
    out["old member id heartbeat"] = s1.heartbeat(old_gen, old_id)
    out["old member id sync"] = s1.sync(generation=old_gen, member_id=old_id, wait_s=3.0)["answer"]
    out["old member id commit"] = s1.commit(old_gen, old_id)
    out["old member id join"] = s1.join(wait_s=3.0)["answer"]
    out["new member id heartbeat"] = s1b.heartbeat()
    out["new member id sync"] = s1b.sync(wait_s=8.0)
    s1b.sync(wait_s=8.0)
    out["heartbeat, instance inst-1 with a wrong member id"] = s1b.heartbeat(member_id="inst-1-wrong")
    out["commit, instance inst-1 with a wrong member id"] = s1b.commit(member_id="inst-1-wrong")
    s2 = Member(b, "g-static", instance="inst-1")
    s2.member_id = "inst-1-wrong"
    out["join, instance inst-1 with a wrong non-empty member id"] = s2.join(wait_s=15.0)
    d = Member(b, "g-static-v4", version=4, instance="inst-x")
    out["v4 join (no instance field) empty member id"] = d.join(wait_s=2.0)["answer"]
    return out


def probe_rebalance_timeout(b: str) -> dict[str, Any]:
    """Two members (rebalance timeout 3 s, session 30 s); a third joins; one old member rejoins, the other stays
    silent (no JoinGroup, no heartbeat): when does the join phase end, and who is in the new generation?"""
    a, silent = form(b, "g-rebalance", 2, session=30000, rebalance=3000)
    out: dict[str, Any] = {"generation before": a.generation}
    n = Member(b, "g-rebalance", session=30000, rebalance=3000)
    n.join()
    n_request = n.join_request()
    t0 = time.monotonic()
    n.probe.send(n_request)
    time.sleep(0.3)
    out["old member's heartbeat after the newcomer's JoinGroup"] = a.heartbeat()
    a_request = a.join_request()
    a.probe.send(a_request)
    out["rejoining old member"] = a.finish_join(a_request, wait_s=60.0, started=t0)
    out["newcomer"] = n.finish_join(n_request, wait_s=60.0, started=t0)
    out["silent member's heartbeat after"] = silent.heartbeat()
    return out


def probe_session_expiry(b: str) -> dict[str, Any]:
    """Two members, session 6 s; one stops heartbeating, the other heartbeats every 0.5 s."""
    members = form(b, "g-expiry", 2, session=6000, rebalance=10000)
    alive, silent = members
    t0 = time.monotonic()
    answers = []
    while time.monotonic() - t0 < 40.0:
        answer = alive.heartbeat()
        answers.append((round(time.monotonic() - t0, 1), answer))
        if answer != "NONE":
            break
        time.sleep(0.5)
    out: dict[str, Any] = {"first non-NONE heartbeat": answers[-1], "heartbeats sent": len(answers)}
    out["rejoin of the live member"] = alive.join(wait_s=40.0)
    out["silent member's heartbeat after"] = silent.heartbeat()
    return out


def probe_heartbeat_states(b: str) -> dict[str, Any]:
    """A Stable group of one; a second member joins: the first one's heartbeats in PreparingRebalance."""
    a = form(b, "g-hb-states", 1)[0]
    out: dict[str, Any] = {"Stable": a.heartbeat()}
    n = Member(b, "g-hb-states")
    n.join()
    request = n.join_request()
    n.probe.send(request)
    time.sleep(0.3)
    out["after a new member's JoinGroup (PreparingRebalance?)"] = a.heartbeat()
    out["commit then"] = a.commit()
    out["old member rejoins"] = a.join(wait_s=40.0)
    out["new member's join"] = n.finish_join(request, wait_s=40.0)
    return out


def probe_rejoin_stable(b: str) -> dict[str, Any]:
    """Stable group of two (session 6 s): the follower, then the leader, rejoin with the same metadata."""
    members = form(b, "g-rejoin", 2, session=6000)
    leader = next(m for m in members if m.member_id == m.leader)
    follower = next(m for m in members if m is not leader)
    out: dict[str, Any] = {"generation": leader.generation}
    out["follower rejoins, same metadata"] = follower.join(wait_s=20.0)
    out["leader heartbeat then"] = leader.heartbeat()
    request = leader.join_request()
    t0 = time.monotonic()
    leader.probe.send(request)
    time.sleep(0.5)
    out["follower heartbeat 0.5 s after the leader's rejoin"] = follower.heartbeat()
    out["follower rejoins"] = follower.join(wait_s=20.0)
    out["leader's rejoin"] = leader.finish_join(request, wait_s=20.0, started=t0)
    return out


def probe_sync_hold(b: str) -> dict[str, Any]:
    """How long a hopeless SyncGroup (wrong generation, Stable) is held per session timeout; a static leader's sync."""
    out: dict[str, Any] = {}
    for session, rebalance in ((4000, 10000), (10000, 4000), (20000, 20000)):
        m = form(b, f"g-hold-{session}-{rebalance}", 1, session=session, rebalance=rebalance)[0]
        out[f"session {session} rebalance {rebalance}: sync gen+1"] = m.sync(generation=m.generation + 1, wait_s=30)
    s = Member(b, "g-hold-static", instance="i", session=4000)
    out["static, session 4000: join"] = s.join(wait_s=20)
    out["static, session 4000: leader sync"] = s.sync({s.member_id: b"x"})
    return out


PROBES: dict[str, Callable[[str], dict[str, Any]]] = {
    "api_versions": probe_api_versions, "find_coordinator": probe_find_coordinator,
    "join_empty_member_id": probe_join_empty_member_id, "initial_delay": probe_initial_delay,
    "session_bounds": probe_session_bounds, "protocols": probe_protocols, "sync_order": probe_sync_order,
    "generations": probe_generations, "unknown_member": probe_unknown_member, "leave": probe_leave,
    "static": probe_static, "heartbeat_states": probe_heartbeat_states, "rejoin_stable": probe_rejoin_stable,
    "sync_hold": probe_sync_hold, "rebalance_timeout": probe_rebalance_timeout, "session_expiry": probe_session_expiry,
}


def main(out_dir: Path | None, only: list[str]) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with TansuBroker(out_dir=out_dir, env={"RUST_LOG": "warn"}) as broker:
        results["create topic t"] = {"answer": err(create_topic(broker.bootstrap, "t", 1))}   # commits go to t-0
        for name, fn in PROBES.items():
            if only and name not in only:
                continue
            t0 = time.monotonic()
            try:
                results[name] = fn(broker.bootstrap)
            except Exception as e:          # noqa: BLE001 — one probe's surprise must not hide the others
                results[name] = {"probe failed": repr(e)}
            results[name]["_seconds"] = round(time.monotonic() - t0, 1)
            print(name, json.dumps(results[name]), file=sys.stderr, flush=True)
    return results


if __name__ == "__main__":
    args = sys.argv[1:]
    out = Path(args.pop(0)) if args and "/" in args[0] else None
    print(json.dumps(main(out, args), indent=1, default=str))
