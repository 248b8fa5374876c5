"""Canonical forms of world states for the explorer's deduplication key: history counters relabelled.

What is relabelled, and why that is exact. Each client numbers its requests with a correlation id
(``Client.next_corr``, +1 per send). The value is history: how many requests the client sent, not
what it can do next. The world only ever compares a corr with another corr *of the same client*:
for equality (a response matches the in-flight entry, the network and the coordinator's parked
futures are keyed by (client, corr)) and for order (``enabled()`` sorts DeliverRequest /
DeliverResponse / DropRequest / DropResponse by (kind, client, corr); the network's snapshot sorts
by key). New corrs are ``next_corr``, ``next_corr + 1``, …, all above every corr in the state. So
mapping, per client, the sorted distinct corrs in the state to 1, 2, … and ``next_corr`` to one above
the largest is an order-preserving bijection that commutes with every step: two states with equal
relabelled forms have the same enabled actions *by index*, step to states with equal relabelled
forms, and give every property the same verdict — properties read (client, corr) keys only to match
requests with responses (``properties/observation.py``), the eventually_within monitors hold no corr
(their run state is in the node and is compared as is), and the coordinator stores no corr except as
the key of a parked future (it never stores an OffsetCommit's offsets, SPEC.md §3.5).

The explorer keeps the *real* node (the first one reached, by the smallest path) and uses the
canonical form only to compute its fingerprint; reports, messages and replays read real states.

With ``ExploreSpec.symmetry`` the fingerprint is of ``symmetric``: the canonical form of the smallest state
among those that exchanging interchangeable clients gives (the section before ``symmetric`` says why that is
exact once every client sends one client.id, and what it changes).

Worlds with choice points (release fact ``hash-order-choices``: profile 4.1, the Java runtime) are not relabelled:
their states carry the World's choice-point branch (a whole earlier state, and the action it re-runs, whose arg may
be a corr) and the Java coordinator's own layout (parked futures in members and in pending writes, a future table
ordered by the key's repr, which a relabelling would reorder). ``canonical`` returns such a state as it is (no
reduction, still exact: the fingerprint is of the raw state, and ``corr_blind`` leaves its coordinator as it is, so
a node's route stays a function of its fingerprint), and ``ExploreSpec`` refuses ``symmetry`` there (by that fact).
What relabelling could buy is small where it applies: 1.2 % of the states of 3.9 at the gate's scope (3 members,
basic, depth 10: 6,698 raw states, 6,615 relabelled); tests/test_explore_4_1.py pins that 4.1's states come back
unchanged and that equal 4.1 worlds reached by different paths give equal bytes.

What is *not* relabelled, and why:

- member ids ``<client_id>-<counter>`` and the coordinator's op/append sequence numbers come from one
  counter. The coordinator compares member ids as strings (leader = ``min(members)``, members iterate in
  sorted order, impl/group.py), and string order differs from the counter's order across a digit
  boundary ("c0-9" > "c0-12"), so whether two counters give the same future depends on where the next
  power of ten falls: no relabelling of the counter is exact with the current id format (fixed-width
  suffixes in impl would make one exact). Ids of two different clients are ordered by their "cN" prefix, so
  only a client's old id against its new one is at stake — but a relabelling would have to keep that order
  for every id still to come within the depth. That holds only while counter + remaining depth < 10 (the
  counter grows about one a level: at most 10 at depth 12 and 12 at 13, 7.4 on average), almost never at the
  depths that matter. What an exact key could buy is bounded by what an unsound one merges (bench/reductions.py,
  3.9, 3 members, basic): 5.9 % fewer states at depth 12, 10.6 % at 13, 16.6 % at 14
  (bench/results/explore-perf-2026-11-27.md).
- absolute time. Every scope has a clock horizon (``scope.max_time_ms``): a clock move is enabled only while
  its target (the next deadline + 1) is within it, so two states whose deadlines relative to now agree differ
  in the future exactly where some reachable sum of those relative deadlines lies between their slacks
  (horizon - now). A capped slack min(horizon - now, B) is exact only if no clock move can jump more than the
  cap within the remaining depth — but one move can jump to any deadline within the horizon (the new-member
  timeout is 300 s, the horizon 60 s), so B would be the horizon itself and merge nothing. The monitors also
  hold absolute deadlines. The plain shift, unsound, would merge only 2.2 % of the states at depth 12 and
  3.3 % at 13 (bench/reductions.py).
"""
from __future__ import annotations

from dataclasses import replace
from itertools import groupby, permutations, product
from typing import Any, Sequence, cast

