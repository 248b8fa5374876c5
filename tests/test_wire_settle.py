"""The judges of `kgc conform --clients` (wire/clients/settle.py, wire/conform/clients.py) on synthetic logs:
each flags its fault on a witness and holds on a healthy log; a run is stopped when its group settled or at
the bound; a schedule that slipped (a late start) is not judged; run counts count judged runs only."""
from __future__ import annotations

from wire.clients.group import ConsumerSpec, GroupRun
from wire.clients.ownership import ClientEvent
from wire.clients.schedules import Timeouts
from wire.clients.settle import changes, group_settles, settled_at, unowned_beyond
from wire.conform.clients import judge, late_starts, stop_when, summarise

P2 = ["t-0", "t-1"]
BOUNDS = {"default": 18.0, "killed": 24.0}


def ev(t: float, name: str, event: str, *parts: str, **kw: object) -> ClientEvent:
    return ClientEvent(t=t, name=name, event=event, partitions=tuple(parts), **kw)  # type: ignore[arg-type]


def formed(at: float = 3.0) -> list[ClientEvent]:
    """c1 and c2 start at 0 and share two partitions from ``at``."""
    return [ev(0, "c1", "started"), ev(0, "c2", "started"),
            ev(at, "c1", "assigned", "t-0"), ev(at, "c2", "assigned", "t-1")]


def test_membership_changes_are_starts_leaves_failures_kills_and_resumes_not_the_runs_end() -> None:
    log = formed() + [ev(5, "c2", "stalled", deadline=20.0), ev(7, "c2", "resumed"), ev(9, "c3", "started"),
                      ev(10, "c3", "killed"), ev(11, "c1", "stopped", reason="leave-after"),
                      ev(12, "c2", "stopped", reason="duration")]
    assert [(c.t, c.name, c.kind) for c in changes(log)] == [
        (0, "c1", "started"), (0, "c2", "started"), (7, "c2", "resumed"), (9, "c3", "started"),
        (10, "c3", "killed"), (11, "c1", "left")]


def test_settled_is_the_first_complete_moment_quiet_for_the_window() -> None:
    log = formed() + [ev(5, "c1", "revoked", "t-0"), ev(6, "c1", "assigned", "t-0")]
    assert settled_at(log, P2, since=0.0, settle_s=1.5, now=30) == 3.0
    assert settled_at(log, P2, since=0.0, settle_s=2.5, now=30) == 6.0
    assert settled_at(log, P2, since=0.0, settle_s=2.5, now=8.0) is None      # the window must end by now
    # a live consumer with no partition keeps the group incomplete, though every partition is owned
    assert settled_at(log + [ev(10, "c3", "started")], ["t-0", "t-1", "t-2"], 10.0, 2.0, 30) is None


def test_a_group_that_settles_after_its_last_change_holds_and_one_that_does_not_fails() -> None:
    healthy = formed() + [ev(8, "c3", "started"), ev(9, "c1", "revoked", "t-0"), ev(9, "c2", "revoked", "t-1"),
                          ev(10, "c1", "assigned", "t-0"), ev(10, "c3", "assigned", "t-1")]
    assert group_settles(healthy, P2, BOUNDS, settle_s=3.0, until=14) == []
    stuck = formed() + [ev(8, "c3", "started"), ev(9, "c1", "revoked", "t-0"), ev(9, "c2", "revoked", "t-1"),
                        ev(10, "c1", "assigned", "t-0")]
    assert group_settles(stuck, P2, BOUNDS, settle_s=3.0, until=20) == []        # the bound (8 + 18 s) not over
    [message] = group_settles(stuck, P2, BOUNDS, settle_s=3.0, until=27)
    assert message == ("after the last membership change (c3 started at 8.00 s) the group had not settled by "
                       "27.00 s (bound 18000 ms): at 26.00 s t-1 has no owner (3 rebalance callbacks after the "
                       "change)")      # three live consumers, two partitions: owning none is no fault here


def test_a_group_kept_moving_by_rebalances_fails_and_a_kill_gets_the_session_timeout_more() -> None:
    moving = formed() + [ev(5, "c3", "started")]
    for i in range(12):          # every 2 s everybody revokes and gets the same partitions back
        moving += [ev(6 + 2 * i, "c1", "revoked", "t-0"), ev(6.5 + 2 * i, "c1", "assigned", "t-0")]
    assert "kept it moving" not in group_settles(moving, ["t-0", "t-1", "t-2", "t-3"], BOUNDS, 3.0, 30)[0]
    assert "c3 owns no partition" in group_settles(moving, ["t-0", "t-1", "t-2", "t-3"], BOUNDS, 3.0, 30)[0]
    storm = formed() + [ev(4.5, "c3", "started"), ev(4.6, "c3", "assigned", "t-2")]
    for i in range(12):
        storm += [ev(6 + 2 * i, "c1", "revoked", "t-0"), ev(6.5 + 2 * i, "c1", "assigned", "t-0")]
    [message] = group_settles(storm, ["t-0", "t-1", "t-2"], BOUNDS, 3.0, 30)
    assert message.endswith("at 22.50 s complete, but rebalance callbacks kept it moving (25 rebalance callbacks "
                            "after the change)")
    killed = formed() + [ev(6, "c2", "killed")]
    assert group_settles(killed, P2, BOUNDS, 3.0, until=28) == []               # 6 + 24 s not over yet
    assert "bound 24000 ms" in group_settles(killed, P2, BOUNDS, 3.0, until=31)[0]
    # settled after its bound: when it became complete is said
    late = formed() + [ev(5, "c3", "started"), ev(6, "c1", "revoked", "t-0"), ev(6, "c2", "revoked", "t-1"),
                       ev(24, "c1", "assigned", "t-0"), ev(24, "c3", "assigned", "t-1"),
                       ev(24, "c2", "assigned", "t-2")]
    [message] = group_settles(late, ["t-0", "t-1", "t-2"], BOUNDS, 3.0, until=26)
    assert message.endswith("at 23.00 s t-0 has no owner; t-1 has no owner; t-2 has no owner; c1 owns no partition; "
                            "c2 owns no partition; c3 owns no partition (5 rebalance callbacks after the change; "
                            "complete only from 24.00 s)")


