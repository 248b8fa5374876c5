"""Real consumers (kafka-python + confluent-kafka/librdkafka) form, rebalance and shrink a group on tansu;
prints the client-visible ownership verdicts (wire/clients/ownership.py) as JSON.

Run from the repo root: ``PYTHONPATH=$PWD .venv/bin/python bench/tansu_clients.py [OUT_DIR]``. About 30 s.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from wire.clients.group import ConsumerSpec, run_group
from wire.clients.ownership import check_all, default_until
from wire.tansu import TansuBroker
from wire.tansu_probe import create_topic

TOPIC, PARTITIONS = "orders", 6
PARTITION_NAMES = [f"{TOPIC}-{p}" for p in range(PARTITIONS)]
BOUND_S, SETTLE_S = 15.0, 8.0


def main(out_dir: Path | None) -> dict[str, object]:
    specs = [ConsumerSpec("k0", "kafka-python"), ConsumerSpec("r1", "confluent", start_at_s=0.3),
             ConsumerSpec("k2", "kafka-python", start_at_s=6.0, kill_at_s=14.0),
             ConsumerSpec("r3", "confluent", start_at_s=6.3, mode="leave-after 12")]
    with TansuBroker(out_dir=out_dir) as broker:
        created = create_topic(broker.bootstrap, TOPIC, PARTITIONS)
        run = run_group(broker.bootstrap, "g-clients", TOPIC, specs, duration_s=26.0)
    verdicts = check_all(run.events, PARTITION_NAMES, BOUND_S, SETTLE_S, default_until(run.events))
    return {"create_topic_error": created, "verdicts": verdicts, "errors": run.errors(),
            "exit_codes": run.exit_codes, "bad_lines": list(run.bad_lines),
            "events": [[e.t, e.name, e.event, list(e.partitions), e.reason] for e in run.events],
            "stderr_tails": {n: s[-1500:] for n, s in run.stderr.items()}}


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]) if len(sys.argv) > 1 else None), indent=1))
