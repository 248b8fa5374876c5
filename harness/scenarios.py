"""The seed documents' worked examples as named, executable scenarios (harness layer).

A scenario is a short script of readable instructions ("c1 sends JoinGroup", "deliver it", "lose
its response", "let 10 s pass") that a driver turns into concrete, enabled world actions — so
every scenario is an ordinary ``Trace`` that ``kgc replay`` re-executes. What the seeds say must
happen is asserted in tests/test_seed_scenarios.py, written from the documents, not from runs.

Naming: the seeds number consumers from 1; kgc's clients are c0, c1, c2. Each scenario says
which client plays which consumer.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from core.actions import Action
from core.trace import Trace
from harness.client_versions import client_version_for
from model.releases import RUNNABLE, all_of, profiles_where, unless
from harness.scope import Scope
from harness.world import World

#: AdvanceClock amounts every scenario world offers; longer waits are decomposed greedily
CLOCK_STEPS = (100000, 10000, 1000, 100, 10, 1)

Instr = tuple[str, ...] | tuple[str, int] | tuple[str, int, str]


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    source: str                      # the seed passage (file and section) it comes from
    roles: str                       # which client plays which consumer of the seed
    script: tuple[Instr, ...]
    clients: int = 3
    profiles: tuple[str, ...] = RUNNABLE   # the runnable releases it runs on (model/releases.py)
    scope: Scope = field(default_factory=Scope)


def _scope(**kw: object) -> Scope:
    base = dict(advance_ms=CLOCK_STEPS, group_initial_rebalance_delay_ms=0, leaves=True)
    base.update(kw)
    return Scope(**base)  # type: ignore[arg-type]


class ScenarioError(AssertionError):
    """A script instruction that the world does not allow at that point."""


class Driver:
    """Resolves script instructions into enabled actions on a recording world."""

    def __init__(self, world: World) -> None:
        self.world = world

    def act(self, action: Action) -> None:
        if action not in self.world.enabled():
            raise ScenarioError(f"step {len(self.world.steps)}: {action} is not enabled "
                                f"(enabled: {', '.join(map(str, self.world.enabled()))})")
        self.world.step(action)

    def _corr(self, client: int, api: str, responses: bool) -> int:
        table = self.world.net.responses if responses else self.world.net.requests
        for (c, corr), msg in sorted(table.items()):
            if c == client and (msg[0] if responses else msg).api == api:   # type: ignore[index]
                return corr
        where = "response to" if responses else "request"
        raise ScenarioError(f"step {len(self.world.steps)}: no {api} {where} c{client} in flight")

    def run(self, instr: Instr) -> None:
        op, *args = instr
        getattr(self, f"do_{op}")(*args)

    def do_send(self, c: int, api: str) -> None:
        self.act(Action(api, c, 0))

    def do_deliver(self, c: int, api: str) -> None:
        self.act(Action("DeliverRequest", c, self._corr(c, api, responses=False)))

    def do_respond(self, c: int, api: str) -> None:
        self.act(Action("DeliverResponse", c, self._corr(c, api, responses=True)))

    def do_lose(self, c: int, api: str) -> None:
        self.act(Action("DropResponse", c, self._corr(c, api, responses=True)))

    def do_request(self, c: int, api: str) -> None:
        """Send and deliver (the response may be parked)."""
        self.do_send(c, api)
        self.do_deliver(c, api)

    def do_call(self, c: int, api: str) -> None:
        """Send, deliver and hand the (immediate) response back to the client."""
        self.do_request(c, api)
        self.do_respond(c, api)

    def do_member_id(self, c: int) -> None:
        """A 3.x client's first JoinGroup round trip (MEMBER_ID_REQUIRED, KIP-394); nothing for older clients."""
        if client_version_for(self.world.profile.name).join_group_v4:
            self.do_call(c, "JoinGroup")

    def do_append(self) -> None:
        self.act(Action("CompleteAppend", -1, "NONE"))

    def do_wait(self, ms: int) -> None:
        """Let ``ms`` pass; due timers fire as their deadlines are crossed, in (deadline, seq) order."""
        goal = self.world.now_ms + ms
        while True:
            due = self.world.coord.due_timers()
            if due:
                self.act(Action("FireTimer", -1, due[0].seq))
                continue
            now = self.world.now_ms
            if now >= goal:
                return
            nxt = self.world.coord.next_deadline()
            if nxt is not None and nxt + 1 <= goal:
                self.act(Action("AdvanceToNextDeadline", -1, 0))
                continue
            step = next(s for s in CLOCK_STEPS if s <= goal - now)
            self.act(Action("AdvanceClock", -1, step))

    def do_tick(self) -> None:
        """Move the clock just past the earliest deadline, without firing anything yet."""
        self.act(Action("AdvanceToNextDeadline", -1, 0))

    def do_fire(self) -> None:
        """Fire the first due timer task; other actions may run before the next one (bounded lateness)."""
        due = self.world.coord.due_timers()
        if not due:
            raise ScenarioError(f"step {len(self.world.steps)}: no timer task is due")
        self.act(Action("FireTimer", -1, due[0].seq))

    def do_wait_until(self, t_ms: int) -> None:
        self.do_wait(t_ms - self.world.now_ms)


