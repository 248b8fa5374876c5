"""Simulated group clients: the Java consumer model (SPEC.md §7) and an adversarial client.

A client is a small state machine over plain data. The world asks it which requests it wants
to send (``wants``), has it build one (``send``), and hands it responses (``on_response``) and
request timeouts (``on_timeout``, a dropped request or response). Clients never see the
coordinator. A client keeps at most one request in flight per API; a response whose corr is not
the one outstanding for its API is stale (a zombie) and ignored.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

from dataclasses import dataclass
from typing import Any, Sequence

from core.types import NO_GENERATION, UNKNOWN_MEMBER_ID
from harness.client_versions import (
    CLIENT_3_X, CLOSED, COMPLETING_REBALANCE, CRASHED, FAILED, FATAL, GONE, IGNORE, JOINED, OK,
    PREPARING_REBALANCE, REJOIN, RESET_GENERATION, RESET_MEMBER_ID, STABLE, STORE_MEMBER_ID,
    SYNCED, UNJOINED, ClientVersion)
from harness.messages import Assignments, Request, Response
from harness.scope import Scope

APIS = ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit")
PARTITIONS = tuple(f"p{i}" for i in range(6))
ADVERSARY = "ADVERSARY"


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """Fixed settings of one client (not part of the world state)."""

    index: int
    client_id: str
    session_timeout_ms: int = 10000
    rebalance_timeout_ms: int = 10000
    heartbeat_interval_ms: int = 3000
    protocols: tuple[tuple[str, bytes], ...] = ()
    protocol_type: str = "consumer"
    group_instance_id: str | None = None
    version: ClientVersion = CLIENT_3_X
    timed: bool = False       # heartbeats only every heartbeat_interval_ms
    commits: bool = False     # send OffsetCommit when STABLE
    leaves: bool = True       # may send LeaveGroup (close / poll timeout)
    rejoins: bool = True      # a STABLE consumer may rejoin with unchanged metadata
    resubscribes: bool = False   # a STABLE consumer may rejoin with other metadata (its subscription changed)


def round_robin_assignment(member_ids: tuple[str, ...]) -> Assignments:
    """The leader's assignor: partitions p0..p5 dealt round-robin over the sorted member ids."""
    ids = sorted(member_ids)
    if not ids:
        return ()
    owned: dict[str, list[str]] = {m: [] for m in ids}
    for i, partition in enumerate(PARTITIONS):
        owned[ids[i % len(ids)]].append(partition)
    return tuple((m, ",".join(owned[m]).encode("ascii")) for m in ids)


