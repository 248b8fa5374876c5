"""Real clients against the target and the control: the schedule library, every library, judged side by side.

For each schedule (wire/clients/schedules.py) and each consumer library that can run here
(wire/clients/artefacts.py), one group runs against the target and, at the same moment, the same group
runs against the control — the reference behind `kgc serve`'s server configured like the target. Each
run lasts until its group has settled after its last membership change, or until the bound for that
has passed (wire/clients/settle.py). Both runs are judged from the consumers' own rebalance callbacks
(wire/clients/ownership.py): no partition owned by two live consumers; none without a live owner longer
than S + R + D + margin; a SIGKILLed member's partitions owned again within S + margin; every
consumer's generation only grows; the group settles within its bound after the last change; no
consumer reports an error (it could not connect, could not read an answer, or crashed). A
property that fails on the target while it holds on the control is a client-visible failure; one that
fails on both is reported as not judged (the control did not hold). Each run's event logs are written
to ``log_dir`` (one JSON line per event, as the runners print them) so a failure can be read.
"""
from __future__ import annotations

import json
import secrets
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, ContextManager

from wire.clients.artefacts import LIBRARIES, unavailable
from wire.clients.group import ConsumerSpec, GroupRun, run_group
from wire.clients.ownership import ClientEvent, default_until, generation_only_grows, killed_member_gone_within
from wire.clients.ownership import no_partition_owned_twice, ownerships
from wire.clients.schedules import SCHEDULES, Schedule, Timeouts
from wire.clients.settle import changes, group_settles, settle_deadline, settled_at, unowned_beyond

CLIENT_TOPIC, CLIENT_PARTITIONS = "kgc-conform-clients", 6
LATE_START_S = 5.0      # a consumer up later than this after its scheduled start makes its run not judged
PROPERTY_NAMES = ("no-partition-owned-by-two-live-consumers", "no-partition-unowned-beyond-bound",
                  "killed-member-gone-within-session-timeout", "generation-only-grows",
                  "group-settles-after-each-change", "no-client-error")


def judge(events: list[ClientEvent], partitions: list[str], t: Timeouts) -> dict[str, list[str]]:
    """Every client-visible property of one run, by name (messages carry the measured numbers)."""
    until = default_until(events)
    return {
        "no-partition-owned-by-two-live-consumers": no_partition_owned_twice(events),
        "no-partition-unowned-beyond-bound": unowned_beyond(events, partitions, t.unowned_bound_ms / 1000, until),
        "killed-member-gone-within-session-timeout": killed_member_gone_within(events, t.expiry_bound_ms / 1000,
                                                                               until),
        "generation-only-grows": generation_only_grows(events),
        "group-settles-after-each-change": group_settles(events, partitions, t.settle_bounds_s(),
                                                         t.quiet_ms / 1000, until),
        # a consumer that could not start, or failed on an answer, or crashed (the library's own words)
        "no-client-error": [f"{e.name} at {e.t:.2f} s: {e.reason or 'error'}"[:300] for e in events
                            if e.event == "error"],
    }


def unjudged(events: list[ClientEvent]) -> dict[str, list[str]]:
    """The properties a run could not judge, each with why (a kill of a member that owned nothing yet)."""
    spans = ownerships(events)
    idle = [f"{k.name} owned no partition when it was SIGKILLed at {k.t:.2f} s: its expiry is not judged"
            for k in events if k.event == "killed" and k.reason != "straggler"
            and not any(s.name == k.name and s.end == k.t for s in spans)]
    return {"killed-member-gone-within-session-timeout": idle} if idle else {}


