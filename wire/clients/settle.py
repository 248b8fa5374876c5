"""When a real consumer group has settled, and the judges of `kgc conform --clients` that need to know it.

Pure functions over the consumers' event logs (wire/clients/ownership.py ``ClientEvent``). A *membership
change* is what makes a Kafka coordinator rebalance: a consumer that started, left by its plan or failed,
was SIGKILLed, or polled again after a stall. The group has *settled* after a change once, for a quiet
window of ``settle_s`` with no rebalance callback and no further change, every partition has a live owner
and every live consumer owns a partition (when there are enough partitions). Each change allows the
coordinator a bound from the configuration (wire/clients/schedules.py ``Timeouts``): a join phase waits
at most the rebalance timeout R for members to rejoin, plus the initial delay D when the group had
emptied, plus the session timeout S when only expiry can notice the change (a SIGKILL). A run can end as
soon as its group settled (wire/clients/group.py ``run_group`` ``stop_when``), so healthy runs are short
and a broker that never settles is judged at the bound, not at a fixed end that load could make too early.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from wire.clients.ownership import ClientEvent, Ownership, by_consumer, live_at, ownerships

REBALANCE_EVENTS = ("assigned", "revoked", "lost")


@dataclass(frozen=True, slots=True)
class Change:
    """A membership change: ``name`` did ``kind`` (started, left, failed, killed, resumed) at ``t``."""

    t: float
    name: str
    kind: str


def changes(events: Iterable[ClientEvent]) -> list[Change]:
    """Every membership change of a run, in time order (a run's own end — reason "duration" — is none)."""
    out: list[Change] = []
    for name, evs in by_consumer(events).items():
        for e in evs:
            if e.event in ("started", "resumed"):
                out.append(Change(e.t, name, e.event))
            elif e.event == "stopped" and e.reason != "duration":
                out.append(Change(e.t, name, "left" if e.reason == "leave-after" else "failed"))
            elif e.event == "killed" and e.reason != "straggler":
                out.append(Change(e.t, name, "killed"))
    return sorted(out, key=lambda c: (c.t, c.name, c.kind))


def incomplete_at(spans: Sequence[Ownership], live: Sequence[str], partitions: Sequence[str],
                  t: float) -> list[str]:
    """What keeps the group from being complete at ``t``: partitions without a live owner, live consumers
    without a partition (only when there are at least as many partitions as live consumers)."""
    held = [s for s in spans if s.held_at(t) and s.name in live]
    missing = [f"{p} has no owner" for p in sorted(partitions) if not any(s.partition == p for s in held)]
    if len(partitions) >= len(live):
        missing += [f"{n} owns no partition" for n in sorted(live) if not any(s.name == n for s in held)]
    return missing


def settled_at(events: Iterable[ClientEvent], partitions: Sequence[str], since: float, settle_s: float,
               now: float) -> float | None:
    """The first moment at or after ``since`` from which the group stayed complete, with no rebalance
    callback and no membership change, for ``settle_s`` — ending by ``now``; None if there is none yet."""
    evs = [e for log in by_consumer(events).values() for e in log]
    spans = ownerships(evs)
    moves = sorted({e.t for e in evs if e.event in REBALANCE_EVENTS} | {c.t for c in changes(evs)})
    for p in [since] + [m for m in moves if m > since]:
        if p + settle_s > now:
            return None
        if any(p < m <= p + settle_s for m in moves):
            continue
        probe = p + settle_s / 2              # between events: the state after p, before the next move
        if not incomplete_at(spans, live_at(evs, probe), partitions, probe):
            return p
    return None


def settle_deadline(last: Change, bounds_s: Mapping[str, float]) -> float:
    """When the group must have settled after its last change (``bounds_s``: change kind -> seconds)."""
    return last.t + bounds_s.get(last.kind, bounds_s["default"])


def group_settles(events: Iterable[ClientEvent], partitions: Sequence[str], bounds_s: Mapping[str, float],
                  settle_s: float, until: float) -> list[str]:
    """After its last membership change the group settles within the change's bound. Not judged (no
    message) when the run ended before the bound did; the message carries what was still wrong at the end."""
    evs = list(events)
    found = changes(e for e in evs if e.t <= until)
    if not found:
        return []
    last = found[-1]
    deadline = settle_deadline(last, bounds_s)
    if settled_at(evs, partitions, last.t, settle_s, until) is not None or until < deadline:
        return []
    spans = ownerships(evs)
    # the state when the bound ran out (at the run's end the consumers are already stopping)
    wrong = incomplete_at(spans, live_at(evs, deadline), partitions, deadline)
    moves = sum(1 for e in evs if e.event in REBALANCE_EVENTS and last.t < e.t <= until)
    state = "; ".join(wrong) if wrong else "complete, but rebalance callbacks kept it moving"
    late = settled_at(evs, partitions, last.t, 0.0, until)
    after = f"; complete only from {late:.2f} s" if late is not None and late > deadline else ""
    return [f"after the last membership change ({last.name} {last.kind} at {last.t:.2f} s) the group had not "
            f"settled by {until:.2f} s (bound {round((deadline - last.t) * 1000)} ms): at {deadline:.2f} s {state}"
            f" ({moves} rebalance callbacks after the change{after})"]


def unowned_beyond(events: Iterable[ClientEvent], partitions: Sequence[str], bound_s: float,
                   until: float) -> list[str]:
    """From the first consumer's start to ``until``, no partition is without a live owner longer than
    ``bound_s`` (a gap still open at ``until`` counts as long as it has lasted)."""
    evs = list(events)
    starts = [e.t for e in evs if e.event == "started"]
    if not starts:
        return []
    origin = min(starts)
    spans = ownerships(evs)
    found: list[str] = []
    for p in sorted(partitions):
        covered = origin
        gaps: list[tuple[float, float]] = []
        for s in sorted((s for s in spans if s.partition == p), key=lambda s: s.start):
            if s.start >= until:
                break
            if s.start > covered:
                gaps.append((covered, s.start))
            covered = max(covered, until if s.end is None else s.end)
        if covered < until:
            gaps.append((covered, until))
        found += [f"{p} had no owner from {a:.2f} s to {b:.2f} s{' (the end of the run)' if b == until else ''}: "
                  f"{round((b - a) * 1000)} ms, bound {round(bound_s * 1000)} ms"
                  for a, b in gaps if b - a > bound_s]
    return found
