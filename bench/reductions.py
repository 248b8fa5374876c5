"""What each candidate state-space reduction would merge, measured before building it; prints JSON (not a test).

    python bench/reductions.py [--depth 13] [--por-depth 16] [--profile 3.9] [--scope basic]

A bare BFS over World snapshots (no checking; 3 Java consumers) deduplicated by today's key, the canonical
form of explore/canonical.py (monitor run states left out: on this scope they split almost nothing). Per level,
the number of distinct keys of the same states under each candidate key — upper bounds, because none of these
keys is exact here (bench/results/explore-perf-2026-11-27.md says why for each):

- ``time_shifted``: every absolute time (now, deadlines, heartbeat times, state timestamps) made relative to now.
  Unsound with the scope's clock horizon (max_time_ms): two states 10 s apart have different futures.
- ``counters_relabelled``: member-id suffixes, op and append sequence numbers and timer references mapped to
  their rank, the coordinator counter dropped. Unsound with impl's member ids ("c0-9" > "c0-12" as strings).
- ``counters_and_time``: both.
- ``clients_symmetric``: the least of the keys over every permutation of the clients (their indexes, the "cN"
  in member and client ids, protocol metadata). Unsound: leader = smallest member id, which encodes the client.

``por``: a BFS with ample sets over client-local actions (a client's sends and the responses delivered to it,
taken alone while no request of that client is in flight or parked), by step depth — the states it keeps, and
the least POR depth at which it has reached every coordinator state the full search reaches at each depth.
"""
from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import time
from hashlib import blake2b
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from explore.canonical import _coord_members, _member_keys, canonical  # noqa: E402
from explore.scopes import get_scope  # noqa: E402
from explore.space import _dumps  # noqa: E402  (the snapshots' own canonical pickling)
from harness.world import World  # noqa: E402

LOCAL = frozenset({"JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit", "DeliverResponse"})
IDS = re.compile(r"(?<![A-Za-z0-9])(c\d)-(\d+)")
CLIENT = re.compile(r"(?<![A-Za-z0-9])c(\d)(?=-|$)")


def _h(value: Any) -> bytes:
    return blake2b(_dumps(value), digest_size=12).digest()


# --- candidate keys (positions as in impl/snapshot.py and explore/canonical.py) ---------------------------
def time_shifted(state: tuple[Any, ...]) -> tuple[Any, ...]:
    coord, clients, net, partition = state
    now = coord[1]

    def member(m: tuple[Any, ...]) -> tuple[Any, ...]:
        return m[:11] + (m[11] - now,) + m[12:]

    def group(g: tuple[Any, ...]) -> tuple[Any, ...]:
        return g[:3] + (None if g[3] is None else g[3] - now,) + g[4:8] + (tuple(member(m) for m in g[8]),) + g[9:]

    def op(o: tuple[Any, ...]) -> tuple[Any, ...]:
        o = o[:3] + (o[3] - now,) + o[4:]
        if o[1] == "DelayedHeartbeat":
            o = o[:6] + (o[6] - now,) + o[7:8] + (member(o[8]) if isinstance(o[8], tuple) else o[8],)
        return o
    c = (coord[0], 0) + coord[2:4] + (tuple(group(g) for g in coord[4]), tuple(group(g) for g in coord[5])) \
        + coord[6:9] + (tuple(op(o) for o in coord[9]),) + coord[10:]
    return (c, clients, net, partition)


def _ids(value: Any, out: set[int]) -> None:
    if isinstance(value, str):
        out.update(int(m.group(2)) for m in IDS.finditer(value))
    elif isinstance(value, tuple):
        for x in value:
            _ids(x, out)


def _sub(value: Any, fn: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, tuple):
        return tuple(_sub(x, fn) for x in value)
    return value


def counters_relabelled(state: tuple[Any, ...]) -> tuple[Any, ...]:
    coord, clients, net, partition = state
    found: set[int] = set()
    _ids(state, found)
    rank = {n: i for i, n in enumerate(sorted(found), 1)}
    seqs = {n: i for i, n in enumerate(sorted({o[0] for o in coord[9]} | {a[0] for a in coord[11]}), 1)}

    def fn(s: str) -> str:
        return IDS.sub(lambda m: f"{m.group(1)}-{rank[int(m.group(2))]}", s)
    c = list(_sub(coord, fn))
    c[2] = 0
    c[9] = tuple((seqs[o[0]],) + o[1:] for o in c[9])
    c[11] = tuple((seqs[a[0]],) + a[1:] for a in c[11])
    c[10] = tuple((k, tuple(seqs.get(s, -s) for s in ss)) for k, ss in c[10])
    return (tuple(c), _sub(clients, fn), _sub(net, fn), partition)


