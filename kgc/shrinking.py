"""Delta debugging over a counterexample's steps, with the references of the steps it keeps renamed.

Removing a step from a trace usually breaks the steps after it: a client's correlation ids and the
coordinator's timer sequence numbers are counters, so once an earlier send or timer is gone a later
``DeliverRequest c0 #6`` or ``FireTimer 13`` names another request or timer, or none. Plain delta debugging
(kgc.runs.shrink's last pass) therefore stops at traces of 50–150 steps that a person cannot read in a minute.

Here a request is named by the step that sent it (and its rank among the requests that step put on the
network) and a timer task by the step that armed it (and its rank among that step's new tasks). A candidate —
the original steps with some left out — is replayed step by step, each kept step's request or timer reference
renamed to what *the replay* created for the same name; a kept step whose request or timer was left out, or
that is not enabled once renamed, makes the candidate fail. What a candidate replays is an ordinary trace:
the shrunk counterexample replays with ``kgc replay`` like any other.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Sequence, TypeVar

from core.actions import Action
from core.trace import Trace
from harness.replay import world_for
from kgc.runs import OBSERVES, REFINES, CheckedRun

#: actions whose ``arg`` is a correlation id of ``client``'s request (its response, for the *Response kinds)
_REQUEST_REFS = frozenset({"DeliverRequest", "DropRequest", "DeliverResponse", "DropResponse"})
T = TypeVar("T")
Name = tuple[int, int]   # (index of the step that created it, its rank among that step's creations)
#: the pair pass (two steps left out at once) runs on traces of at most this many steps
PAIR_PASS_MAX = 80
#: at most this many candidate replays in each of the two passes (the caller's clock may stop them sooner)
MAX_REPLAYS = 4000
#: delta debugging first with a left-out step's dependants passed over (``replay_renamed``'s ``skipped``)
LENIENT_FIRST = True


def _created(before: set, after: set, index: int) -> dict:   # type: ignore[type-arg]
    return {key: (index, rank) for rank, key in enumerate(sorted(after - before))}


def _timer_seqs(coord: object) -> set[int]:
    """The sequence numbers of the coordinator's timer tasks: the Scala timer's entries, or the 4.x runtime's tasks
    (scheduled, queued and stale: FireTimer names any of them)."""
    timer = getattr(coord, "timer", None)
    if timer is not None:
        return set(timer.entries)
    return {t.seq for t in coord.timers()}   # type: ignore[attr-defined]


def _taken(run: CheckedRun) -> int:
    """How many actions the run took: its recorded steps, and the step that raised (never recorded)."""
    return len(run.world.steps) + (run.raising is not None)


def replay_renamed(trace: Trace, actions: Sequence[Action], keep: Sequence[int], prop: str,
                   refs: dict[int, Name] | None = None, learn: dict[int, Name] | None = None,
                   skipped: list[int] | None = None) -> CheckedRun | None:
    """Replay the steps ``keep`` (indexes into ``actions``) of ``trace``'s world, each step that references a
    request or timer renamed through ``refs`` (step index → the name of what it references in the original run);
    the run if ``prop`` fails on the way. With ``learn`` (the original run, every step), ``refs`` is filled in:
    a key names the request or timer most recently created under it (a client's correlation ids restart with
    the client). With ``skipped``, a kept step that is not enabled, or whose request or timer was left out, is
    passed over (its index appended there) instead of failing the replay: leaving out one step then also leaves out
    the later steps that needed it — a client's next request after a join that is gone."""
    run = CheckedRun(world_for(dataclasses.replace(trace, steps=()), record=True), refine=prop in (REFINES, OBSERVES))
    made: dict[Name, int | tuple[int, int]] = {}            # name -> the replay's request key / timer seq
    current: dict[tuple[str, object], Name] = {}            # (what, key in this run) -> its name (learning)
    for k in keep:
        action = actions[k]
        ref = _ref(action)
        if ref is not None and learn is not None:
            if ref in current:
                learn[k] = current[ref]
        elif ref is not None and refs is not None and k in refs:
            target = made.get(refs[k])
            if target is None and skipped is not None:
                skipped.append(k)
                continue
            if target is None:
                return None
            action = Action(action.kind, action.client, target[1] if isinstance(target, tuple) else target)
        world = run.world
        if run.over:
            return None
        if not world.is_enabled(action):
            if skipped is None:
                return None
            skipped.append(k)
            continue
        sent, armed = set(world.net.requests), _timer_seqs(world.coord)
        found = run.step(action)
        for what, before, after in (("request", sent, set(run.world.net.requests)),
                                    ("timer", armed, _timer_seqs(run.world.coord))):
            for key, name in _created(before, after, k).items():
                made[name] = key
                current[(what, key)] = name
        if any(v.property == prop for v in found):
            return run
    return None


