"""Replay: a recorded trace re-runs bit for bit; tampering and malformed files are caught."""
from __future__ import annotations

import dataclasses
import json

import pytest

from core.responses import parse_response
from core.trace import Trace, TraceFormatError
from harness.replay import ReplayDivergence, replay
from harness.scope import Scope
from harness.world import World

SCOPE = Scope(append_mode="deferred", faults=True, crashes=True, commits=True, unload=True)


def recorded(profile: str = "3.9", seed: int = 4, steps: int = 250) -> Trace:
    world = World(profile, SCOPE, clients=("java", "java", "adversarial"), seed=seed)
    world.random_walk(steps)
    return Trace.loads(world.trace("walk").dumps())    # through JSON, as `kgc replay FILE` reads it


@pytest.mark.parametrize("profile", ["3.9", "0.10.0"])
def test_replay_reproduces_every_step(profile: str) -> None:
    trace = recorded(profile)
    world = replay(trace)
    assert world.trace("walk").dumps() == trace.dumps()
    assert world.digest() == trace.steps[-1].digest


def test_tampered_field_is_named() -> None:
    trace = recorded()
    index = len(trace.steps) // 2
    steps = list(trace.steps)
    steps[index] = dataclasses.replace(steps[index], generation_id=steps[index].generation_id + 7)
    with pytest.raises(ReplayDivergence, match=rf"step {index} \(.*\): generation_id was recorded as"):
        replay(dataclasses.replace(trace, steps=tuple(steps)))


def test_tampered_responses_and_digest_are_named() -> None:
    trace = recorded()
    index = next(s.index for s in trace.steps if s.responses)
    steps = list(trace.steps)
    steps[index] = dataclasses.replace(steps[index], responses=(parse_response("c9 JoinGroup#1 NONE"),))
    with pytest.raises(ReplayDivergence, match=f"step {index} .*responses"):
        replay(dataclasses.replace(trace, steps=tuple(steps)))
    steps = list(trace.steps)
    steps[3] = dataclasses.replace(steps[3], digest="0" * 16)
    with pytest.raises(ReplayDivergence, match="step 3 .*digest"):
        replay(dataclasses.replace(trace, steps=tuple(steps)))


def test_action_that_is_not_enabled_is_a_divergence() -> None:
    trace = recorded()
    steps = list(trace.steps)
    steps[0] = dataclasses.replace(steps[0], action=dataclasses.replace(steps[0].action, kind="DeliverResponse",
                                                                        client=0, arg=42))
    with pytest.raises(ReplayDivergence, match="step 0: action DeliverResponse c0 42 is not enabled"):
        replay(dataclasses.replace(trace, steps=tuple(steps)))


def test_malformed_files_are_trace_format_errors() -> None:
    with pytest.raises(TraceFormatError, match="not valid JSON"):
        Trace.loads("{not json")
    obj = json.loads(recorded(steps=5).dumps())
    obj["steps"][1].pop("digest")
    with pytest.raises(TraceFormatError, match="is not a valid kgc trace: steps\\[1\\] has no 'digest'"):
        Trace.loads(json.dumps(obj))
    obj = json.loads(recorded(steps=5).dumps())
    obj["scope"]["fautls"] = True
    with pytest.raises(TraceFormatError, match="unknown scope key.*'fautls'"):
        replay(Trace.loads(json.dumps(obj)))


def test_traces_needing_an_unknown_mutant_are_refused_clearly() -> None:
    trace = dataclasses.replace(recorded(steps=5), mutant="skip-generation-check")
    with pytest.raises(ValueError, match="unknown mutant 'skip-generation-check'"):
        replay(trace)


def test_scope_json_round_trip() -> None:
    scope = Scope(append_mode="deferred", advance_ms=(500, 3000), max_time_ms=60000, session_timeout_ms=(6000,),
                  group_initial_rebalance_delay_ms=0)
    assert Scope.from_json(json.loads(json.dumps(scope.to_json()))) == scope
    with pytest.raises(ValueError, match="advance_ms"):
        Scope.from_json({"advance_ms": [0]})
