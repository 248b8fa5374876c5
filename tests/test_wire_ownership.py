"""The client-visible properties (wire/clients/ownership.py) on synthetic consumer logs: each must flag its fault."""
from __future__ import annotations

from wire.clients.ownership import (
    ClientEvent,
    Ownership,
    check_all,
    default_until,
    every_live_consumer_assigned,
    live_at,
    no_partition_owned_twice,
    no_partition_unowned_longer_than,
    ownerships,
    stable_from,
)

P2 = ["t-0", "t-1"]


def ev(t: float, name: str, event: str, *parts: str, **kw: object) -> ClientEvent:
    return ClientEvent(t=t, name=name, event=event, partitions=tuple(parts), **kw)  # type: ignore[arg-type]


def formed(at: float = 3.0) -> list[ClientEvent]:
    """c1 and c2 start at 0 and share two partitions from ``at``."""
    return [ev(0, "c1", "started"), ev(0, "c2", "started"),
            ev(at, "c1", "assigned", "t-0"), ev(at, "c2", "assigned", "t-1")]


# ---- ownership intervals ------------------------------------------------------------------------

def test_ownership_runs_from_assigned_to_revoked_and_stays_open_at_the_end() -> None:
    log = formed() + [ev(10, "c1", "revoked", "t-0")]
    assert ownerships(log) == [Ownership("t-0", "c1", 3, 10), Ownership("t-1", "c2", 3, None)]


def test_stopped_and_killed_end_every_ownership() -> None:
    log = formed() + [ev(8, "c1", "stopped", "t-0", reason="leave-after"), ev(9, "c2", "killed")]
    assert ownerships(log) == [Ownership("t-0", "c1", 3, 8), Ownership("t-1", "c2", 3, 9)]


def test_callbacks_after_stop_are_ignored() -> None:
    # aiokafka finishes a pending rebalance inside stop(): that assignment reaches no application.
    log = formed() + [ev(8, "c2", "stopped", reason="duration"), ev(11, "c2", "assigned", "t-0", "t-1")]
    assert [s for s in ownerships(log) if s.name == "c2"] == [Ownership("t-1", "c2", 3, 8)]


def test_a_stall_past_the_poll_deadline_ends_ownership_at_the_deadline() -> None:
    log = formed() + [ev(4, "c1", "stalled", "t-0", deadline=12.0), ev(15, "c1", "resumed", "t-0"),
                      ev(15, "c1", "lost", "t-0")]
    assert ownerships(log)[0] == Ownership("t-0", "c1", 3, 12.0)


def test_a_stall_shorter_than_the_poll_deadline_keeps_ownership() -> None:
    log = formed() + [ev(4, "c1", "stalled", "t-0", deadline=12.0), ev(6, "c1", "resumed", "t-0")]
    assert ownerships(log)[0] == Ownership("t-0", "c1", 3, None)


def test_from_json_reads_a_runner_line() -> None:
    line = {"t": 1.5, "name": "c1", "event": "stalled", "partitions": ["t-0"], "deadline": 9.5}
    assert ClientEvent.from_json(line) == ev(1.5, "c1", "stalled", "t-0", deadline=9.5)


# ---- no partition owned by two live consumers ---------------------------------------------------

def test_an_eager_handover_is_not_an_overlap() -> None:
    log = formed() + [ev(10, "c1", "revoked", "t-0"), ev(10.2, "c2", "revoked", "t-1"),
                      ev(13, "c2", "assigned", "t-0", "t-1")]
    assert no_partition_owned_twice(log) == []


def test_an_assignment_before_the_previous_owner_revoked_is_flagged() -> None:
    log = formed() + [ev(10, "c2", "assigned", "t-0"), ev(11, "c1", "revoked", "t-0")]
    assert no_partition_owned_twice(log) == ["t-0 owned by c1 and c2 at once from 10.00 s to 11.00 s"]


def test_an_owner_that_never_revoked_overlaps_to_the_end_of_the_log() -> None:
    log = formed() + [ev(10, "c2", "assigned", "t-0")]
    assert no_partition_owned_twice(log) == ["t-0 owned by c1 and c2 at once from 10.00 s to the end of the log"]


def test_a_killed_owner_frees_its_partitions_but_only_with_the_killed_line() -> None:
    handover = [ev(20, "c2", "assigned", "t-0")]
    assert no_partition_owned_twice(formed() + [ev(12, "c1", "killed")] + handover) == []
    assert len(no_partition_owned_twice(formed() + handover)) == 1


def test_a_slow_consumer_still_polling_inside_its_deadline_must_not_be_robbed() -> None:
    log = formed() + [ev(4, "c1", "stalled", "t-0", deadline=12.0), ev(8, "c2", "assigned", "t-0")]
    assert no_partition_owned_twice(log) == ["t-0 owned by c1 and c2 at once from 8.00 s to 12.00 s"]


