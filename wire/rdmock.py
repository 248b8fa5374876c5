"""``python -m wire.rdmock``: hold librdkafka's mock cluster (one broker) until SIGTERM, printing its address.

The mock cluster lives inside a librdkafka client instance (``test.mock.num.brokers``); this process keeps
one producer alive and prints ``kgc-rdmock listening on 127.0.0.1:PORT``, the address the mock's own
Metadata answer gives for its broker (librdkafka binds it to 127.0.0.1, port of its choosing), so nothing
parses the library's log. wire/brokers.py ``RdMockBroker`` starts and stops it by pid.
"""
from __future__ import annotations

import signal
import sys
import threading

METADATA_TIMEOUT_S = 10.0


def main() -> int:
    from confluent_kafka import Producer

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    # bootstrap.servers is ignored by a mock cluster, but the client needs one to start
    producer = Producer({"test.mock.num.brokers": 1, "bootstrap.servers": "127.0.0.1:1", "log_level": 3})
    brokers = producer.list_topics(timeout=METADATA_TIMEOUT_S).brokers
    if len(brokers) != 1:
        print(f"kgc-rdmock: the mock cluster reported {len(brokers)} brokers, not 1", flush=True)
        return 1
    [broker] = brokers.values()
    if broker.host != "127.0.0.1":
        print(f"kgc-rdmock: the mock broker is on {broker.host}, not 127.0.0.1; stopping", flush=True)
        return 1
    print(f"kgc-rdmock listening on 127.0.0.1:{broker.port}", flush=True)
    while not stop.wait(0.5):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
