"""What each concrete property reads (issue 10 item 5): one table, so that an explorer can tell when a step
cannot change a property's verdict and reuse the verdict instead of evaluating the property again.

The table is kept apart from the ``Property(...)`` records on purpose: the records are edited by other work,
and a read set is a fact about the checker's speed, not about the claim. tests/test_property_reads.py checks
that every concrete property has an entry; tests/test_explore_quiet.py checks, by exploring with the reuse on
and off, that the entries are right where it matters (same states, edges, violations and coverage).

What a property may read, in five parts:

- ``STATE``: the coordinator-derived fields of the observations before and after the step (groups, members,
  delayed operations, appends, parked responses, the clock, the error log, the load state) and the step's
  summary of the group (``Step.group_state`` …).
- ``OUTPUTS``: what the step's coordinator call produced: its events, responses and transitions.
- ``CALL``: the step's action *as a coordinator call*: which request it delivered (and that request, as it
  was in flight), which timer it fired, whether it moved the clock, completed an append, unloaded or loaded
  the group. A property that reads only this much of the action reads the same thing from every action that
  does not call the coordinator; it may name the action in a witness only when the coordinator's state or
  outputs show the call (e.g. a parked request left the coordinator).
- ``ACTION``: the step's action or index as such, whatever its kind.
- ``NETWORK``: the requests in flight (``Observation.inflight``, ``Observation.request`` other than for the
  request a DeliverRequest hands over).

A step that does not call the coordinator (client sends, response deliveries, drops, crashes, restarts:
``harness.world._COORDINATOR_KINDS``; tests/test_world_reuse.py checks that such a step leaves the
coordinator's state and logs as they were) has no outputs and can change only ``QUIET_CHANGES``. A property
whose reads avoid them has, on every such step from the same coordinator state (and, for a monitor, the same
run state), the same verdict.
"""
from __future__ import annotations

from typing import Mapping

from properties.catalog import Property

STATE, OUTPUTS, CALL, ACTION, NETWORK = "state", "outputs", "call", "action", "network"
PARTS = frozenset({STATE, OUTPUTS, CALL, ACTION, NETWORK})
#: what a step that does not call into the coordinator can change of what properties read
QUIET_CHANGES = frozenset({ACTION, NETWORK})

_S, _SO, _SOC = frozenset({STATE}), frozenset({STATE, OUTPUTS}), frozenset({STATE, OUTPUTS, CALL})
_O = frozenset({OUTPUTS})

