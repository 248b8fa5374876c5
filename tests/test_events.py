"""core/events.py and core/responses.py: every step event and response is a typed value whose rendering is the
line reports print and trace files store, and that line parses back to the same value (Step.from_json)."""
from __future__ import annotations

import dataclasses
import json

import pytest

from core.events import (EVENT_TYPES, GenerationStable, GenerationStarted, GroupEmptied, HeartbeatCompletedAtBirth,
                         HeartbeatScheduled, IllegalState, MemberAdded, MemberExpired, MemberLeaves, MemberNotRejoined,
                         MemberNotSynced, OperationCompleted, PendingMemberExpired, RebalancePrepared, StepEvent,
                         StaticMemberReplaced, StoreCallbackIgnored, Unloaded, first_of, of_kind, parse_event,
                         removed_before)
from core.responses import Response, parse_response
from core.trace import Step, Trace, TraceFormatError
from harness.scope import Scope
from harness.world import World

#: one value of every event type and the line it must render (the text impl logged before events were typed)
LINES: tuple[tuple[StepEvent, str], ...] = (
    (IllegalState("Group g should be in one of [Stable] before moving to Dead, but it is Dead"),
     "IllegalStateError: Group g should be in one of [Stable] before moving to Dead, but it is Dead"),
    (MemberAdded("c0-1"), "member c0-1 added"),
    (StaticMemberReplaced("i0", "i0-1", "i0-7"), "static member i0: i0-1 replaced by i0-7"),
    (MemberLeaves("c0-1"), "member c0-1 leaves"),
    (MemberExpired("c1-4"), "member c1-4 failed: heartbeat expired"),
    (MemberNotRejoined("c1-4"), "member c1-4 removed: did not rejoin"),
    (MemberNotSynced("c2-7"), "member c2-7 removed: no SyncGroup within the rebalance timeout"),
    (PendingMemberExpired("c0-1"), "pending member c0-1 expired"),
    (HeartbeatScheduled("c1-4", 15000), "DelayedHeartbeat c1-4 deadline=15000"),
    (HeartbeatCompletedAtBirth("c1-4"), "DelayedHeartbeat c1-4 completed at birth"),
    (OperationCompleted("DelayedJoin", "join:g", 12, "condition"), "DelayedJoin join:g seq=12 completed (condition)"),
    (OperationCompleted("DelayedHeartbeat", "member:g:c0-1", 3, "expired"),
     "DelayedHeartbeat member:g:c0-1 seq=3 completed (expired)"),
    (RebalancePrepared("Stable", "DelayedJoin", 10000), "Stable -> PreparingRebalance, DelayedJoin delay=10000"),
    (RebalancePrepared("Empty", "InitialDelayedJoin", 3000),
     "Empty -> PreparingRebalance, InitialDelayedJoin delay=3000"),
    (GenerationStarted(2, "CompletingRebalance", "c0-1", "range"),
     "generation 2: CompletingRebalance, leader=c0-1, protocol=range"),
    (GenerationStarted(3, "Empty", None, None), "generation 3: Empty, leader=None, protocol=None"),
    (GenerationStable(2), "generation 2 stable"),
    (StoreCallbackIgnored(1, "PreparingRebalance", 2),
     "store callback for generation 1 ignored (group PreparingRebalance generation 2)"),
    (GroupEmptied(), "group emptied -> Dead"),
    (Unloaded("AwaitingSync"), "unloaded: AwaitingSync -> Dead"),
)


@pytest.mark.parametrize(("event", "line"), LINES, ids=[line for _, line in LINES])
def test_each_event_renders_its_line_and_parses_back(event: StepEvent, line: str) -> None:
    assert event.render() == str(event) == line
    assert parse_event(line) == event


def test_every_event_type_has_a_rendering_case() -> None:
    assert {type(e) for e, _ in LINES} == set(EVENT_TYPES)


@pytest.mark.parametrize("line", ["", "member c0-1 joined", "DelayedHeartbeat c1-4 deadline=soon",
                                  "DelayedJoin join:g seq=x completed (condition)", "generation 2 stable!"])
def test_a_line_no_event_renders_is_refused(line: str) -> None:
    with pytest.raises(ValueError, match="not a coordinator event line"):
        parse_event(line)


RESPONSES = (
    Response("JoinGroup", 0, 3, "NONE", 2, "c0-1", "c0-1", ("c0-1", "c1-2")),
    Response("JoinGroup", 1, 1, "MEMBER_ID_REQUIRED", member_id="c1-1"),
    Response("JoinGroup", 2, 4, "UNKNOWN_MEMBER_ID", 0),
    Response("SyncGroup", 0, 5, "NONE", assignment=b"p0,p3"),
    Response("SyncGroup", 0, 6, "NONE", assignment=b"\x00\x01\xfe bin"),
    Response("Heartbeat", 1, 7, "REBALANCE_IN_PROGRESS"),
    Response("LeaveGroup", 2, 8),
)


@pytest.mark.parametrize("response", RESPONSES, ids=[r.render() for r in RESPONSES])
def test_each_response_line_parses_to_a_response_that_renders_it(response: Response) -> None:
    parsed = parse_response(response.render())
    assert parsed.render() == response.render()
    assert (parsed.api, parsed.key, parsed.error, parsed.generation_id, parsed.members) == \
        (response.api, response.key, response.error, response.generation_id, response.members)


@pytest.mark.parametrize("line", ["c0 JoinGroup#x NONE", "JoinGroup#1 NONE", "c0 JoinGroup#1 NONE shoe=1",
                                  "c0 Heartbeat#1 NONE gen=1"])
def test_a_line_no_response_renders_is_refused(line: str) -> None:
    with pytest.raises(ValueError, match="not a response line"):
        parse_response(line)


def test_helpers_find_events_by_type_in_order() -> None:
    events = (MemberAdded("a"), HeartbeatScheduled("a", 5), MemberLeaves("b"), HeartbeatScheduled("c", 9),
              MemberExpired("d"))
    assert of_kind(events, HeartbeatScheduled) == [(1, events[1]), (3, events[3])]
    assert first_of(events, MemberLeaves) == (2, events[2]) and first_of(events, GroupEmptied) is None
    assert removed_before(events, 3) == {"b"} and removed_before(events, 5) == {"b", "d"}


def test_a_recorded_trace_stores_lines_and_loads_typed_values_equal_to_the_recorded_ones() -> None:
    world = World("3.9", Scope(), clients=2, seed=3, record=True)
    for _ in range(60):
        world.step(world.enabled()[-1])
    trace = world.trace()
    assert any(st.events for st in trace.steps) and any(st.responses for st in trace.steps)
    stored = json.loads(trace.dumps())
    assert all(isinstance(e, str) for st in stored["steps"] for e in st["events"] + st["responses"])
    loaded = Trace.loads(trace.dumps())
    assert [st.events for st in loaded.steps] == [st.events for st in trace.steps]
    assert [st.response_lines for st in loaded.steps] == [st.response_lines for st in trace.steps]
    assert loaded.dumps() == trace.dumps()


def test_a_trace_with_an_unknown_event_line_is_a_format_error() -> None:
    step = Step(0, World("3.9", clients=1).enabled()[0], 0, "-", -1, "", (), (), "", (MemberAdded("a"),))
    obj = step.to_json()
    obj["events"] = ["member a added", "the coordinator sneezed"]
    with pytest.raises(TraceFormatError, match="sneezed"):
        Step.from_json(obj)
    assert Step.from_json(step.to_json()) == dataclasses.replace(step)