from harness.clients import ClientConfig
from harness.world import plain_bytes

# positions in the plain-data snapshots this module reads (harness/world.py, harness/clients.py,
# harness/messages.py, impl/snapshot.py); tests/test_explore_canonical.py pins them on real states
_WORLD_LEN = 4        # (coordinator, clients, network, partition); a world with choice points adds its branch
_CLIENT_LEN, _CLIENT_NEXT_CORR, _CLIENT_INFLIGHT = 10, 7, 8
_MSG_CLIENT, _MSG_CORR = 1, 2
_COORD_LEN, _COORD_GROUPS, _COORD_DETACHED, _COORD_OPS = 12, 4, 5, 9
_GROUP_MEMBERS = 8
_MEMBER_LEN, _MEMBER_JOIN_KEY, _MEMBER_SYNC_KEY = 15, 9, 10
_OP_KIND, _OP_HEARTBEAT_REF = 1, 8


class Layout(Exception):
    """A snapshot shaped differently from what this module reads: the caller falls back to no relabelling."""


def _member_keys(member: tuple[Any, ...], out: list[tuple[int, int]]) -> None:
    if len(member) != _MEMBER_LEN:
        raise Layout("member")
    for key in (member[_MEMBER_JOIN_KEY], member[_MEMBER_SYNC_KEY]):
        if key is not None:
            if not (isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], int)):
                raise Layout("future key")     # ("req", seq) futures: not a client's request
            out.append(key)