class Client(ABC):
    """State shared by both client kinds; every field is plain data (see ``to_state``)."""

    __slots__ = ("config", "state", "member_id", "generation_id", "leader", "known_members",
                 "assignment", "protocol_name", "next_corr", "inflight", "last_heartbeat_ms", "subscription")
    kind = "client"

    def __init__(self, config: ClientConfig, now_ms: int = 0) -> None:
        self.config = config
        self.next_corr = 1
        self._reset_all(self.initial_state(), now_ms)

    def initial_state(self) -> str:
        return UNJOINED

    @classmethod
    def instance_id(cls, index: int) -> str | None:
        """The group.instance.id client ``index`` of this kind sends (None: a dynamic member)."""
        return None

    def _reset_all(self, state: str, now_ms: int) -> None:
        self.state = state
        self.member_id = UNKNOWN_MEMBER_ID
        self.generation_id = NO_GENERATION
        self.leader = False
        self.known_members: tuple[str, ...] = ()
        self.assignment = b""
        self.protocol_name = ""
        #: api -> (corr, generation_id at send, member_id at send)
        self.inflight: dict[str, tuple[int, int, str]] = {}
        self.last_heartbeat_ms = now_ms if self.config.timed else 0
        self.subscription = 0      # which of two subscriptions a resubscribing consumer holds (0: as configured)

    def protocols(self) -> tuple[tuple[str, bytes], ...]:
        """The protocols a JoinGroup carries: the configured ones, their metadata naming one more topic while the
        other subscription is held (the protocol names stay, so the group's protocol selection is unchanged)."""
        if not self.subscription:
            return self.config.protocols
        return tuple((name, metadata + b"+t1") for name, metadata in self.config.protocols)

    # --- world interface ---------------------------------------------------------------
    @abstractmethod
    def wants(self, now_ms: int) -> list[tuple[str, int]]:
        """(api, variant) pairs this client would send now."""

    def heartbeat_due_ms(self) -> int | None:
        """Timed mode: when the next heartbeat becomes sendable (a world deadline), else None."""
        return None

    def crash(self) -> None:
        """The process dies: everything but the corr counter is lost (old responses stay stale)."""
        self._reset_all(CRASHED, 0)

    def restart(self, now_ms: int) -> None:
        self._reset_all(self.initial_state(), now_ms)

    @abstractmethod
    def on_timeout(self, api: str, corr: int, now_ms: int) -> None:
        """The request (api, corr) timed out at the client: it was lost, or its response was."""

    @abstractmethod
    def on_response(self, resp: Response, now_ms: int) -> None:
        """Handle a response; one whose corr is not outstanding is stale and ignored."""

    def _take(self, resp: Response) -> tuple[int, int, str] | None:
        """Clear and return the outstanding entry answered by ``resp``; None if it is stale."""
        entry = self.inflight.get(resp.api)
        if entry is None or entry[0] != resp.corr:
            return None
        del self.inflight[resp.api]
        return entry

    def _request(self, api: str, member_id: str, generation_id: int, assignments: Assignments = ()) -> Request:
        cfg = self.config
        corr = self.next_corr
        self.next_corr = corr + 1
        self.inflight[api] = (corr, self.generation_id, self.member_id)
        if api != "JoinGroup":
            return Request(api, cfg.index, corr, member_id, generation_id, assignments=assignments,
                           group_instance_id=cfg.group_instance_id)
        rebalance = cfg.rebalance_timeout_ms if cfg.version.join_group_v1 else cfg.session_timeout_ms
        return Request(api, cfg.index, corr, member_id, generation_id, cfg.session_timeout_ms, rebalance,
                       cfg.protocol_type, self.protocols(), cfg.version.join_group_v4,
                       group_instance_id=cfg.group_instance_id,
                       support_skipping_assignment=cfg.version.join_group_version >= 9)   # KIP-814 (v9, 3.2)

    # --- snapshots ---------------------------------------------------------------------
    def to_state(self) -> tuple[Any, ...]:
        """Plain data; the subscription only for a client that may change it (so the snapshots, and the digests
        recorded in traces, of worlds without resubscriptions stay what they were)."""
        state = (self.state, self.member_id, self.generation_id, self.leader, self.known_members,
                 self.assignment, self.protocol_name, self.next_corr, tuple(sorted(self.inflight.items())),
                 self.last_heartbeat_ms)
        return state + (self.subscription,) if self.config.resubscribes else state

    def set_state(self, state: tuple[Any, ...]) -> None:
        (self.state, self.member_id, self.generation_id, self.leader, self.known_members, self.assignment,
         self.protocol_name, self.next_corr, inflight, self.last_heartbeat_ms) = state[:10]
        self.subscription = state[10] if self.config.resubscribes else 0
        self.inflight = dict(inflight)

    @classmethod
    def from_state(cls, config: ClientConfig, state: tuple[Any, ...]) -> "Client":
        client = cls.__new__(cls)
        client.config = config
        client.set_state(state)
        return client

    def describe(self) -> str:
        """One short line for tables: ``STABLE c0-1 g2``."""
        return f"{self.state} {self.member_id or '-'} g{self.generation_id}"


