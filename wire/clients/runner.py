"""One real Kafka consumer as a subprocess: joins a group, polls, and logs its rebalance callbacks.

``python -m wire.clients.runner --lib kafka-python|aiokafka|confluent --bootstrap HOST:PORT --group G
--topic T --name c1 --duration S [--mode normal|slow|leave-after S] [--epoch E] ...`` prints one JSON
line per event, flushed at once: ``{"t", "name", "event", "partitions"}`` with ``t`` in seconds since
``--epoch`` (a ``time.time()`` value, so every process of a run shares one time line). Events come
from the library's own rebalance callbacks (``assigned``, ``revoked``, ``lost``) plus the runner's
own ``started``, ``stalled``/``resumed`` (slow mode), ``stopped`` and ``error``. Every run stops by
itself after ``--duration``, or earlier when a line ``stop`` arrives on stdin (wire/clients/group.py ends a
run once its group has settled); a watchdog thread ``os._exit``s 10 s after the duration whatever the
library does. With ``--wait-go`` the process loads its library first, prints ``{"ready": 1}`` and starts
``--start-at`` seconds after the epoch a ``go EPOCH`` line on stdin names (group.py pre-starts a run's
consumers so that process start-up stays off the schedule's time line).
"""
from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import logging
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

LIBS = ("kafka-python", "aiokafka", "confluent")
PYTHON_MODULES = {"kafka-python": "kafka", "aiokafka": "aiokafka", "confluent": "confluent_kafka"}
POLL_S = 0.2          # one poll's timeout: short, so stop times and stalls are precise
WATCHDOG_GRACE_S = 10.0
STALL_EXTRA_S = 3.0   # slow mode stalls this much past max.poll.interval.ms


@dataclass
class Emitter:
    """Writes the event lines and keeps the assignment the callbacks reported (for stop/stall lines)."""

    name: str
    epoch: float
    owned: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopped: bool = False

    def now(self) -> float:
        return time.time() - self.epoch

    def emit(self, event: str, partitions: Iterable[str] = (), **extra: Any) -> None:
        parts = sorted(partitions)
        with self.lock:
            if event == "assigned":
                self.owned |= set(parts)
            elif event in ("revoked", "lost"):
                self.owned -= set(parts)
            self.stopped = self.stopped or event == "stopped"
            line = {"t": round(self.now(), 4), "name": self.name, "event": event, "partitions": parts, **extra}
            sys.stdout.write(json.dumps(line) + "\n")
            sys.stdout.flush()

    def emit_owned(self, event: str, **extra: Any) -> None:
        self.emit(event, set(self.owned), **extra)


@dataclass
class Plan:
    """When this consumer stops polling (slow), resumes and stops, in seconds since it started."""

    mode: str
    duration_s: float
    leave_after_s: float | None
    stall_s: float
    start: float = field(default_factory=time.monotonic)
    stalled: bool = False
    stop_requested: threading.Event = field(default_factory=threading.Event)

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def stop_at(self) -> float:
        if self.mode == "leave-after" and self.leave_after_s is not None:
            return min(self.leave_after_s, self.duration_s)
        return self.duration_s

    def done(self) -> bool:
        return self.stop_requested.is_set() or self.elapsed() >= self.stop_at()

    def leaving(self) -> bool:
        return self.mode == "leave-after" and self.elapsed() >= self.stop_at()

    def take_stall(self, assigned: bool) -> float:
        """Seconds to stall now: once, right after the first assignment, in slow mode only."""
        if self.mode != "slow" or self.stalled or not assigned:
            return 0.0
        self.stalled = True
        return max(0.0, min(self.stall_s, self.stop_at() - self.elapsed()))

    def stop_reason(self) -> str:
        """Why the consumer stops now: its plan, or (before the plan says so) an error."""
        if not self.done():
            return "error"
        return "leave-after" if self.leaving() else "duration"