def _rejoin_via_heartbeat(c: int) -> tuple[Instr, ...]:
    """The member learns of the rebalance from a heartbeat (REBALANCE_IN_PROGRESS) and rejoins."""
    return (("call", c, "Heartbeat"), ("request", c, "JoinGroup"))


def _three_member_generation() -> tuple[Instr, ...]:
    """c0 forms generation 1 alone; c1 and c2 join; c0 learns from its SyncGroup and rejoins:
    generation 2 of three members, join responses not yet delivered."""
    return (("member_id", 0), ("call", 0, "JoinGroup"),
            ("member_id", 1), ("request", 1, "JoinGroup"), ("member_id", 2), ("request", 2, "JoinGroup"),
            ("call", 0, "SyncGroup"), ("request", 0, "JoinGroup"))


def _stable_three_then_rejoin() -> tuple[Instr, ...]:
    """Generation 2 of three members becomes Stable; then all three rejoin (the leader's JoinGroup
    starts the rebalance, the followers learn from a heartbeat): generation 3, responses pending."""
    return (_three_member_generation()
            + (("respond", 0, "JoinGroup"), ("respond", 1, "JoinGroup"), ("respond", 2, "JoinGroup"),
               ("call", 0, "SyncGroup"), ("call", 1, "SyncGroup"), ("call", 2, "SyncGroup"), ("wait", 1000),
               ("request", 0, "JoinGroup"))
            + _rejoin_via_heartbeat(1) + _rejoin_via_heartbeat(2))


def _two_stable_at_one_second() -> tuple[Instr, ...]:
    """C1 (c0, leader) and C2 (c1) form a generation at t = 0 and get their sync responses at
    t = 1 s, which plays 10:00:00 of the seed (a reschedule in the same millisecond as the join
    response would leave two heartbeat ops on 0.10.0, see scenario same-millisecond-reschedule)."""
    return (("member_id", 0), ("call", 0, "JoinGroup"), ("member_id", 1), ("request", 1, "JoinGroup"),
            ("call", 0, "SyncGroup"), ("request", 0, "JoinGroup"), ("respond", 0, "JoinGroup"),
            ("respond", 1, "JoinGroup"), ("wait", 1000), ("call", 0, "SyncGroup"), ("call", 1, "SyncGroup"))