def test_a_partition_without_a_live_owner_beyond_the_bound_is_flagged_also_at_the_end() -> None:
    log = formed() + [ev(12, "c1", "killed"), ev(19, "c2", "revoked", "t-1"), ev(22, "c2", "assigned", *P2)]
    assert unowned_beyond(log, P2, bound_s=15, until=30) == []
    late = formed() + [ev(12, "c1", "killed"), ev(29, "c2", "assigned", "t-0")]
    assert unowned_beyond(late, P2, bound_s=15, until=40) == ["t-0 had no owner from 12.00 s to 29.00 s: "
                                                             "17000 ms, bound 15000 ms"]
    assert unowned_beyond(formed() + [ev(12, "c1", "killed")], P2, bound_s=15, until=30) == [
        "t-0 had no owner from 12.00 s to 30.00 s (the end of the run): 18000 ms, bound 15000 ms"]
    never = [ev(1, "c1", "started"), ev(3, "c1", "assigned", "t-0")]
    assert unowned_beyond(never, P2, bound_s=15, until=20) == [
        "t-1 had no owner from 1.00 s to 20.00 s (the end of the run): 19000 ms, bound 15000 ms"]


def test_a_run_stops_once_settled_or_once_the_bound_passed() -> None:
    t = Timeouts(rebalance_ms=10000, initial_delay_ms=3000, margin_ms=5000, quiet_ms=3000)
    done = stop_when(P2, t)
    log = formed()
    assert not done(log, 5.0) and done(log, 6.5)                 # settled from 3 s, quiet for 3 s
    stuck = [ev(0, "c1", "started"), ev(0, "c2", "started"), ev(3, "c1", "assigned", "t-0")]
    assert not done(stuck, 20.0) and done(stuck, 21.0)           # 0 + 18 s bound + 3 s quiet


def test_a_consumer_that_started_late_or_never_spoils_its_run() -> None:
    specs = [ConsumerSpec("c0", "java"), ConsumerSpec("c1", "java", start_at_s=5.0),
             ConsumerSpec("c2", "java", start_at_s=6.0, kill_at_s=7.0)]
    on_time = GroupRun(events=(ev(0.4, "c0", "started"), ev(9.9, "c1", "started"), ev(6.1, "c2", "started")),
                       exit_codes={}, stderr={})
    assert late_starts(on_time, specs) == []
    late = GroupRun(events=(ev(0.4, "c0", "started"), ev(10.5, "c1", "started"), ev(7.0, "c2", "killed")),
                    exit_codes={}, stderr={})
    assert late_starts(late, specs) == ["c1 started 5.5 s after its scheduled 5 s",
                                        "c2 never started (scheduled at 6 s)"]


def test_run_counts_are_over_the_judged_runs_of_a_pair() -> None:
    def record(n: int, failed: bool, late: bool = False, control_too: bool = False, idle: bool = False) -> dict:
        failures = {"p": ["m"]} if failed and not control_too else {}
        return {"schedule": "s", "library": "l", "attempt": n, "late_start": ["x"] if late else [],
                "failures": failures, "not_judged": {"p": ["m"]} if control_too else {},
                "unjudged": {"p": ["its situation did not arise"]} if idle else {}}
    rows = summarise([record(1, True), record(2, False), record(3, False, late=True), record(4, True),
                      record(5, True, control_too=True), record(6, False, idle=True)], repeat=6)
    assert rows == [{"schedule": "s", "library": "l", "property": "p", "runs": 2, "not_judged": 1, "of": 4,
                     "attempts": 6, "example": "m"}]


def test_a_consumer_that_fails_is_a_client_error_not_a_late_start() -> None:
    events = formed() + [ev(30.0, "c3", "error", reason="KafkaTimeoutError: Unable to bootstrap from 127.0.0.1:9")]
    assert judge(events, P2, Timeouts())["no-client-error"] == [
        "c3 at 30.00 s: KafkaTimeoutError: Unable to bootstrap from 127.0.0.1:9"]
    assert judge(formed(), P2, Timeouts())["no-client-error"] == []
    specs = [ConsumerSpec("c1", "kafka-python"), ConsumerSpec("c2", "kafka-python"),
             ConsumerSpec("c3", "kafka-python", start_at_s=1.0)]
    assert late_starts(GroupRun(events=tuple(events), exit_codes={}, stderr={}), specs) == []
