"""Graph analyses (model/analysis.py): planted findings on a hand-made graph, and the findings on the real
model at 2 member slots, written up as results.

Fairness (see model/analysis.py): ExpireJoin, ExpireSync, ExpireHeartbeat and CompleteAppend are weakly
fair per kind; clients are not (any state may stutter). A non-progress SCC never visits
Stable/Empty/Absent; it is reported when a weakly fair run can stay in it forever, under each
client assumption of ``ASSUMPTIONS`` (any-clients ⊇ cooperative-clients ⊇ cooperative-healthy-log ⊇
quiet-clients in allowed moves).
"""
from __future__ import annotations

import networkx as nx
import pytest

from model.analysis import ACTION_NAMES, analyse
from model.graph import build
from model.state import ABSENT, INITIAL_JOIN, MANY, Scope

A, P, C, S = "Absent", "PreparingRebalance", "CompletingRebalance", "Stable"


def hand_made(groups: dict[int, str], edges: list[tuple[int, int, str]], cut: dict[int, str] | None = None
              ) -> nx.MultiDiGraph:
    """A graph in build()'s shape from (u, v, action text) edges; BFS depth/parent computed here."""
    g = nx.MultiDiGraph(profile="hand-made")
    for n, group in groups.items():
        g.add_node(n, label=f"s{n} {group}", group=group, depth=-1, parent=-1, via="",
                   cut=int(bool((cut or {}).get(n))), cut_actions=(cut or {}).get(n, ""))
    for u, v, action in edges:
        kind = action.split("(")[0].split("[")[0]
        slot = int(action.split("(")[1].split(")")[0]) if "(" in action else -1
        arg = action.split("[")[1].rstrip("]") if "[" in action else ""
        g.add_edge(u, v, key=action, kind=kind, slot=slot, arg=arg)
    g.nodes[0]["depth"] = 0
    queue = [0]
    for u in queue:
        for _, v, key in g.out_edges(u, keys=True):
            if g.nodes[v]["depth"] < 0:
                g.nodes[v].update(depth=g.nodes[u]["depth"] + 1, parent=u, via=key)
                queue.append(v)
    return g


PLANTED = hand_made(
    {0: A, 1: P, 2: C, 3: S, 4: P, 5: P, 6: C, 7: P, 8: C, 9: C, 10: C, 11: C, 12: C, 13: C, 14: P, 15: P, 16: C},
    [(0, 1, "JoinGroup/new(0)"), (1, 1, "Heartbeat(0)"), (1, 2, "ExpireJoin"), (2, 3, "SyncGroup(0)"),
     (3, 3, "Heartbeat(0)"), (3, 3, "OffsetCommit(0)"),                      # 3: only self-loops -> dead
     (2, 4, "JoinGroup/changed(0)"), (2, 4, "ExpireHeartbeat(1)"),
     (4, 5, "ExpireHeartbeat(0)"),                                            # 4: only a timer -> timer-only
     (5, 6, "Heartbeat(0)"), (6, 5, "Heartbeat(0)"), (6, 8, "LeaveGroup(0)"),  # 5<->6: a loop nothing forces out
     (2, 7, "LeaveGroup(0)"), (7, 3, "JoinGroup/known(0)"),                   # 7: only a client can move it
     (2, 9, "JoinGroup/known(0)"), (9, 10, "Heartbeat(0)"), (10, 9, "Heartbeat(0)"),
     (9, 3, "ExpireSync"), (10, 3, "ExpireSync"),                             # 9<->10: ExpireSync always enabled
     (2, 11, "LeaveGroup(1)"), (11, 12, "Heartbeat(0)"), (12, 11, "Heartbeat(0)"),
     (11, 3, "ExpireSync"),                                                   # 11<->12: ExpireSync only at 11
     (2, 13, "SyncGroup(1)"), (13, 14, "CompleteAppend[error]"), (14, 13, "SyncGroup(0)"),
     (13, 3, "CompleteAppend[ok]"), (14, 3, "ExpireJoin"),                    # 13<->14: needs a failing log
     (2, 15, "JoinGroup/known(1)"), (15, 16, "SyncGroup(0)"), (16, 15, "Heartbeat(0)"),
     (15, 3, "ExpireJoin"), (16, 3, "ExpireHeartbeat(0)")],                   # 15<->16: needs a SyncGroup
    cut={8: "SyncGroup(0)"})                                                  # 8: its move was cut by the scope


