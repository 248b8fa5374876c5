"""Real consumers against `kgc serve`: kafka-python, aiokafka and confluent-kafka (librdkafka) form and
rebalance groups on the reference, checked live by the catalog and refinement; their own rebalance
callbacks are judged by the client-visible properties; each session's trace replays; seeded mutants
are caught live by the property they name.

Every run is bounded (wire/clients/group.py kills stragglers by pid); servers bind 127.0.0.1 and are
stopped here. The default tier's part of the file takes about a minute and a half.
"""
from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from core.trace import Trace
from harness.replay import replay
from impl.mutants import get_mutant
from kgc.runs import CheckedRun
from wire.clients.group import ConsumerSpec, GroupRun, run_group
from wire.clients.ownership import check_all, default_until
from wire.server import ServerThread, run_in_thread
from wire.session import LiveSession

TOPIC, PARTITIONS = "orders", 6
PARTITION_NAMES = [f"{TOPIC}-{p}" for p in range(PARTITIONS)]
BOUND_S, SETTLE_S = 15.0, 4.0       # no partition unowned longer than BOUND_S once the group settled SETTLE_S
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def served(request: pytest.FixtureRequest) -> Iterator[tuple[LiveSession, ServerThread]]:
    profile, mutant = request.param if isinstance(request.param, tuple) else (request.param, None)
    session = LiveSession(profile, mutant=mutant, checked=CheckedRun)
    server = run_in_thread(session, {TOPIC: PARTITIONS})
    try:
        yield session, server
    finally:
        server.stop()


def _run(server: ServerThread, specs: list[ConsumerSpec], duration_s: float, group: str = "g1") -> GroupRun:
    return run_group(f"127.0.0.1:{server.port}", group, TOPIC, specs, duration_s)


def _judge(session: LiveSession, server: ServerThread, run: GroupRun) -> None:
    """The catalog held on every step, the clients saw a sound group, and the trace replays."""
    assert run.bad_lines == (), run.bad_lines
    server.stop()                                     # no step may race the replay below
    assert session.violations == [], [f"{v.property}: {v.message}" for v in session.violations[:3]]
    verdicts = check_all(run.events, PARTITION_NAMES, BOUND_S, SETTLE_S, default_until(run.events))
    assert verdicts == {name: [] for name in verdicts}, verdicts
    for name in {e.name for e in run.events}:
        assert any(e.event == "assigned" and e.partitions for e in run.of(name)), (name, run.stderr.get(name))
    trace = Trace.loads(session.trace().dumps())
    assert len(trace.steps) > 20
    assert replay(trace).steps[-1].digest == trace.steps[-1].digest


def _join_crash_and_leave(served: tuple[LiveSession, ServerThread], libs: tuple[str, str, str]) -> None:
    """Two consumers form the group, a third joins (rebalance), is SIGKILLed (its session expires) and
    a founder leaves cleanly (LeaveGroup): every step checked, every partition owned by one consumer."""
    session, server = served
    specs = [ConsumerSpec("c0", libs[0]), ConsumerSpec("c1", libs[1], mode="leave-after 15", start_at_s=0.3),
             ConsumerSpec("c2", libs[2], start_at_s=5.0, kill_at_s=11.0)]
    run = _run(server, specs, duration_s=22.0)
    assert [e.name for e in run.events if e.event == "killed"] == ["c2"]
    _judge(session, server, run)
    events = [e for st in session.trace().steps for e in st.event_lines]
    assert any(e.endswith("failed: heartbeat expired") for e in events)     # the killed c2, by its session
    assert sum(e.endswith(" leaves") for e in events) >= 2                   # c1 at 15 s, c0 at the end


@pytest.mark.parametrize("served", ["3.9"], indirect=True)
def test_three_libraries_join_crash_and_leave(served: tuple[LiveSession, ServerThread]) -> None:
    """The default tier's run on 3.9: each library in a different role (kafka-python founds and stays,
    aiokafka leaves cleanly, librdkafka is killed), so each one's MEMBER_ID_REQUIRED handshake, rebalance
    and LeaveGroup/crash path meets the reference in one 22-second group."""
    _join_crash_and_leave(served, ("kafka-python", "aiokafka", "confluent"))


@pytest.mark.slow     # three 22-second groups; the mixed-library run above is the default tier's
@pytest.mark.parametrize("served", ["3.9"], indirect=True)
@pytest.mark.parametrize("lib", ["kafka-python", "aiokafka", "confluent"])
def test_three_consumers_of_one_library_join_crash_and_leave(served: tuple[LiveSession, ServerThread],
                                                               lib: str) -> None:
    _join_crash_and_leave(served, (lib, lib, lib))


