"""The world's choices over a Kafka 4.x coordinator's event loop (profile 4.1, SPEC-4x.md R1-R3, R11).

Where the release has the 4.x facts (model/releases.py), the runtime's nondeterminism becomes enabled actions:

- ``FlushBatch`` (arg ``NONE``, or under ``scope.faults`` an append error): the partition's open batch is
  written to the log, or fails — the batch is reverted and every write in it fails with the mapped error
  (``batched-log-writes``; CoordinatorRuntime.java@4.1.1:779-854);
- ``CommitBatch``: the high watermark passes the oldest written batch; the answers that waited for it
  (``answers-wait-for-commit``, R3) are released;
- timers: ``FireTimer`` runs a queued event — a live one, a write timeout (R2, ``write-timeout``) or a stale
  one whose key was rescheduled meanwhile, which is dropped (R1, ``keyed-timers``); the clock's next deadline
  is the deadline itself (a task expires when the clock reaches it);
- ``Choose`` (arg: the scripted picks, dot-separated): the last step met a choice point with alternatives (a
  protocol tie, a new leader: ``hash-order-choices``, R11); ``Choose`` puts the world back to the state before
  that step and runs it again with the coordinator taking another option. The alternatives form a tree (each
  ``Choose`` scripts the picks of the choice points up to one it changes; only later ones are offered again), so
  every combination of picks is offered exactly once.

The branch a step leaves (the world's state before it, the action, and the choice points it met) is world state:
it is part of the snapshot, and any step other than ``Choose`` drops it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.types import Errors
from model.releases import fact

#: the append errors a flush may fail with under ``scope.faults``: the partition's leadership moved
#: (NOT_LEADER_OR_FOLLOWER → NOT_COORDINATOR) and too few in-sync replicas (NOT_ENOUGH_REPLICAS →
#: COORDINATOR_NOT_AVAILABLE), CoordinatorOperationExceptionHelper / GMM:7498-7517 at 4.1.1. A timeout is not a
#: flush error in 4.x: it is the write-timeout timer (R2).
FLUSH_ERRORS = ("NOT_LEADER_OR_FOLLOWER", "NOT_ENOUGH_REPLICAS")


@dataclass(frozen=True, slots=True)
class Branch:
    """What ``Choose`` needs: the world before the step (its ``to_state`` without a branch), the step's action,
    the picks it was run with, and the option counts of the choice points it met, in order."""

    before: tuple[Any, ...]
    action: tuple[str, int, int | str]
    picks: tuple[int, ...]
    options: tuple[int, ...]

    def alternatives(self) -> list[str]:
        """The pick scripts ``Choose`` offers: for each choice point past the scripted ones, each other option,
        after the picks taken before it."""
        out = []
        taken = self.picks + (0,) * (len(self.options) - len(self.picks))
        for k in range(len(self.picks), len(self.options)):
            out.extend(".".join(str(p) for p in taken[:k] + (j,)) for j in range(1, self.options[k]))
        return out


def batched(profile_name: str) -> bool:
    """Whether the release's writes go through batches the world flushes and commits."""
    return fact("batched-log-writes", profile_name)


def keyed_timers(profile_name: str) -> bool:
    """Whether a timer task expires at its deadline (4.x) rather than strictly after it (the Scala MockTimer)."""
    return fact("keyed-timers", profile_name)


def hash_order_choices(profile_name: str) -> bool:
    return fact("hash-order-choices", profile_name)


def log_keys(coord: Any, faults: bool) -> list[tuple[str, int, int | str]]:
    """FlushBatch / CommitBatch actions for the coordinator's partitions now."""
    keys: list[tuple[str, int, int | str]] = []
    batches = coord.batches()
    if any(open_ for _, open_, _ in batches):
        keys.append(("FlushBatch", -1, "NONE"))
        if faults:
            keys.extend(("FlushBatch", -1, e) for e in FLUSH_ERRORS)
    if any(written for _, _, written in batches):
        keys.append(("CommitBatch", -1, 0))
    return keys


def flush(coord: Any, arg: str) -> None:
    """Flush the first partition (by index) with an open batch; ``arg`` NONE or the append error."""
    index = next(i for i, open_, _ in coord.batches() if open_)
    coord.flush(index, None if arg == "NONE" else Errors[arg])


def commit(coord: Any) -> None:
    """Commit the oldest written batch of the first partition (by index) that has one."""
    index = next(i for i, _, written in coord.batches() if written)
    coord.commit(index)


def parse_picks(arg: int | str) -> list[int]:
    return [int(p) for p in str(arg).split(".")]
