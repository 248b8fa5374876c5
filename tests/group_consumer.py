"""A real consumer that joins, commits and leaves, for tests/test_serve_4_1.py: ``python -m tests.group_consumer
--lib confluent|kafka-python --bootstrap HOST:PORT --group G --topic T --duration S [--instance I] [--crash]``.

It subscribes (static with ``--instance``), polls for S seconds, and the first time it holds a non-empty assignment
commits offset 0 of each assigned partition synchronously. At the end it closes — a dynamic member sends
LeaveGroup, a static one does not — or, with ``--crash``, exits at once as a killed process would. It prints one
line per change of assignment ("assigned p,…") and one per commit ("committed p,…" or "commit-failed ERROR"),
nothing else; a watchdog ends it 10 s after S.
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from typing import Any, Callable


def _watchdog(seconds: float) -> None:
    timer = threading.Timer(seconds, lambda: os._exit(3))
    timer.daemon = True
    timer.start()


def _names(partitions: Any) -> str:
    return ",".join(sorted(f"{p.topic}-{p.partition}" for p in partitions))


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _loop(args: argparse.Namespace, poll: Callable[[], object], assignment: Callable[[], list[Any]],
          commit: Callable[[list[Any]], None]) -> None:
    end, seen, committed = time.monotonic() + args.duration, None, False
    while time.monotonic() < end:
        poll()
        now = sorted(assignment(), key=lambda p: (p.topic, p.partition))
        if now != seen:
            _say(f"assigned {_names(now)}")
            seen = now
        if now and not committed:
            committed = True
            try:
                commit(now)
                _say(f"committed {_names(now)}")
            except Exception as exc:          # noqa: BLE001 - the test reads the line
                _say(f"commit-failed {type(exc).__name__}: {exc}")


def _confluent(args: argparse.Namespace) -> None:
    from confluent_kafka import Consumer, TopicPartition
    config = {"bootstrap.servers": args.bootstrap, "group.id": args.group, "client.id": args.instance or args.lib,
              "session.timeout.ms": 6000, "heartbeat.interval.ms": 500, "auto.offset.reset": "earliest",
              "enable.auto.commit": False}
    if args.instance:
        config["group.instance.id"] = args.instance
    consumer = Consumer(config)
    consumer.subscribe([args.topic])
    _loop(args, lambda: consumer.poll(0.1), consumer.assignment,
          lambda ps: consumer.commit(offsets=[TopicPartition(p.topic, p.partition, 0) for p in ps],
                                     asynchronous=False))
    if args.crash:
        os._exit(0)
    consumer.close()


def _kafka_python(args: argparse.Namespace) -> None:
    from kafka import KafkaConsumer
    from kafka.structs import OffsetAndMetadata
    consumer = KafkaConsumer(bootstrap_servers=args.bootstrap, group_id=args.group,
                             client_id=args.instance or args.lib, group_instance_id=args.instance,
                             session_timeout_ms=6000, heartbeat_interval_ms=500, auto_offset_reset="earliest",
                             enable_auto_commit=False)
    consumer.subscribe([args.topic])
    _loop(args, lambda: consumer.poll(100), lambda: list(consumer.assignment()),
          lambda ps: consumer.commit({p: OffsetAndMetadata(0, "", -1) for p in ps}))
    if args.crash:
        os._exit(0)
    consumer.close()


def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ("--lib", "--bootstrap", "--group", "--topic"):
        parser.add_argument(name, required=True)
    parser.add_argument("--instance")
    parser.add_argument("--duration", type=float, required=True)
    parser.add_argument("--crash", action="store_true")
    args = parser.parse_args()
    _watchdog(args.duration + 10)
    (_confluent if args.lib == "confluent" else _kafka_python)(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
