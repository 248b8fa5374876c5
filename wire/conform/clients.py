"""Real clients against the target: the client-visible properties of `kgc serve`'s real-client runs.

Three kafka-python consumers on one time line (wire/clients/group.py) — one founds the group, one
joins later and is SIGKILLed (its session must expire), one leaves cleanly — subscribed to a 6-partition
topic on the target; their rebalance callbacks are judged by wire/clients/ownership.py: no partition
owned by two live consumers, none unowned beyond a bound once settled, every live consumer assigned.
"""
from __future__ import annotations

from typing import Any

from wire.clients.group import ConsumerSpec, run_group
from wire.clients.ownership import check_all, default_until

CLIENT_TOPIC, CLIENT_PARTITIONS = "kgc-conform-clients", 6
BOUND_S, SETTLE_S, DURATION_S = 15.0, 4.0, 22.0
SPECS = (ConsumerSpec("c0", "kafka-python"),
         ConsumerSpec("c1", "kafka-python", mode="leave-after 15", start_at_s=0.3),
         ConsumerSpec("c2", "kafka-python", start_at_s=5.0, kill_at_s=11.0))


def client_run(bootstrap: str, group: str) -> dict[str, Any]:
    """Run the three consumers against ``bootstrap``; the verdict of each client-visible property."""
    run = run_group(bootstrap, group, CLIENT_TOPIC, list(SPECS), DURATION_S)
    partitions = [f"{CLIENT_TOPIC}-{p}" for p in range(CLIENT_PARTITIONS)]
    verdicts = check_all(run.events, partitions, BOUND_S, SETTLE_S, default_until(run.events))
    assigned = sorted({e.name for e in run.events if e.event == "assigned" and e.partitions})
    return {"consumers": [f"{s.name}: {s.lib}, {s.mode}, start {s.start_at_s:g} s"
                          + (f", SIGKILL at {s.kill_at_s:g} s" if s.kill_at_s is not None else "") for s in SPECS],
            "properties": verdicts, "assigned": assigned, "errors": list(run.errors()),
            "verdict": "diverges" if any(verdicts.values()) or not assigned else "conforms"}