class JavaConsumer(Client):
    """The Java consumer's group membership (AbstractCoordinator), per client generation.

    States: UNJOINED (a JoinGroup is to be sent), PREPARING_REBALANCE (JoinGroup in flight),
    COMPLETING_REBALANCE (joined, SyncGroup to send or in flight), STABLE, and the harness's
    CLOSED (sent LeaveGroup), FAILED (fatal error thrown to the application), CRASHED.
    """

    __slots__ = ()
    kind = "java"

    def wants(self, now_ms: int) -> list[tuple[str, int]]:
        state, inflight, cfg = self.state, self.inflight, self.config
        if state in GONE:
            return []
        out: list[tuple[str, int]] = []
        if "JoinGroup" not in inflight and (state == UNJOINED or (state == STABLE and cfg.rejoins)):
            # from STABLE: the leader saw the topic metadata change (ConsumerCoordinator's metadata snapshot check);
            # the member keeps its id and its metadata (SPEC.md §1.3)
            out.append(("JoinGroup", 0))
        elif state == COMPLETING_REBALANCE and "SyncGroup" not in inflight:
            out.append(("SyncGroup", 0))
        if "JoinGroup" not in inflight and state == STABLE and cfg.resubscribes:
            # variant 1: the application changed its subscription (or a pattern matched a new topic), so the
            # rejoin carries other metadata: updateMemberAndRebalance (SPEC.md §3.1 J5b)
            out.append(("JoinGroup", 1))
        if (state in cfg.version.heartbeat_states and "Heartbeat" not in inflight
                and (not cfg.timed or now_ms >= self.last_heartbeat_ms + cfg.heartbeat_interval_ms)):
            out.append(("Heartbeat", 0))
        if cfg.leaves and self._may_leave():
            out.append(("LeaveGroup", 0))
        if cfg.commits and state == STABLE and "OffsetCommit" not in inflight:
            out.append(("OffsetCommit", 0))
        return out

    def _may_leave(self) -> bool:
        # maybeLeaveGroup: only a client that holds a member id (0.10: a generation) sends LeaveGroup
        if not self.member_id or "LeaveGroup" in self.inflight:
            return False
        return self.config.version.join_group_v4 or self.generation_id > 0

    def heartbeat_due_ms(self) -> int | None:
        cfg = self.config
        if not cfg.timed or self.state not in cfg.version.heartbeat_states or "Heartbeat" in self.inflight:
            return None
        return self.last_heartbeat_ms + cfg.heartbeat_interval_ms

    def send(self, api: str, arg: int, now_ms: int, peer_member_id: str = "") -> Request:
        if api == "JoinGroup":
            self.state = PREPARING_REBALANCE
            if arg == 1:
                self.subscription = 1 - self.subscription    # toggles between the two subscriptions
        elif api == "Heartbeat":
            self.last_heartbeat_ms = now_ms if self.config.timed else 0
        elif api == "LeaveGroup":
            self.state = CLOSED        # close() / poll timeout: the client leaves and is done
        assignments = round_robin_assignment(self.known_members) if api == "SyncGroup" and self.leader else ()
        return self._request(api, self.member_id, self.generation_id, assignments)

    def on_timeout(self, api: str, corr: int, now_ms: int) -> None:
        """A dropped request or response: the client's request times out (SPEC.md §7)."""
        entry = self.inflight.get(api)
        if entry is None or entry[0] != corr:
            return
        del self.inflight[api]
        # a JoinGroup/SyncGroup timeout fails the join future: rejoin with the same member id;
        # a heartbeat or commit is simply sent again later
        if (api == "JoinGroup" and self.state == PREPARING_REBALANCE) or (
                api == "SyncGroup" and self.state == COMPLETING_REBALANCE and entry[1] == self.generation_id):
            self.state = UNJOINED

    def on_response(self, resp: Response, now_ms: int) -> None:
        sent = self._take(resp)
        if sent is None or self.state in GONE:
            return
        outcome = self.config.version.outcome(resp.api, resp.error)
        if resp.api == "JoinGroup":
            self._on_join(resp, outcome, now_ms)
        elif resp.api == "SyncGroup":
            self._on_sync(resp, outcome, sent, now_ms)
        elif resp.api in ("Heartbeat", "OffsetCommit"):
            self._on_liveness(resp, outcome, sent)

    def _on_join(self, resp: Response, outcome: str, now_ms: int) -> None:
        if outcome == JOINED:
            if self.state != PREPARING_REBALANCE:
                return     # reset while the join was in flight: UnjoinedGroupException, join again
            self.member_id, self.generation_id = resp.member_id, resp.generation_id
            self.leader = resp.leader_id == resp.member_id
            self.known_members = resp.members if self.leader else ()
            self.protocol_name = resp.protocol_name
            self._enter(COMPLETING_REBALANCE, now_ms)
        elif outcome == FATAL:
            self.state = FAILED
        else:
            if outcome == STORE_MEMBER_ID:
                self.member_id = resp.member_id     # KIP-394: rejoin at once with the given id
            elif outcome == RESET_MEMBER_ID:
                self._reset(keep_member_id=False)
            self.state = UNJOINED                   # every other join error: join again

    def _on_sync(self, resp: Response, outcome: str, sent: tuple[int, int, str], now_ms: int) -> None:
        if self.state != COMPLETING_REBALANCE or sent[1] != self.generation_id:
            # SPEC.md §7: a SyncGroup answer after the generation was reset counts as
            # ILLEGAL_GENERATION; the client is already rejoining
            return
        if outcome == SYNCED:
            self.assignment = resp.assignment
            self._enter(STABLE, now_ms)
        elif outcome == FATAL:
            self.state = FAILED
        else:
            if outcome in (RESET_GENERATION, RESET_MEMBER_ID) and self._unchanged(sent):
                self._reset(keep_member_id=outcome == RESET_GENERATION)
            self.state = UNJOINED                   # every sync error rejoins

    def _on_liveness(self, resp: Response, outcome: str, sent: tuple[int, int, str]) -> None:
        """Heartbeat and OffsetCommit answers (SPEC.md §7 heartbeat / offset commit rules)."""
        version = self.config.version
        if outcome in (OK, IGNORE):
            return
        if outcome == REJOIN:
            # 2.7+: heartbeat RIP asks for a rejoin only in STABLE (ignored in COMPLETING_REBALANCE)
            if resp.api == "Heartbeat" and version.rip_rejoins_only_when_stable and self.state != STABLE:
                return
            self._request_rejoin()
        elif not self._unchanged(sent):
            return                                  # KAFKA-9823: stale generation, ignore the error
        elif outcome == FATAL:
            self.state = FAILED
        elif outcome in (RESET_GENERATION, RESET_MEMBER_ID):
            self._reset(keep_member_id=outcome == RESET_GENERATION)

    def _unchanged(self, sent: tuple[int, int, str]) -> bool:
        """generationUnchanged(): always true for clients before KAFKA-9823."""
        if not self.config.version.generation_guard:
            return True
        return sent[1] == self.generation_id and sent[2] == self.member_id

    def _request_rejoin(self) -> None:
        if self.state in (COMPLETING_REBALANCE, STABLE):
            self.state = UNJOINED

    def _reset(self, keep_member_id: bool) -> None:
        """resetGeneration / resetStateAndRejoin."""
        self.generation_id = NO_GENERATION
        if not keep_member_id:
            self.member_id = UNKNOWN_MEMBER_ID
        self.leader, self.known_members = False, ()
        if self.state in (COMPLETING_REBALANCE, STABLE) or (
                self.state == PREPARING_REBALANCE and self.config.version.reset_aborts_join):
            self.state = UNJOINED

    def _enter(self, state: str, now_ms: int) -> None:
        cfg = self.config
        if cfg.timed and state in cfg.version.heartbeat_states and self.state not in cfg.version.heartbeat_states:
            self.last_heartbeat_ms = now_ms     # the heartbeat timer starts when heartbeats are enabled
        self.state = state