def late_starts(run: GroupRun, specs: list[ConsumerSpec]) -> list[str]:
    """The consumers whose library was up (``started``) more than LATE_START_S after the schedule started
    them, or never: on a loaded machine a schedule can slip so far that its situation never arises (a
    member leaves before it ever joined), and such a run is not judged."""
    started = {e.name: e.t for e in run.events if e.event == "started"}
    failed = {e.name for e in run.events if e.event == "error"}      # judged by no-client-error instead
    out = []
    for spec in specs:
        at = started.get(spec.name)
        if spec.name in failed and at is None:
            continue
        if at is None and any(e.name == spec.name for e in run.events):
            out.append(f"{spec.name} never started (scheduled at {spec.start_at_s:g} s)")
        elif at is not None and at - spec.start_at_s > LATE_START_S:
            out.append(f"{spec.name} started {at - spec.start_at_s:.1f} s after its scheduled {spec.start_at_s:g} s")
    return out


def stop_when(partitions: list[str], t: Timeouts) -> Callable[[list[ClientEvent], float], bool]:
    """A run may end once its group has settled after its last change, or once the bound for that passed."""
    bounds = t.settle_bounds_s()

    def done(events: list[ClientEvent], now: float) -> bool:
        found = changes(events)
        if not found:
            return False
        last = found[-1]
        if now >= settle_deadline(last, bounds) + t.quiet_ms / 1000:
            return True
        return settled_at(events, partitions, last.t, t.quiet_ms / 1000, now) is not None
    return done


Control = Callable[[], ContextManager[Any]]
"""Starts a fresh control server for one run (its ``bootstrap`` is "HOST:PORT"), stopped on leaving."""


def run_pair(schedule: Schedule, lib: str, target: str, control: Control, t: Timeouts, partitions: list[str],
             group: str, log_dir: Path | None = None, attempt: int = 1) -> dict[str, Any]:
    """One schedule with one library against the target and a control of its own at once; the judged record.
    (A control server shared by every run would carry every earlier run's groups and connections.)"""
    specs, min_s = schedule.build(lib, t)
    names = [f"{CLIENT_TOPIC}-{p}" for p in partitions]
    runs: dict[str, GroupRun] = {}

    def one(side: str, bootstrap: str) -> None:
        runs[side] = run_group(bootstrap, f"{group}-{side}", CLIENT_TOPIC, specs, t.cap_s(min_s), min_s=min_s,
                               stop_when=stop_when(names, t))

    with control() as server:
        threads = [threading.Thread(target=one, args=side)
                   for side in (("target", target), ("control", server.bootstrap))]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    on_target, on_control = (judge(list(runs[side].events), names, t) for side in ("target", "control"))
    late = [f"on the {side}: {why}" for side in ("target", "control") for why in late_starts(runs[side], specs)]
    if late:                 # the schedule did not happen as written: nothing of this run counts, either side
        on_target = on_control = {p: [] for p in on_target}
    record = {"schedule": schedule.name, "library": lib, "attempt": attempt, "late_start": late,
              "failures": {p: m for p, m in on_target.items() if m and not on_control[p]},
              "not_judged": {p: m for p, m in on_target.items() if m and on_control[p]},
              "control_failures": {p: m for p, m in on_control.items() if m},
              "unjudged": unjudged(list(runs["target"].events)),
              "errors": runs["target"].errors()[:5], "control_errors": runs["control"].errors()[:5],
              "seconds": {side: round(default_until(runs[side].events), 1) for side in ("target", "control")},
              "assigned": sorted({e.name for e in runs["target"].events if e.event == "assigned" and e.partitions})}
    if log_dir is not None:
        record["logs"] = write_logs(log_dir, f"{schedule.name}--{lib}--{attempt}", runs)
    return record


def write_logs(log_dir: Path, stem: str, runs: dict[str, GroupRun]) -> list[str]:
    """Each side's events (one JSON line each) and each consumer's stderr tail; the file names written."""
    log_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for side, run in sorted(runs.items()):
        path = log_dir / f"{stem}--{side}.jsonl"
        lines = [json.dumps({"t": e.t, "name": e.name, "event": e.event, "partitions": list(e.partitions),
                             **({"reason": e.reason} if e.reason else {}),
                             **({"deadline": e.deadline} if e.deadline is not None else {}),
                             **({"generation": e.generation} if e.generation is not None else {})})
                 for e in run.events]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        err = log_dir / f"{stem}--{side}.stderr.txt"
        err.write_text("".join(f"== {name} (exit {run.exit_codes.get(name)})\n{tail}\n"
                               for name, tail in sorted(run.stderr.items())), encoding="utf-8")
        written += [path.name, err.name]
    return written


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