@pytest.mark.parametrize("served", ["3.9"], indirect=True)
def test_a_slow_consumer_is_rebalanced_out_and_back(served: tuple[LiveSession, ServerThread]) -> None:
    """A consumer that stops polling past max.poll.interval.ms leaves the group (its heartbeat thread's
    LeaveGroup, SPEC.md §7) and rejoins when it polls again; nobody owns a partition twice meanwhile."""
    session, server = served
    specs = [ConsumerSpec("c0", "kafka-python"),
             ConsumerSpec("c1", "kafka-python", mode="slow", start_at_s=0.3, max_poll_interval_ms=7000),
             ConsumerSpec("c2", "kafka-python", start_at_s=0.6)]
    run = _run(server, specs, duration_s=26.0)
    assert any(e.event == "stalled" for e in run.of("c1"))
    assert sum(e.event == "assigned" for e in run.of("c0")) >= 3    # formed, c1 out, c1 back
    _judge(session, server, run)


@pytest.mark.parametrize("served", ["0.10.0"], indirect=True)
def test_the_three_libraries_in_one_group_on_0_10_0(served: tuple[LiveSession, ServerThread]) -> None:
    """Kafka 0.10.0's coordinator (JoinGroup v0, no initial delay, no MEMBER_ID_REQUIRED) with one consumer
    of each library speaking its 0.10 versions; one is killed and the group rebalances without it."""
    session, server = served
    specs = [ConsumerSpec("k", "kafka-python", api_version="0.10.0"),
             ConsumerSpec("a", "aiokafka", start_at_s=0.3),
             ConsumerSpec("r", "confluent", start_at_s=0.6, api_version="0.10.0", kill_at_s=8.0)]
    run = _run(server, specs, duration_s=18.0)
    joins = [s for s in session.trace().steps if s.action.kind == "Receive" and "JoinGroup" in str(s.action)]
    assert joins and all('"require_known_member_id":false' in str(s.action.arg) for s in joins)
    _judge(session, server, run)


@pytest.mark.parametrize("served", [("3.9", "generation-not-bumped"), ("3.9", "initial-delay-ends-early"),
                                    ("3.9", "heartbeat-not-rescheduled-after-join")], indirect=True)
def test_a_seeded_mutant_is_caught_live_by_its_property(served: tuple[LiveSession, ServerThread]) -> None:
    session, server = served
    specs = [ConsumerSpec(f"c{i}", "kafka-python", start_at_s=0.5 * i) for i in range(3)]
    _run(server, specs, duration_s=9.0)
    server.stop()
    caught = {v.property for v in session.violations}
    assert caught & set(get_mutant(session.mutant or "").catches), caught


def test_kgc_serve_mutant_reports_a_shrunk_counterexample(tmp_path: Path) -> None:
    """The command itself: a real consumer drives `kgc serve --mutant`, the violation is printed live and,
    when the server stops, written as the usual reports with a replayable, shrunk counterexample."""
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "kgc", "serve", "--port", "0", "--mutant", "generation-not-bumped",
                             "--topics", f"{TOPIC}:{PARTITIONS}", "--trace", str(tmp_path / "trace.json"),
                             "--out", str(out), "--duration", "60"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        port = int(re.search(r"127\.0\.0\.1:(\d+)", first).group(1))   # type: ignore[union-attr]
        run = run_group(f"127.0.0.1:{port}", "g1", TOPIC, [ConsumerSpec("c0", "kafka-python")], 7.0)
        assert any(e.event == "assigned" for e in run.events)
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, rest
    assert "VIOLATION" in rest and "each-new-generation-increments-the-generation-id" in rest
    assert (out / "report.md").exists() and (out / "report.html").exists()
    shrunk = Trace.loads((out / "counterexample.json").read_text())
    served_trace = Trace.loads((tmp_path / "trace.json").read_text())
    assert 0 < len(shrunk.steps) <= len(served_trace.steps)
    assert replay(served_trace).steps[-1].digest == served_trace.steps[-1].digest


def test_kgc_serve_refuses_bad_arguments_in_one_sentence() -> None:
    for args, words in ((["--topics", "t:0"], "--topics takes NAME:PARTITIONS"),
                        (["--profile", "9.9"], "profile"),
                        (["--port", "70000"], "--port must be between"),
                        (["--mutant", "initial-delay-ends-early", "--profile", "0.10.0"], "applies to profile")):
        done = subprocess.run([sys.executable, "-m", "kgc", "serve", *args], cwd=REPO, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert words in done.stderr and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