def test_planted_deadlocks_and_states_that_cannot_settle_are_found() -> None:
    r = analyse(PLANTED)
    assert [f.node for f in r.dead] == [3]              # a self-loop is no way out; 8's cut move is one
    assert [f.node for f in r.timer_only] == [1, 4]     # 1's Heartbeat only loops; 4 waits for its expiry
    assert [f.node for f in r.cannot_settle] == [4, 5, 6, 8] and r.cannot_settle_count == 4
    assert r.dead[0].path.actions == ("JoinGroup/new(0)", "ExpireJoin", "SyncGroup(0)")


def test_planted_fair_cycles_are_found_and_unfair_ones_are_not() -> None:
    """1 (loops while ExpireJoin waits), 9<->10 (ExpireSync always enabled) and 4 (its timer) are left
    by a fair scheduler; the rest can last forever under the assumptions that allow their moves."""
    r = analyse(PLANTED)
    entries = {a.name: [c.nodes for c in found] for a, found in r.cycles}
    everywhere = [(5, 6), (7,), (8,), (11, 12)]
    assert entries == {"any-clients": everywhere + [(13, 14), (15, 16)],
                       "cooperative-clients": everywhere + [(13, 14), (15, 16)],
                       "cooperative-healthy-log": everywhere + [(15, 16)],
                       "quiet-clients": everywhere}
    stall = r.cycles_for("quiet-clients")[1]
    assert stall.lasso.stutter and stall.lasso.nodes == (0, 1, 2, 7) and stall.moves == ()


def test_a_fair_witness_visits_where_a_fair_action_is_disabled() -> None:
    """The loop 11<->12 is fair only because ExpireSync is disabled at 12: the witness goes there."""
    cycle = analyse(PLANTED).cycles_for("any-clients")[3]
    assert cycle.nodes == (11, 12) and cycle.lasso.loop_from == 3
    assert cycle.lasso.render() == "\n".join([
        "      0  (initial)         s0 Absent",
        "      1  JoinGroup/new(0)  s1 PreparingRebalance",
        "      2  ExpireJoin        s2 CompletingRebalance",
        "      3  LeaveGroup(1)     s11 CompletingRebalance  <- loop starts here",
        "      4  Heartbeat(0)      s12 CompletingRebalance",
        "      5  Heartbeat(0)      s11 CompletingRebalance",
        "         ↺ back to step 3, forever"])


def test_planted_unreachable_and_effect_free_actions_are_found() -> None:
    r = analyse(PLANTED)
    assert r.unreachable == ("JoinGroup/new-pending", "OffsetCommit/simple")
    assert r.effect_free == ("OffsetCommit",)
    assert r.unknown == ()
    assert set(ACTION_NAMES) >= {"CompleteAppend[ok]", "CompleteAppend[error]", "ExpireSync"}


# -- the real model ------------------------------------------------------------------------------
@pytest.mark.parametrize("profile", ["0.10.0", "3.9"])
@pytest.mark.parametrize("deferred", [True, False], ids=["deferred", "sync"])
def test_the_model_has_no_deadlock_and_can_always_settle(profile: str, deferred: bool) -> None:
    """No deadlock, no timer-only state, and Stable or Empty stays reachable from every state, on both
    profiles: every state offers a client request that moves it (a free slot can join, a member or a
    pending id can leave), and leaving/rejoining leads back to Stable/Empty. Real protocol properties
    of the scope (an open world of clients); nothing is an artefact."""
    r = analyse(build(Scope(members=2, deferred_appends=deferred), profile))
    assert (r.dead, r.timer_only, r.cannot_settle_count, r.unknown) == ((), (), 0, ())


