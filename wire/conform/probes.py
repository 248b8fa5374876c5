"""The conformance probe library (23 probes): seed scenarios that make sense on the wire, and edge probes.

Each probe is a function of the broker configuration (its timers are the configured minimum session
timeout S and initial delay D, so a test can run them with small values) returning a ``Probe`` that
names the SPEC.md section it checks. Members are ``a``, ``b``, ``c``…; ``a`` joins first and is
expected to lead. Expected answers are never written here: they are the reference's answers to the
same script (wire/conform/run.py).
"""
from __future__ import annotations

from wire.conform.script import GROUP, BrokerConfig, Builder, Gen, Probe, ProbeFactory

UNKNOWN_ID = "kgc-conform-unknown-member"


def first_join(cfg: BrokerConfig) -> Probe:
    b = Builder(cfg)
    b.stable(("a",))
    b.heartbeat("a", 100)
    b.leave("a", 100)
    b.leave("a", 100)                   # the group is Empty now: the member is unknown
    b.heartbeat("a", 100)
    return b.probe("first-join-waits-the-initial-delay", "§3.1 J5a.5, §4.5, §3.2, §3.3, §3.4",
                   "a lone member gets MEMBER_ID_REQUIRED, then generation 1 after the initial delay, its "
                   "assignment, heartbeats and leaves; in the Empty group it left, a second leave and a "
                   "heartbeat are UNKNOWN_MEMBER_ID", cfg.initial_delay_ms + 3000, timing=True,
                   needs="group.initial.rebalance.delay.ms", seed="first-join-completes-at-once")


def three_members_one_rebalance(cfg: BrokerConfig) -> Probe:
    b = Builder(cfg)
    syncs = b.stable(("a", "b", "c"))
    for m in ("a", "b", "c"):
        b.heartbeat(m, 100, tuple(syncs.values()))
    return b.probe("three-members-one-rebalance", "§4.5, §4.4, §3.2",
                   "three members joining within the initial delay form one generation with one leader; "
                   "followers get the leader's assignment", cfg.initial_delay_ms + 3000, timing=True,
                   needs="group.initial.rebalance.delay.ms", seed="three-consumers-one-rebalance")


def second_member_rebalances(cfg: BrokerConfig) -> Probe:
    b = Builder(cfg)
    syncs = b.stable(("a",))
    b.join("b", 200, syncs["a"])
    hs = b.handshakes["b"]
    hb = b.heartbeat("a", 200, hs)
    rejoin = b.join("a", 0, hb, new=False)
    sync = b.sync("a", 0, ("b.JoinGroup.2", rejoin), leader=True)
    b.sync("b", 0, sync)
    return b.probe("second-member-rebalances", "§3.1 J5b, §3.3, §4.4",
                   "a new member moves a Stable group to PreparingRebalance: the member's heartbeat answers "
                   "REBALANCE_IN_PROGRESS and its rejoin completes generation 2 with both",
                   cfg.initial_delay_ms + cfg.min_session_ms + 3000, seed="three-consumers-two-rebalances")


def sync_in_preparing_rebalance(cfg: BrokerConfig) -> Probe:
    b = Builder(cfg)
    join = b.join("a", 0)
    b.join("b", 100, join)
    sync = b.sync("a", 300, b.handshakes["b"], leader=True)
    rejoin = b.join("a", 0, sync, new=False)
    leader = b.sync("a", 0, ("b.JoinGroup.2", rejoin), leader=True)
    b.sync("b", 0, leader)
    return b.probe("sync-in-preparing-rebalance", "§3.2 (5), §3.1 J5b",
                   "the leader's SyncGroup after a new member restarted the rebalance answers "
                   "REBALANCE_IN_PROGRESS", cfg.initial_delay_ms + cfg.min_session_ms + 3000,
                   seed="sync-in-preparing-rebalance")


def missing_group(cfg: BrokerConfig) -> Probe:
    b = Builder(cfg)
    b.join("a", 0, member_id=UNKNOWN_ID, handshake=False)
    b.heartbeat("a", 50, gen=1, member_id=UNKNOWN_ID)
    b.sync("a", 50, gen=1, member_id=UNKNOWN_ID)
    b.leave("a", 50, members=((UNKNOWN_ID, None),))
    b.send("a", "LeaveGroup", 1, 50, group_id=GROUP, member_id=UNKNOWN_ID, members=())
    b.commit("a", 50, gen=1, member_id=UNKNOWN_ID)
    return b.probe("known-member-on-missing-group", "§3.1 J3, §3.2, §3.3, §3.4, §3.5",
                   "requests naming a member id on a group that does not exist: UNKNOWN_MEMBER_ID (JoinGroup, "
                   "SyncGroup, Heartbeat, LeaveGroup v1; v3 per member), ILLEGAL_GENERATION (OffsetCommit; "
                   "GROUP_ID_NOT_FOUND from v9 on 4.x, SPEC-4x.md R15)", 3000)


