"""Real clients in the world (harness.external) and the served session (wire.session), without sockets.

A scripted group of three consumers talks to a LiveSession the way kgc serve does: Receive steps for
requests, AdvanceClock/FireTimer steps for real time. The catalog and refinement check every step
(kgc.runs.CheckedRun); the recorded trace replays; planted mistakes are caught live.
"""
from __future__ import annotations

import dataclasses

import pytest

from core.actions import Action
from core.trace import Trace
from core.types import Errors, GroupState
from harness.external import WireRequest
from harness.replay import ReplayDivergence, replay
from harness.scope import Scope
from harness.world import World
from kgc.runs import CheckedRun
from wire.session import LiveSession


def _join(s: LiveSession, conn: int, member_id: str, v4: bool, session_ms: int = 10000) -> int:
    return s.submit(conn, "JoinGroup", group_id="g", member_id=member_id, session_timeout_ms=session_ms,
                    rebalance_timeout_ms=session_ms, protocol_type="consumer",
                    protocols=[("range", b"meta-%d" % conn)], require_known_member_id=v4)


def _form_group(s: LiveSession, v4: bool) -> dict[int, object]:
    """Three consumers join (with the KIP-394 handshake when v4), time passes, the leader syncs."""
    conns = [s.open(f"consumer-{i}") for i in range(3)]
    ids = {c: "" for c in conns}
    if v4:
        for c in conns:
            _join(s, c, "", v4)
        ids = {a.conn: a.result.member_id for a in s.answers()}
        assert all(a for a in ids.values())
    if s.profile == "0.10.0":
        # no initial delay on 0.10.0 (SPEC.md §4.5): the first joiner gets generation 1 at once and
        # must rejoin, like a real consumer told of the rebalance, when the others arrive
        _join(s, conns[0], "", v4)
        ids[0] = s.answers()[0].result.member_id
    for c in sorted(conns, key=lambda c: (s.profile == "0.10.0" and c == 0, c)):
        _join(s, c, ids[c], v4)
    joined: dict[int, object] = {}
    for t in range(0, 15000, 250):          # real time: the initial delay and the join phase elapse
        s.advance_to(t)
        joined.update((a.conn, a.result) for a in s.answers())
        if len(joined) == len(conns):
            break
    assert sorted(joined) == conns and all(r.error is Errors.NONE for r in joined.values())
    gen = joined[0].generation_id
    leader = next(c for c, r in joined.items() if r.leader_id == r.member_id)
    assert len(joined[leader].members) == 3
    for c in conns:
        plan = {r.member_id: b"p%d" % c for c, r in joined.items()} if c == leader else {}
        s.submit(c, "SyncGroup", group_id="g", member_id=joined[c].member_id, generation_id=gen, assignments=plan)
    synced = {a.conn: a.result for a in s.answers()}
    assert sorted(synced) == conns and all(r.error is Errors.NONE for r in synced.values())
    return joined


@pytest.mark.parametrize("profile,v4", [("3.9", True), ("3.9", False), ("0.10.0", False)])
def test_a_served_group_stabilises_checked_and_replays(profile: str, v4: bool) -> None:
    s = LiveSession(profile, checked=CheckedRun)
    joined = _form_group(s, v4)
    assert s.describe("g").state is GroupState.STABLE
    assert s.violations == []
    for conn, r in joined.items():          # heartbeats in Stable: NONE
        s.submit(conn, "Heartbeat", group_id="g", member_id=r.member_id, generation_id=r.generation_id)
    assert [a.result.error for a in s.answers()] == [Errors.NONE] * 3
    trace = Trace.loads(s.trace().dumps())
    assert trace.scope["clients"] == ["external"] * 3
    assert replay(trace).steps[-1].digest == trace.steps[-1].digest


def test_real_time_fires_a_silent_members_session_timeout() -> None:
    s = LiveSession("3.9", checked=CheckedRun)
    joined = _form_group(s, v4=True)
    survivors = {c: r for c, r in joined.items() if c != 2}
    start = s.world.now_ms
    for t in range(start, start + 30000, 1000):     # c2 falls silent; the others heartbeat every second
        s.advance_to(t)
        for conn, r in survivors.items():
            s.submit(conn, "Heartbeat", group_id="g", member_id=r.member_id, generation_id=r.generation_id)
    view = s.describe("g")
    assert joined[2].member_id not in view.members
    assert any(a.result.error is Errors.REBALANCE_IN_PROGRESS for a in s.answers())
    assert s.violations == []


def test_a_seeded_mutant_is_caught_live() -> None:
    found: list[str] = []
    s = LiveSession("3.9", mutant="generation-not-bumped", checked=CheckedRun,
                    on_violation=lambda v: found.append(v.property))
    conns = [s.open("consumer-0")]
    _join(s, conns[0], "", v4=False)
    for t in range(0, 15000, 500):
        s.advance_to(t)
    assert "each-new-generation-increments-the-generation-id" in found
    assert s.trace().violation is not None