def test_findings_on_0_10_0_at_two_members() -> None:
    """Results on 0.10.0 (E0), 2 slots, deferred appends:

    * unreachable: JoinGroup/new-pending (no KIP-394 pending members), ExpireSync (no DelayedSync,
      KAFKA-12890), OffsetCommit/simple (a generation -1 commit does not create a group) — the profile.
    * any-clients: one 116-state SCC — members that keep changing metadata or joining keep the group
      rebalancing. Real: clients are not fair, and the protocol promises nothing then.
    * cooperative-clients: three SCCs (11, 53, 15 states) — a leader whose SyncGroup append keeps
      failing rebalances the group again and again (SPEC store error -> prepareRebalance). Real.
    * cooperative-healthy-log: one 15-state SCC, every state holding a removed member's slot with two
      or more live DelayedHeartbeats ('-ww'): a removed member's heartbeat op still runs
      onMemberFailure when it expires and rebalances the group (KAFKA-7196, real in E0). That it can
      go on *forever* is an artefact of counting ops as 0/1/many: an expiry of 'many' may leave
      'many', whereas a real member holds finitely many ops, each expiring once.
    * quiet-clients: none — with members that only heartbeat/commit and a healthy log, every
      rebalance ends. Real (under weak fairness of the timers)."""
    g = build(Scope(members=2), "0.10.0")
    r = analyse(g)
    assert r.unreachable == ("JoinGroup/new-pending", "ExpireSync", "OffsetCommit/simple") and r.effect_free == ()
    sizes = {a.name: [len(c.nodes) for c in found] for a, found in r.cycles}
    assert sizes == {"any-clients": [116], "cooperative-clients": [11, 53, 15], "cooperative-healthy-log": [15],
                     "quiet-clients": []}
    assert all("CompleteAppend[error]" in c.moves for c in r.cycles_for("cooperative-clients"))
    stale = r.cycles_for("cooperative-healthy-log")[0]
    assert all(any(s.status == ABSENT and s.watch == MANY for s in g.nodes[n]["state"].slots) for n in stale.nodes)
    assert "ExpireHeartbeat" in stale.moves and "CompleteAppend[error]" not in stale.moves


def test_findings_on_3_9_at_two_members() -> None:
    """Results on 3.9, 2 slots, deferred appends:

    * unreachable: none; effect-free: none — every action kind of the model does something here.
    * any-clients: three SCCs. One (12 states, all PreparingRebalance of generation 0 under an
      InitialDelayedJoin) is members arriving and expiring while the initial delay keeps extending:
      the churn is real, but the *unbounded* extension is an artefact of abstracting time (Kafka
      extends only while remainingMs > 0). The other two (83 states each: the same states with and
      without the newMemberAdded flag, which Kafka leaves set when the delay runs out) are
      metadata changes / new members / failing appends keeping the group rebalancing — real.
    * cooperative-clients: six SCCs, each through CompleteAppend[error]: a failing log keeps the
      group rebalancing. Real.
    * cooperative-healthy-log and quiet-clients: none — without new members, metadata changes or
      append failures every rebalance of 3.9 ends (KAFKA-7196 is fixed: a removed member's ops complete)."""
    g = build(Scope(members=2), "3.9")
    r = analyse(g)
    assert r.unreachable == () and r.effect_free == ()
    sizes = {a.name: [len(c.nodes) for c in found] for a, found in r.cycles}
    assert sizes == {"any-clients": [12, 83, 83], "cooperative-clients": [10, 14, 34, 10, 34, 14],
                     "cooperative-healthy-log": [], "quiet-clients": []}
    delay = r.cycles_for("any-clients")[0]
    assert delay.groups == (P,) and all(g.nodes[n]["state"].fresh and g.nodes[n]["state"].join_op == INITIAL_JOIN
                                        for n in delay.nodes)
    twins = r.cycles_for("any-clients")[1:]
    assert {g.nodes[n]["state"].new_member_added for n in twins[0].nodes} != \
        {g.nodes[n]["state"].new_member_added for n in twins[1].nodes}
    assert all("CompleteAppend[error]" in c.moves for c in r.cycles_for("cooperative-clients"))


def test_sync_appends_leave_no_append_actions_and_no_append_failure_loops() -> None:
    """With synchronous appends CompleteAppend never happens, so 3.9's cooperative loops (all through a
    failed append) disappear; 0.10.0 keeps only its KAFKA-7196 loop (4 states)."""
    r39 = analyse(build(Scope(members=2, deferred_appends=False), "3.9"))
    assert r39.unreachable == ("CompleteAppend[ok]", "CompleteAppend[error]")
    assert r39.cycles_for("cooperative-clients") == ()
    r010 = analyse(build(Scope(members=2, deferred_appends=False), "0.10.0"))
    assert [len(c.nodes) for c in r010.cycles_for("cooperative-healthy-log")] == [4]


def test_report_text_names_every_section() -> None:
    """At one slot on 3.9 OffsetCommit never changes the abstract state: it reschedules a liveness watch
    that is already armed (the abstraction has no deadlines) — an artefact of abstracting time."""
    text = analyse(build(Scope(members=1), "3.9")).render_text()
    assert "actions that never change the state: OffsetCommit" in text
    for heading in ("deadlocks (no action changes the state): none", "timer-only states", "no Stable or Empty",
                    "any-clients:", "quiet-clients: none", "unreachable actions: none", "truncated at max_appends"):
        assert heading in text
