"""The deterministic world around the coordinator: clients, network, clock, appends (DESIGN.md §5).

Every source of concurrency is an explicit action (``core.actions.Action``): a client sends a
request, the network delivers or drops a message, a due timer fires, the clock moves, a
deferred log append completes, a client crashes or restarts, the group partition is unloaded
or loaded. ``enabled()`` lists the choices in a canonical order; ``step()`` performs one.
``snapshot()``/``restore()`` capture the whole world as canonical bytes.

Partition moves (scope.unload) go LOADED --UnloadGroup--> UNLOADED --LoadGroup--> LOADING
--LoadGroup--> LOADED: the first LoadGroup opens the loading window in which requests are
answered COORDINATOR_LOAD_IN_PROGRESS (SPEC.md §3.0), the second loads the group's last
durable record (SPEC.md §3.7).
"""
from __future__ import annotations

import io
import pickle
import random
from hashlib import blake2b
from typing import Any, Callable, Sequence

from core.actions import Action
from core.trace import Step, Trace
from core.types import NO_GENERATION, Errors
from harness.calls import MEMO_KINDS, Call, CallMemo, memo_step, own_coordinator
from harness.client_versions import CRASHED, GONE, client_version_for
from harness.event_loop import Branch, batched, commit, flush, hash_order_choices, keyed_timers, log_keys, parse_picks
from harness.clients import CLIENT_KINDS, Client, ClientConfig, client_configs, client_kinds
from harness.external import WireRequest, admits_unenumerable
from harness.messages import Request, Response
from harness.network import Network
from harness.scope import Scope
from impl import CoordinatorConfig
from impl.mutants import coordinator_class
from impl.profiles import profile_info

LOADED, UNLOADED, LOADING = "LOADED", "UNLOADED", "LOADING"   # the group partition, see the module doc
APPEND_ERRORS = ("NOT_LEADER_OR_FOLLOWER", "REQUEST_TIMED_OUT")   # offered when scope.faults

_ACTIONS: dict[tuple[str, int, int | str], Action] = {}


def plain_bytes(value: Any) -> bytes:
    """Canonical bytes of plain data: pickled without a memo, so object identity cannot change them."""
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, protocol=5)
    pickler.fast = True
    pickler.dump(value)
    return buf.getvalue()


def _action(key: tuple[str, int, int | str]) -> Action:
    """Interned actions: enabled() builds the same few values again and again."""
    found = _ACTIONS.get(key)
    if found is None:
        found = _ACTIONS[key] = Action(*key)
    return found