def _leave_all(n: int) -> tuple[Instr, ...]:
    return tuple(("call", c, "LeaveGroup") for c in range(n))


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "first-join-completes-at-once",
        "The first member's JoinGroup: the DelayedJoin completes inside tryCompleteElseWatch",
        "seed 001 (5.3.3, steps (1)-(7))", "c0 is the first consumer",
        (("member_id", 0), ("call", 0, "JoinGroup")), clients=1, scope=_scope()),
    Scenario(
        "three-consumers-one-rebalance",
        "3 consumers join at once: one rebalance, one assignment",
        "seed 004 §1 (3个消费者,一次再平衡操作, steps (1)-(9))",
        "c0 plays consumer-3 (processed first, leader), c1 consumer-2, c2 consumer-1",
        (("member_id", 0), ("member_id", 1), ("member_id", 2),
         ("send", 0, "JoinGroup"), ("send", 1, "JoinGroup"), ("send", 2, "JoinGroup"),
         ("deliver", 0, "JoinGroup"), ("deliver", 1, "JoinGroup"), ("deliver", 2, "JoinGroup"),
         ("respond", 0, "JoinGroup"), ("call", 0, "SyncGroup"), ("request", 0, "JoinGroup"),
         ("respond", 0, "JoinGroup"), ("respond", 1, "JoinGroup"), ("respond", 2, "JoinGroup"),
         ("request", 0, "SyncGroup"), ("request", 1, "SyncGroup"), ("request", 2, "SyncGroup"),
         ("append",), ("respond", 0, "SyncGroup"), ("respond", 1, "SyncGroup"), ("respond", 2, "SyncGroup"))
        + _leave_all(3),
        scope=_scope(append_mode="deferred")),
    Scenario(
        "three-consumers-two-rebalances",
        "consumer-1 starts alone; consumers 2 and 3 start later: two rebalances",
        "seed 004 §2 (3个消费者,两次再平衡操作, steps (1)-(7))", "c0 = consumer-1, c1 = consumer-2, c2 = consumer-3",
        (("member_id", 0), ("call", 0, "JoinGroup"), ("call", 0, "SyncGroup"), ("wait", 2000),
         ("member_id", 1), ("request", 1, "JoinGroup"), ("member_id", 2), ("request", 2, "JoinGroup"))
        + _rejoin_via_heartbeat(0)
        + (("respond", 0, "JoinGroup"), ("respond", 1, "JoinGroup"), ("respond", 2, "JoinGroup"),
           ("call", 0, "SyncGroup"), ("call", 1, "SyncGroup"), ("call", 2, "SyncGroup"))
        + _leave_all(3),
        scope=_scope()),
    Scenario(
        "three-consumers-three-rebalances",
        "each consumer joins after the previous rebalance ended: three rebalances",
        "seed 004 §3 (3个消费者,3次再平衡操作, steps (1)-(8))", "c0 = consumer-1, c1 = consumer-2, c2 = consumer-3",
        (("member_id", 0), ("call", 0, "JoinGroup"), ("call", 0, "SyncGroup"), ("wait", 1000),
         ("member_id", 1), ("request", 1, "JoinGroup"))
        + _rejoin_via_heartbeat(0)
        + (("respond", 0, "JoinGroup"), ("respond", 1, "JoinGroup"), ("call", 0, "SyncGroup"),
           ("call", 1, "SyncGroup"), ("wait", 2000), ("member_id", 2), ("request", 2, "JoinGroup"))
        + _rejoin_via_heartbeat(0) + _rejoin_via_heartbeat(1)
        + (("respond", 0, "JoinGroup"), ("respond", 1, "JoinGroup"), ("respond", 2, "JoinGroup"),
           ("call", 0, "SyncGroup"), ("call", 1, "SyncGroup"), ("call", 2, "SyncGroup"))
        + _leave_all(3),
        scope=_scope()),
    Scenario(
        "follower-missed-join-response",
        "a follower misses its join response and rejoins a Stable group",
        "seed 004 (协调者处理加入组请求, first list (1)-(9))",
        "c0 leads; c2 is the follower that misses its response (all three already know their member ids)",
        _stable_three_then_rejoin()
        + (("respond", 0, "JoinGroup"), ("respond", 1, "JoinGroup"), ("lose", 2, "JoinGroup"),
           ("request", 1, "SyncGroup"), ("call", 0, "SyncGroup"), ("respond", 1, "SyncGroup"),
           ("call", 2, "JoinGroup"), ("call", 2, "SyncGroup")),
        scope=_scope(faults=True)),
    Scenario(
        "leader-missed-join-response",
        "the leader misses its join response and rejoins while the group awaits its SyncGroup",
        "seed 004 (协调者处理加入组请求, second list (1)-(7))", "c0 is the leader that misses its response",
        _three_member_generation()
        + (("lose", 0, "JoinGroup"), ("respond", 1, "JoinGroup"), ("respond", 2, "JoinGroup"),
           ("request", 1, "SyncGroup"), ("request", 2, "SyncGroup"), ("call", 0, "JoinGroup"),
           ("call", 0, "SyncGroup"), ("respond", 1, "SyncGroup"), ("respond", 2, "SyncGroup")),
        scope=_scope(faults=True)),
    Scenario(
        "sync-in-preparing-rebalance",
        "the leader's SyncGroup arrives after a new member restarted the rebalance",
        "seed 004 (协调者处理同步组请求, first list (1)-(5))", "c0 is the first consumer, c1 the new one",
        (("member_id", 0), ("call", 0, "JoinGroup"), ("member_id", 1), ("request", 1, "JoinGroup"),
         ("call", 0, "SyncGroup"), ("request", 0, "JoinGroup"), ("respond", 0, "JoinGroup"),
         ("respond", 1, "JoinGroup")),
        clients=2, scope=_scope()),
    Scenario(
        "rebalance-timeout-is-max-session",
        "session timeouts 10 s and 5 s: the delayed join waits 10 s for the first member to rejoin",
        "seed 000 (5.4.6 再平衡超时与会话超时, 10 s / 5 s example)",
        "c0 has the 10 s session, c1 the 5 s one; c0 commits offsets (KAFKA-3470 liveness) but never rejoins",
        (("member_id", 0), ("call", 0, "JoinGroup"), ("call", 0, "SyncGroup"), ("wait", 1000),
         ("member_id", 1), ("request", 1, "JoinGroup"), ("wait", 1000), ("call", 0, "OffsetCommit"),
         ("wait_until", 11000), ("wait", 1)),
        clients=2,
        scope=_scope(commits=True, session_timeout_ms=(10000, 5000), group_min_session_timeout_ms=1000)),
    Scenario(
        "heartbeat-deadlines-5-6-8",
        "a follower with a 5 s session: deadlines after its join response, its SyncGroup and its sync response",
        "seed 004 (1. 完成并调度下一次心跳, steps (1)-(3))",
        "c1 is the consumer of the example (session 5 s); c0 leads and syncs last",
        (("member_id", 0), ("call", 0, "JoinGroup"), ("member_id", 1), ("request", 1, "JoinGroup"),
         ("call", 0, "SyncGroup"), ("request", 0, "JoinGroup"), ("respond", 0, "JoinGroup"),
         ("respond", 1, "JoinGroup"), ("wait", 1000), ("request", 1, "SyncGroup"), ("wait", 2000),
         ("call", 0, "SyncGroup"), ("respond", 1, "SyncGroup")),
        clients=2, scope=_scope(session_timeout_ms=(10000, 5000), group_min_session_timeout_ms=1000)),
    Scenario(
        "heartbeat-deadlines-10-20-40",
        "C1/C2/C3 with sessions 10/20/40 s: C1's parked SyncGroup keeps it alive past its deadline",
        "seed 004 (2. 判断消费者成员是否存活, awaitingSyncCallback example)",
        "c1 plays C1 (10 s), c2 plays C2 (20 s), c0 plays C3 (40 s) and leads; 10:00:00 is t = 0",
        _three_member_generation()
        + (("respond", 0, "JoinGroup"), ("respond", 1, "JoinGroup"), ("respond", 2, "JoinGroup"),
           ("wait", 3000), ("request", 1, "SyncGroup"), ("wait_until", 15000)),
        scope=_scope(session_timeout_ms=(40000, 10000, 20000))),
    Scenario(
        "heartbeat-deadlines-pending-join",
        "C1 is kept alive past its deadline by its pending JoinGroup; C2 rejoins at 10:00:15",
        "seed 004 (2. 判断消费者成员是否存活, awaitingJoinCallback example, steps (1)-(4))",
        "c0 plays C1 (10 s, leader), c1 plays C2 (20 s), c2 plays C3 (40 s); 10:00:00 is t = 1 s",
        _two_stable_at_one_second()
        + (("wait", 2000), ("member_id", 2), ("request", 2, "JoinGroup"), ("wait", 1000))
        + _rejoin_via_heartbeat(0) + (("wait_until", 16000),) + _rejoin_via_heartbeat(1),
        scope=_scope(session_timeout_ms=(10000, 20000, 40000))),
    Scenario(
        "heartbeat-expiry-removes-c2",
        "C2 does not rejoin before its deadline 10:00:20: it is removed and gets no join response",
        "seed 004 (2. 判断消费者成员是否存活, last paragraph)",
        "c0 plays C1 (10 s, leader), c1 plays C2 (20 s), c2 plays C3 (40 s); 10:00:00 is t = 1 s",
        _two_stable_at_one_second()
        + (("wait", 2000), ("member_id", 2), ("request", 2, "JoinGroup"), ("wait", 1000))
        + _rejoin_via_heartbeat(0) + (("wait_until", 21000), ("wait", 1)),
        scope=_scope(session_timeout_ms=(10000, 20000, 40000))),
    Scenario(
        "same-millisecond-reschedule",
        "0.10.0: a heartbeat reschedule in the millisecond of the previous one leaves two ops; both expire",
        "SPEC.md §2 (keep ⇔ latestHeartbeat + session > deadline, strict) and §4.6; KAFKA-7196 (2.1.0)",
        "c0 leads; c1's join response and its SyncGroup in Stable fall in one millisecond, then c1 goes silent",
        (("call", 0, "JoinGroup"), ("request", 1, "JoinGroup"), ("call", 0, "SyncGroup"),
         ("request", 0, "JoinGroup"), ("respond", 0, "JoinGroup"), ("respond", 1, "JoinGroup"),
         ("call", 0, "SyncGroup"), ("call", 1, "SyncGroup"), ("wait", 5000), ("call", 0, "Heartbeat"),
         ("tick",), ("fire",), ("call", 0, "Heartbeat"), ("request", 0, "JoinGroup"), ("respond", 0, "JoinGroup"),
         ("fire",)),
        # the script is written for the 0.10 client (no MEMBER_ID_REQUIRED round); 2.4.1 shares the arithmetic
        # (tests/test_profiles_releases.py::test_two_reschedules_in_one_millisecond)
        clients=2, profiles=profiles_where(all_of(unless("heartbeat-satisfied-flag"), unless("pending-members"))),
        scope=_scope()),
)

BY_NAME: dict[str, Scenario] = {s.name: s for s in SCENARIOS}


class UnknownScenarioError(ValueError):
    """A scenario name kgc does not have; the message lists the known ones."""


def get_scenario(name: str) -> Scenario:
    try:
        return BY_NAME[name]
    except KeyError:
        raise UnknownScenarioError(f"unknown scenario {name!r}; `kgc scenario --list` shows the "
                                   f"{len(SCENARIOS)} known ones.") from None


def run_scenario(scenario: Scenario, profile: str,
                 on_step: Callable[[World], None] | None = None) -> World:
    """Execute the script on a fresh recording world; ``on_step`` sees the world after every instruction."""
    world = World(profile=profile, scope=scenario.scope, clients=scenario.clients, seed=0, record=True)
    driver = Driver(world)
    for instr in scenario.script:
        driver.run(instr)
        if on_step is not None:
            on_step(world)
    return world


def scenario_trace(scenario: Scenario, profile: str) -> Trace:
    return run_scenario(scenario, profile).trace(name=scenario.name)
