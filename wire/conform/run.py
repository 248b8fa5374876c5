"""A conformance run: every probe against the target and the reference at once, compared and checked.

Per probe the same script runs, concurrently and on the same real-time line, against the target and
against the reference (wire/conform/targets.py ``ReferenceServer``); the answers are compared field
by field (wire/conform/answers.py) and the target's exchanges checked by the response-level
properties (wire/conform/properties.py). A divergent probe (a timing-only difference included) runs
once more and only the differences both attempts show are reported (the others are listed as unconfirmed);
the record says how many attempts were made. The
result is plain JSON-able data (schema ``kgc-conform/1``) with no wall-clock time in it, so equal
answers give equal reports.
"""
from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass, replace
from typing import Any, Callable

from kafka.protocol.api_key import ApiKey

from wire.codec import MESSAGES
from wire.conform.answers import answer, compare, labeller, request_text
from wire.conform.driver import Run, run_probe
from wire.conform.probes import get_probes
from wire.conform.properties import PROPERTIES, check_run
from wire.conform.script import BrokerConfig, Probe

SCHEMA = "kgc-conform/1"


@dataclass(frozen=True, slots=True)
class Endpoint:
    host: str
    port: int


def resolve(probe: Probe, versions: dict[int, tuple[int, int]] | None) -> tuple[Probe, str | None]:
    """``probe`` with every step's version chosen as Kafka's clients choose it — the highest version both
    sides support (``versions``: API key -> the (min, max) the target and the reference share), a pinned
    step's own — or the reason the target cannot run it. ``versions`` None: the probe as written."""
    if versions is None:
        return probe, None
    steps = []
    for step in probe.steps:
        low, high = versions.get(int(ApiKey[step.api]), (0, -1))
        version = step.version if step.pinned else high
        if not (low <= version <= high and version >= step.version):
            shown = f"{low}–{high}" if low <= high else "none"
            return probe, (f"the target does not serve {step.api} v{step.version}"
                           f"{'' if step.pinned else '+'} (the versions both sides serve: {shown})")
        steps.append(replace(step, version=version))
    return replace(probe, steps=tuple(steps)), None


Versions = dict[int, tuple[int, int]]


def shared_versions(target: Versions, reference: Versions) -> Versions:
    """API key -> the (min, max) the target, the reference and the codec (kafka.protocol) all serve."""
    out = {}
    for key, (low, high) in sorted(target.items()):
        if key in reference:
            top = min(high, reference[key][1])
            name = ApiKey(key).name if key in ApiKey._value2member_map_ else None
            if name in MESSAGES:
                top = min(top, MESSAGES[name][1].max_version)
            out[key] = (max(low, reference[key][0]), top)
    return out


def negotiation_json(negotiated: Any, usable: dict[int, tuple[int, int]]) -> dict[str, Any]:
    """What the report says about versions: the ApiVersions versions asked, and per group API the range the
    target advertised and the range both sides share."""
    apis = {}
    for api in ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit"):
        key = int(ApiKey[api])
        if key in negotiated.versions:
            apis[api] = {"target": list(negotiated.versions[key]), "shared": list(usable.get(key, (0, -1)))}
    return {"api_versions_asked": list(negotiated.asked), "apis": apis}


def spoken(probe: Probe) -> dict[str, list[int]]:
    """API -> the versions the probe's steps send (for the report)."""
    out: dict[str, set[int]] = {}
    for step in probe.steps:
        out.setdefault(step.api, set()).add(step.version)
    return {api: sorted(v) for api, v in sorted(out.items())}


async def _attempt(probe: Probe, target: Endpoint, reference: Endpoint, token: str,
                   attempt: int) -> tuple[Run, Run]:
    group = f"kgc-conform-{probe.name}-{token}-{attempt}"
    t, r = await asyncio.gather(run_probe(probe, target.host, target.port, group),
                                run_probe(probe, reference.host, reference.port, group))
    return t, r


async def conform_probe(probe: Probe, target: Endpoint, reference: Endpoint, cfg: BrokerConfig, token: str,
                        versions: dict[int, tuple[int, int]] | None = None) -> dict[str, Any]:
    """One probe's result record (see ``probe_record``)."""
    probe, reason = resolve(probe, versions)
    reason = probe.skip or reason
    if reason:
        return probe_record(probe, None, None, [], attempts=0, unsupported=reason)
    t, r = await _attempt(probe, target, reference, token, 1)
    diffs = compare(t, r, cfg.window_ms)
    attempts, unconfirmed = 1, []
    if diffs or check_run(t):
        # real time makes single answers racy (a member's session may end a few ms either side of a request
        # on a loaded machine), so a divergent probe runs once more: a difference is reported only when both
        # attempts show it (same step, class and field; the second attempt's values), the others are listed
        # as unconfirmed and do not make the probe diverge
        first = {_key(d) for d in diffs}
        t, r = await _attempt(probe, target, reference, token, 2)
        second, attempts = compare(t, r, cfg.window_ms), 2
        diffs = [d for d in second if _key(d) in first]
        unconfirmed = sorted("/".join(k) for k in first ^ {_key(d) for d in second})
    return probe_record(probe, t, r, diffs, attempts, unconfirmed=unconfirmed)


