"""The explored space: what a node is, how it is fingerprinted, and the one pure expansion function.

Both engines (``explore.local`` and ``explore.spark``) call ``Expander.expand`` and nothing else to
move through the space, so they cannot disagree about what a state, an edge or a violation is.

A **node** is a byte string: the World's canonical snapshot plus what the property checkers remember
of the path (the eventually_within monitors' run state, and whether an IllegalStateError already
happened — properties/findings.py excuses some violations after one). Two paths that reach the same
world but leave a monitor in a different state are different nodes: a bounded-liveness obligation
that is running is part of the state (monitor state is compared as pickled bytes: equal contents built
in another order count as two nodes — deterministic, only less deduplication). Its **fingerprint** is
the first 63 bits of a blake2b digest: by default of its canonical form (``explore/canonical.py``: the
clients' correlation ids relabelled; ``ExploreSpec.reduce``), else of the node bytes. The node itself
stays the real one first reached, so reports and replays read real states.

Every edge is checked against every applicable catalog property (always on the target, always_step
on the triple, eventually_within through the monitors), against ``coordinator-raises-no-exception``
and against refinement of the abstract model (``refines-the-abstract-model``). ``sometimes``
witnesses and the abstract states/edges a step maps to are collected as coverage. Nothing raised on
the checker's side ends a search: an exception while observing, checking or abstracting the target of
an edge is a violation of ``checker-observes-every-state`` on that edge (the target is not explored
further, as after a coordinator exception), and a node whose snapshot cannot be restored is one on
the node itself (action index -1: the path that reached it; ``explore.local.absorb``). Both follow
from the node bytes alone, so both engines report them alike.

**Shortcuts, all exact** (``tests/test_world_reuse.py`` compares every expansion with one taken
without them): siblings share the parent's coordinator object until a step calls into it
(``World.reuse_coordinator``; client sends, DeliverResponse, drops, crashes and restarts only read the
clock), and after such a step the observation re-reads only the requests in flight
(``observe_after``), the abstract state is the parent's, and unchanged monitors are not reloaded. Such a step
cannot change what any property declared in ``properties/reads.py`` as unaffected reads, so its verdicts (and the
monitors' run states after it) are evaluated once per coordinator state and monitor run state and then reused
(``_verdicts``, explore/verdicts.py); the labelled output check (``rebase``, ``mismatch``) runs only on steps that
call the coordinator, the only ones it judges. A coordinator call already made from an equal coordinator state is
not made again (``World.call_memo``, harness/calls.py): the World replays it with the coordinator object it left,
and the Expander keeps with it the abstract state after, the output check's verdict and, per monitor run state,
the catalog's verdicts. ``tests/test_explore_reuse.py`` compares whole searches and every expansion with each of
these on and off.

**Partial-order reduction** (``ExploreSpec.por``) uses sleep sets over one independence relation:
two DeliverResponse actions to *different* clients. Why that pair is independent: DeliverResponse(i)
reads and writes only client i and removes one response keyed (i, corr) from the network; it does not
read the clock's future, the coordinator, or another client, so the two orders reach the same world
and neither disables the other. Why it is invisible to the catalog: properties read an
``Observation`` — the coordinator, the requests in flight and the step's coordinator events/responses
— none of which a DeliverResponse changes, and the monitors only react to coordinator steps. Sleep
sets prune *edges* (a transition is skipped when the same two independent steps were already taken in
the other order), never states; every state is still expanded, so every always property is still
checked on every state, and a skipped always_step edge has an explored twin with the same
observations. ``tests/test_explore_local.py`` checks that POR changes no state count and no violated
property on several scopes. Member-symmetry reduction is not applied to concrete worlds, because it
would be unsound there: member ids embed the client id and the coordinator picks "any member" (a new
leader, the protocol tie-break) as the smallest id, so permuting clients is not an automorphism of the
world. The abstract model, where slots are anonymous, keeps its slot symmetry.
"""
from __future__ import annotations

import pickle
from dataclasses import dataclass, field, replace
from hashlib import blake2b
from typing import Any, Sequence

