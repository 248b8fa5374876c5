"""A real static consumer (KIP-345) for tests/test_serve_static.py: ``python -m tests.static_consumer --lib
confluent|kafka-python --bootstrap HOST:PORT --group G --topic T --instance I --duration S [--crash]``.

It subscribes with group.instance.id I, polls for S seconds and then either closes (a static member sends no
LeaveGroup) or, with ``--crash``, exits at once without closing — as a killed process would. It prints one line
per rebalance callback ("assigned p,…" / "revoked p,…") and nothing else; a watchdog ends it 10 s after S.
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time


def _watchdog(seconds: float) -> None:
    timer = threading.Timer(seconds, lambda: os._exit(3))
    timer.daemon = True
    timer.start()


def _confluent(args: argparse.Namespace) -> None:
    from confluent_kafka import Consumer
    consumer = Consumer({"bootstrap.servers": args.bootstrap, "group.id": args.group, "client.id": args.instance,
                         "group.instance.id": args.instance, "session.timeout.ms": 6000,
                         "heartbeat.interval.ms": 1000, "auto.offset.reset": "earliest"})
    consumer.subscribe([args.topic], on_assign=lambda _c, ps: _say("assigned", ps),
                       on_revoke=lambda _c, ps: _say("revoked", ps))
    end = time.monotonic() + args.duration
    while time.monotonic() < end:
        consumer.poll(0.2)
    if args.crash:
        os._exit(0)
    consumer.close()


def _kafka_python(args: argparse.Namespace) -> None:
    from kafka import KafkaConsumer
    consumer = KafkaConsumer(bootstrap_servers=args.bootstrap, group_id=args.group, client_id=args.instance,
                             group_instance_id=args.instance, session_timeout_ms=6000, heartbeat_interval_ms=1000,
                             auto_offset_reset="earliest")
    consumer.subscribe([args.topic])
    end, seen = time.monotonic() + args.duration, None
    while time.monotonic() < end:
        consumer.poll(200)
        now = sorted(consumer.assignment(), key=str)
        if now != seen:
            _say("assigned", now)
            seen = now
    if args.crash:
        os._exit(0)
    consumer.close()


def _say(event: str, partitions: object) -> None:
    names = sorted(f"{p.topic}-{p.partition}" for p in partitions)   # type: ignore[attr-defined]
    sys.stdout.write(f"{event} {','.join(names)}\n")
    sys.stdout.flush()


def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ("--lib", "--bootstrap", "--group", "--topic", "--instance"):
        parser.add_argument(name, required=True)
    parser.add_argument("--duration", type=float, required=True)
    parser.add_argument("--crash", action="store_true")
    args = parser.parse_args()
    _watchdog(args.duration + 10)
    (_confluent if args.lib == "confluent" else _kafka_python)(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