def _key(d: Any) -> tuple[str, str, str]:
    """A difference up to its values: which step, class and field."""
    return d.step, d.cls, d.field


def unfinished_record(probe: Probe, exc: Exception) -> dict[str, Any]:
    """A probe kgc could not finish: one ``malformed`` difference naming what went wrong. The fuzz test of
    the driver (tests/test_conform_fuzz.py) checks that no answer a broker can send gets this far."""
    why = f"kgc could not finish the probe: {type(exc).__name__}: {exc}"[:300]
    record = probe_record(probe, None, None, [], attempts=1)
    record.update(verdict="diverges", differences=[{"step": "driver", "class": "malformed", "field": "driver",
                                                    "target": why, "reference": "finished"}])
    return record


def probe_record(probe: Probe, target: Run | None, reference: Run | None, diffs: list[Any], attempts: int,
                 unsupported: str | None = None, unconfirmed: list[str] | None = None) -> dict[str, Any]:
    """A probe's result as plain data: per step the request, both answers and the classes that differ."""
    failures = check_run(target, labeller(target)) if target is not None else []
    if unsupported is not None:
        verdict = "unsupported"
    else:
        verdict = "diverges" if diffs or failures else "conforms"
    steps = []
    if target is not None and reference is not None:
        tl, rl = labeller(target), labeller(reference)
        by_step: dict[str, list[str]] = {}
        for d in diffs:
            by_step.setdefault(d.step, []).append(d.cls)
        for t, r in zip(target.exchanges, reference.exchanges, strict=True):
            steps.append({"step": t.label, "member": t.member, "api": t.api, "version": t.version,
                          "request": request_text(r, rl), "target_request": request_text(t, tl),
                          "target": answer(t, tl), "reference": answer(r, rl),
                          "differs": sorted(set(by_step.get(t.label, [])))})
    return {"probe": probe.name, "spec": probe.spec, "claim": probe.claim, "needs": probe.needs,
            "seed": probe.seed, "timing_sensitive": probe.timing, "verdict": verdict, "attempts": attempts,
            "versions": spoken(probe) if unsupported is None else {},
            "unsupported": unsupported, "differences": [d.to_json() for d in diffs],
            "unconfirmed": unconfirmed or [],
            "property_failures": [f.to_json() for f in failures], "steps": steps}


async def run_all(probes: list[Probe], target: Endpoint, reference: Endpoint, cfg: BrokerConfig, jobs: int = 4,
                  versions: dict[int, tuple[int, int]] | None = None,
                  progress: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Every probe, at most ``jobs`` at a time (each has its own group), results in library order."""
    token = secrets.token_hex(3)
    gate = asyncio.Semaphore(max(jobs, 1))

    async def one(probe: Probe) -> dict[str, Any]:
        async with gate:
            try:
                record = await conform_probe(probe, target, reference, cfg, token, versions)
            except Exception as exc:    # noqa: BLE001 - the last line: no answer may end the run (issue 24 §1)
                record = unfinished_record(probe, exc)
        if progress is not None:
            progress(record)
        return record

    return list(await asyncio.gather(*(one(p) for p in probes)))


def result_json(records: list[dict[str, Any]], profile: str, target: str, cfg: BrokerConfig,
                mutant: str | None = None) -> dict[str, Any]:
    """The whole run as data (no wall-clock time: equal answers give equal bytes)."""
    counts = {v: sum(r["verdict"] == v for r in records) for v in ("conforms", "diverges", "unsupported")}
    classes: dict[str, int] = {}
    for r in records:
        for d in r["differences"]:
            classes[d["class"]] = classes.get(d["class"], 0) + 1
    return {"schema": SCHEMA, "target": target, "profile": profile, "reference": "kgc reference coordinator"
            + (f" (mutant {mutant})" if mutant else ""), "config": cfg.describe(), "timing_window_ms": cfg.window_ms,
            "properties": {n: c for n, (c, _fn) in PROPERTIES.items()}, "summary": {**counts, "classes": dict(
                sorted(classes.items()))}, "probes": records}


def probes_for(names: list[str] | None, cfg: BrokerConfig) -> list[Probe]:
    return get_probes(names, cfg)