def session_timeout_bounds(cfg: BrokerConfig) -> Probe:
    b = Builder(cfg)
    b.join("a", 0, session=cfg.min_session_ms - 1, handshake=False)
    b.join("b", 0, session=cfg.max_session_ms + 1, handshake=False)
    b.join("c", 300, session=cfg.min_session_ms)
    return b.probe("session-timeout-bounds", "§3.1 J2",
                   "a session timeout outside [min, max] is INVALID_SESSION_TIMEOUT, before the member id "
                   "handshake; the minimum itself is accepted", cfg.initial_delay_ms + 3000,
                   needs="group.min.session.timeout.ms, group.max.session.timeout.ms")


def protocol_mismatch(cfg: BrokerConfig) -> Probe:
    b = Builder(cfg)
    syncs = b.stable(("a",))
    b.join("b", 100, syncs["a"], protocol_type="connect", handshake=False)
    b.join("c", 100, syncs["a"], protocols=(("roundrobin", b"meta"),), handshake=False)
    b.join("d", 100, syncs["a"], protocol_type="", handshake=False, version=3)
    b.heartbeat("a", 400)
    return b.probe("protocol-type-and-protocol-mismatch", "§3.6, §3.1 J5a.2",
                   "a joiner with another protocol type or no common protocol gets INCONSISTENT_GROUP_PROTOCOL "
                   "and the group is unaffected", cfg.initial_delay_ms + 3000)


def wrong_generation(cfg: BrokerConfig) -> Probe:
    b = Builder(cfg)
    b.stable(("a",))
    b.heartbeat("a", 50, gen=None)
    b.heartbeat("a", 50, gen=Gen("a", 1))
    b.heartbeat("a", 50, gen=Gen("a", -1))
    b.sync("a", 50, gen=Gen("a", 1))
    b.commit("a", 50, gen=Gen("a", 1))
    b.commit("a", 50)
    b.heartbeat("a", 50, member_id=UNKNOWN_ID)
    b.commit("a", 50, member_id=UNKNOWN_ID)
    return b.probe("wrong-generation-and-member", "§3.2 (3), §3.3, §3.5",
                   "in a Stable group a wrong generation is ILLEGAL_GENERATION (Heartbeat, SyncGroup, "
                   "OffsetCommit) and an unknown member UNKNOWN_MEMBER_ID", cfg.initial_delay_ms + 3000)


def stale_generation(cfg: BrokerConfig) -> Probe:
    b = Builder(cfg)
    b.stable(("a",))
    b.join("a", 100, new=False)
    b.heartbeat("a", 50, gen=Gen("a", -1))
    b.sync("a", 50, gen=Gen("a", -1))
    b.sync("a", 50, leader=True)
    b.heartbeat("a", 50, gen=Gen("a", -1))
    b.commit("a", 50, gen=Gen("a", -1))
    b.heartbeat("a", 50)
    return b.probe("stale-generation-after-rebalance", "§3.1 J5b (Stable leader), §3.2 (3), §3.3, §3.5",
                   "after the leader's rejoin starts generation 2, generation 1 is ILLEGAL_GENERATION in "
                   "CompletingRebalance and in Stable", cfg.initial_delay_ms + 3000)


def follower_sync_first(cfg: BrokerConfig) -> Probe:
    b = Builder(cfg)
    ja = b.join("a", 0)
    jb = b.join("b", 100)
    b.sync("b", 0, (ja, jb))
    leader = b.sync("a", 600, (ja, jb), leader=True)
    b.heartbeat("b", 100, leader)
    return b.probe("follower-sync-before-leader", "§3.2 (5, CompletingRebalance), §4.8",
                   "a follower's SyncGroup before the leader's is parked and answered with its assignment when "
                   "the leader's arrives", cfg.initial_delay_ms + 3000, timing=True)