def test_tolerance_absorbs_only_overlaps_shorter_than_it() -> None:
    log = formed() + [ev(10.0, "c2", "assigned", "t-0"), ev(10.05, "c1", "revoked", "t-0")]
    assert no_partition_owned_twice(log, tolerance_s=0.1) == []
    assert len(no_partition_owned_twice(log, tolerance_s=0.01)) == 1


# ---- no partition without an owner longer than the bound after the group stabilises ----------------

def test_stable_from_is_the_first_quiet_fully_owned_moment() -> None:
    log = formed() + [ev(5, "c1", "revoked", "t-0"), ev(7, "c1", "assigned", "t-0")]
    assert stable_from(log, P2, settle_s=1.0, until=30) == 3.0
    assert stable_from(log, P2, settle_s=3.0, until=30) == 7.0
    assert stable_from(log, P2, settle_s=3.0, until=9) is None   # the window must end by `until`


def test_a_reassignment_within_the_bound_passes() -> None:
    log = formed() + [ev(12, "c1", "killed"), ev(19, "c2", "revoked", "t-1"), ev(22, "c2", "assigned", *P2)]
    assert no_partition_unowned_longer_than(log, P2, bound_s=15, settle_s=4, until=30) == []


def test_a_partition_orphaned_beyond_the_bound_is_flagged() -> None:
    log = formed() + [ev(12, "c1", "killed"), ev(29, "c2", "assigned", "t-0")]
    assert no_partition_unowned_longer_than(log, P2, bound_s=15, settle_s=4, until=40) == [
        "t-0 had no owner from 12.00 s to 29.00 s (17.00 s, bound 15.00 s)"]


def test_a_gap_still_open_at_until_is_measured_to_until() -> None:
    log = formed() + [ev(12, "c1", "killed")]
    assert no_partition_unowned_longer_than(log, P2, bound_s=15, settle_s=4, until=26) == []
    assert no_partition_unowned_longer_than(log, P2, bound_s=15, settle_s=4, until=30) == [
        "t-0 had no owner from 12.00 s to 30.00 s (18.00 s, bound 15.00 s)"]


def test_an_assignment_after_until_does_not_close_the_gap() -> None:
    log = formed() + [ev(12, "c1", "killed"), ev(45, "c2", "assigned", "t-0")]
    assert len(no_partition_unowned_longer_than(log, P2, bound_s=15, settle_s=4, until=40)) == 1


def test_a_group_that_never_stabilises_is_flagged() -> None:
    churn = [ev(1.0 + i, "c1", "revoked" if i % 2 else "assigned", *P2) for i in range(20)]
    found = no_partition_unowned_longer_than([ev(0, "c1", "started")] + churn, P2, 15, 4, until=20)
    assert found == ["the group never stabilised before 20.00 s: no moment with every partition owned "
                     "and no rebalance callback for 4.0 s"]


def test_a_partition_no_one_ever_owns_means_never_stable() -> None:
    log = [ev(0, "c1", "started"), ev(3, "c1", "assigned", "t-0")]
    assert stable_from(log, P2, settle_s=1, until=30) is None


# ---- every live consumer ends with an assignment ---------------------------------------------------

def test_a_live_consumer_without_partitions_is_flagged() -> None:
    log = formed() + [ev(0, "c3", "started")]
    assert every_live_consumer_assigned(log, ["t-0", "t-1", "t-2"], until=20) == [
        "c3 is live at 20.00 s but owns no partition (3 partitions, 3 live consumers)"]


def test_killed_stopped_and_outnumbered_consumers_are_not_flagged() -> None:
    log = formed() + [ev(0, "c3", "started"), ev(5, "c3", "killed")]
    assert live_at(log, 20) == ["c1", "c2"]
    assert every_live_consumer_assigned(log, ["t-0", "t-1", "t-2"], until=20) == []
    assert every_live_consumer_assigned(formed() + [ev(0, "c3", "started")], P2, until=20) == []


def test_a_consumer_that_lost_its_partitions_is_flagged() -> None:
    log = formed() + [ev(10, "c1", "lost", "t-0")]
    assert every_live_consumer_assigned(log, P2, until=20) == [
        "c1 is live at 20.00 s but owns no partition (2 partitions, 2 live consumers)"]


# ---- together ---------------------------------------------------------------------------------------

def test_check_all_names_the_three_properties_and_passes_a_clean_run() -> None:
    log = formed() + [ev(30, "c1", "stopped", "t-0", reason="duration"),
                      ev(30.1, "c2", "stopped", "t-1", reason="duration")]
    until = default_until(log)
    assert until == 30
    assert check_all(log, P2, bound_s=15, settle_s=4, until=until) == {
        "no-partition-owned-by-two-live-consumers": [],
        "no-partition-unowned-beyond-bound-after-stable": [],
        "every-live-consumer-ends-assigned": [],
    }


def test_default_until_without_a_duration_stop_is_the_last_event() -> None:
    assert default_until(formed() + [ev(9, "c1", "stopped", reason="leave-after")]) == 9
