"""The real-client schedule library: consumer groups that create the situations where group bugs hurt.

Each schedule is a function of the library and the timeouts (``Timeouts``) returning the consumers of one
group (wire/clients/group.py ``ConsumerSpec``: start, SIGKILL, clean leave, stall, static id, slow
listener) and the run's minimum length: just past its last scripted event. The run then goes on until
its group has settled (wire/clients/settle.py) or the bound for settling has passed, so a healthy group
ends early and a broken one is judged at the bound. Every consumer of a run is of one library (libraries
name different assignors, so they cannot share a group). A schedule a library cannot express says why
(``skip``). Times are seconds from the run's start; the group's first rebalance ends after the initial
delay D.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from wire.clients.group import ConsumerSpec

START_ALLOWANCE_S = 15.0   # a run's hard cap allows this beyond its bounds for process start-up (a JVM, loaded)


@dataclass(frozen=True, slots=True)
class Timeouts:
    """The client and broker settings every schedule uses, and the judges' margin (all in ms)."""

    session_ms: int = 6000              # session.timeout.ms: Kafka's group.min.session.timeout.ms default
    heartbeat_ms: int = 1000            # heartbeat.interval.ms
    rebalance_ms: int = 10000           # max.poll.interval.ms = the JoinGroup rebalance timeout (KIP-62)
    initial_delay_ms: int = 3000        # the target's group.initial.rebalance.delay.ms
    margin_ms: int = 5000               # what the judges allow beyond the configured timeouts (client reaction,
                                        # process start-up, a loaded 2-core machine)
    quiet_ms: int = 3000                # a settled group shows no rebalance callback for this long (3 heartbeats)

    @property
    def unowned_bound_ms(self) -> int:
        """A partition is without owner at most S (a dead owner found) + R (a join phase waiting for slow
        members) + D (the initial delay, when the group was emptied) + the margin."""
        return self.session_ms + self.rebalance_ms + self.initial_delay_ms + self.margin_ms

    @property
    def expiry_bound_ms(self) -> int:
        """A SIGKILLed member's partitions have a live owner again within S + the margin."""
        return self.session_ms + self.margin_ms

    @property
    def rebalance_bound_ms(self) -> int:
        """A group settles within R + D + the margin of a change its live members see (a join, a leave, a
        member polling again): the join phase waits at most R for members to rejoin (SPEC.md §4.4), the
        initial delay at most D more when the group had emptied (§4.5)."""
        return self.rebalance_ms + self.initial_delay_ms + self.margin_ms

    def settle_bounds_s(self) -> dict[str, float]:
        """Change kind -> seconds the group has to settle after it (a SIGKILL is seen only by expiry: + S)."""
        return {"default": self.rebalance_bound_ms / 1000, "killed": self.unowned_bound_ms / 1000}

    def cap_s(self, min_s: float) -> float:
        """A run's hard cap: its minimum, the longest settle bound, and start-up allowance."""
        return min_s + self.unowned_bound_ms / 1000 + START_ALLOWANCE_S


@dataclass(frozen=True, slots=True)
class Schedule:
    """``build(library, timeouts)`` gives the consumers and the run's minimum length in seconds."""

    name: str
    claim: str
    build: Callable[[str, Timeouts], tuple[list[ConsumerSpec], float]]
    skip: Callable[[str], str | None] = lambda lib: None


def _spec(name: str, lib: str, t: Timeouts, **kw: object) -> ConsumerSpec:
    return ConsumerSpec(name, lib, session_timeout_ms=t.session_ms, heartbeat_interval_ms=t.heartbeat_ms,
                        max_poll_interval_ms=t.rebalance_ms, **kw)  # type: ignore[arg-type]


def churn(lib: str, t: Timeouts) -> tuple[list[ConsumerSpec], float]:
    return [_spec("c0", lib, t), _spec("c1", lib, t, start_at_s=0.3, mode="leave-after 9"),
            _spec("c2", lib, t, start_at_s=5.0, mode="leave-after 9"), _spec("c3", lib, t, start_at_s=11.0)], 15.0


