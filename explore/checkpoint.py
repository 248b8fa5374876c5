"""The local engine's checkpoint as data: JSON, with no code in it (loading a pickle runs code).

``<dir>/checkpoint.json`` holds the format tag, the spec, the level, every counter of the result,
the abstract states and edges reached (model.State as field dicts), the visited fingerprints (int64,
base64) and the frontier (fingerprint, node, path, sleep set as action triples). A node is the
explorer's own byte string (explore/space.py): plain tuples pickled without globals, except the
eventually_within monitors' run state, whose helper objects live in properties/concrete_liveness.py.
``safe_node`` reads every node of a checkpoint with an unpickler that refuses any global outside that
short allowlist before the search touches it, so a tampered file is rejected with one sentence
instead of running code.
"""
from __future__ import annotations

import base64
import io
import json
import pickle
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from core.actions import Action
from explore.result import ExploreResult, Found
from explore.space import ExploreSpec
from model.state import Slot, State

CHECKPOINT = "checkpoint.json"
CHECKPOINT_FORMAT = "kgc-explore-checkpoint/2"
#: the only globals a node's pickles may name: the monitors' helper records (properties/concrete_liveness.py)
ALLOWED_GLOBALS = frozenset({("properties.concrete_liveness", "JoinPhaseClock"),
                             ("properties.concrete_liveness", "SyncPhaseClock"),
                             ("properties.concrete_liveness", "DeadlineBook")})


class UnsafeCheckpoint(ValueError):
    """A checkpoint whose content is not what the explorer writes."""


class _Restricted(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in ALLOWED_GLOBALS:
            raise UnsafeCheckpoint(f"it names {module}.{name}")
        return super().find_class(module, name)


def _safe_loads(data: bytes) -> Any:
    return _Restricted(io.BytesIO(data)).load()


def safe_node(node: bytes) -> bytes:
    """``node`` unchanged if it and the pickles inside it (world snapshot, monitor states) are plain data."""
    outer = _safe_loads(node)
    if not (isinstance(outer, tuple) and len(outer) == 3 and isinstance(outer[0], bytes)
            and isinstance(outer[1], bool) and isinstance(outer[2], tuple)):
        raise UnsafeCheckpoint("a node is not (world snapshot, flag, monitor states)")
    _safe_loads(outer[0])
    for state in outer[2]:
        if not isinstance(state, bytes):
            raise UnsafeCheckpoint("a monitor state is not bytes")
        _safe_loads(state)
    return node


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"), validate=True)


def _state_json(s: State) -> dict[str, Any]:
    out = asdict(s)
    out["appends"] = list(s.appends)
    return out


def _state_from(d: dict[str, Any]) -> State:
    return State(**{**d, "appends": tuple(d["appends"]), "slots": tuple(Slot(**x) for x in d["slots"])})


def _result_json(r: ExploreResult) -> dict[str, Any]:
    out = {f.name: getattr(r, f.name) for f in fields(r) if f.name not in ("spec", "violations", "witnesses")}
    out["violations"] = [[f.property, f.count, list(f.path), f.message] for f in r.violations.values()]
    out["witnesses"] = sorted(r.witnesses)
    return out


def _result_from(d: dict[str, Any], spec: ExploreSpec) -> ExploreResult:
    r = ExploreResult(spec, **{k: v for k, v in d.items() if k not in ("violations", "witnesses")})
    r.violations = {p: Found(p, c, tuple(path), m) for p, c, path, m in d["violations"]}
    r.witnesses = set(d["witnesses"])
    return r


def dumps(spec: ExploreSpec, level: int, visited: set[int], frontier: dict[int, list], result: ExploreResult,
          states: set[State], edges: set[tuple[State, str, State]]) -> str:
    data = {
        "format": CHECKPOINT_FORMAT, "spec": spec.to_json(), "level": level,
        "visited": _b64(np.fromiter(visited, np.int64, len(visited)).tobytes()),
        "frontier": [[fp, _b64(node), _b64(path), None if sleep is None else sorted(
            [a.kind, a.client, a.arg] for a in sleep)] for fp, (node, path, sleep) in frontier.items()],
        "result": _result_json(result),
        "abstract_states": sorted((_state_json(s) for s in states), key=json.dumps),
        "abstract_edges": sorted(([_state_json(a), k, _state_json(b)] for a, k, b in edges), key=json.dumps),
    }
    return json.dumps(data, sort_keys=True)


def loads(text: str) -> dict[str, Any]:
    """The checkpoint's parts (as ``explore.local`` keeps them); UnsafeCheckpoint/ValueError/KeyError/TypeError
    when it is not one the explorer wrote."""
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        raise UnsafeCheckpoint(f"it is not a {CHECKPOINT_FORMAT} file")
    spec = ExploreSpec.from_json(data["spec"])
    frontier: dict[int, list] = {}
    for fp, node, path, sleep in data["frontier"]:
        frontier[int(fp)] = [safe_node(_unb64(node)), _unb64(path),
                             None if sleep is None else frozenset(Action(str(k), int(c), a) for k, c, a in sleep)]
    return {"spec": spec, "level": int(data["level"]),
            "visited": set(np.frombuffer(_unb64(data["visited"]), np.int64).tolist()),
            "frontier": frontier, "result": _result_from(data["result"], spec),
            "abstract_states": {_state_from(s) for s in data["abstract_states"]},
            "abstract_edges": {(_state_from(a), str(k), _state_from(b)) for a, k, b in data["abstract_edges"]}}


@dataclass(frozen=True)
class Recorded:
    """What a checkpoint directory records about its run: the engine that wrote it, the space, the level reached."""

    engine: str          # "local" or "spark"
    spec: ExploreSpec
    level: int


def recorded(directory: Path) -> Recorded | None:
    """The newest checkpoint in ``directory`` (the local engine's file or the Spark engine's newest complete
    level), None when there is none; UnsafeCheckpoint/ValueError/KeyError/TypeError when it is damaged. Reads the
    local file whole (its spec and level sit between the frontier and the visited set)."""
    local = directory / CHECKPOINT
    spark = sorted(directory.glob("level-*/_SUCCESS.json"))
    newest = max([p for p in (local,) if p.is_file()] + spark[-1:], key=lambda p: p.stat().st_mtime_ns, default=None)
    if newest is None:
        return None
    data = json.loads(newest.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise UnsafeCheckpoint(f"{newest} is not a checkpoint")
    if newest == local and data.get("format") != CHECKPOINT_FORMAT:
        raise UnsafeCheckpoint(f"it is not a {CHECKPOINT_FORMAT} file")
    return Recorded("local" if newest == local else "spark", ExploreSpec.from_json(data["spec"]), int(data["level"]))


__all__ = ["CHECKPOINT", "CHECKPOINT_FORMAT", "Recorded", "UnsafeCheckpoint", "dumps", "loads", "recorded",
           "safe_node"]