def _coord_members(coord: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """Every member record in the coordinator state (cached and detached groups, ops holding removed members)."""
    if len(coord) != _COORD_LEN:
        raise Layout("coordinator")
    members = [m for groups in (coord[_COORD_GROUPS], coord[_COORD_DETACHED]) for g in groups
               for m in g[_GROUP_MEMBERS]]
    members += [op[_OP_HEARTBEAT_REF] for op in coord[_COORD_OPS]
                if op[_OP_KIND] == "DelayedHeartbeat" and isinstance(op[_OP_HEARTBEAT_REF], tuple)]
    return members


def corr_maps(state: tuple[Any, ...]) -> list[dict[int, int]]:
    """Per modelled client, the order-preserving map of its corrs (and its next_corr) onto 1, 2, …"""
    coord, clients, net, _partition = state
    seen: list[set[int]] = [set() for _ in clients]
    for i, c in enumerate(clients):
        if len(c) != _CLIENT_LEN:
            raise Layout("client")
        for _api, entry in c[_CLIENT_INFLIGHT]:
            seen[i].add(entry[0])
    for msgs in net:
        for m in msgs:
            seen[m[_MSG_CLIENT]].add(m[_MSG_CORR])
    keys: list[tuple[int, int]] = []
    for m in _coord_members(coord):
        _member_keys(m, keys)
    for client, corr in keys:
        if not 0 <= client < len(clients):
            raise Layout("future key client")
        seen[client].add(corr)
    maps = []
    for i, c in enumerate(clients):
        values = sorted(seen[i])
        nxt = c[_CLIENT_NEXT_CORR]
        if values and values[-1] >= nxt:
            raise Layout("corr at or above next_corr")   # would break "new corrs are above every corr"
        ranks = {corr: rank for rank, corr in enumerate(values, 1)}
        ranks[nxt] = len(values) + 1
        maps.append(ranks)
    return maps


def _relabel_member(m: tuple[Any, ...], maps: list[dict[int, int]] | None, perm: Sequence[int] | None = None
                    ) -> tuple[Any, ...]:
    join, sync = m[_MEMBER_JOIN_KEY], m[_MEMBER_SYNC_KEY]
    if join is None and sync is None:
        return m
    out = list(m)
    for i, key in ((_MEMBER_JOIN_KEY, join), (_MEMBER_SYNC_KEY, sync)):
        if key is not None:
            out[i] = (key[0] if perm is None else perm[key[0]], key[1] if maps is None else maps[key[0]][key[1]])
    return tuple(out)


def _parked(coord: tuple[Any, ...]) -> bool:
    """Whether any member record holds a parked future (only then does the coordinator state hold a corr)."""
    return any(m[_MEMBER_JOIN_KEY] is not None or m[_MEMBER_SYNC_KEY] is not None for m in _coord_members(coord))


def _relabel_coord(coord: tuple[Any, ...], maps: list[dict[int, int]] | None, perm: Sequence[int] | None = None
                   ) -> tuple[Any, ...]:
    """``coord`` with the parked requests' keys (client, corr) mapped to (perm[client], maps[client][corr]); None
    leaves that part as it is."""
    if not _parked(coord):
        return coord

    def group(g: tuple[Any, ...]) -> tuple[Any, ...]:
        return g[:_GROUP_MEMBERS] + (tuple(_relabel_member(m, maps, perm) for m in g[_GROUP_MEMBERS]),) \
            + g[_GROUP_MEMBERS + 1:]

    def op(o: tuple[Any, ...]) -> tuple[Any, ...]:
        if o[_OP_KIND] == "DelayedHeartbeat" and isinstance(o[_OP_HEARTBEAT_REF], tuple):
            return o[:_OP_HEARTBEAT_REF] + (_relabel_member(o[_OP_HEARTBEAT_REF], maps, perm),) \
                + o[_OP_HEARTBEAT_REF + 1:]
        return o

    out = list(coord)
    out[_COORD_GROUPS] = tuple(group(g) for g in coord[_COORD_GROUPS])
    out[_COORD_DETACHED] = tuple(group(g) for g in coord[_COORD_DETACHED])
    out[_COORD_OPS] = tuple(op(o) for o in coord[_COORD_OPS])
    return tuple(out)


def _relabel_client(c: tuple[Any, ...], ranks: dict[int, int]) -> tuple[Any, ...]:
    out = list(c)
    out[_CLIENT_NEXT_CORR] = ranks[c[_CLIENT_NEXT_CORR]]
    if c[_CLIENT_INFLIGHT]:
        out[_CLIENT_INFLIGHT] = tuple((api, (ranks[e[0]],) + tuple(e[1:])) for api, e in c[_CLIENT_INFLIGHT])
    return tuple(out)


class _Constant:
    """A mapping of every key to one value: ``corr_blind``'s corr maps and client permutation."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __getitem__(self, _key: int) -> Any:
        return self.value


_BLIND = cast("list[dict[int, int]]", _Constant(_Constant(0)))   # every client's every corr -> 0
_ALL_TO_ZERO = cast("Sequence[int]", _Constant(0))              # every client -> 0


def corr_blind(coord: tuple[Any, ...], clients: bool = False) -> tuple[Any, ...]:
    """A coordinator state with the corr of every parked request set to 0 (``clients``: its client too). Two
    worlds with equal canonical forms have coordinator states that differ at most in those corrs (equal symmetric
    forms: in those keys), so this is a function of a node's fingerprint (explore/space.py ``route_of``, which
    the Spark engine partitions by); a state of another shape is returned as it is (then the fingerprint is of
    the raw state, and so is this)."""
    try:
        return _relabel_coord(coord, _BLIND, _ALL_TO_ZERO if clients else None) if _parked(coord) else coord
    except Exception:   # noqa: BLE001 — Layout, or a planted state of any shape
        return coord


def _relabelled(state: tuple[Any, ...]) -> tuple[Any, ...]:
    maps = corr_maps(state)
    coord, clients, net, partition = state
    new_net = tuple(tuple(m[:_MSG_CORR] + (maps[m[_MSG_CLIENT]][m[_MSG_CORR]],) + m[_MSG_CORR + 1:] for m in msgs)
                    for msgs in net)
    return (_relabel_coord(coord, maps), tuple(_relabel_client(c, r) for c, r in zip(clients, maps, strict=True)),
            new_net, partition)


def canonical(state: tuple[Any, ...]) -> tuple[Any, ...]:
    """``state`` (``World.to_state()``) with every client's corrs relabelled (see the module doc); a state
    of another shape — a world with choice points, the Java runtime's — is returned unchanged (no reduction, still
    exact)."""
    if len(state) != _WORLD_LEN:
        return state
    try:
        return _relabelled(state)
    except Exception:   # noqa: BLE001 — Layout, or a planted state of any shape: no relabelling is still exact
        return state


# --- symmetry: interchangeable clients ----------------------------------------------------------------------------
#
# Which clients are interchangeable. Client i's behaviour depends on its index only through its configuration
# (harness/clients.py ``client_configs``: its client.id, its protocol metadata, its timeouts, its static instance
# id) and through the index it stamps on its requests, which the network, the coordinator's parked futures and
# the world's action order use as a name and never read otherwise. The coordinator names a member
# ``<client.id>-<counter>`` (impl/base.py): with one client.id shared by every client (``Scope.client_id``) a
# member id says in which order it joined, not which client holds it, and the protocol metadata (the client.id)
# is the same bytes for all. So for two clients of the same kind whose configurations differ only in the index,
# exchanging them everywhere in a state — their client records, the client field of every message, the client
# of every parked request's key — gives a state whose futures are the exchanged futures of the first: each
# action of one is the exchanged action of the other, every step commutes with the exchange, and no property
# names a client (they read members by member id, requests and responses by (client, corr) only to pair them,
# properties/observation.py). tests/test_explore_symmetry.py checks the commutation on random paths of every
# scope (a path and its exchanged path end in exactly the exchanged states) and that the reduced search reaches
# one state of every orbit the full search reaches, with the same verdicts. The monitors' run states enter the key
# as they are: they name members, not clients, and one that named a client would only merge less.
#
# The representative. Within each class of interchangeable clients, clients are ordered by their own record
# (corrs relabelled, so it holds nothing of their index); clients with equal records are tied, and every order
# of the tied ones is tried, keeping the smallest pickled state. For a state and any exchange of it the set of
# candidates is the same, so the choice is a function of the orbit.

def interchangeable(kinds: Sequence[str], configs: Sequence[ClientConfig]) -> tuple[tuple[int, ...], ...]:
    """The classes of interchangeable clients: equal kind and configurations equal but for the index, each as its
    ascending positions; classes of one client are left out."""
    classes: list[list[int]] = []
    for i, (kind, config) in enumerate(zip(kinds, configs, strict=True)):
        for members in classes:
            j = members[0]
            if kinds[j] == kind and replace(configs[j], index=i) == config:
                members.append(i)
                break
        else:
            classes.append([i])
    return tuple(tuple(c) for c in classes if len(c) > 1)


def _msg_key(m: tuple[Any, ...]) -> tuple[int, int]:
    return (m[_MSG_CLIENT], m[_MSG_CORR])


def permuted(state: tuple[Any, ...], perm: Sequence[int]) -> tuple[Any, ...]:
    """``state`` with client i moved to position ``perm[i]`` everywhere: the client records, the client of every
    message (requests and responses stay sorted by key, a key's responses in their order) and of every parked
    request's key. Raises ``Layout`` for a state of another shape."""
    if _parked(state[0]):
        for m in _coord_members(state[0]):
            _member_keys(m, [])          # raises Layout on a future key of another shape
    return _permuted(state, perm)


def _permuted(state: tuple[Any, ...], perm: Sequence[int]) -> tuple[Any, ...]:
    """``permuted`` of a state whose shape ``corr_maps`` has checked."""
    coord, clients, net, partition = state
    moved: list[Any] = [None] * len(clients)
    for i, c in enumerate(clients):
        moved[perm[i]] = c
    new_net = tuple(tuple(sorted((m[:_MSG_CLIENT] + (perm[m[_MSG_CLIENT]],) + m[_MSG_CLIENT + 1:] for m in msgs),
                                 key=_msg_key)) if msgs else msgs for msgs in net)
    return (_relabel_coord(coord, None, perm), tuple(moved), new_net, partition)


def symmetric(state: tuple[Any, ...], classes: Sequence[Sequence[int]]) -> tuple[Any, ...]:
    """The representative of ``state``'s orbit under exchanges of interchangeable clients, corrs relabelled (see
    the section above); ``classes``: the positions of each class of interchangeable clients (ascending). A state
    of another shape is returned unchanged (no reduction, still exact)."""
    if len(state) != _WORLD_LEN:
        return state
    try:
        base = _relabelled(state)
        records = [plain_bytes(c) for c in base[1]]
        perm = list(range(len(records)))
        ties: list[list[int]] = []          # positions whose clients have equal records
        for positions in classes:
            order = sorted(positions, key=lambda i: records[i])
            for pos, i in zip(positions, order, strict=True):
                perm[i] = pos
            for _record, run in groupby(zip(positions, order, strict=True), key=lambda p: records[p[1]]):
                tied = [pos for pos, _i in run]
                if len(tied) > 1:
                    ties.append(tied)
        if not ties:
            return base if perm == list(range(len(perm))) else _permuted(base, perm)
        best: tuple[bytes, tuple[Any, ...]] | None = None
        for arrangement in product(*(permutations(t) for t in ties)):
            moved = {old: new for tied, new_order in zip(ties, arrangement, strict=True)
                     for old, new in zip(tied, new_order, strict=True)}
            candidate = _permuted(base, [moved.get(p, p) for p in perm])
            data = plain_bytes(candidate)
            if best is None or data < best[0]:
                best = (data, candidate)
        assert best is not None
        return best[1]
    except Exception:   # noqa: BLE001 — Layout, or a planted state of any shape: no reduction is still exact
        return state


__all__ = ["canonical", "corr_blind", "corr_maps", "interchangeable", "permuted", "symmetric"]