def member_never_rejoins(cfg: BrokerConfig) -> Probe:
    s = cfg.min_session_ms
    b = Builder(cfg)
    syncs = b.stable(("a", "b"), session=2 * s, rebalance=s)
    b.join("c", 200, tuple(syncs.values()), session=2 * s, rebalance=s)
    hs = b.handshakes["c"]
    hb = b.heartbeat("a", 200, hs)
    rejoin = b.join("a", 0, hb, new=False, session=2 * s, rebalance=s)
    for k in range(4):                # at S/4, 3S/4, 5S/4, 7S/4 after c's handshake: S/4 from the S boundary
        b.heartbeat("b", s // 4 if k == 0 else s // 2, hs)
    leader = b.sync("a", 0, ("c.JoinGroup.2", rejoin), leader=True)
    b.sync("c", 0, leader)
    return b.probe("member-never-rejoins", "§4.4, §4.9, §3.3",
                   "a member that heartbeats but never rejoins is removed when the rebalance timeout ends the "
                   "join phase; the others get the next generation without it",
                   cfg.initial_delay_ms + 3 * s + 3000, timing=True, seed="heartbeat-expiry-removes-c2")


def silent_member(cfg: BrokerConfig) -> Probe:
    s = cfg.min_session_ms
    b = Builder(cfg)
    syncs = b.stable(("a", "b"))
    for k in range(5):
        b.heartbeat("a", s // 6 if k == 0 else s // 3, syncs["b"])
    rejoin = b.join("a", 0, new=False)
    b.sync("a", 0, rejoin, leader=True)
    return b.probe("silent-member-expires", "§4.6, §3.3, §4.4",
                   "a member silent for its session timeout is removed: the survivor's heartbeat answers "
                   "REBALANCE_IN_PROGRESS and its rejoin forms the next generation alone",
                   cfg.initial_delay_ms + 2 * s + 3000, timing=True)


def late_sync_in_stable(cfg: BrokerConfig) -> Probe:
    s = cfg.min_session_ms
    b = Builder(cfg)
    ja = b.join("a", 0, session=2 * s)          # sessions of 2S: every answer below is S/2 or more from a deadline
    jb = b.join("b", 100, session=2 * s)
    leader = b.sync("a", 0, (ja, jb), leader=True)
    b.sync("b", s, (jb, leader))               # the group is Stable: the follower's SyncGroup comes S late
    for k in range(4):                         # S/2, 3S/2, 5S/2, 7S/2 after the leader's sync
        b.heartbeat("a", s // 2 if k == 0 else s)
    rejoin = b.join("a", 0, new=False, session=2 * s)
    b.sync("a", 0, rejoin, leader=True)
    return b.probe("late-sync-in-stable", "§3.2 (6), §4.6; SPEC-4x.md R9",
                   "a follower that syncs S after the join phase (the leader's sync made the group Stable) and "
                   "then stays silent is expired at its sync + its session 2S up to 3.9 (the Stable SyncGroup "
                   "reschedules its session, GroupCoordinator.scala@3.9.1:643) and at the join phase's end + 2S from "
                   "4.0 (it does not, GroupMetadataManager.java@4.1.1:7415-7424): the leader's heartbeats show which",
                   cfg.initial_delay_ms + 4 * s + 2000, timing=True)


def leave_in_stable(cfg: BrokerConfig) -> Probe:
    b = Builder(cfg)
    syncs = b.stable(("a", "b"))
    leave = b.leave("b", 100, tuple(syncs.values()))
    b.heartbeat("b", 100)
    hb = b.heartbeat("a", 100, leave)
    rejoin = b.join("a", 0, hb, new=False)
    b.sync("a", 0, rejoin, leader=True)
    return b.probe("leave-in-stable", "§3.4, §3.3",
                   "a member leaving a Stable group is removed at once (its later heartbeat UNKNOWN_MEMBER_ID); "
                   "the rest rebalance without it", cfg.initial_delay_ms + 3000)


def leave_in_preparing(cfg: BrokerConfig) -> Probe:
    s = cfg.min_session_ms
    b = Builder(cfg)
    syncs = b.stable(("a", "b"), session=2 * s, rebalance=s)        # b must not expire before it leaves
    b.join("c", 200, tuple(syncs.values()), session=2 * s, rebalance=s)
    hb = b.heartbeat("a", 200, b.handshakes["c"])
    rejoin = b.join("a", 0, hb, new=False, session=2 * s, rebalance=s)
    b.leave("b", 400, hb)
    leader = b.sync("a", 0, ("c.JoinGroup.2", rejoin), leader=True)
    b.sync("c", 0, leader)
    return b.probe("leave-in-preparing-rebalance", "§3.4 (removeMemberAndUpdateGroup), §4.4",
                   "the last member that has not rejoined leaving completes the join phase at once, not at "
                   "the rebalance timeout", cfg.initial_delay_ms + 2 * s + 3000, timing=True)


def leave_in_completing(cfg: BrokerConfig) -> Probe:
    b = Builder(cfg)
    ja = b.join("a", 0)
    jb = b.join("b", 100)
    b.commit("b", 100, (ja, jb))
    leave = b.leave("b", 100, (ja, jb))
    sync = b.sync("a", 100, leave, leader=True)
    rejoin = b.join("a", 0, sync, new=False)
    b.sync("a", 0, rejoin, leader=True)
    return b.probe("leave-in-completing-rebalance", "§3.5, §3.4, §1.3, §3.2 (5)",
                   "in CompletingRebalance a commit answers REBALANCE_IN_PROGRESS; a follower leaving sends the "
                   "group back to PreparingRebalance: the leader's SyncGroup answers REBALANCE_IN_PROGRESS",
                   cfg.initial_delay_ms + 3000)


def leave_unknown(cfg: BrokerConfig) -> Probe:
    b = Builder(cfg)
    b.stable(("a",))
    b.leave("a", 100, members=((UNKNOWN_ID, None),))
    b.send("a", "LeaveGroup", 1, 100, group_id=GROUP, member_id=UNKNOWN_ID, members=())
    b.heartbeat("a", 100)
    return b.probe("leave-unknown-member", "§3.4",
                   "LeaveGroup naming an unknown member: v1 UNKNOWN_MEMBER_ID; v3 top-level NONE with "
                   "UNKNOWN_MEMBER_ID for that identity; the group is unaffected", cfg.initial_delay_ms + 3000)


def member_id_required(cfg: BrokerConfig) -> Probe:
    s = cfg.min_session_ms
    b = Builder(cfg)
    b.join("a", 0, version=4, handshake=False)
    b.join("a", s + s // 2, new=False, version=4)
    b.join("b", 100, version=3)
    b.sync("b", 0, leader=True)
    return b.probe("member-id-required-handshake", "§3.1 J5a.5, §4.7",
                   "v4+ JoinGroup without a member id answers MEMBER_ID_REQUIRED with an id (the member stays "
                   "pending for one session timeout, then the id is unknown); v3 joins at once",
                   cfg.initial_delay_ms + 2 * s + 3000, timing=True)


def old_join_versions(cfg: BrokerConfig) -> Probe:
    b = Builder(cfg)
    ja = b.join("a", 0, version=0)
    jb = b.join("b", 100, version=1)
    jc = b.join("c", 200, version=3)
    leader = b.sync("a", 0, (ja, jb, jc), leader=True, version=0)
    b.sync("b", 0, leader, version=1)
    b.sync("c", 0, leader, version=2)
    b.heartbeat("b", 100, version=0)
    return b.probe("old-join-versions", "§3.1 (v0 rebalance timeout = session timeout, KIP-62)",
                   "JoinGroup v0, v1 and v3 members (no handshake) form one generation", cfg.initial_delay_ms + 3000)


def static_rejoin(cfg: BrokerConfig) -> Probe:
    b = Builder(cfg)
    ja = b.join("a", 0, instance="i-a")
    jb = b.join("b", 100)
    sa = b.sync("a", 0, (ja, jb), leader=True, instance="i-a")
    sb = b.sync("b", 0, sa)
    restart = b.join("a2", 200, (sa, sb), instance="i-a")     # a restarted, on a new connection
    b.heartbeat("a2", 100, restart, instance="i-a")
    b.sync("a2", 100, instance="i-a")
    b.heartbeat("b", 100, restart)
    return b.probe("static-member-rejoin", "§3.1 J5a.4 (KAFKA-10284, 2.6.1+), KIP-345",
                   "a static member restarting with its instance id and no member id gets a new id and the "
                   "current generation without a rebalance", cfg.initial_delay_ms + 3000)


def static_fencing(cfg: BrokerConfig) -> Probe:
    b = Builder(cfg)
    ja = b.join("a", 0, instance="i-a")
    sa = b.sync("a", 0, ja, leader=True, instance="i-a")
    restart = b.join("a2", 200, sa, instance="i-a")
    b.heartbeat("a", 100, restart, instance="i-a")
    b.sync("a", 100, instance="i-a")
    b.commit("a", 100, instance="i-a")
    b.join("a", 100, new=False, instance="i-a")
    b.heartbeat("a2", 100, restart, instance="i-a")
    return b.probe("static-fencing-of-the-old-id", "§3.1 J5b.4, §3.2 (2), §3.3, §3.5, KIP-345",
                   "after a static restart the old member id is fenced: FENCED_INSTANCE_ID on Heartbeat, "
                   "SyncGroup, OffsetCommit and JoinGroup", cfg.initial_delay_ms + 3000)


def static_leave(cfg: BrokerConfig) -> Probe:
    b = Builder(cfg)
    ja = b.join("a", 0, instance="i-a")
    jb = b.join("b", 100)
    sa = b.sync("a", 0, (ja, jb), leader=True, instance="i-a")
    sb = b.sync("b", 0, sa)
    leave = b.send("admin", "LeaveGroup", 3, 200, (sa, sb), group_id=GROUP, member_id="",
                   members=(("", "i-a"),))
    hb = b.heartbeat("b", 100, leave)
    rejoin = b.join("b", 0, hb, new=False)
    b.sync("b", 0, rejoin, leader=True)
    b.heartbeat("a", 100, rejoin, instance="i-a")
    return b.probe("static-leave-by-instance-id", "§3.4 [3.x] (admin removal by instance id)",
                   "LeaveGroup v3 naming only an instance id removes that static member; the rest rebalance",
                   cfg.initial_delay_ms + 3000)


def group_max_size(cfg: BrokerConfig) -> Probe:
    b = Builder(cfg)
    names = tuple(f"m{i}" for i in range(1, (cfg.max_size or 2) + 1))
    syncs = b.stable(names)
    extra = b.join("x", 200, tuple(syncs.values()), handshake=False)
    b.heartbeat("m1", 100, extra)
    skip = "" if cfg.max_size is not None and 3 <= cfg.max_size <= 5 else (
        "needs the target's group.max.size (--group-max-size N, 3 ≤ N ≤ 5); Kafka's default is unbounded")
    return b.probe("group-max-size", "§3.1 J4 (KAFKA-9885, 2.6+)",
                   "a new member joining a full Stable group gets GROUP_MAX_SIZE_REACHED; the group is unaffected",
                   cfg.initial_delay_ms + 3000, needs="group.max.size", skip=skip)


PROBES: dict[str, ProbeFactory] = {
    "first-join-waits-the-initial-delay": first_join,
    "three-members-one-rebalance": three_members_one_rebalance,
    "second-member-rebalances": second_member_rebalances,
    "sync-in-preparing-rebalance": sync_in_preparing_rebalance,
    "known-member-on-missing-group": missing_group,
    "session-timeout-bounds": session_timeout_bounds,
    "protocol-type-and-protocol-mismatch": protocol_mismatch,
    "wrong-generation-and-member": wrong_generation,
    "stale-generation-after-rebalance": stale_generation,
    "follower-sync-before-leader": follower_sync_first,
    "member-never-rejoins": member_never_rejoins,
    "silent-member-expires": silent_member,
    "late-sync-in-stable": late_sync_in_stable,
    "leave-in-stable": leave_in_stable,
    "leave-in-preparing-rebalance": leave_in_preparing,
    "leave-in-completing-rebalance": leave_in_completing,
    "leave-unknown-member": leave_unknown,
    "member-id-required-handshake": member_id_required,
    "old-join-versions": old_join_versions,
    "static-member-rejoin": static_rejoin,
    "static-fencing-of-the-old-id": static_fencing,
    "static-leave-by-instance-id": static_leave,
    "group-max-size": group_max_size,
}


class UnknownProbeError(ValueError):
    """A probe name kgc does not have."""


def get_probes(names: list[str] | None, cfg: BrokerConfig) -> list[Probe]:
    """The named probes (all when ``names`` is empty), built for ``cfg``, in library order."""
    wanted = list(PROBES) if not names else names
    unknown = [n for n in wanted if n not in PROBES]
    if unknown:
        raise UnknownProbeError(f"unknown probe {unknown[0]!r}; `kgc conform --list` shows the {len(PROBES)} probes.")
    return [PROBES[n](cfg) for n in PROBES if n in wanted]