class World:
    """A coordinator, its clients and the network between them, stepped one action at a time.

    Enabling rules (``enabled()``):
    - a client request (kind = API, arg = variant) whenever the client model ``wants`` it;
    - DeliverRequest / DeliverResponse for every message in flight, in any order;
    - faults: DropRequest / DropResponse for every message in flight, and DropResponse for a
      request the coordinator holds unanswered (the client's request timeout); failed appends;
    - FireTimer for every due timer; AdvanceToNextDeadline / AdvanceClock only while none is
      due (bounded lateness), never past ``scope.max_time_ms``;
    - CompleteAppend while a deferred append is pending; crashes: Crash any client that is not
      crashed (a CLOSED or FAILED one too: that is how a closed consumer comes back), Restart a
      crashed one (arg 1, where the scope has ``assignor_upgrades``: with its other assignor list);
      unload: see the module doc.
    ``enabled()`` is cached until the next ``step``/``restore``; code that changes the coordinator,
    a client or the network by hand must not rely on it.
    """

    def __init__(self, profile: str = "3.9", scope: Scope | None = None, clients: int | Sequence[str] = 3,
                 seed: int = 0, record: bool = True, mutant: str | None = None) -> None:
        self.coordinator_class = coordinator_class(mutant)   # UnknownMutantError lists the known ones
        self.profile = profile_info(profile)         # UnknownProfileError lists the known profiles
        self.scope = scope if scope is not None else Scope()
        # the 4.x event loop's choices (harness/event_loop.py), by release fact
        self.batched = batched(self.profile.name) and self.scope.append_mode == "deferred"
        self.keyed_timers = keyed_timers(self.profile.name)
        self.choosy = hash_order_choices(self.profile.name)
        self.branch: Branch | None = None     # the choice points the last step met (Choose re-runs it)
        self._state_cache: tuple[int, tuple[Any, ...]] = (-1, ())   # (version, to_state()) of a world with choices
        self.kinds = client_kinds(clients)
        self.seed, self.record, self.mutant = seed, record, mutant
        self.group_id = self.scope.group_id
        self.configs = client_configs(self.scope, self.kinds, client_version_for(self.profile.name))
        self.coord = self.coordinator_class(CoordinatorConfig(
            profile=self.profile.name, append_mode=self.scope.append_mode, **self.scope.coordinator_overrides()),
            record_events=record)
        # the class that runs this profile: GroupCoordinator builds a sibling runtime for some (impl/profiles.py),
        # whose from_state restores it
        self.coordinator_class = type(self.coord)
        self.net = Network()
        self.clients: list[Client] = [CLIENT_KINDS[k](c, 0) for k, c in zip(self.kinds, self.configs, strict=True)]
        self.partition = LOADED
        self.steps: list[Step] = []
        self.step_digests = True      # each recorded Step carries the world's digest (explorers switch it off)
        # reuse_coordinator (explorers switch it on): restore() keeps the coordinator object when it was itself
        # restored from an equal state and no step has called into it since (see _COORDINATOR_KINDS)
        self.reuse_coordinator = False
        self._fresh_coord_state: tuple[Any, ...] | None = None
        self.touched_coordinator = False   # whether the last step's handler called into the coordinator
        #: explorers set a dict here: coordinator calls already made from an equal state are not made again
        #: (harness/calls.py; exact, and the coordinator object a call left is kept instead of rebuilt)
        self.call_memo: CallMemo | None = None
        self._calls: dict[Any, Call] | None = None   # call_memo's entry for _fresh_coord_state, once looked up
        self.last_call: Call | None = None   # the memoised call the last step made (None: not one)
        self._kept: Call | None = None       # the memoised call whose coordinator object ``coord`` is now
        #: (state, coordinator, its call_memo entry) of a coordinator restored from that state that a replayed call
        #: left untouched: the next restore of an equal state takes it instead of rebuilding one
        self._spare: tuple[tuple[Any, ...], Any, dict[Any, Call] | None] | None = None
        self._restored: tuple[bytes | None, Any] = (None, None)   # the bytes restore() read last, parsed
        self._view: tuple[Any, Any] = (None, None)   # (coordinator, its describe()), see observe()
        self.answered: list[Response] = []   # the responses the last step produced, in order (refinement reads them)
        #: answers to external clients' requests, for the server to send (not world state: see harness.external)
        self.outbox: list[tuple[tuple[int, int], str, Any]] = []
        #: received JoinGroups that set supportSkippingAssignment: history, like ``steps`` (a fork copies both)
        self.skipping_joins: set[tuple[int, int]] = set()
        self._version = 0                              # bumped by every step/restore
        self._enabled_version = -1
        self._enabled: tuple[Action, ...] = ()
        self._enabled_set: frozenset[Action] = frozenset()

    def add_client(self, kind: str = "external") -> int:
        """Add a client (a real client's connection, for ``kgc serve``); returns its index."""
        index = len(self.clients)
        self.kinds = client_kinds(self.kinds + (kind,))
        config = ClientConfig(index=index, client_id=self.scope.client_id or f"c{index}",
                              version=client_version_for(self.profile.name))
        self.configs = self.configs + (config,)
        self.clients.append(CLIENT_KINDS[kind](config, 0))
        self._version += 1
        return index

    def take_outbox(self) -> list[tuple[tuple[int, int], str, Any]]:
        """The answers to external clients produced since the last call: ((client, corr), api, impl result)."""
        out, self.outbox = self.outbox, []
        return out

    @property
    def now_ms(self) -> int:
        return self.coord.now_ms

    # --- choices -------------------------------------------------------------------------
    def enabled(self) -> tuple[Action, ...]:
        """Every action possible now, sorted by (kind, client, arg)."""
        if self._enabled_version != self._version:
            keys = sorted(self._enabled_keys())
            self._enabled = tuple(_action(k) for k in keys)
            self._enabled_set = frozenset(self._enabled)
            self._enabled_version = self._version
        return self._enabled

    def _enabled_keys(self) -> list[tuple[str, int, int | str]]:
        scope, now, net = self.scope, self.coord.now_ms, self.net
        keys: list[tuple[str, int, int | str]] = []
        for i, client in enumerate(self.clients):
            keys.extend((api, i, arg) for api, arg in client.wants(now))
        for c, corr in net.requests:
            keys.append(("DeliverRequest", c, corr))
            if scope.faults:
                keys.append(("DropRequest", c, corr))
        for c, corr in net.responses:
            keys.append(("DeliverResponse", c, corr))
            if scope.faults:
                keys.append(("DropResponse", c, corr))
        if scope.faults:
            keys.extend(("DropResponse", c, corr) for c, corr in self._awaiting_response())
        keys.extend(self._environment_keys(now))
        return keys

    def _awaiting_response(self) -> list[tuple[int, int]]:
        """Requests a live client still waits on that the coordinator holds (delivered, unanswered).

        DropResponse on one of them is the client's request timeout firing while the coordinator
        still has the request parked (the zombie JoinGroup of SPEC.md §7).
        """
        net, out = self.net, []
        for i, client in enumerate(self.clients):
            if client.state in GONE:
                continue
            for corr, _gen, _member in client.inflight.values():
                key = (i, corr)
                if key not in net.requests and key not in net.responses:
                    out.append(key)
        return out

    def _environment_keys(self, now: int) -> list[tuple[str, int, int | str]]:
        scope, coord = self.scope, self.coord
        keys: list[tuple[str, int, int | str]] = [("FireTimer", -1, t.seq) for t in coord.due_timers()]
        if not keys:     # bounded lateness: a due timer fires before time moves on
            target = self._next_deadline_target(now)
            if target is not None:
                keys.append(("AdvanceToNextDeadline", -1, 0))
            keys.extend(("AdvanceClock", -1, ms) for ms in scope.advance_ms
                        if scope.max_time_ms is None or now + ms <= scope.max_time_ms)
        if self.batched:
            keys.extend(log_keys(coord, scope.faults))
        elif coord.pending_appends():
            keys.append(("CompleteAppend", -1, "NONE"))
            if scope.faults:
                keys.extend(("CompleteAppend", -1, e) for e in APPEND_ERRORS)
        if scope.crashes:
            for i, client in enumerate(self.clients):
                keys.append(("Restart" if client.state == CRASHED else "Crash", i, 0))
                if client.state == CRASHED and scope.assignor_upgrades:
                    keys.append(("Restart", i, 1))    # with the other assignor list (Scope.assignor_upgrades)
        if scope.unload:
            keys.append(("UnloadGroup" if self.partition == LOADED else "LoadGroup", -1, 0))
        if self.branch is not None:
            keys.extend(("Choose", -1, picks) for picks in self.branch.alternatives())
        return keys

    def _next_deadline_target(self, now: int) -> int | None:
        """The time AdvanceToNextDeadline moves to: just past the earliest coordinator deadline
        (MockTimer fires deadline < now), or a timed client's next heartbeat, whichever is first."""
        deadline = self.coord.next_deadline()
        # 4.x tasks expire when the clock reaches the deadline; the Scala MockTimer fires strictly after it
        target = None if deadline is None else deadline if self.keyed_timers else deadline + 1
        if self.scope.timed:
            for client in self.clients:
                due = client.heartbeat_due_ms()
                if due is not None and due > now and (target is None or due < target):
                    target = due
        if target is None or target <= now:
            return None
        max_time = self.scope.max_time_ms
        return target if max_time is None or target <= max_time else None

    # --- stepping ------------------------------------------------------------------------
    def is_enabled(self, action: Action) -> bool:
        """Whether ``step(action)`` is allowed: one of ``enabled()``, or what real clients and real time
        bring that no enumeration can (a Receive from an external client; AdvanceClock by any amount
        while no timer is due, in a world with external clients)."""
        if self._enabled_version != self._version:
            self.enabled()
        return action in self._enabled_set or admits_unenumerable(
            self.kinds, self.coord, self.scope.max_time_ms, action)

    def step(self, action: Action) -> None:
        """Perform one enabled action (see ``is_enabled``); anything else is a ValueError."""
        if not self.is_enabled(action):
            raise ValueError(f"action {action} is not enabled at this point; choose one of world.enabled().")
        self.answered = []
        self.touched_coordinator = action.kind in _COORDINATOR_KINDS
        self.last_call = None
        if self.touched_coordinator and self._kept is not None:
            own_coordinator(self)         # a memo's coordinator object is never stepped (harness/calls.py)
        if self.record:
            self.coord.events.clear()     # only what happens inside this step goes into its Step
        handler = _HANDLERS[action.kind]
        if self.choosy:
            self._step_with_choices(action, handler)
        elif not self.touched_coordinator:
            handler(self, action)
        elif (self.call_memo is not None and self._fresh_coord_state is not None and action.kind in MEMO_KINDS
              and "external" not in self.kinds and not (self.scope.timed and action.kind == "AdvanceToNextDeadline")):
            self.last_call = self._kept = memo_step(self, action, handler)
        else:
            self._fresh_coord_state = None
            handler(self, action)
        self._version += 1
        if self.record:
            self._record(action)

    def _step_with_choices(self, action: Action, handler: Callable[["World", Action], None]) -> None:
        """A step of a world whose coordinator has choice points: remember the world before it, so that a
        ``Choose`` can run it again with other picks (harness/event_loop.py); no call memo."""
        self._fresh_coord_state = None
        if action.kind == "Choose":
            branch = self.branch
            assert branch is not None
            picks = tuple(parse_picks(action.arg))
            self._apply_state(branch.before)
            self.coord.force_choices(list(picks))
            self.coord.take_choices()
            redo = _action(branch.action)
            _HANDLERS[redo.kind](self, redo)
            before, key = branch.before, branch.action
        else:
            picks, key = (), (action.kind, action.client, action.arg)
            before = self._core_state() if self.touched_coordinator else ()
            self.coord.take_choices()
            handler(self, action)
        met = self.coord.take_choices() if self.touched_coordinator or action.kind == "Choose" else []
        options = tuple(len(p.options) for p in met)
        branch_ = Branch(before, key, picks, options)
        self.branch = branch_ if met and branch_.alternatives() else None

    @staticmethod
    def calls_coordinator(action: Action) -> bool:
        """Whether a step of ``action`` calls into the coordinator (what ``touched_coordinator`` will say)."""
        return action.kind in _COORDINATOR_KINDS

    def _send(self, a: Action) -> None:
        assert isinstance(a.arg, int)
        peer = self.clients[(a.client + 1) % len(self.clients)].member_id
        self.net.send(self.clients[a.client].send(a.kind, a.arg, self.coord.now_ms, peer))

    def _deliver_request(self, a: Action) -> None:
        req = self.net.take_request((a.client, a.arg))  # type: ignore[arg-type]
        self._call(req, self.group_id, self.configs[req.client].client_id)

    def asks_to_skip_assignment(self, key: Any) -> bool:
        """Whether JoinGroup ``key`` (client, corr) set supportSkippingAssignment (KIP-814): a simulated client's
        does from JoinGroup v9 (``Client`` builds it from its version); a received one (a puppet's, a real
        client's) if its request said so."""
        client = key[0] if isinstance(key, tuple) and key else None
        if not isinstance(client, int) or not 0 <= client < len(self.configs):
            return False
        if self.kinds[client] == "external":
            return key in self.skipping_joins
        return self.configs[client].version.join_group_version >= 9

    def _receive(self, a: Action) -> None:
        wire = WireRequest.from_payload(str(a.arg))
        if wire.api == "JoinGroup" and wire.support_skipping_assignment:
            # a fact of the request, not state: correlation ids are unique along a run, and a puppet's flag is the
            # profile's client version's whatever branch sent it (harness/puppets.py)
            self.skipping_joins.add((a.client, wire.corr))
        self._call(wire.request(a.client), wire.group_id, wire.client_id, wire.members, dict(wire.offsets),
                   wire.api_version)

    def _call(self, req: Request, g: str, client_id: str, leaving: tuple[tuple[str, str | None], ...] = (),
              offsets: dict[str, int] | None = None, api_version: int | None = None) -> None:
        """Hand ``req`` to the coordinator (group ``g``), then move its answers out (``_drain``).
        ``leaving``: a LeaveGroup's identities (default: the sender); ``offsets``: an OffsetCommit's;
        ``api_version``: a real client's OffsetCommit version, which the Java runtime's answer depends on (R15)."""
        coord, key, api = self.coord, (req.client, req.corr), req.api
        if api == "JoinGroup":
            coord.join_group(g, req.member_id, req.session_timeout_ms, req.rebalance_timeout_ms, req.protocol_type,
                             list(req.protocols), group_instance_id=req.group_instance_id,
                             require_known_member_id=req.require_known_member_id,
                             client_id=client_id, request_key=key,
                             support_skipping_assignment=req.support_skipping_assignment)
        elif api == "SyncGroup":
            coord.sync_group(g, req.generation_id, req.member_id, dict(req.assignments),
                             group_instance_id=req.group_instance_id, request_key=key)
        elif api == "Heartbeat":
            coord.heartbeat(g, req.member_id, req.generation_id, group_instance_id=req.group_instance_id,
                            request_key=key)
        elif api == "LeaveGroup":
            coord.leave_group(g, list(leaving) or [(req.member_id, req.group_instance_id)], request_key=key)
        else:
            coord.commit_offsets(g, req.member_id, req.generation_id, {"t-0": req.corr} if offsets is None else offsets,
                                 group_instance_id=req.group_instance_id, request_key=key, api_version=api_version)
        self._drain()

    def _drain(self) -> None:
        """Move every response the coordinator produced onto the network."""
        net, answered = self.net, self.answered
        for key, api, result in self.coord.take_responses():
            if key is None:
                continue
            resp = Response.from_result(api, key[0], key[1], result)
            if self.kinds[key[0]] == "external":
                self.outbox.append((key, api, result))      # the server writes it back on the connection
            else:
                net.add_response(resp)
            answered.append(resp)

    def _deliver_response(self, a: Action) -> None:
        resp = self.net.take_response((a.client, a.arg))  # type: ignore[arg-type]
        self.clients[a.client].on_response(resp, self.coord.now_ms)   # a crashed client finds it stale

    def _drop_request(self, a: Action) -> None:
        req = self.net.take_request((a.client, a.arg))  # type: ignore[arg-type]
        self.clients[a.client].on_timeout(req.api, req.corr, self.coord.now_ms)

    def _drop_response(self, a: Action) -> None:
        client = self.clients[a.client]
        dropped = self.net.drop_responses((a.client, a.arg))  # type: ignore[arg-type]
        api = dropped[0].api if dropped else next(api for api, e in client.inflight.items() if e[0] == a.arg)
        client.on_timeout(api, a.arg, self.coord.now_ms)  # type: ignore[arg-type]

    def _fire_timer(self, a: Action) -> None:
        self.coord.fire_timer(a.arg)
        self._drain()

    def _advance_clock(self, a: Action) -> None:
        self.coord.advance_time(a.arg)

    def _advance_to_next_deadline(self, a: Action) -> None:
        target = self._next_deadline_target(self.coord.now_ms)
        assert target is not None
        self.coord.advance_time(target - self.coord.now_ms)

    def _flush_batch(self, a: Action) -> None:
        flush(self.coord, str(a.arg))
        self._drain()

    def _commit_batch(self, a: Action) -> None:
        commit(self.coord)
        self._drain()

    def _choose(self, a: Action) -> None:
        raise AssertionError("Choose is stepped by World._step_with_choices")

    def _complete_append(self, a: Action) -> None:
        self.coord.complete_append(None if a.arg == "NONE" else Errors[str(a.arg)])
        self._drain()

    def _crash(self, a: Action) -> None:
        self.clients[a.client].crash()

    def _restart(self, a: Action) -> None:
        self.clients[a.client].restart(self.coord.now_ms, upgrade=a.arg == 1)

    def _unload_group(self, a: Action) -> None:
        self.coord.unload_group(self.group_id)
        self.partition = UNLOADED
        self._drain()

    def _load_group(self, a: Action) -> None:
        if self.partition == UNLOADED:
            self.coord.set_loading(self.group_id, True)    # leader again, still reading the log
            self.partition = LOADING
            return
        self.coord.load_group(self.group_id)
        self.coord.set_loading(self.group_id, False)
        self.partition = LOADED
        self._drain()

    # --- observation and recording ---------------------------------------------------------
    def observe(self) -> dict[str, Any]:
        """What a table row shows: time, the group, and each client's state."""
        view = self._group_view()
        return {
            "time_ms": self.coord.now_ms,
            "group_state": self.profile.state_name(view.state) if view else "-",
            "generation_id": view.generation_id if view else NO_GENERATION,
            "leader_id": (view.leader_id or "") if view else "",
            "members": tuple(sorted(view.members)) if view else (),
            "pending": tuple(sorted(view.pending_members)) if view else (),
            "clients": tuple(c.describe() for c in self.clients),
        }

    def _group_view(self) -> Any:
        """``coord.describe(group_id)``, remembered while the coordinator cannot change."""
        coord, kept = self.coord, self._kept
        if self._fresh_coord_state is not None and self._view[0] is coord:
            view = self._view[1]        # an untouched coordinator restored from state: its view cannot change
        elif kept is not None:          # a memo's coordinator object: never stepped, its view is kept with it
            if kept.view is None:
                kept.view = coord.describe(self.group_id)
            view = kept.view
        else:
            view = coord.describe(self.group_id)
            self._view = (coord, view)
        return view

    def _record(self, action: Action) -> None:
        view = self._group_view()        # the group as observe() shows it (a Step does not show the clients)
        self.steps.append(Step(
            index=len(self.steps), action=action, time_ms=self.coord.now_ms,
            group_state=self.profile.state_name(view.state) if view else "-",
            generation_id=view.generation_id if view else NO_GENERATION,
            leader_id=(view.leader_id or "") if view else "", members=tuple(sorted(view.members)) if view else (),
            responses=tuple(self.answered), digest=self.digest() if self.step_digests else "",
            events=tuple(self.coord.events)))
        self.coord.events.clear()

    def digest(self) -> str:
        return blake2b(self.snapshot(), digest_size=8).hexdigest()

    def scope_json(self) -> dict[str, Any]:
        """The trace's scope: the Scope fields plus the client kinds."""
        return {**self.scope.to_json(), "clients": list(self.kinds)}

    def trace(self, name: str = "") -> Trace:
        return Trace(profile=self.profile.name, scope=self.scope_json(), seed=self.seed,
                     steps=tuple(self.steps), mutant=self.mutant, name=name)

    # --- snapshots -------------------------------------------------------------------------
    def to_state(self) -> tuple[Any, ...]:
        """The world as one nested tuple of plain data (equal worlds give equal tuples)."""
        if self.choosy and self._state_cache[0] == self._version:
            return self._state_cache[1]     # a world with choice points reads its state before every step too
        coord_state = self.coordinator_state()
        # external clients hold no state, and a served session opens connections as it goes: leaving them
        # out keeps a step's digest independent of how many connections exist at the time
        modelled = tuple(c.to_state() for c in self.clients if c.kind != "external")
        core = (coord_state, modelled, self.net.to_state(), self.partition)
        if not self.choosy:
            return core
        branch = self.branch
        state = core + (None if branch is None else (branch.before, branch.action, branch.picks, branch.options),)
        self._state_cache = (self._version, state)
        return state

    def _core_state(self) -> tuple[Any, ...]:
        """``to_state`` without the branch a world with choice points carries."""
        return self.to_state()[:4]

    def _apply_state(self, core: tuple[Any, ...]) -> None:
        """Put coordinator, clients, network and partition back to ``core`` (a ``_core_state``), rebuilding the
        coordinator."""
        coord_state, client_states, net_state, partition = core
        self.coord = self.coordinator_class.from_state(coord_state, record_events=self.record)
        self._calls, self._kept, self._spare, self._fresh_coord_state = None, None, None, None
        modelled = [c for c in self.clients if c.kind != "external"]
        for client, state in zip(modelled, client_states, strict=True):
            client.set_state(state)
        self.net.set_state(net_state)
        self.partition = partition

    def coordinator_state(self) -> tuple[Any, ...]:
        """The coordinator's part of ``to_state`` (no work when it was restored and not called since)."""
        coord_state = self._fresh_coord_state          # the state it was restored from, when untouched since
        if coord_state is not None:
            return coord_state
        return self._kept.after if self._kept is not None else self.coord.to_state()

    def snapshot(self) -> bytes:
        """Canonical bytes of ``to_state`` (``plain_bytes``)."""
        return plain_bytes(self.to_state())

    def restore(self, data: bytes, enabled: tuple[Action, ...] | None = None) -> None:
        """Put the world back into the state ``data`` was taken in (recorded steps are kept).
        ``enabled``: what ``enabled()`` returned in that state, if the caller has it (saves recomputing)."""
        if data is not self._restored[0]:   # explorers restore one node's bytes once per edge: parsed once
            self._restored = (data, pickle.loads(data))   # plain immutable values (tests/test_world_reuse.py)
        coord_state, client_states, net_state, partition = self._restored[1][:4]
        if self.choosy:
            kept = self._restored[1][4]
            self.branch = None if kept is None else Branch(*kept)
        fresh = self._fresh_coord_state
        if not (self.reuse_coordinator and (coord_state is fresh or coord_state == fresh)):
            spare = self._spare
            if spare is not None and (coord_state is spare[0] or coord_state == spare[0]):
                self.coord, self._calls = spare[1], spare[2]
            else:
                self.coord = self.coordinator_class.from_state(coord_state, record_events=self.record)
                self._calls = None
        self._fresh_coord_state = coord_state if self.reuse_coordinator else None
        self._kept = self._spare = None
        modelled = [c for c in self.clients if c.kind != "external"]
        for client, state in zip(modelled, client_states, strict=True):
            client.set_state(state)
        self.net.set_state(net_state)
        self.partition = partition
        self._version += 1
        if enabled is not None:
            self._enabled, self._enabled_set = enabled, frozenset(enabled)
            self._enabled_version = self._version

    # --- helpers ---------------------------------------------------------------------------
    def random_walk(self, steps: int, rng: random.Random | None = None) -> list[Action]:
        """Take up to ``steps`` uniformly random enabled actions; stops early if none is enabled."""
        rng = rng if rng is not None else random.Random(self.seed)
        taken: list[Action] = []
        for _ in range(steps):
            choices = self.enabled()
            if not choices:
                break
            action = choices[rng.randrange(len(choices))]
            self.step(action)
            taken.append(action)
        return taken