def watch_stdin(plan: Plan) -> None:
    """A line ``stop`` on stdin ends the run as its duration would (EOF alone does not: stdin may be empty)."""
    def read() -> None:
        for line in sys.stdin:
            if line.strip() == "stop":
                plan.stop_requested.set()
                return

    threading.Thread(target=read, daemon=True).start()


def tp_name(tp: Any) -> str:
    return f"{tp.topic}-{tp.partition}"


def _generation(generation: Any) -> dict[str, int]:
    """The generation an assigned line carries, when the library shows one (a positive int)."""
    return {"generation": generation} if isinstance(generation, int) and generation >= 0 else {}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m wire.clients.runner", description=__doc__.splitlines()[0])
    p.add_argument("--lib", choices=LIBS, required=True)
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--group", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--duration", type=float, required=True)
    p.add_argument("--mode", default="normal", help="normal | slow | leave-after S")
    p.add_argument("--epoch", type=float, default=None, help="time.time() of the run's zero (default: now)")
    p.add_argument("--wait-go", type=int, default=0, metavar="1",
                   help="load the library, print {\"ready\": 1}, and start at --start-at after the epoch a "
                        "'go EPOCH' line on stdin gives")
    p.add_argument("--start-at", type=float, default=0.0, help="with --wait-go: seconds after the epoch to start")
    p.add_argument("--session-timeout-ms", type=int, default=6000)
    p.add_argument("--heartbeat-interval-ms", type=int, default=1000)
    p.add_argument("--max-poll-interval-ms", type=int, default=None)
    p.add_argument("--stall-s", type=float, default=None, help="slow mode: stall length (default max.poll + 3 s)")
    p.add_argument("--instance-id", default=None, help="group.instance.id (a static member, KIP-345)")
    p.add_argument("--listener-sleep-s", type=float, default=0.0,
                   help="each rebalance callback takes this long (assigned: after logging; revoked: before)")
    p.add_argument("--api-version", default=None,
                   help="kafka-python api_version, librdkafka broker.version.fallback (aiokafka 0.14 ignores it)")
    return p.parse_args(argv)


def make_plan(args: argparse.Namespace) -> Plan:
    mode, leave_after = args.mode, None
    if mode.startswith("leave-after"):
        tail = mode[len("leave-after"):].strip(" =")
        mode, leave_after = "leave-after", float(tail) if tail else args.duration / 2
    elif mode not in ("normal", "slow"):
        raise SystemExit(f"unknown --mode {args.mode!r}: use normal, slow or 'leave-after S'")
    max_poll_s = (args.max_poll_interval_ms or 300000) / 1000
    stall = args.stall_s if args.stall_s is not None else max_poll_s + STALL_EXTRA_S
    return Plan(mode=mode, duration_s=args.duration, leave_after_s=leave_after, stall_s=stall)


def stall(out: Emitter, plan: Plan, max_poll_ms: int | None) -> float:
    """Slow mode: log the stall with the poll deadline it passes, and return its length."""
    seconds = plan.take_stall(bool(out.owned))
    if seconds > 0:
        deadline = out.now() + (max_poll_ms or 300000) / 1000
        out.emit_owned("stalled", deadline=round(deadline, 4), stall_s=round(seconds, 3))
    return seconds


# ---- kafka-python -------------------------------------------------------------------------------

