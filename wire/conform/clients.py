"""Real clients against the target and the control: the schedule library, every library, judged side by side.

For each schedule (wire/clients/schedules.py) and each consumer library that can run here
(wire/clients/artefacts.py), one group runs against the target and, at the same moment, the same group
runs against the control — the reference behind `kgc serve`'s server configured like the target. Both
runs are judged from the consumers' own rebalance callbacks (wire/clients/ownership.py): no partition
owned by two live consumers; none unowned beyond S + R + D + margin once settled; a SIGKILLed member's
partitions owned again within S + margin; every consumer's generation only grows; every live consumer
assigned at the end. A property that fails on the target while it holds on the control is a
client-visible failure; one that fails on both is reported as not judged (the control did not hold).
"""
from __future__ import annotations

import secrets
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from wire.clients.artefacts import LIBRARIES, unavailable
from wire.clients.group import GroupRun, run_group
from wire.clients.ownership import check_all, default_until, generation_only_grows, killed_member_gone_within
from wire.clients.schedules import SCHEDULES, Schedule, Timeouts

CLIENT_TOPIC, CLIENT_PARTITIONS = "kgc-conform-clients", 6
SETTLE_S = 4.0
PROPERTY_NAMES = ("no-partition-owned-by-two-live-consumers", "no-partition-unowned-beyond-bound-after-stable",
                  "killed-member-gone-within-session-timeout", "generation-only-grows",
                  "every-live-consumer-ends-assigned")


def judge(run: GroupRun, partitions: list[str], t: Timeouts) -> dict[str, list[str]]:
    """Every client-visible property of one run, by name (messages carry the measured numbers)."""
    until = default_until(run.events)
    verdicts = check_all(run.events, partitions, t.unowned_bound_ms / 1000, SETTLE_S, until)
    verdicts["killed-member-gone-within-session-timeout"] = killed_member_gone_within(
        run.events, t.expiry_bound_ms / 1000, until)
    verdicts["generation-only-grows"] = generation_only_grows(run.events)
    return {name: verdicts[name] for name in PROPERTY_NAMES}


def run_pair(schedule: Schedule, lib: str, target: str, control: str, t: Timeouts, partitions: list[str],
             group: str) -> dict[str, Any]:
    """One schedule with one library against the target and the control at once; the judged record."""
    specs, duration = schedule.build(lib, t)
    runs: dict[str, GroupRun] = {}

    def one(side: str, bootstrap: str) -> None:
        runs[side] = run_group(bootstrap, f"{group}-{side}", CLIENT_TOPIC, specs, duration)

    threads = [threading.Thread(target=one, args=side) for side in (("target", target), ("control", control))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    names = [f"{CLIENT_TOPIC}-{p}" for p in partitions]
    on_target, on_control = judge(runs["target"], names, t), judge(runs["control"], names, t)
    return {"schedule": schedule.name, "library": lib,
            "failures": {p: m for p, m in on_target.items() if m and not on_control[p]},
            "not_judged": {p: m for p, m in on_target.items() if m and on_control[p]},
            "control_failures": {p: m for p, m in on_control.items() if m},
            "errors": runs["target"].errors()[:5], "control_errors": runs["control"].errors()[:5],
            "assigned": sorted({e.name for e in runs["target"].events if e.event == "assigned" and e.partitions})}


def plan(schedules: list[str] | None, libraries: list[str] | None) -> tuple[list[tuple[Schedule, str]], list[str]]:
    """(schedule, library) pairs to run, and one sentence per pair or library skipped."""
    pairs: list[tuple[Schedule, str]] = []
    skipped: list[str] = []
    libs = list(libraries or LIBRARIES)
    for lib in libs:
        if (why := unavailable(lib)) is not None:
            skipped.append(why)
    for name in schedules or list(SCHEDULES):
        schedule = SCHEDULES[name]
        for lib in libs:
            if unavailable(lib) is not None:
                continue
            why = schedule.skip(lib)
            if why is not None:
                skipped.append(f"{schedule.name} × {lib} is skipped: {why}")
            else:
                pairs.append((schedule, lib))
    return pairs, skipped


def client_matrix(target: str, control: str, t: Timeouts, partitions: int, schedules: list[str] | None = None,
                  libraries: list[str] | None = None, jobs: int = 3, repeat: int = 1,
                  progress: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Every planned (schedule, library) pair, ``repeat`` times, ``jobs`` pairs at once; the section of the
    report: the timeouts and bounds, each run's record and a summary with run counts."""
    pairs, skipped = plan(schedules, libraries)
    token = secrets.token_hex(3)
    names = [str(p) for p in range(partitions)]
    work = [(s, lib, n) for s, lib in pairs for n in range(1, repeat + 1)]

    def go(item: tuple[Schedule, str, int]) -> dict[str, Any]:
        schedule, lib, n = item
        record = run_pair(schedule, lib, target, control, t, names, f"kgc-{schedule.name}-{lib}-{token}-{n}")
        record["attempt"] = n
        if progress is not None:
            progress(record)
        return record

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        records = list(pool.map(go, work))
    return {"timeouts": {"session_ms": t.session_ms, "heartbeat_ms": t.heartbeat_ms, "rebalance_ms": t.rebalance_ms,
                         "initial_delay_ms": t.initial_delay_ms, "margin_ms": t.margin_ms,
                         "unowned_bound_ms": t.unowned_bound_ms, "expiry_bound_ms": t.expiry_bound_ms},
            "partitions": partitions, "repeat": repeat, "skipped": skipped, "runs": records,
            "summary": summarise(records, repeat),
            "verdict": "diverges" if any(r["failures"] for r in records) else "conforms"}


def summarise(records: list[dict[str, Any]], repeat: int) -> list[dict[str, Any]]:
    """One row per (schedule, library, property) that failed on the target in any run: how many of the runs
    showed it, and the first run's message."""
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in records:
        for prop, messages in sorted(r["failures"].items()):
            row = rows.setdefault((r["schedule"], r["library"], prop), {
                "schedule": r["schedule"], "library": r["library"], "property": prop, "runs": 0, "of": repeat,
                "example": messages[0]})
            row["runs"] += 1
    return [rows[k] for k in sorted(rows)]