#: The action kinds whose handler calls into the coordinator (and so may change it); every other handler
#: reads only ``coord.now_ms`` and changes clients and the network. World.reuse_coordinator relies on this
#: list; tests/test_world_reuse.py checks it on random walks over every scope option.
_COORDINATOR_KINDS = frozenset({"DeliverRequest", "FireTimer", "AdvanceClock", "AdvanceToNextDeadline",
                                "CompleteAppend", "UnloadGroup", "LoadGroup", "Receive", "FlushBatch", "CommitBatch",
                                "Choose"})

_HANDLERS: dict[str, Callable[[World, Action], None]] = {
    "JoinGroup": World._send, "SyncGroup": World._send, "Heartbeat": World._send,
    "LeaveGroup": World._send, "OffsetCommit": World._send,
    "DeliverRequest": World._deliver_request, "DeliverResponse": World._deliver_response,
    "DropRequest": World._drop_request, "DropResponse": World._drop_response,
    "FireTimer": World._fire_timer, "AdvanceClock": World._advance_clock,
    "AdvanceToNextDeadline": World._advance_to_next_deadline, "CompleteAppend": World._complete_append,
    "FlushBatch": World._flush_batch, "CommitBatch": World._commit_batch, "Choose": World._choose,
    "Crash": World._crash, "Restart": World._restart,
    "UnloadGroup": World._unload_group, "LoadGroup": World._load_group, "Receive": World._receive,
}