def _ref(action: Action) -> tuple[str, object] | None:
    """What ``action`` references: ("request", its key) or ("timer", its seq); None for anything else."""
    if action.kind in _REQUEST_REFS and isinstance(action.arg, int):
        return ("request", (action.client, action.arg))
    if action.kind == "FireTimer" and isinstance(action.arg, int):
        return ("timer", action.arg)
    return None


def ddmin(items: list[T], attempt: Callable[[list[T]], list[T] | None], spent: Callable[[], bool]) -> list[T]:
    """Delta debugging: leave out ever smaller chunks of ``items`` while ``attempt`` accepts what is left (it returns
    what to keep of it — the violation may come early — or None to refuse)."""
    chunk = max(1, len(items) // 2)
    while chunk >= 1 and not spent():
        i, progressed = 0, False
        while i < len(items) and not spent():
            candidate = items[:i] + items[i + chunk:]
            kept = attempt(candidate) if candidate else None
            if kept is not None:
                items, progressed = kept, True
            else:
                i += chunk
        if not progressed:
            chunk //= 2
    return items


def shrink_renamed(trace: Trace, actions: Sequence[Action], prop: str, expired: Callable[[], bool],
                   charge: Callable[[int], None] = lambda _steps: None) -> CheckedRun | None:
    """The run of the smallest subsequence of ``actions`` found (1-minimal unless ``expired``) that, replayed with
    renamed references, still breaks ``prop``; None if the original run does not (then nothing is learnt)."""
    replays = 0

    def spent() -> bool:   # a fixed number of replays first, so that the same trace always shrinks the same way
        return replays >= MAX_REPLAYS or expired()

    def attempt(candidate: list[int], lenient: bool = False) -> list[int] | None:
        nonlocal replays, best
        replays += 1
        charge(len(candidate))
        skipped: list[int] | None = [] if lenient else None
        run = replay_renamed(trace, actions, candidate, prop, names, skipped=skipped) if candidate else None
        if run is None:
            return None
        best = run
        passed_over = set(skipped or ())
        ran = [k for k in candidate if k not in passed_over]
        return ran[:_taken(run)]   # the violation may come before the last kept step

    names: dict[int, Name] = {}
    found = replay_renamed(trace, actions, range(len(actions)), prop, learn=names)
    if found is None:
        return None
    best: CheckedRun = found
    # first leniently: a left-out step takes the later steps that needed it along (a walk's client acts on what it
    # was answered, so plain removal of a join fails on its next request and ddmin stalls at 100+ steps); then
    # strictly, which only keeps a candidate whose every step still runs
    keep = list(range(_taken(found)))
    if LENIENT_FIRST:
        keep = ddmin(keep, lambda c: attempt(c, lenient=True), spent)
        replays = 0
    keep = ddmin(keep, attempt, spent)
    # then every pair of steps that only goes together (a crash and its restart, a send and its delivery), on
    # traces short enough for the quadratic number of replays
    progressed, replays = True, 0   # the pair pass has its own allowance of replays
    while progressed and len(keep) <= PAIR_PASS_MAX and not spent():
        progressed = False
        for i in range(len(keep)):
            for j in range(i + 1, len(keep)):
                kept = attempt(keep[:i] + keep[i + 1:j] + keep[j + 1:])
                if kept is not None:
                    keep, progressed = kept, True
                    break
                if spent():
                    return best
            if progressed:
                break
    return best