from core.actions import Action
from explore.canonical import canonical, corr_blind, interchangeable, symmetric
from explore.rules import judged_by_rules, rules_of, step_by_rules
from explore.spec import ExploreSpec
from core.events import IllegalState
from core.trace import Step, Violation
from harness.abstraction import abstract
from harness.calls import MEMO_STATES, Recent
from harness.labels import Before, capture, mismatch, predicted_error, rebase, stale_completion
from harness.refinement import model_edge
from harness.world import World, plain_bytes
from model.state import FREE, AbstractAction, State
from properties.catalog import Monitor, Property
from properties.check import check_world_step, initial_violations
from properties.checker_side import OBSERVES, RAISES, REFINES, unobservable
from properties.findings import concrete_properties, excused_after_illegal_state
from properties.observation import Observation, observe, observe_after, observe_again
from properties.reads import unchanged_by_equal_calls, unchanged_by_quiet_steps
from properties.runtime_4x import RuntimeRule
from explore.verdicts import Entry, Verdicts

__all__ = ["Expander", "Expansion", "ExploreSpec", "OBSERVES", "RAISES", "REFINES", "RESTORING", "fingerprint",
           "independent", "route_of", "unpadded"]
FP_MASK = (1 << 63) - 1
RESTORING = "restoring the state from its snapshot"
CANONICAL_CACHE = 1 << 18     # young entries of Expander._canonical (~100 bytes each; harness.calls.Recent)
STATES_CACHE = 1 << 14        # young entries of Expander._states (a coordinator state each, shared with the nodes)
ABSTRACT, WHY, CHECK, EDGE, ROUTE = "abstract", "why", "check", "edge", "route"   # what it keeps in a calls.Call


def fingerprint(node: bytes) -> int:
    """63 bits of blake2b: a non-negative int64, the key both engines partition and dedup by."""
    return int.from_bytes(blake2b(node, digest_size=8).digest(), "little") & FP_MASK


def route_of(coord_state: tuple[Any, ...], symmetry: bool = False) -> int:
    """A node's route (``Expansion.routes``): 63 bits of the digest of its coordinator state with the corrs of parked
    requests blinded (``corr_blind``), the same in every process and a function of the node's fingerprint — nodes
    with one fingerprint have one route, so the Spark engine can deduplicate in the partition a route picks."""
    return fingerprint(_dumps(corr_blind(coord_state, clients=symmetry)))



@dataclass
class Expansion:
    """What expanding one node produced."""

    children: list[tuple[int, int, bytes, frozenset[Action] | None]] = field(default_factory=list)
    # (action index in enabled(), child fingerprint, child node, child sleep set or None)
    # (property, action index, message); index -1: the expanded node itself could not be restored
    violations: list[tuple[str, int, str]] = field(default_factory=list)
    edges: int = 0                                  # edges taken (pruned ones not counted)
    pruned: int = 0                                 # edges skipped by the sleep set
    witnesses: set[str] = field(default_factory=set)
    abstract_states: set[State] = field(default_factory=set)
    abstract_edges: set[tuple[State, str, State]] = field(default_factory=set)
    #: per child (when ``Expander.route_children``): ``route_of`` its coordinator state, which explore/workers.py
    #: deals nodes to processes by
    routes: list[int] = field(default_factory=list)


class _Reads:
    """What the Expander read from one coordinator state (every node with it reads the same): the observation
    of a node (its requests in flight aside), the labelled capture per partition, and per monitor run state the
    verdicts of a step that does not call the coordinator."""

    __slots__ = ("observation", "captures", "quiet", "route")

    def __init__(self) -> None:
        self.observation: Observation | None = None
        self.captures: dict[str, Before] = {}
        self.quiet: dict[tuple[bytes, ...], Entry] = {}
        self.route: int | None = None


_dumps = plain_bytes     # canonical bytes as ``World.snapshot`` makes them


def unpadded(state: State) -> State:
    """``state`` without its free slots: the width-independent form coverage is counted in."""
    return replace(state, slots=tuple(s for s in state.slots if s != FREE))


def independent(a: Action, b: Action) -> bool:
    """The POR independence relation (see the module doc): deliveries of responses to two clients."""
    return a.kind == "DeliverResponse" == b.kind and a.client != b.client