def run_kafka_python(args: argparse.Namespace, out: Emitter, plan: Plan) -> None:
    from kafka import KafkaConsumer
    from kafka.consumer.subscription_state import ConsumerRebalanceListener

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked: Any) -> None:
            time.sleep(args.listener_sleep_s)
            out.emit("revoked", map(tp_name, revoked))

        def on_partitions_assigned(self, assigned: Any) -> None:
            generation = getattr(getattr(consumer._coordinator, "_generation", None), "generation_id", None)
            out.emit("assigned", map(tp_name, assigned), **_generation(generation))
            time.sleep(args.listener_sleep_s)

        def on_partitions_lost(self, lost: Any) -> None:
            out.emit("lost", map(tp_name, lost))

    config: dict[str, Any] = dict(
        bootstrap_servers=args.bootstrap, group_id=args.group, client_id=args.name,
        session_timeout_ms=args.session_timeout_ms, heartbeat_interval_ms=args.heartbeat_interval_ms,
        auto_offset_reset="earliest",
        # the constructor blocks until bootstrapped (default 30 s): keep that inside the run's duration
        bootstrap_timeout_ms=int(max(1.0, min(args.duration, 30.0)) * 1000))
    if args.max_poll_interval_ms is not None:
        config["max_poll_interval_ms"] = args.max_poll_interval_ms
    if args.api_version:
        config["api_version"] = tuple(int(x) for x in args.api_version.split("."))
    if args.instance_id:
        config["group_instance_id"] = args.instance_id
    consumer = KafkaConsumer(**config)
    consumer.subscribe(topics=[args.topic], listener=Listener())
    poll_loop(out, plan, args, lambda: consumer.poll(timeout_ms=int(POLL_S * 1000)), consumer.close)


def poll_loop(out: Emitter, plan: Plan, args: argparse.Namespace, poll_once: Callable[[], object],
              close: Callable[[], object]) -> None:
    """The synchronous clients' main loop: poll until the plan ends, stalling when it says so; close."""
    try:
        while not plan.done():
            poll_once()
            pause = stall(out, plan, args.max_poll_interval_ms)
            if pause:
                time.sleep(pause)
                out.emit_owned("resumed")
    finally:
        out.emit_owned("stopped", reason=plan.stop_reason())
        close()


# ---- aiokafka -----------------------------------------------------------------------------------

def run_aiokafka(args: argparse.Namespace, out: Emitter, plan: Plan) -> None:
    asyncio.run(_run_aiokafka(args, out, plan))


async def _run_aiokafka(args: argparse.Namespace, out: Emitter, plan: Plan) -> None:
    from aiokafka import AIOKafkaConsumer
    from aiokafka.abc import ConsumerRebalanceListener

    class Listener(ConsumerRebalanceListener):  # aiokafka 0.14 has no on_partitions_lost
        async def on_partitions_revoked(self, revoked: Any) -> None:
            await asyncio.sleep(args.listener_sleep_s)
            out.emit("revoked", map(tp_name, revoked))

        async def on_partitions_assigned(self, assigned: Any) -> None:
            out.emit("assigned", map(tp_name, assigned),
                     **_generation(getattr(consumer._coordinator, "generation", None)))
            await asyncio.sleep(args.listener_sleep_s)

    config: dict[str, Any] = dict(
        bootstrap_servers=args.bootstrap, group_id=args.group, client_id=args.name,
        session_timeout_ms=args.session_timeout_ms, heartbeat_interval_ms=args.heartbeat_interval_ms,
        auto_offset_reset="earliest")
    if args.max_poll_interval_ms is not None:
        config["max_poll_interval_ms"] = args.max_poll_interval_ms
    if args.instance_id:
        config["group_instance_id"] = args.instance_id
    # --api-version is not passed: aiokafka 0.14 ignores api_version (deprecated since 0.13, a no-op
    # that only warns) and always negotiates versions with ApiVersions.
    consumer = AIOKafkaConsumer(**config)
    await consumer.start()
    consumer.subscribe(topics=[args.topic], listener=Listener())
    try:
        while not plan.done():
            await consumer.getmany(timeout_ms=int(POLL_S * 1000))
            pause = stall(out, plan, args.max_poll_interval_ms)
            if pause:
                await asyncio.sleep(pause)
                out.emit_owned("resumed")
    finally:
        out.emit_owned("stopped", reason=plan.stop_reason())
        await consumer.stop()


# ---- confluent-kafka (librdkafka) ---------------------------------------------------------------

