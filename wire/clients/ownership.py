"""Client-visible properties of a real consumer group, judged from the consumers' own event logs.

Pure functions, no I/O. The input is every consumer's ``ClientEvent`` list (runner.py's JSON lines,
plus ``killed`` lines the test adds when it SIGKILLs a process). A consumer *owns* a partition from
its ``assigned`` callback until ``revoked``/``lost``, until it ``stopped`` or was ``killed``, or, when it
``stalled`` (stopped polling), from the poll deadline it then passed: past max.poll.interval.ms the
client has left the group (KIP-62) even though its callbacks only run at its next poll. Eager clients
(kafka-python, aiokafka, librdkafka's default) revoke everything before they rejoin, so two live
owners of one partition at one moment is a real fault. Each property returns violation sentences.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

ENDS_ALL = ("stopped", "killed")
REBALANCE_EVENTS = ("assigned", "revoked", "lost")


@dataclass(frozen=True, slots=True)
class ClientEvent:
    """One line of a consumer's log: what happened to ``name`` at ``t`` s on the run's time line."""

    t: float
    name: str
    event: str
    partitions: tuple[str, ...] = ()
    reason: str = ""
    deadline: float | None = None    # "stalled": when the poll deadline passes
    generation: int | None = None    # "assigned": the generation, where the library tells it

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "ClientEvent":
        deadline, generation = obj.get("deadline"), obj.get("generation")
        return cls(t=float(obj["t"]), name=str(obj["name"]), event=str(obj["event"]),
                   partitions=tuple(obj.get("partitions", ())), reason=str(obj.get("reason", "")),
                   deadline=None if deadline is None else float(deadline),
                   generation=None if generation is None else int(generation))


@dataclass(frozen=True, slots=True)
class Ownership:
    """``name`` owned ``partition`` from ``start`` to ``end`` (None: still at the end of the log)."""

    partition: str
    name: str
    start: float
    end: float | None

    def held_at(self, t: float) -> bool:
        return self.start <= t and (self.end is None or t < self.end)


def by_consumer(events: Iterable[ClientEvent]) -> dict[str, list[ClientEvent]]:
    """Each consumer's events in time order (stable: a log's own order breaks ties), up to its end.

    A log is cut after its first ``stopped``/``killed``: callbacks a library still runs inside
    ``close()`` (aiokafka finishes a pending rebalance there) no longer reach the application.
    """
    out: dict[str, list[ClientEvent]] = {}
    for e in events:
        out.setdefault(e.name, []).append(e)
    return {name: _until_end(sorted(evs, key=lambda e: e.t)) for name, evs in sorted(out.items())}


def _until_end(evs: list[ClientEvent]) -> list[ClientEvent]:
    for i, e in enumerate(evs):
        if e.event in ENDS_ALL:
            return evs[:i + 1]
    return evs


def ownerships(events: Iterable[ClientEvent]) -> list[Ownership]:
    """Every ownership interval of every consumer, sorted by partition, start and name."""
    spans: list[Ownership] = []
    for name, evs in by_consumer(events).items():
        spans.extend(_consumer_spans(name, evs))
    return sorted(spans, key=lambda s: (s.partition, s.start, s.name))


def _consumer_spans(name: str, evs: Sequence[ClientEvent]) -> list[Ownership]:
    held: dict[str, float] = {}
    spans: list[Ownership] = []
    deadline: float | None = None

    def close(parts: Iterable[str], at: float) -> None:
        for p in sorted(parts):
            if p in held:
                spans.append(Ownership(p, name, held.pop(p), at))

    for e in evs:
        if deadline is not None and e.t >= deadline:
            close(list(held), deadline)      # the stall outlived max.poll.interval.ms
        if e.event in ("stalled", "resumed"):
            deadline = e.deadline if e.event == "stalled" else None
        elif e.event == "assigned":
            for p in e.partitions:
                held.setdefault(p, e.t)
        elif e.event in ("revoked", "lost"):
            close(e.partitions, e.t)
        elif e.event in ENDS_ALL:
            close(list(held), e.t)
    if deadline is not None:
        close(list(held), deadline)
    spans.extend(Ownership(p, name, start, None) for p, start in sorted(held.items()))
    return spans


def no_partition_owned_twice(events: Iterable[ClientEvent], tolerance_s: float = 0.0) -> list[str]:
    """No partition is owned by two live consumers at the same time (overlaps beyond ``tolerance_s``)."""
    found: list[str] = []
    spans = ownerships(events)
    for i, a in enumerate(spans):
        for b in spans[i + 1:]:
            if b.partition != a.partition:
                break
            if b.name == a.name:
                continue
            lo, hi = max(a.start, b.start), min(_end(a), _end(b))
            if hi - lo > tolerance_s:
                found.append(f"{a.partition} owned by {a.name} and {b.name} at once from "
                             f"{lo:.2f} s to {_fmt_end(hi)}")
    return found


def stable_from(events: Iterable[ClientEvent], partitions: Sequence[str], settle_s: float,
                until: float) -> float | None:
    """The first time every partition has an owner and no assign/revoke/lost follows for ``settle_s``.

    The settle window must end by ``until``: a group still moving then has not shown it is stable.
    """
    evs = [e for log in by_consumer(events).values() for e in log]
    spans = ownerships(evs)
    changes = sorted(e.t for e in evs if e.event in REBALANCE_EVENTS)
    for t in changes:
        if t + settle_s > until or any(t < c <= t + settle_s for c in changes):
            continue
        if all(any(s.partition == p and s.held_at(t) for s in spans) for p in partitions):
            return t
    return None


def no_partition_unowned_longer_than(events: Iterable[ClientEvent], partitions: Sequence[str],
                                     bound_s: float, settle_s: float, until: float) -> list[str]:
    """After the group stabilises, no partition is without an owner longer than ``bound_s``, up to ``until``."""
    evs = list(events)
    start = stable_from(evs, partitions, settle_s, until)
    if start is None:
        return [f"the group never stabilised before {until:.2f} s: no moment with every partition owned "
                f"and no rebalance callback for {settle_s:.1f} s"]
    spans = ownerships(evs)
    found: list[str] = []
    for p in sorted(partitions):
        for gap_start, gap_end in _gaps([s for s in spans if s.partition == p], start, until):
            if gap_end - gap_start > bound_s:
                found.append(f"{p} had no owner from {gap_start:.2f} s to {gap_end:.2f} s "
                             f"({gap_end - gap_start:.2f} s, bound {bound_s:.2f} s)")
    return found


def _gaps(spans: Sequence[Ownership], start: float, until: float) -> list[tuple[float, float]]:
    """The intervals inside [start, until] that no span covers."""
    gaps: list[tuple[float, float]] = []
    covered_to = start
    for s in sorted(spans, key=lambda s: s.start):
        if s.start >= until:
            break
        if s.start > covered_to:
            gaps.append((covered_to, s.start))
        covered_to = max(covered_to, _end(s))
        if covered_to >= until:
            return gaps
    if covered_to < until:
        gaps.append((covered_to, until))
    return gaps


def live_at(events: Iterable[ClientEvent], t: float) -> list[str]:
    """The consumers that had started by ``t`` and had not stopped or been killed by then."""
    live = []
    for name, evs in by_consumer(events).items():
        started = any(e.event == "started" and e.t <= t for e in evs)
        ended = any(e.event in ENDS_ALL and e.t <= t for e in evs)
        if started and not ended:
            live.append(name)
    return live


def every_live_consumer_assigned(events: Iterable[ClientEvent], partitions: Sequence[str],
                                 until: float) -> list[str]:
    """At ``until``, every live consumer owns a partition, when there are at least as many partitions."""
    evs = list(events)
    live = live_at(evs, until)
    if len(partitions) < len(live):
        return []
    spans = ownerships(evs)
    return [f"{name} is live at {until:.2f} s but owns no partition ({len(partitions)} partitions, "
            f"{len(live)} live consumers)"
            for name in live if not any(s.name == name and s.held_at(until) for s in spans)]


def check_all(events: Iterable[ClientEvent], partitions: Sequence[str], bound_s: float, settle_s: float,
              until: float, tolerance_s: float = 0.0) -> dict[str, list[str]]:
    """The three client-visible properties, by id (kebab-case, as the catalog names properties)."""
    evs = list(events)
    return {
        "no-partition-owned-by-two-live-consumers": no_partition_owned_twice(evs, tolerance_s),
        "no-partition-unowned-beyond-bound-after-stable":
            no_partition_unowned_longer_than(evs, partitions, bound_s, settle_s, until),
        "every-live-consumer-ends-assigned": every_live_consumer_assigned(evs, partitions, until),
    }


def killed_member_gone_within(events: Iterable[ClientEvent], bound_s: float, until: float) -> list[str]:
    """Every partition a SIGKILLed consumer owned at its kill has a live owner again within ``bound_s``
    (the broker must expire the member: nothing else tells it). A kill whose bound ends after ``until``
    is not judged. The message carries the measured time in ms."""
    evs = list(events)
    spans = ownerships(evs)
    found: list[str] = []
    for kill in (e for e in evs if e.event == "killed" and e.reason != "straggler"):
        held = sorted({s.partition for s in spans if s.name == kill.name and s.end == kill.t})
        if not held or kill.t + bound_s > until:
            continue
        back = [min((s.start for s in spans if s.partition == p and s.name != kill.name and s.start >= kill.t
                     and s.name in live_at(evs, s.start)), default=None) for p in held]
        if any(b is None or b - kill.t > bound_s for b in back):
            took = "never (by the end of the run)" if None in back else \
                f"after {round((max(b for b in back if b is not None) - kill.t) * 1000)} ms"
            found.append(f"{kill.name} was SIGKILLed at {kill.t:.2f} s owning {', '.join(held)}; they had a live "
                         f"owner again {took}, bound {round(bound_s * 1000)} ms")
    return found


def generation_only_grows(events: Iterable[ClientEvent]) -> list[str]:
    """The generations each consumer's assignments carry never go down (where the library shows them)."""
    found: list[str] = []
    for name, evs in by_consumer(events).items():
        last: tuple[float, int] | None = None
        for e in evs:
            if e.event == "assigned" and e.generation is not None:
                if last is not None and e.generation < last[1]:
                    found.append(f"{name} was assigned in generation {e.generation} at {e.t:.2f} s after "
                                 f"generation {last[1]} at {last[0]:.2f} s")
                last = (e.t, e.generation)
    return found


def default_until(events: Iterable[ClientEvent]) -> float:
    """Where a run's judgement ends: the first end-of-duration stop (later, everyone is leaving)."""
    evs = list(events)
    stops = [e.t for e in evs if e.event == "stopped" and e.reason == "duration"]
    if stops:
        return min(stops)
    return max((e.t for e in evs), default=0.0)


def _end(s: Ownership) -> float:
    return float("inf") if s.end is None else s.end


def _fmt_end(t: float) -> str:
    return "the end of the log" if t == float("inf") else f"{t:.2f} s"