#: property name -> what it reads (every concrete property of the catalog; abstract ones read model states)
READS: Mapping[str, frozenset[str]] = {
    # properties/concrete_state.py: always, over one observation's coordinator fields
    "awaiting-join-counter-matches-members": _S,
    "supported-protocol-counts-match-members": _S,
    "leader-is-a-member": _S,
    "pending-members-are-not-members": _S,
    "parked-join-only-in-preparing-rebalance": _S,
    "parked-sync-only-in-completing-rebalance": _S,
    "empty-group-has-no-members-and-no-protocol": _S,
    "stable-or-completing-group-has-members-and-a-common-protocol": _S,
    "idle-member-has-a-live-heartbeat-expiration": _S,
    "at-most-one-live-heartbeat-per-member": _S,
    "one-delayed-join-per-group": _S,
    "preparing-rebalance-has-a-live-delayed-join": _S,
    "delayed-join-completes-once-all-rejoined": _S,
    "delayed-operation-completes-at-most-once": _S,
    "parked-request-belongs-to-a-current-member": _S,
    "parked-response-is-not-yet-answered": _S,
    "new-member-has-a-parked-join": _S,
    "members-owing-a-sync-are-watched-by-a-delayed-sync": _S,
    "dead-group-is-not-cached": _S,
    "no-illegal-state-error": _SOC,          # the step's IllegalState events; the delivered JoinGroup (an excuse)
    # properties/concrete_steps.py
    "delayed-join-completes-only-when-all-rejoined": _SO,
    "member-kept-alive-while-callback-pending": _SOC,          # the fired timer
    "rebalance-timeout-is-the-maximum": _SOC,                  # the delivered JoinGroup, a LoadGroup
    "fresh-heartbeat-not-completed-by-its-own-watch": _SOC,    # the delivered SyncGroup; names the action on an event
    "join-completion-removes-every-member-that-did-not-rejoin": _SO,
    "join-response-reschedules-the-heartbeat": _SO,
    "initial-rebalance-waits-the-initial-delay": _O,
    "state-moves-only-along-spec-edges": _SO,
    "generation-never-decreases-while-group-lives": _S,
    "each-new-generation-increments-the-generation-id": _SOC,  # a LoadGroup
    # properties/concrete_requests.py
    "each-request-is-answered-at-most-once": _SOC,             # the delivered key
    "parked-request-is-answered-not-dropped": _SOC,            # names the action when a parked request left
    "delivered-request-is-answered-or-parked-on-its-member": _SOC,
    "sync-in-preparing-rebalance-answers-rebalance-in-progress": _SOC,
    "heartbeat-answer-follows-the-state-table": _SOC,
    "commit-in-completing-rebalance-answers-rebalance-in-progress": _SOC,
    # a static id replacement's answer is told apart by the delivered JoinGroup or the completed append
    "join-response-carries-the-group-generation-and-leader": _SOC,
    "only-the-leader-receives-the-member-list": _SOC,
    "store-callback-generation-guard": _SOC,                   # a CompleteAppend
    "unload-answers-every-parked-request-not-coordinator": _SOC,   # an UnloadGroup
    # properties/concrete_liveness.py: monitors; they react to clock moves and fired timers
    "rebalance-ends-within-its-delayed-join-timeout": _SOC,
    "silent-member-is-removed-within-its-session-timeout": _SOC,
    "parked-request-is-answered-within-its-phase-bound": _SOC,
    # properties/witnesses.py: sometimes, over the observation after the step
    "a-rebalance-completes-by-timeout": _O,
    "a-rebalance-completes-when-all-members-rejoined": _O,
    "a-rebalance-waits-for-a-member-that-has-not-rejoined": _S,
    "a-member-is-removed-for-not-rejoining": _O,
    "a-member-is-removed-by-heartbeat-expiry": _O,
    "a-member-is-kept-alive-by-a-parked-callback": _SO,
    "a-fresh-heartbeat-is-completed-at-birth": _O,
    "a-sync-is-answered-rebalance-in-progress": _O,
    "a-group-becomes-stable": _O,
    "a-store-callback-is-ignored-for-an-old-generation": _O,
    "a-store-callback-fails-and-the-group-rebalances": frozenset({OUTPUTS, CALL}),   # a CompleteAppend's error
    "a-parked-request-is-answered-not-coordinator-on-unload": frozenset({OUTPUTS, CALL}),   # an UnloadGroup
    "a-rebalance-ends-with-no-members": _O,
    "a-member-that-never-syncs-is-removed-by-the-delayed-sync": _O,
    "a-pending-member-expires": _O,
    "a-new-member-is-removed-by-the-new-member-timeout": _SO,
    # properties/concrete_static.py (KIP-345)
    "at-most-one-member-per-instance-id": _S,
    "fenced-instance-id-never-succeeds": _SOC,                  # the delivered request's instance id
    "static-member-survives-join-completion": _SO,
    "an-instance-id-moves-to-a-new-member-id": _O,
    "a-request-of-a-fenced-instance-is-answered-fenced": _O,
    "a-static-member-that-did-not-rejoin-survives-join-completion": _SO,
    # properties/checker_side.py: holds on every triple (its violations are made by the runners)
    "checker-observes-every-state": frozenset(),
}


def reads(prop: Property) -> frozenset[str]:
    """What ``prop`` reads; a property without an entry is taken to read everything (never skipped)."""
    return READS.get(prop.name, PARTS)


def unchanged_by_quiet_steps(prop: Property) -> bool:
    """True when a step that does not call the coordinator cannot change what ``prop`` reads."""
    return reads(prop).isdisjoint(QUIET_CHANGES)


#: what can differ between two equal coordinator calls (the same action and request, from equal coordinator states)
#: made in two worlds: the rest of the network (the step's action, outputs and both coordinator states are equal)
CALL_CHANGES = frozenset({NETWORK})


def unchanged_by_equal_calls(prop: Property) -> bool:
    """True when ``prop`` gets the same verdict on two equal coordinator calls (monitors: from equal run states)."""
    return reads(prop).isdisjoint(CALL_CHANGES)