def confluent_config(args: argparse.Namespace) -> dict[str, Any]:
    config: dict[str, Any] = {
        "bootstrap.servers": args.bootstrap, "group.id": args.group, "client.id": args.name,
        "session.timeout.ms": args.session_timeout_ms, "heartbeat.interval.ms": args.heartbeat_interval_ms,
        "auto.offset.reset": "earliest", "logger": logging.getLogger("librdkafka"),
    }
    if args.max_poll_interval_ms is not None:
        config["max.poll.interval.ms"] = args.max_poll_interval_ms
    if args.api_version:
        config["api.version.request"] = False
        config["broker.version.fallback"] = args.api_version
    if args.instance_id:
        config["group.instance.id"] = args.instance_id
    return config


def run_confluent(args: argparse.Namespace, out: Emitter, plan: Plan) -> None:
    from confluent_kafka import Consumer

    consumer = Consumer(confluent_config(args))
    # The default (eager) assignor: librdkafka assigns the partitions itself after on_assign returns.
    # librdkafka does not tell the generation to the application: its assigned lines carry none
    def on_assign(_c: Any, parts: Any) -> None:
        out.emit("assigned", map(tp_name, parts))
        time.sleep(args.listener_sleep_s)

    def on_revoke(_c: Any, parts: Any) -> None:
        time.sleep(args.listener_sleep_s)
        out.emit("revoked", map(tp_name, parts))

    consumer.subscribe([args.topic], on_assign=on_assign, on_revoke=on_revoke,
                       on_lost=lambda _c, parts: out.emit("lost", map(tp_name, parts)))
    def poll_once() -> None:
        msg = consumer.poll(POLL_S)
        err = msg.error() if msg is not None else None
        if err is not None and not err.retriable():
            out.emit("error", message=str(err))

    poll_loop(out, plan, args, poll_once, consumer.close)


RUNNERS = {"kafka-python": run_kafka_python, "aiokafka": run_aiokafka, "confluent": run_confluent}


def start_watchdog(seconds: float, out: Emitter) -> None:
    """A hard cap: whatever a library does on close, the process is gone ``seconds`` from now."""
    def fire() -> None:
        if out.lock.acquire(timeout=1.0):   # one last line, unless a writer holds the lock
            out.lock.release()
            out.emit("error", message=f"watchdog: still running {seconds:g} s after start; exiting")
        os._exit(3)

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()


def await_go(args: argparse.Namespace) -> float:
    """``--wait-go``: load the library now, say ``{"ready": 1}``, wait for ``go EPOCH`` on stdin, then sleep
    until ``--start-at`` seconds past EPOCH; the run's epoch. Process start-up (imports: seconds on a
    loaded machine) then happens before the run's time line begins, not inside the schedule."""
    importlib.import_module(PYTHON_MODULES[args.lib])
    sys.stdout.write(json.dumps({"ready": 1}) + "\n")
    sys.stdout.flush()
    for line in sys.stdin:
        if line.startswith("go "):
            epoch = float(line.split()[1])
            time.sleep(max(0.0, epoch + args.start_at - time.time()))
            return epoch
    raise SystemExit(0)                       # stdin closed before go: the run was abandoned


def main(argv: list[str] | None = None) -> int:
    """Run one consumer. ``started`` is said before the library touches the network (kafka-python's and
    aiokafka's start-up already talks to the broker): a late ``started`` then means a late process, never
    a slow broker (wire/conform/clients.py does not judge a run whose consumer started late). A consumer
    that fails says ``error`` and, unless its loop already did, ``stopped`` (it is no longer a member)."""
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    epoch = await_go(args) if args.wait_go else args.epoch if args.epoch is not None else time.time()
    plan = make_plan(args)
    out = Emitter(name=args.name, epoch=epoch)
    start_watchdog(args.duration + WATCHDOG_GRACE_S, out)
    watch_stdin(plan)
    out.emit("started")
    try:
        RUNNERS[args.lib](args, out, plan)
    except Exception as exc:  # noqa: BLE001 - every failure becomes an "error" line, not a traceback
        out.emit("error", message=f"{type(exc).__name__}: {exc}")
        if not out.stopped:
            out.emit_owned("stopped", reason="error")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