class StaticConsumer(JavaConsumer):
    """A Java consumer with a group.instance.id (KIP-345, SPEC.md §7): it never sends LeaveGroup (static
    members rely on the session timeout), and a Restart after a Crash rejoins with the same instance id and
    member id "" — the coordinator replaces its member id and fences the old one. Walked by the gate's static walk
    (kgc/gate.py STATIC_WALKS), never mixed into its dynamic scopes."""

    __slots__ = ()
    kind = "static"

    @classmethod
    def instance_id(cls, index: int) -> str | None:
        return f"i{index}"

    def _may_leave(self) -> bool:
        return False


#: Adversarial request variants, by Action.arg (only those that differ for an API are offered):
#:   0 its own current member id and generation
#:   1 member id "" and generation -1
#:   2 its own member id with generation + 1
#:   3 the member id of client (index + 1) mod n as that client currently holds it, own generation
ADVERSARY_VARIANTS = {"JoinGroup": (0, 1, 3), "SyncGroup": (0, 1, 2, 3), "Heartbeat": (0, 1, 2, 3),
                      "LeaveGroup": (0, 1, 3), "OffsetCommit": (0, 1, 2, 3)}


class AdversarialClient(Client):
    """Sends any well-formed request of any API at any time (one in flight per API).

    It records what responses teach it (member id, generation, leader, member list) and never
    reacts otherwise: no rejoin, no fatal errors.
    """

    __slots__ = ()
    kind = "adversarial"

    def initial_state(self) -> str:
        return ADVERSARY

    def wants(self, now_ms: int) -> list[tuple[str, int]]:
        if self.state == CRASHED:
            return []
        cfg, inflight = self.config, self.inflight
        return [(api, variant) for api in APIS
                if api not in inflight and (api != "LeaveGroup" or cfg.leaves)
                and (api != "OffsetCommit" or cfg.commits)
                for variant in ADVERSARY_VARIANTS[api]]

    def send(self, api: str, arg: int, now_ms: int, peer_member_id: str = "") -> Request:
        member_id, generation_id = self.member_id, self.generation_id
        if arg == 1:
            member_id, generation_id = UNKNOWN_MEMBER_ID, NO_GENERATION
        elif arg == 2:
            generation_id += 1
        elif arg == 3:
            member_id = peer_member_id
        assignments = round_robin_assignment(self.known_members) if api == "SyncGroup" else ()
        return self._request(api, member_id, generation_id, assignments)

    def on_timeout(self, api: str, corr: int, now_ms: int) -> None:
        entry = self.inflight.get(api)
        if entry is not None and entry[0] == corr:
            del self.inflight[api]

    def on_response(self, resp: Response, now_ms: int) -> None:
        if self._take(resp) is None or self.state == CRASHED:
            return
        if resp.api == "JoinGroup" and resp.member_id:
            self.member_id = resp.member_id
            if resp.error == "NONE":
                self.generation_id = resp.generation_id
                self.leader = resp.leader_id == resp.member_id
                self.known_members = resp.members
        elif resp.api == "SyncGroup" and resp.error == "NONE":
            self.assignment = resp.assignment