def test_replay_notices_a_tampered_request() -> None:
    s = LiveSession("3.9", checked=CheckedRun)
    _form_group(s, v4=True)
    trace = s.trace()
    steps = list(trace.steps)
    i = next(k for k, st in enumerate(steps) if st.action.kind == "Receive"
             and WireRequest.from_payload(str(st.action.arg)).api == "SyncGroup")
    req = WireRequest.from_payload(str(steps[i].action.arg))
    forged = dataclasses.replace(req, generation_id=req.generation_id + 7)
    steps[i] = dataclasses.replace(steps[i], action=Action("Receive", steps[i].action.client, forged.to_payload()))
    with pytest.raises(ReplayDivergence):
        replay(dataclasses.replace(trace, steps=tuple(steps)))


def test_receive_is_only_for_external_clients_and_well_formed_payloads() -> None:
    world = World("3.9", Scope(), clients=["java"])
    ok = WireRequest("Heartbeat", 1, "g", member_id="m", generation_id=1).to_payload()
    assert not world.is_enabled(Action("Receive", 0, ok))          # a modelled client sends for itself
    ext = world.add_client("external")
    assert world.is_enabled(Action("Receive", ext, ok))
    assert not world.is_enabled(Action("Receive", ext, "{not json"))
    assert not world.is_enabled(Action("Receive", ext + 1, ok))
    with pytest.raises(ValueError, match="not enabled"):
        world.step(Action("Receive", ext, '{"api": "Fetch"}'))
    assert world.is_enabled(Action("AdvanceClock", -1, 1234))        # real time: any amount ...
    world.step(Action("Receive", ext, WireRequest(
        "JoinGroup", 2, "g", session_timeout_ms=10000, rebalance_timeout_ms=10000, protocol_type="consumer",
        protocols=(("range", b""),)).to_payload()))
    world.step(Action("AdvanceClock", -1, 5000))
    assert world.coord.due_timers()
    assert not world.is_enabled(Action("AdvanceClock", -1, 1))       # ... but never past a due timer


def test_wire_request_payload_round_trips_and_rejects_garbage() -> None:
    req = WireRequest("SyncGroup", 3, "g", client_id="rdkafka", member_id="m-1", generation_id=4,
                      assignments=(("m-1", b"\x00\x01"), ("m-2", b"")), group_instance_id="i-1")
    assert WireRequest.from_payload(req.to_payload()) == req
    assert str(Action("Receive", 0, req.to_payload())) == "Receive c0 SyncGroup#3 member=m-1 gen=4"
    with pytest.raises(ValueError, match="malformed Receive payload"):
        WireRequest.from_payload('{"api": "SyncGroup"}')
    with pytest.raises(ValueError, match="Receive carries one of"):
        WireRequest("Fetch", 1, "g")


def test_a_trace_replays_whatever_connections_opened_later() -> None:
    """Connections open while the session runs; a replay starts with all of them: digests still agree."""
    s = LiveSession("3.9", checked=CheckedRun)
    first = s.open("early")
    _join(s, first, "", v4=False)
    late = s.open("late")
    _join(s, late, "", v4=False)
    trace = Trace.loads(s.trace().dumps())
    assert trace.scope["clients"] == ["external", "external"]
    assert len(replay(trace).steps) == len(trace.steps) == 2


def test_each_group_has_its_own_checked_world_and_trace() -> None:
    """A second group's parked JoinGroup is no business of the first group's checks (classic groups never
    interact): each group gets its own world, checks and trace."""
    s = LiveSession("3.9", checked=CheckedRun)
    a, b = s.open("a"), s.open("b")
    _join(s, a, "", v4=False)
    s.submit(b, "JoinGroup", group_id="other", member_id="", session_timeout_ms=10000, rebalance_timeout_ms=10000,
             protocol_type="consumer", protocols=[("range", b"")])
    for t in range(0, 12000, 500):
        s.advance_to(t)
    assert list(s.worlds) == ["g", "other"] and s.group_id == "g"
    assert {a_.conn for a_ in s.answers()} == {a, b}
    assert s.violations == []
    for group in ("g", "other"):
        trace = Trace.loads(s.trace(group).dumps())
        assert trace.scope["group_id"] == group
        assert len(replay(trace).steps) == len(trace.steps)


def test_a_served_counterexample_reads_like_any_other(tmp_path: object) -> None:
    """Reports of a served session show a real client's request as a request: a sentence in the table,
    an arrow in the sequence diagram, a step on the abstract path."""
    from kgc.reporting import violation_report
    from reports.markdown import render_markdown
    s = LiveSession("3.9", mutant="generation-not-bumped", checked=CheckedRun)
    c = s.open("consumer-0")
    _join(s, c, "", v4=True)
    member = s.answers()[0].result.member_id
    _join(s, c, member, v4=True)
    for t in range(0, 5000, 500):
        s.advance_to(t)
    found = s.runner.result("serve")
    assert found is not None and found.violation.property == "each-new-generation-increments-the-generation-id"
    text = render_markdown(violation_report(found.trace, found.violation))
    assert f"c0->>coord: JoinGroup#35;2 member={member}" in text
    assert f"coordinator handles c0 JoinGroup#2 member={member} (a real client's)" in text
    assert f"--[1: Receive c0 JoinGroup#2 member={member}]-->" in text