def _permuted(state: tuple[Any, ...], p: tuple[int, ...]) -> tuple[Any, ...]:
    coord, clients, net, partition = state

    def deep(v: Any) -> Any:
        if isinstance(v, str):
            return CLIENT.sub(lambda m: f"c{p[int(m.group(1))]}", v)
        if isinstance(v, bytes) and re.fullmatch(rb"c\d", v):
            return b"c%d" % p[int(v[1:])]
        return tuple(deep(x) for x in v) if isinstance(v, tuple) else v

    def key(k: Any) -> Any:
        return (p[k[0]], k[1]) if isinstance(k, tuple) else k

    def member(m: tuple[Any, ...]) -> tuple[Any, ...]:
        return deep(m[:9]) + (key(m[9]), key(m[10])) + deep(m[11:])

    def group(g: tuple[Any, ...]) -> tuple[Any, ...]:
        out = list(deep(g))
        out[8] = tuple(sorted((member(m) for m in g[8]), key=lambda m: m[0]))
        out[9], out[10] = tuple(sorted(out[9])), tuple(sorted(out[10]))
        return tuple(out)
    c = list(deep(coord))
    c[4], c[5] = tuple(group(g) for g in coord[4]), tuple(group(g) for g in coord[5])
    c[9] = tuple(deep(o[:8]) + (member(o[8]),) + deep(o[9:]) if o[1] == "DelayedHeartbeat" and isinstance(o[8], tuple)
                 else deep(o) for o in coord[9])
    c[10] = tuple(sorted(deep(coord[10])))
    moved: list[Any] = [None] * len(clients)
    for i, cl in enumerate(clients):
        cl2 = list(deep(cl))
        cl2[4] = tuple(sorted(cl2[4]))
        moved[p[i]] = tuple(cl2)
    msgs = [tuple(sorted((deep(m[:1]) + (p[m[1]],) + deep(m[2:]) for m in part),
                         key=lambda m: (m[1], m[2]))) for part in net]
    return (tuple(c), tuple(moved), tuple(msgs), partition)


def clients_symmetric(state: tuple[Any, ...]) -> tuple[Any, ...]:
    return min((canonical(_permuted(state, p)) for p in itertools.permutations(range(len(state[1])))), key=_dumps)


KEYS: dict[str, Callable[[tuple[Any, ...]], Any]] = {
    "time_shifted": lambda s: canonical(time_shifted(s)),
    "counters_relabelled": lambda s: canonical(counters_relabelled(s)),
    "counters_and_time": lambda s: canonical(counters_relabelled(time_shifted(s))),
    "clients_symmetric": clients_symmetric,
}


# --- the searches --------------------------------------------------------------------------------------
def _world(profile: str, scope: str) -> World:
    world = World(profile, get_scope(scope), clients=3, seed=0, record=False)
    world.reuse_coordinator = True
    return world


def _ample(world: World, actions: tuple[Any, ...]) -> tuple[Any, ...]:
    """The smallest set of one client's local actions while that client has nothing in flight or parked (no
    other action can enable one of its actions or depend on them then); else every action."""
    parked: list[tuple[int, int]] = []
    for m in _coord_members(world.coordinator_state()):
        _member_keys(m, parked)
    busy = {c for c, _corr in parked} | {c for c, _corr in world.net.requests}
    best: tuple[Any, ...] | None = None
    for i in range(len(world.clients)):
        mine = tuple(a for a in actions if a.client == i and a.kind in LOCAL)
        if i not in busy and mine and (best is None or len(mine) < len(best)):
            best = mine
    return best if best is not None else actions


def bfs(profile: str, scope: str, depth: int, keys: dict[str, Callable[[tuple[Any, ...]], Any]],
        por: bool = False) -> tuple[list[dict[str, int]], dict[bytes, int]]:
    """Per level the distinct keys (today's and each of ``keys``), and each coordinator state's first depth."""
    world = _world(profile, scope)
    state = world.to_state()
    seen = {_h(canonical(state))}
    merged = {name: {_h(fn(state))} for name, fn in keys.items()}
    first = {_h(state[0]): 0}
    frontier, levels = [world.snapshot()], []
    for level in range(1, depth + 1):
        nxt = []
        for node in frontier:
            world.restore(node)
            actions = world.enabled()
            for action in (_ample(world, actions) if por else actions):
                world.restore(node, actions)
                world.step(action)
                state = world.to_state()
                first.setdefault(_h(state[0]), level)
                key = _h(canonical(state))
                if key not in seen:
                    seen.add(key)
                    nxt.append(_dumps(state))
                    for name, fn in keys.items():
                        merged[name].add(_h(fn(state)))
        frontier = nxt
        levels.append({"depth": level, "states": len(seen), **{n: len(m) for n, m in merged.items()}})
        print(json.dumps(levels[-1]), file=sys.stderr, flush=True)
    return levels, first


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=13)
    ap.add_argument("--por-depth", type=int, default=16, help="depth of the POR prototype's BFS (default 16)")
    ap.add_argument("--profile", default="3.9")
    ap.add_argument("--scope", default="basic")
    args = ap.parse_args()
    t0 = time.perf_counter()
    levels, full_first = bfs(args.profile, args.scope, args.depth, KEYS)
    por_levels, por_first = bfs(args.profile, args.scope, args.por_depth, {}, por=True)
    needed = {}
    for d in range(1, args.depth + 1):
        wanted = [k for k, v in full_first.items() if v <= d]
        depths = [por_first.get(k) for k in wanted]
        needed[d] = None if None in depths else max(depths)   # type: ignore[type-var]
    print(json.dumps({"space": {"profile": args.profile, "scope": args.scope, "members": 3}, "full": levels,
                      "por": [{"depth": x["depth"], "states": x["states"]} for x in por_levels],
                      "por_depth_covering_full_depth": needed, "seconds": round(time.perf_counter() - t0, 1)},
                     indent=1))


if __name__ == "__main__":
    main()
