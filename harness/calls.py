"""A memo of coordinator calls for explorers (``World.call_memo``): a call already made from an equal
coordinator state is not made again, and its coordinator object is kept instead of being rebuilt.

The coordinator is a function of its state and the call. A DeliverRequest (with the request it takes off
the network), a FireTimer or a CompleteAppend from a coordinator restored from state ``s`` — and not
called since, so ``s`` is its exact state and its events, errors and transitions logs are empty — always
gives the same state after, the same responses in the same order and the same logs. The first such call
runs and its outcome is kept (``Call``): the coordinator object it left, that object's state, its answers
and logs. A later equal call takes the network's request, puts the kept object in the world, resets its
logs and hands out the same answers; nothing is rebuilt. The kept object is never stepped again: a World
that steps on from it first takes a private copy (``own_coordinator``), and ``restore`` replaces it — by the
coordinator the replayed call left untouched (``World._spare``) when it restores that state again, else rebuilt.

Readers of the state after the call (observations, the abstraction, the output check, verdicts) may keep
what they derive from it in ``Call.derived``: it belongs to this call from this coordinator state.
tests/test_world_reuse.py compares every expansion with and without the memo.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Generic, TypeAlias, TypeVar

from core.actions import Action
from core.responses import Response

if TYPE_CHECKING:
    from harness.world import World

K = TypeVar("K")
V = TypeVar("V")

#: the kinds memoised: they depend on nothing but the coordinator and the action (and the request), and their
#: answers all leave through World._drain (clock moves answer nothing: the clock never moves while a timer is due) —
#: except a move to the next deadline in a world with timed clients, whose heartbeats it reads (World.step checks);
#: a load or an unload also changes the partition, and a real client's request comes from outside
MEMO_KINDS = frozenset({"DeliverRequest", "FireTimer", "CompleteAppend", "AdvanceClock", "AdvanceToNextDeadline"})
#: coordinator states in the memo's young generation (``Recent``: it holds between one and two of these, each with
#: the calls made from it). Measured (3.9, 3 members, basic): 1,905 states and 7,125 calls at depth 13, ~15 KB a
#: call (mostly the kept coordinator object); 17,631 states by depth 17, where a memo emptied whenever it held
#: 8,192 spent 35 % more CPU per state on level 17 than this one (bench/results/explore-perf-2026-11-27.md).
#: The price is memory: ~2 GB per process once 32,768 states are held (depth 18-19; with --workers each
#: process holds about its share)
MEMO_STATES = 1 << 15


class Recent(Generic[K, V]):
    """A bounded dict that forgets what was not used for longest, cheaply: entries go into a young generation; when
    it holds ``size`` entries the old generation is dropped and the young one becomes the old; an old entry that is
    read again moves back into the young one. So it holds between ``size`` and 2 × ``size`` entries, and everything
    used since the last turn over. (Emptying a cache when full, as before, lost the working set of a deep BFS level
    each time: the explorer's caches are read by every node of a level.) Values must not be None."""

    __slots__ = ("size", "young", "old")

    def __init__(self, size: int) -> None:
        self.size = size
        self.young: dict[K, V] = {}
        self.old: dict[K, V] = {}

    def get(self, key: K) -> V | None:
        found = self.young.get(key)
        if found is None:
            found = self.old.pop(key, None)
            if found is not None:
                self[key] = found
        return found

    def __setitem__(self, key: K, value: V) -> None:
        if len(self.young) >= self.size:
            self.old, self.young = self.young, {}
        self.young[key] = value

    def __len__(self) -> int:
        return len(self.young) + len(self.old)


#: ``World.call_memo``: coordinator state -> the calls made from it (explorers use a ``Recent``; tests a dict)
CallMemo: TypeAlias = "dict[tuple[Any, ...], dict[Any, Call]] | Recent[tuple[Any, ...], dict[Any, Call]]"


class Call:
    """The outcome of one coordinator call from one state."""

    __slots__ = ("after", "coord", "responses", "events", "errors", "transitions", "view", "derived")

    def __init__(self, after: tuple[Any, ...], coord: Any, responses: tuple[Response, ...], events: tuple[Any, ...],
                 errors: tuple[str, ...], transitions: tuple[tuple[str, str, str], ...]) -> None:
        self.after = after                    # the coordinator's state after the call
        self.coord = coord                    # the coordinator object the call left (never stepped again)
        self.responses = responses            # World.answered, in order
        self.events, self.errors, self.transitions = events, errors, transitions   # its logs after the call
        self.view: Any = None                 # coord.describe(group) when the World has read it
        self.derived: dict[Any, Any] = {}     # what readers derived from the state after (see the module doc)


def memo_step(world: World, action: Action, handler: Callable[[World, Action], None]) -> Call | None:
    """Take ``action`` (a memoisable call on a coordinator restored from ``world._fresh_coord_state`` and not
    called since) through ``world.call_memo``; the Call, or None when the call ran and could not be kept."""
    memo, coord, state = world.call_memo, world.coord, world._fresh_coord_state
    assert memo is not None and state is not None
    calls = world._calls
    if calls is None:
        calls = memo.get(state)
        if calls is None:
            calls = memo[state] = {}
        world._calls = calls
    key: Any = action
    if action.kind == "DeliverRequest":
        key = (action, world.net.requests[(action.client, action.arg)].to_tuple())  # type: ignore[index]
    world._fresh_coord_state = None
    found = calls.get(key)
    if found is None:
        clean = not (coord.errors or coord.transitions or coord._outbox)
        handler(world, action)
        if not clean or coord._outbox:      # answers still inside the coordinator: not a call the memo can repeat
            return None
        found = calls[key] = Call(coord.to_state(), coord, tuple(world.answered), tuple(coord.events),
                                  tuple(coord.errors), tuple(coord.transitions))
        return found
    if action.kind == "DeliverRequest":
        world.net.take_request((action.client, action.arg))  # type: ignore[arg-type]
    world._spare = (state, coord, calls)   # not called: the next restore of ``state`` takes it back
    kept = found.coord
    kept.events[:] = found.events
    kept.errors[:] = found.errors
    kept.transitions[:] = found.transitions
    world.coord = kept
    net, answered = world.net, world.answered
    for resp in found.responses:
        net.add_response(resp)
        answered.append(resp)
    return found


def own_coordinator(world: World) -> None:
    """Replace the memo's coordinator object in ``world`` by a private one in the same state, with the same logs."""
    kept, world._kept = world._kept, None
    assert kept is not None
    coord = world.coord = world.coordinator_class.from_state(kept.after, record_events=world.record)
    coord.errors.extend(kept.errors)
    coord.transitions.extend(kept.transitions)