def client_matrix(target: str, control: Control, t: Timeouts, partitions: int, schedules: list[str] | None = None,
                  libraries: list[str] | None = None, jobs: int = 3, repeat: int = 1,
                  progress: Callable[[dict[str, Any]], None] | None = None,
                  log_dir: Path | None = None, cancel: threading.Event | None = None) -> dict[str, Any]:
    """Every planned (schedule, library) pair, ``repeat`` times, ``jobs`` pairs at once; the section of the
    report: the timeouts and bounds, each run's record and a summary with run counts. Once ``cancel`` is
    set no further run starts (those under way end by themselves, within their cap)."""
    pairs, skipped = plan(schedules, libraries)
    token = secrets.token_hex(3)
    names = [str(p) for p in range(partitions)]
    # repeats interleaved (every pair once, then again), so a load spike does not hit one pair's repeats only
    work = [(s, lib, n) for n in range(1, repeat + 1) for s, lib in pairs]

    def go(item: tuple[Schedule, str, int]) -> dict[str, Any] | None:
        schedule, lib, n = item
        if cancel is not None and cancel.is_set():
            return None
        record = run_pair(schedule, lib, target, control, t, names, f"kgc-{schedule.name}-{lib}-{token}-{n}",
                          log_dir, n)
        if progress is not None:
            progress(record)
        return record

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        done = [r for r in pool.map(go, work) if r is not None]
    records = sorted(done, key=lambda r: (r["schedule"], r["library"], r["attempt"]))
    return {"timeouts": {"session_ms": t.session_ms, "heartbeat_ms": t.heartbeat_ms, "rebalance_ms": t.rebalance_ms,
                         "initial_delay_ms": t.initial_delay_ms, "margin_ms": t.margin_ms, "quiet_ms": t.quiet_ms,
                         "unowned_bound_ms": t.unowned_bound_ms, "expiry_bound_ms": t.expiry_bound_ms,
                         "rebalance_bound_ms": t.rebalance_bound_ms, "late_start_ms": round(LATE_START_S * 1000)},
            "partitions": partitions, "repeat": repeat, "skipped": skipped, "runs": records,
            "summary": summarise(records, repeat),
            "verdict": "diverges" if any(r["failures"] for r in records) else "conforms"}


def summarise(records: list[dict[str, Any]], repeat: int) -> list[dict[str, Any]]:
    """One row per (schedule, library, property) that failed on the target in any run: in how many of the
    runs that could judge it (``of``: the pair's runs not spoilt by a late start, and where the situation
    arose — a killed member that owned partitions) it failed there while the control held (``runs``), in
    how many the control failed too (``not_judged``), and the first message."""
    def judged(schedule: str, library: str, prop: str) -> int:
        return sum(1 for r in records if (r["schedule"], r["library"]) == (schedule, library)
                   and not r["late_start"] and prop not in r.get("unjudged", {}))

    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in records:
        for kind in ("failures", "not_judged"):
            for prop, messages in sorted(r[kind].items()):
                row = rows.setdefault((r["schedule"], r["library"], prop), {
                    "schedule": r["schedule"], "library": r["library"], "property": prop, "runs": 0,
                    "not_judged": 0, "of": judged(r["schedule"], r["library"], prop), "attempts": repeat,
                    "example": ""})
                row["runs" if kind == "failures" else "not_judged"] += 1
                if kind == "failures" and not row["example"]:
                    row["example"] = messages[0]
    return [rows[k] for k in sorted(rows) if rows[k]["runs"]]
