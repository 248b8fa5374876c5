"""`kgc replay` of structurally corrupted traces (issue 26 §11): random structural edits of real traces — keys
deleted, duplicated or renamed, values retyped (a dict where a string belongs, a string where a number does),
numbers out of range, lists truncated or reordered — end in one sentence and exit 2 when the edit left no valid
trace, and in a clean replay (0) or a named divergence (1) when it did; never in a traceback."""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.scenarios import BY_NAME, run_scenario
from kgc.cli import main
from kgc.runs import CheckedRun
from wire.session import LiveSession

ROOT = Path(__file__).resolve().parents[1]
#: real traces: a seed scenario's (Java consumers), the committed example (a mutant), a static finding (adversarial
#: and static clients, group instance ids), and one of real clients' Receive steps (kgc serve)
FINDINGS = ROOT / "reports" / "findings"
RECORDS = [ROOT / "reports" / "examples" / "rebalance-timeout-min" / "counterexample.json",
           FINDINGS / "instance-id-with-a-pending-member-id-throws" / "3.9" / "counterexample.json",
           FINDINGS / "dead-to-dead-on-an-unloaded-group" / "0.10.0" / "counterexample.json"]


def _serve_trace() -> dict[str, Any]:
    """Two real clients' requests as kgc serve records them: Receive steps, timers, clock moves."""
    session = LiveSession("3.9", checked=CheckedRun)
    conns = [session.open(f"kafka-python-{i}") for i in range(2)]
    for conn in conns:
        session.submit(conn, "JoinGroup", group_id="g", member_id="", session_timeout_ms=10000,
                       rebalance_timeout_ms=10000, protocol_type="consumer", protocols=[("range", b"")],
                       require_known_member_id=False)
    session.advance_to(4000)
    return json.loads(session.trace("g").dumps())


def _traces() -> list[dict[str, Any]]:
    out = [json.loads(run_scenario(BY_NAME["three-consumers-one-rebalance"], "3.9").trace(name="s").dumps())]
    out += [json.loads(p.read_text(encoding="utf-8")) for p in RECORDS]
    return out + [_serve_trace()]


TRACES = _traces()
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.sampled_from([-1, 0, 1, 2**31, 2**63]),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8),
                    st.sampled_from(["", "JoinGroup", "Stable", "3.9", "NONE", "c0-1", "x" * 300]))
VALUES = st.one_of(SCALARS, st.lists(SCALARS, max_size=3), st.dictionaries(st.text(max_size=5), SCALARS, max_size=3))


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k in sorted(node):
            out += _paths(node[k], prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node[:6]):          # the first steps and entries are enough
            out += _paths(v, prefix + (i,))
    return out


def _parent(obj: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        obj = obj[key]
    return obj


@st.composite
def corrupted(draw: st.DrawFn) -> dict[str, Any]:
    obj = copy.deepcopy(draw(st.sampled_from(TRACES)))
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(obj) if p]
        path = draw(st.sampled_from(paths))
        parent, key = _parent(obj, path), path[-1]
        edit = draw(st.sampled_from(["delete", "duplicate", "retype", "number", "dict-for-string", "rename",
                                     "truncate", "swap"]))
        value = parent[key]
        if edit == "delete":
            del parent[key]
        elif edit == "duplicate":
            if isinstance(parent, list):
                parent.insert(key, copy.deepcopy(value))
            else:
                parent[f"{key}_copy"] = copy.deepcopy(value)
        elif edit == "retype" or (edit == "number" and not isinstance(value, (int, float))):
            parent[key] = draw(VALUES)
        elif edit == "number":
            parent[key] = draw(st.sampled_from([-1, -2**31, 2**63, 10**12, 0, value + 1, -value, 1.5]))
        elif edit == "dict-for-string":
            parent[key] = {"nested": value} if isinstance(value, str) else draw(VALUES)
        elif edit == "rename" and isinstance(parent, dict):
            parent[f"{key}x"] = parent.pop(key)
        elif edit == "truncate" and isinstance(value, (list, str)):
            parent[key] = value[: draw(st.integers(0, max(0, len(value) - 1)))]
        elif edit == "swap" and isinstance(value, list) and len(value) > 1:
            i, j = draw(st.integers(0, len(value) - 1)), draw(st.integers(0, len(value) - 1))
            value[i], value[j] = value[j], value[i]
        else:
            parent[key] = draw(VALUES)
    return obj


@settings(max_examples=250, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])
@given(trace=corrupted())
def test_a_corrupted_trace_is_one_sentence_or_a_clean_verdict(trace: dict[str, Any], tmp_path_factory: Any,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path_factory.mktemp("corrupt") / "t.json"
    path.write_text(json.dumps(trace), encoding="utf-8")
    capsys.readouterr()
    code = main(["replay", str(path), "--quiet"])     # an exception here fails the test: a traceback
    out, err = capsys.readouterr()
    assert code in (0, 1, 2), code
    if code == 2:
        assert err.startswith("kgc: error: ") and len(err.strip().splitlines()) == 1 and err.rstrip().endswith("."), err
    elif code == 1:
        assert out.startswith("replay diverged: step "), out
    else:
        assert "replay ok" in out
