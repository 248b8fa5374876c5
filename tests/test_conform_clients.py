"""`kgc conform --clients`: the judges with configured bounds (each shown failing on a witness log), the
schedule plan (skips in one sentence), and the default tier's real-client runs: every library that can run
here, one schedule, against `kgc serve` as target and control (the control must hold). The full matrix of
schedules × libraries is the slow tier (``-m slow``)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgc.cli import main
from wire.clients import artefacts
from wire.clients.ownership import ClientEvent, generation_only_grows, killed_member_gone_within
from wire.clients.schedules import SCHEDULES, Timeouts
from wire.conform.clients import plan

P0, P1 = "t-0", "t-1"


def ev(t: float, name: str, event: str, *parts: str, generation: int | None = None) -> ClientEvent:
    return ClientEvent(t, name, event, tuple(parts), generation=generation)


def test_a_killed_members_partitions_must_have_a_live_owner_within_the_bound() -> None:
    base = [ev(0.0, "a", "started"), ev(0.1, "b", "started"), ev(1.0, "a", "assigned", P0),
            ev(1.0, "b", "assigned", P1), ev(5.0, "b", "killed")]
    in_time = base + [ev(9.0, "a", "revoked", P0), ev(11.0, "a", "assigned", P0, P1)]
    assert killed_member_gone_within(in_time, bound_s=11.0, until=30.0) == []
    late = base + [ev(17.5, "a", "revoked", P0), ev(17.5, "a", "assigned", P0, P1)]
    [message] = killed_member_gone_within(late, bound_s=11.0, until=30.0)
    assert "after 12500 ms, bound 11000 ms" in message and "b was SIGKILLed at 5.00 s owning t-1" in message
    [never] = killed_member_gone_within(base, bound_s=11.0, until=30.0)
    assert "never" in never
    assert killed_member_gone_within(base, bound_s=11.0, until=15.0) == []      # the bound ends after the run


def test_a_generation_that_goes_down_is_a_failure() -> None:
    ok = [ev(1.0, "a", "assigned", P0, generation=1), ev(4.0, "a", "assigned", P0, generation=3)]
    assert generation_only_grows(ok) == []
    bad = ok + [ev(6.0, "a", "assigned", P0, generation=2)]
    assert generation_only_grows(bad) == ["a was assigned in generation 2 at 6.00 s after generation 3 at 4.00 s"]


def test_bounds_come_from_the_configured_timeouts() -> None:
    t = Timeouts(session_ms=10000, rebalance_ms=20000, initial_delay_ms=0, margin_ms=2000)
    assert (t.unowned_bound_ms, t.expiry_bound_ms, t.rebalance_bound_ms) == (32000, 12000, 22000)
    assert t.settle_bounds_s() == {"default": 22.0, "killed": 32.0}            # a SIGKILL is seen after S
    specs, least = SCHEDULES["kill-no-leave"].build("java", t)
    assert [s.kill_at_s for s in specs] == [None, None, 10.0] and least == 10.0 + 13.0   # kill + bound + 1 s
    [slow, _] = SCHEDULES["slow-under-max-poll"].build("aiokafka", t)[0]
    assert slow.stall_s == 10.0 and slow.stall_s * 1000 < t.rebalance_ms               # alive, not polling


def test_what_cannot_run_is_skipped_in_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(artefacts, "unavailable", lambda lib: "java is skipped: no javac." if lib == "java" else None)
    import wire.conform.clients as conform_clients
    monkeypatch.setattr(conform_clients, "unavailable", artefacts.unavailable)
    pairs, skipped = plan(["static-restart"], ["kafkajs", "java", "confluent"])
    assert [(s.name, lib) for s, lib in pairs] == [("static-restart", "confluent")]
    assert skipped == ["java is skipped: no javac.",
                       "static-restart × kafkajs is skipped: kafkajs 2.2.4 has no group.instance.id (static "
                       "membership)."]


def _clients(tmp_path: Path, *argv: str) -> tuple[int, dict]:
    out = tmp_path / "out"
    code = main(["conform", "--no-probes", *argv, "--out", str(out)])
    return code, json.loads((out / "conform.json").read_text(encoding="utf-8"))["clients"]


def test_every_library_holds_the_kill_schedule_against_the_control(tmp_path: Path) -> None:
    """Default tier (~35 s): five groups at once, one per library, each against `kgc serve` twice over (as
    target and as control); no property fails on either side, and every library's consumers got partitions."""
    code, clients = _clients(tmp_path, "--target", "serve", "--schedule", "kill-no-leave", "--client-jobs", "5")
    runnable = [lib for lib in artefacts.LIBRARIES if artefacts.unavailable(lib) is None]
    assert {r["library"] for r in clients["runs"]} == set(runnable)
    assert len(runnable) == 5, clients["skipped"]                 # bin/test set up every library
    for r in clients["runs"]:
        assert r["late_start"] == [] and r["failures"] == {} and r["control_failures"] == {}, r
        # c2 (killed at 10 s) may not have been assigned yet when ten groups start at once on a loaded machine
        assert {"c0", "c1"} <= set(r["assigned"]), r
    assert code == 0 and clients["summary"] == []


def test_noida_never_expires_a_sigkilled_member(tmp_path: Path) -> None:
    """Default tier (~50 s), a real target: noida-db 0.2.3 with Apache's Java consumer. A member SIGKILLed
    with no leave must be expired within the session timeout (SPEC.md §4.3: its heartbeat deadline removes it
    and the group rebalances); on noida its partitions never get a live owner again (every judged run of
    every library, bench/results/conform-clients-2026-11-27.md). Two runs at once, so that a load spike
    spoiling one leaves the other; every run that could judge it must show it, and the control must hold."""
    code, clients = _clients(tmp_path, "--target", "noida", "--schedule", "kill-no-leave", "--library", "java",
                             "--repeat", "2", "--client-jobs", "2")
    prop = "killed-member-gone-within-session-timeout"
    judged = [r for r in clients["runs"] if not r["late_start"] and prop not in r["unjudged"]]
    assert judged, clients["runs"]
    for r in judged:
        assert r["control_failures"] == {}, r
        [gone] = r["failures"][prop]
        assert gone.startswith("c2 was SIGKILLed at 10.") and "never (by the end of the run), bound 11000 ms" in gone
    [row] = [s for s in clients["summary"] if s["property"] == prop]
    assert (row["runs"], row["of"]) == (len(judged), len(judged))
    assert row["reproduce"] == "bin/kgc conform --target noida --no-probes --schedule kill-no-leave --library java"
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert f"| kill-no-leave | java | {prop} | {len(judged)} of {len(judged)}" in report
    logs = sorted(p.name for p in (tmp_path / "out" / "clients").iterdir())
    assert "kill-no-leave--java--1--target.jsonl" in logs and "kill-no-leave--java--1--control.jsonl" in logs
    assert code == 1


@pytest.mark.slow
def test_the_whole_matrix_holds_against_the_control(tmp_path: Path) -> None:
    """Slow tier (~4 min): every schedule × every library against `kgc serve` as target and control."""
    code, clients = _clients(tmp_path, "--target", "serve", "--clients")
    assert code == 0 and clients["summary"] == [], clients["summary"]
    bad = [r for r in clients["runs"] if r["control_failures"]]
    assert bad == [], bad