class Expander:
    """Turns a node into its successors, checking the catalog on every edge. Pure: the result depends
    only on the spec and the node bytes, in any process."""

    #: reuse what is read from equal coordinator states (a node's observation and capture; the verdicts of steps that
    #: do not call the coordinator), and memoise coordinator calls with what is derived from them (``_verdicts``);
    #: tests switch them off
    reuse_quiet = True
    memo_calls = True
    #: fill ``Expansion.routes`` (explore/workers.py switches it on)
    route_children = False

    def __init__(self, spec: ExploreSpec) -> None:
        self.spec = spec
        self.world = World(spec.profile, spec.scope, clients=spec.kinds, seed=0, record=True, mutant=spec.mutant)
        self.world.step_digests = False    # a node is fingerprinted anyway; the per-step digest would snapshot twice
        self.world.reuse_coordinator = True   # siblings share the parent's coordinator until a step calls into it
        #: the runtime's rules when the catalog and the model do not judge the release (explore/rules.py), else None
        self.rules: tuple[RuntimeRule, ...] | None = rules_of(spec.profile) if judged_by_rules(spec.profile) else None
        props: Sequence[Property] = concrete_properties(spec.profile) if self.rules is None else ()
        self.checked = tuple(p for p in props if p.kind != "sometimes")
        self.witness_props = tuple(p for p in props if p.kind == "sometimes")
        self.monitors: dict[str, Monitor] = {p.name: p.check() for p in props if p.kind == "eventually_within"}
        self._excused = excused_after_illegal_state(spec.profile)
        # fixed for this Expander's life (the class defaults when it was made)
        self.reuse_quiet, self.memo_calls = self.reuse_quiet, self.memo_calls
        if self.memo_calls:
            self.world.call_memo = Recent(MEMO_STATES)      # harness/calls.py
        by_name = {p.name: p for p in props}
        self._quiet_verdicts = Verdicts(self.checked, self.monitors, self.witness_props, by_name,
                                        unchanged_by_quiet_steps)
        self._call_verdicts = Verdicts(self.checked, self.monitors, self.witness_props, by_name,
                                       unchanged_by_equal_calls)
        self._states: Recent[tuple[Any, ...], _Reads] = Recent(STATES_CACHE)   # coordinator state -> what was read
        self._here: _Reads | None = None                     # of the node loaded now (see _at_node)
        self._quiet_entry: Entry | None = None
        self._node_monitors: tuple[bytes, ...] = ()
        # (abstract before, abstract after) -> (model edge from, label, to, both unpadded, moved): refinement per pair
        self._edge_cache: dict[tuple[State, State], tuple[State, AbstractAction | None, State, State, State, bool]] = {}
        self._quiet_edge: tuple[State, AbstractAction | None, State, State, State, bool] | None = None   # see _refine
        self._monitor_states: tuple[bytes, ...] | None = None   # what the monitors hold now, when known
        self._canonical: Recent[bytes, bytes] = Recent(CANONICAL_CACHE)   # raw world digest -> canonical digest (_key)
        self._classes = interchangeable(self.world.kinds, self.world.configs) if spec.symmetry else ()
        root_state = self.world.to_state()
        root_bytes = _dumps(root_state)
        self.root = self._node(root_bytes, False)
        self.root_fp = self._key(root_state, root_bytes, False, self.root)   # canonical when reducing
        self.root_route = route_of(root_state[0], spec.symmetry)
        # the abstract image of the initial state, for coverage (empty when it has none)
        self.root_abstract_states: frozenset[State] = frozenset()
        root: list[Violation] = []
        stage = "observing"
        if self.rules is not None:   # the rules judge steps, not states; there is no abstract image
            self.root_violations: list[tuple[str, int, str]] = []
            return
        try:
            root += initial_violations(self.checked, observe(self.world))
            stage = "abstracting"
            self.root_abstract_states = frozenset({unpadded(abstract(self.world.coord, self.world.group_id))})
        except Exception as exc:   # noqa: BLE001 — reported like any unobservable state; expand(root) yields nothing
            root.append(unobservable(stage, exc, -1))
        self.root_violations = [(v.property, -1, v.message) for v in root]

    # --- nodes -------------------------------------------------------------------------------
    def _node(self, world_bytes: bytes, had_error: bool, monitor_states: tuple[bytes, ...] | None = None) -> bytes:
        """The node of the world just stepped to; ``monitor_states``: what the monitors hold, when known."""
        if monitor_states is None:
            monitor_states = tuple(m.run_state() for m in self.monitors.values())
        self._monitor_states = monitor_states
        return _dumps((world_bytes, had_error, monitor_states))

    def _key(self, world_state: tuple[Any, ...], world_bytes: bytes, had_error: bool, node: bytes) -> int:
        """The fingerprint ``node`` is deduplicated by: when ``spec.reduce``, of the digest of its world's canonical
        form (explore/canonical.py: history counters relabelled) with the had-error flag and the monitors' run
        state as they are; else of the node bytes."""
        if not self.spec.reduce:
            return fingerprint(node)
        # many edges reach the same world: its canonical digest is remembered by the raw world's digest
        raw = blake2b(world_bytes, digest_size=16).digest()
        canon = self._canonical.get(raw)
        if canon is None:
            form = symmetric(world_state, self._classes) if self._classes else canonical(world_state)
            canon = self._canonical[raw] = blake2b(_dumps(form), digest_size=16).digest()
        # _node has just set _monitor_states to what the monitors hold in ``node``
        return fingerprint(_dumps((canon, had_error, self._monitor_states)))

    def load(self, node: bytes) -> bool:
        """Put the world and the monitors into ``node``; returns the had-an-IllegalStateError flag."""
        world_bytes, had_error, monitor_states = pickle.loads(node)
        self._put(world_bytes, monitor_states, None)
        self._at_node(monitor_states)
        return had_error

    def _at_node(self, monitor_states: tuple[bytes, ...]) -> None:
        """A node was loaded: it shares what is read from its coordinator state with the nodes that have it."""
        self._quiet_entry = self._quiet_edge = None
        self._node_monitors = monitor_states
        if not self.reuse_quiet:
            self._here = None
            return
        coord_state = self.world.coordinator_state()
        here = self._states.get(coord_state)
        if here is None:
            here = self._states[coord_state] = _Reads()
        self._here = here

    def _read_node(self) -> tuple[Observation, State, Before]:
        """The loaded node's observation, abstract state and labelled capture (which holds that abstract state)."""
        world, here = self.world, self._here
        if here is None:
            return observe(world), abstract(world.coord, world.group_id), capture(world)
        if here.observation is None:
            before = here.observation = observe(world)
        else:
            before = observe_again(here.observation, world)
        base = here.captures.get(world.partition)
        if base is None:
            base = here.captures[world.partition] = capture(world)
        return before, base.state, base   # rebase() takes the object references from the world of each step

    def _put(self, world_bytes: bytes, monitor_states: tuple[bytes, ...], enabled: tuple[Action, ...] | None) -> None:
        self.world.restore(world_bytes, enabled)
        self.world.steps.clear()
        if monitor_states != self._monitor_states:
            for monitor, state in zip(self.monitors.values(), monitor_states, strict=True):
                monitor.set_run_state(state)
            self._monitor_states = monitor_states

    def actions(self, node: bytes) -> tuple[Action, ...]:
        """The actions enabled in ``node``; a node that cannot be restored raises (``unrestorable``)."""
        self.load(node)
        return self.world.enabled()

    @staticmethod
    def unrestorable(exc: Exception) -> tuple[str, int, str]:
        """The violation of a node ``actions`` could not restore, as ``expand`` reports it."""
        return OBSERVES, -1, unobservable(RESTORING, exc, -1).message

    # --- the step function -----------------------------------------------------------------------
    def expand(self, node: bytes, sleep: frozenset[Action] | None = None) -> Expansion:
        """Every enabled action from ``node`` (minus the sleep set), checked. With ``por`` the children
        carry their sleep sets; without it ``sleep`` is ignored and children carry None."""
        out = Expansion()
        world_bytes, had_error, monitor_states = pickle.loads(node)
        world = self.world
        stage = RESTORING
        try:
            self._put(world_bytes, monitor_states, None)
            self._at_node(monitor_states)
            stage = "observing"   # the node was observed and abstracted when the edge into it was checked
            actions = world.enabled()
            if self.rules is None:
                before, abs_before, base = self._read_node()
        except Exception as exc:   # noqa: BLE001 — see the module doc
            if node != self.root:   # the root's failure is in root_violations already
                out.violations.append((OBSERVES, -1, unobservable(stage, exc, -1).message))
            return out
        fresh = True                         # the first action runs on the freshly loaded world
        por = self.spec.por
        sleeping = set(sleep or ()) if por else set()
        done: list[Action] = []
        for index, action in enumerate(actions):
            if action in sleeping:
                out.pruned += 1
                continue
            if not fresh:
                self._put(world_bytes, monitor_states, actions)
            fresh = False
            out.edges += 1
            child_sleep = (frozenset(b for b in (sleeping | set(done)) if independent(action, b))
                           if por else None)
            done.append(action)
            result = (self._step(index, action, before, abs_before, had_error, out, base) if self.rules is None
                      else self._step_by_rules(index, action, had_error, out))
            if result is not None:
                child = self._node(result[0], result[1], result[3])
                out.children.append((index, self._key(result[2], result[0], result[1], child), child, child_sleep))
                if self.route_children:
                    out.routes.append(self._route())
        return out

    def _route(self) -> int:
        """``route_of`` the coordinator state of the world just stepped to: once per coordinator state the node's
        nodes share (a step that does not call the coordinator keeps it), once per memoised call."""
        world = self.world
        if not world.touched_coordinator:
            here = self._here
            if here is None:
                return route_of(world.coordinator_state(), self.spec.symmetry)
            if here.route is None:
                here.route = route_of(world.coordinator_state(), self.spec.symmetry)
            return here.route
        call = world.last_call
        if call is None:
            return route_of(world.coordinator_state(), self.spec.symmetry)
        route = call.derived.get(ROUTE)
        if route is None:
            route = call.derived[ROUTE] = route_of(world.coordinator_state(), self.spec.symmetry)
        return route

    def step_one(self, node: bytes, index: int, out: Expansion | None = None
                 ) -> tuple[int, bytes | None, list[tuple[str, int, str]]]:
        """Take the ``index``-th enabled action from ``node`` (a single checked step, for random schedules):
        the child's fingerprint and node (None when the step raised) and the violations. Witnesses and
        coverage go into ``out`` when given (its violations accumulate too)."""
        out = out if out is not None else Expansion()
        out.violations = []
        had_error = self.load(node)   # a node PCT reached through ``actions`` (which loaded it already)
        world = self.world
        action = world.enabled()[index]
        result = (self._step_by_rules(index, action, had_error, out) if self.rules is not None else
                  self._step(index, action, observe(world), abstract(world.coord, world.group_id), had_error, out,
                             capture(world)))
        if result is None:
            return -1, None, out.violations
        child = self._node(result[0], result[1], result[3])
        return self._key(result[2], result[0], result[1], child), child, out.violations

    def _step(self, index: int, action: Action, before: Observation, abs_before: State, had_error: bool,
              out: Expansion, base: Before) -> tuple[bytes, bool, tuple[Any, ...], tuple[bytes, ...] | None] | None:
        """Take ``action`` and check it: (world bytes, had-error flag, world state, the monitors' run states when
        known without asking them), or None when the step raised or its target could not be checked."""
        world = self.world
        try:
            # what the labelled output check judges the step against (it judges only coordinator calls)
            captured = rebase(base, world, action) if world.calls_coordinator(action) else None
            world.step(action)
            # taken here, not last: a recording World snapshots inside step() for its digest, so a state
            # that cannot be snapshotted is the step raising there too (the gate and traces.py agree)
            world_state = world.to_state()
            world_bytes = _dumps(world_state)     # = world.snapshot()
        except Exception as exc:   # noqa: BLE001 — a coordinator that throws inside a step is a violation
            out.violations.append((RAISES, index, f"{RAISES}: {action} raised {type(exc).__name__}: {exc}"))
            return None
        step: Step = world.steps[-1]
        world.steps.clear()
        stage = "observing"
        try:
            # an IllegalStateError the model predicts (harness.labels.predicted_error) leaves the coordinator intact
            error = had_error or (any(isinstance(e, IllegalState) for e in step.events)
                                  and not (captured is not None and predicted_error(world, captured)))
            self._monitor_states = None      # the monitors move now; _node reads what they hold after
            found, monitor_states, witnessed = self._verdicts(before, step, out.witnesses)
            for v in found:   # check_world_step guards each property
                if not (error and v.property in self._excused):   # properties/findings.py: after the 0.10.0 error
                    out.violations.append((v.property, index, v.message))
            out.violations.extend((OBSERVES, index, message) for message in witnessed)
            stage = "abstracting"
            self._refine(index, action, world, abs_before, out, None if error else captured)
        except Exception as exc:   # noqa: BLE001 — an unobservable target: a violation, not explored further
            out.violations.append((OBSERVES, index, unobservable(stage, exc, index).message))
            return None
        return world_bytes, error, world_state, monitor_states

    def _step_by_rules(self, index: int, action: Action, had_error: bool, out: Expansion
                       ) -> tuple[bytes, bool, tuple[Any, ...], tuple[bytes, ...]] | None:
        """``_step`` for a release judged by its runtime rules (explore/rules.py): no monitors, no coverage."""
        assert self.rules is not None
        self._monitor_states = None
        taken = step_by_rules(self.world, index, action, self.rules,
                              lambda prop, i, message: out.violations.append((prop, i, message)))
        self.world.steps.clear()
        return None if taken is None else (taken[0], had_error, taken[1], ())

    def _verdicts(self, before: Observation, step: Step, seen: set[str]
                  ) -> tuple[list[Violation], tuple[bytes, ...] | None, list[str]]:
        """The catalog's violations at ``step`` (in catalog order), the monitors' run states after it when known
        without asking them, and the messages of witnesses that raised (those reached go into ``seen``).

        Verdicts are reused where their inputs are equal (explore/verdicts.py). A step that does not call the
        coordinator changes only the requests in flight and the action (properties/reads.py ``QUIET_CHANGES``): from
        one coordinator state and monitor run state (``_here.quiet``) every such step gets the same verdicts of the
        properties that read neither. A coordinator call memoised by the World (harness/calls.py) is the same call
        from the same coordinator state: with the same monitor run state, the properties that do not read the
        network get the same verdicts (``Call.derived``). Where everything is reused, the observation after the
        step is not even made; an entry is kept only from a first evaluation in which making it did not raise."""
        world = self.world
        call = world.last_call
        if world.touched_coordinator:
            verdicts, key = self._call_verdicts, (CHECK, self._node_monitors) if call is not None else None
            entry: Entry | None = call.derived.get(key) if call is not None else None
        else:
            verdicts, call = self._quiet_verdicts, None
            key = self._node_monitors if self._here is not None else None
            entry = self._quiet_entry
            if entry is None and key is not None:
                entry = self._quiet_entry = self._here.quiet.get(key)   # type: ignore[union-attr]
        if entry is not None:
            after = None if entry.complete else observe_after(before, world, step)
            found, states = verdicts.reuse(entry, before, step, after, self._node_monitors)
            return found, states, verdicts.witnessed(entry, after, seen)
        after = observe_after(before, world, step)
        if call is None and key is None:   # nothing to key a reuse by
            return check_world_step(self.checked, before, step, after, self.monitors), None, \
                verdicts.witnessed(None, after, seen)
        found, states, entry = verdicts.first(before, step, after)
        if call is not None:
            call.derived[key] = entry
        else:
            self._here.quiet[key] = self._quiet_entry = entry   # type: ignore[union-attr,index]
        return found, states, verdicts.witnessed(entry, after, seen)

    def _refine(self, index: int, action: Action, world: World, abs_before: State, out: Expansion,
                captured: Before | None = None) -> None:
        """Refinement of the step just taken: a model edge (coverage) or a ``refines-the-abstract-model``
        violation — labelled, with the answers and timers (harness/labels.py) unless ``captured`` is None
        (after the 0.10.0 IllegalStateError finding, as for the catalog)."""
        if not world.touched_coordinator:
            abs_after, call = abs_before, None
        else:   # a memoised call (harness/calls.py) keeps what is derived from the coordinator it left
            call = world.last_call
            abs_after = call.derived.get(ABSTRACT) if call is not None else None
            if abs_after is None:
                abs_after = abstract(world.coord, world.group_id)
                if call is not None:
                    call.derived[ABSTRACT] = abs_after
        if captured is not None and world.touched_coordinator:
            why_key = (WHY, world.partition)   # the capture before the step reads the partition too
            if call is not None and why_key in call.derived:
                why = call.derived[why_key]
            else:
                _, why = mismatch(world, captured, action, abs_after)
                if call is not None:
                    call.derived[why_key] = why
            if why is not None:
                out.violations.append((REFINES, index, f"{REFINES}: {why} (profile {self.spec.profile})"))
        # the pair is the same on every step without a call from this node, and on every replay of a call
        edge = self._quiet_edge if call is None and not world.touched_coordinator else \
            call.derived.get(EDGE) if call is not None else None
        if edge is None:
            key = (abs_before, abs_after)
            edge = self._edge_cache.get(key)
            if edge is None:
                b, label, a = model_edge(self.spec.profile, world.coord, abs_before, abs_after)
                edge = self._edge_cache[key] = (b, label, a, unpadded(b), unpadded(a), a != b)
            if call is not None:
                call.derived[EDGE] = edge
            elif not world.touched_coordinator:
                self._quiet_edge = edge
        b, label, a, nb, na, moved = edge
        if moved:
            if label is None:
                if captured is not None and stale_completion(world, captured, b, a):
                    return   # a documented finding (harness/labels.py), not an edge of the model
                out.violations.append((REFINES, index, f"{REFINES}: {action} is not a model edge on profile "
                                                       f"{self.spec.profile}: {b.short()} -> {a.short()}"))
            else:
                out.abstract_states.add(na)
                out.abstract_edges.add((nb, label.kind, na))