class StaticAdversary(AdversarialClient):
    """An adversarial client that forges a static identity: it sends client 0's instance id ("i0") with
    whatever member id it holds, so its "" joins replace client 0's member id and its requests with a stale
    id are fenced. Walked by the gate's static walk (kgc/gate.py STATIC_WALKS) only."""

    __slots__ = ()
    kind = "static-adversarial"

    @classmethod
    def instance_id(cls, index: int) -> str | None:
        return "i0"


class ExternalClient(Client):
    """A real client's connection (``kgc serve``): nothing here models it. What it sends enters the
    world as ``Receive`` actions and its answers leave through the world's outbox (harness.external)."""

    __slots__ = ()
    kind = "external"

    def wants(self, now_ms: int) -> list[tuple[str, int]]:
        return []

    def send(self, api: str, arg: int, now_ms: int, peer_member_id: str = "") -> Request:
        raise ValueError("an external client's requests arrive as Receive actions; the world never builds one.")

    def on_timeout(self, api: str, corr: int, now_ms: int) -> None:
        return None

    def on_response(self, resp: Response, now_ms: int) -> None:
        return None

    def describe(self) -> str:
        return "external"


CLIENT_KINDS: dict[str, type[Client]] = {"java": JavaConsumer, "adversarial": AdversarialClient,
                                         "external": ExternalClient, "static": StaticConsumer,
                                         "static-adversarial": StaticAdversary}


DEFAULT_SESSION_TIMEOUT_MS = 10000


def client_kinds(clients: int | Sequence[str]) -> tuple[str, ...]:
    """A world's client kinds: ``clients`` Java consumers, or the kinds named (a ValueError names unknown ones)."""
    if isinstance(clients, int) and not isinstance(clients, bool):
        if clients < 0:
            raise ValueError(f"clients must be >= 0, got {clients}.")
        return ("java",) * clients
    kinds = tuple(clients)
    bad = [k for k in kinds if k not in CLIENT_KINDS]
    if bad:
        raise ValueError(f"unknown client kind(s) {', '.join(map(repr, bad))}; "
                         f"expected {' or '.join(map(repr, CLIENT_KINDS))}.")
    return kinds


def client_configs(scope: Scope, kinds: tuple[str, ...], version: ClientVersion) -> tuple[ClientConfig, ...]:
    """Each client's configuration in a world of ``scope``: client i sends client.id ``scope.client_id`` or
    "c<i>", which is also its protocol metadata, and takes the scope's per-client timeouts."""
    n = len(kinds)
    for name in ("session_timeout_ms", "rebalance_timeout_ms"):
        if len(getattr(scope, name)) > n:
            raise ValueError(f"scope {name} has {len(getattr(scope, name))} entries but the world has {n} clients.")
    configs = []
    for i in range(n):
        client_id = scope.client_id or f"c{i}"
        session = scope.session_timeout_ms[i] if i < len(scope.session_timeout_ms) else DEFAULT_SESSION_TIMEOUT_MS
        rebalance = scope.rebalance_timeout_ms[i] if i < len(scope.rebalance_timeout_ms) else session
        configs.append(ClientConfig(
            index=i, client_id=client_id, session_timeout_ms=session, rebalance_timeout_ms=rebalance,
            heartbeat_interval_ms=scope.heartbeat_interval_ms, protocols=(("range", client_id.encode()),),
            version=version, timed=scope.timed, commits=scope.commits, leaves=scope.leaves,
            rejoins=scope.rejoins, resubscribes=scope.resubscribes,
            group_instance_id=CLIENT_KINDS[kinds[i]].instance_id(i)))
    return tuple(configs)