def kill_no_leave(lib: str, t: Timeouts) -> tuple[list[ConsumerSpec], float]:
    """c2 is SIGKILLed at 10 s and nobody joins or leaves for S + margin + 1 s after (the run's minimum):
    only the broker's session expiry can give its partitions to the others."""
    end = 10.0 + (t.expiry_bound_ms + 1000) / 1000
    return [_spec("c0", lib, t), _spec("c1", lib, t, start_at_s=0.3),
            _spec("c2", lib, t, start_at_s=0.6, kill_at_s=10.0)], end


def slow_under_max_poll(lib: str, t: Timeouts) -> tuple[list[ConsumerSpec], float]:
    """c0 stops polling right after its first assignment for R/2 (well under max.poll.interval.ms, so it
    stays a member and keeps its partitions until it polls again) while c1 joins: a broker must wait for
    c0's rejoin before giving c1 anything — else both own c0's partitions at once."""
    stall = t.rebalance_ms / 2000
    return [_spec("c0", lib, t, mode="slow", stall_s=stall), _spec("c1", lib, t, start_at_s=5.0)], 7.0 + stall


def rolling_restart(lib: str, t: Timeouts) -> tuple[list[ConsumerSpec], float]:
    specs = [_spec("c0", lib, t, mode="leave-after 8"), _spec("c1", lib, t, start_at_s=0.3, mode="leave-after 11.7"),
             _spec("c2", lib, t, start_at_s=0.6, mode="leave-after 15.4")]
    specs += [_spec(f"{s.name}b", lib, t, start_at_s=round(s.start_at_s + float(s.mode.split()[1]) + 0.5, 1))
              for s in list(specs)]
    return specs, 17.0


def static_restart(lib: str, t: Timeouts) -> tuple[list[ConsumerSpec], float]:
    """Two static members; s1's process is SIGKILLed at 9 s and a new one with its group.instance.id starts
    1 s later, inside the session timeout (KIP-345: it takes s1's place)."""
    return [_spec("s0", lib, t, instance_id="kgc-s0"), _spec("s1", lib, t, start_at_s=0.3, instance_id="kgc-s1",
                                                             kill_at_s=9.0),
            _spec("s1b", lib, t, start_at_s=10.0, instance_id="kgc-s1")], 11.0


def slow_listener(lib: str, t: Timeouts) -> tuple[list[ConsumerSpec], float]:
    """Each rebalance callback of c0 and c1 takes 3 s (within the rebalance timeout) when c2 joins."""
    return [_spec("c0", lib, t, listener_sleep_s=3.0), _spec("c1", lib, t, start_at_s=0.3, listener_sleep_s=3.0),
            _spec("c2", lib, t, start_at_s=8.0)], 9.0


def _no_kafkajs(why: str) -> Callable[[str], str | None]:
    return lambda lib: f"kafkajs 2.2.4 {why}" if lib == "kafkajs" else None


SCHEDULES: dict[str, Schedule] = {s.name: s for s in (
    Schedule("churn", "members join and leave cleanly, one after another", churn),
    Schedule("kill-no-leave", "a member is SIGKILLed and nothing else happens: only expiry frees its partitions",
             kill_no_leave),
    Schedule("slow-under-max-poll", "a member stops polling for less than max.poll.interval.ms while another "
             "joins (the double-ownership schedule)", slow_under_max_poll,
             _no_kafkajs("has no poll loop to stall (its heartbeats come from its own fetch loop).")),
    Schedule("rolling-restart", "each member in turn leaves and a replacement joins", rolling_restart),
    Schedule("static-restart", "a static member's process dies and restarts with its group.instance.id",
             static_restart, _no_kafkajs("has no group.instance.id (static membership).")),
    Schedule("slow-listener", "rebalance callbacks that take 3 s while a member joins", slow_listener,
             _no_kafkajs("has no rebalance listener to slow down.")),
)}
