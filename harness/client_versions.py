"""Java consumer client generations as data: how each response error is handled (SPEC.md §7).

A ``ClientVersion`` is to the client model what ``impl.profiles.Profile`` is to the
coordinator: one frozen value of switches and per-API rule tables, selected from the
coordinator profile (``client_version_for``). The Java consumer model reads only these.

Outcomes (what a response does to the client):
  JOINED / SYNCED / OK   success of JoinGroup / SyncGroup / Heartbeat-or-OffsetCommit
  IGNORE                 nothing happens (a heartbeat or commit is simply retried later)
  REJOIN                 rejoin keeping member id and generation (a join is retried)
  RESET_GENERATION       generation := -1, keep the member id, rejoin (3.2+, KAFKA-13419)
  RESET_MEMBER_ID        member id := "" and generation := -1, rejoin as a new member
  STORE_MEMBER_ID        take the member id from the response and rejoin (KIP-394)
  FATAL                  the error is thrown to the application: the client is FAILED
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from model.releases import UnknownReleaseError, fact, version

JOINED, SYNCED, OK, IGNORE, REJOIN = "JOINED", "SYNCED", "OK", "IGNORE", "REJOIN"
RESET_GENERATION, RESET_MEMBER_ID, STORE_MEMBER_ID, FATAL = (
    "RESET_GENERATION", "RESET_MEMBER_ID", "STORE_MEMBER_ID", "FATAL")

# client states (AbstractCoordinator.MemberState plus the harness-only CLOSED/FAILED/CRASHED)
UNJOINED, PREPARING_REBALANCE, COMPLETING_REBALANCE, STABLE = (
    "UNJOINED", "PREPARING_REBALANCE", "COMPLETING_REBALANCE", "STABLE")
CLOSED, FAILED, CRASHED = "CLOSED", "FAILED", "CRASHED"
GONE = frozenset({CLOSED, FAILED, CRASHED})   # states in which a client ignores every response

#: an error absent from a table: unexpected JoinGroup/SyncGroup errors are raised to the
#: application as KafkaException (fatal here); heartbeat/commit failures are retried (SPEC.md §7).
UNEXPECTED = MappingProxyType({"JoinGroup": FATAL, "SyncGroup": FATAL, "Heartbeat": IGNORE,
                               "OffsetCommit": IGNORE, "LeaveGroup": IGNORE})

_COORDINATOR_ERRORS = {"COORDINATOR_NOT_AVAILABLE": REJOIN, "NOT_COORDINATOR": REJOIN}

# 0.10.0 AbstractCoordinator (not in SPEC.md §7, which starts at 2.4): UNKNOWN_MEMBER_ID resets
# the id everywhere; sync ILLEGAL_GENERATION resets it too; heartbeat ILLEGAL_GENERATION and RIP
# only set rejoinNeeded; a commit error (UNKNOWN/ILLEGAL/RIP) needs reassignment = rejoin.
_JOIN_0_10 = {"NONE": JOINED, "UNKNOWN_MEMBER_ID": RESET_MEMBER_ID, "COORDINATOR_LOAD_IN_PROGRESS": REJOIN,
              **_COORDINATOR_ERRORS, "INCONSISTENT_GROUP_PROTOCOL": FATAL, "INVALID_SESSION_TIMEOUT": FATAL,
              "INVALID_GROUP_ID": FATAL}
_SYNC_0_10 = {"NONE": SYNCED, "REBALANCE_IN_PROGRESS": REJOIN, "UNKNOWN_MEMBER_ID": RESET_MEMBER_ID,
              "ILLEGAL_GENERATION": RESET_MEMBER_ID, **_COORDINATOR_ERRORS}
_HEARTBEAT_0_10 = {"NONE": OK, "REBALANCE_IN_PROGRESS": REJOIN, "ILLEGAL_GENERATION": REJOIN,
                   "UNKNOWN_MEMBER_ID": RESET_MEMBER_ID}
_COMMIT_0_10 = {"NONE": OK, "UNKNOWN_MEMBER_ID": REJOIN, "ILLEGAL_GENERATION": REJOIN,
                "REBALANCE_IN_PROGRESS": REJOIN}

# 2.4 (SPEC.md §7 "2.4"): JoinGroup v4 (MEMBER_ID_REQUIRED → store id); join RIP unexpected;
# ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID reset generation *and member id* everywhere.
_JOIN_2_4 = {**_JOIN_0_10, "MEMBER_ID_REQUIRED": STORE_MEMBER_ID, "GROUP_MAX_SIZE_REACHED": FATAL,
             "FENCED_INSTANCE_ID": FATAL}
_SYNC_2_4 = {**_SYNC_0_10, "FENCED_INSTANCE_ID": FATAL}
_HEARTBEAT_2_4 = {"NONE": OK, "REBALANCE_IN_PROGRESS": REJOIN, "ILLEGAL_GENERATION": RESET_MEMBER_ID,
                  "UNKNOWN_MEMBER_ID": RESET_MEMBER_ID, "FENCED_INSTANCE_ID": FATAL}
_COMMIT_2_4 = {"NONE": OK, "UNKNOWN_MEMBER_ID": RESET_MEMBER_ID, "ILLEGAL_GENERATION": RESET_MEMBER_ID,
               "REBALANCE_IN_PROGRESS": REJOIN, "FENCED_INSTANCE_ID": FATAL}   # RIP → rejoin: KAFKA-8487

# 2.7: join RIP is retried ("3.x" in SPEC.md §7; taken to hold from 2.7, derived).
_JOIN_2_7 = {**_JOIN_2_4, "REBALANCE_IN_PROGRESS": REJOIN}
# 3.2+ (KAFKA-13419): ILLEGAL_GENERATION keeps the member id and only resets the generation.
_KEEP_ID = {"ILLEGAL_GENERATION": RESET_GENERATION}


@dataclass(frozen=True, slots=True, eq=False)
class ClientVersion:
    """Behaviour switches and response tables of one generation of the Java consumer."""

    name: str
    #: the JoinGroup version the consumer sends to a broker of its own release (the highest both support: 0 in
    #: 0.10.0, 6 in 2.4 (flexible versions), 7 in 2.5–3.1 (KIP-559 protocol type), 9 from 3.2 (KIP-814));
    #: tests/test_clients.py checks it against wire/versions.py's broker table
    join_group_version: int
    #: JoinGroup v4+: require_known_member_id (KIP-394, 2.2.0)
    join_group_v4: bool
    #: JoinGroup v1+ carries max.poll.interval.ms as rebalance timeout (KIP-62); v0 sends the session timeout
    join_group_v1: bool
    #: states in which the heartbeat thread sends heartbeats (SPEC.md §7 heartbeat thread, step 2)
    heartbeat_states: frozenset[str]
    #: heartbeat REBALANCE_IN_PROGRESS requests a rejoin only in STABLE (2.7+, SPEC.md §7)
    rip_rejoins_only_when_stable: bool
    #: KAFKA-9823 (2.6+): reset errors are ignored if the generation changed since the request was sent
    generation_guard: bool
    #: a reset moves a client whose JoinGroup is in flight to UNJOINED, so the join response is then
    #: ignored (UnjoinedGroupException, 2.x+); the 0.10 client has no member state and keeps going
    reset_aborts_join: bool
    join: Mapping[str, str]
    sync: Mapping[str, str]
    heartbeat: Mapping[str, str]
    commit: Mapping[str, str]

    def outcome(self, api: str, error: str) -> str:
        """What a response of ``api`` with ``error`` does to a client of this version."""
        table = _TABLE_FIELD.get(api)
        found = getattr(self, table).get(error) if table else None
        return found if found is not None else UNEXPECTED[api]


_TABLE_FIELD = {"JoinGroup": "join", "SyncGroup": "sync", "Heartbeat": "heartbeat", "OffsetCommit": "commit"}
_STABLE_ONLY = frozenset({STABLE})
_COMPLETING_AND_STABLE = frozenset({COMPLETING_REBALANCE, STABLE})


def _frozen(table: dict[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(table))


CLIENT_0_10 = ClientVersion(
    "0.10", join_group_version=0, join_group_v4=False, join_group_v1=False, heartbeat_states=_STABLE_ONLY,
    rip_rejoins_only_when_stable=False, generation_guard=False, reset_aborts_join=False,
    join=_frozen(_JOIN_0_10), sync=_frozen(_SYNC_0_10), heartbeat=_frozen(_HEARTBEAT_0_10),
    commit=_frozen(_COMMIT_0_10))
CLIENT_2_4 = ClientVersion(
    "2.4", join_group_version=6, join_group_v4=True, join_group_v1=True, heartbeat_states=_STABLE_ONLY,
    rip_rejoins_only_when_stable=False, generation_guard=False, reset_aborts_join=True,
    join=_frozen(_JOIN_2_4), sync=_frozen(_SYNC_2_4), heartbeat=_frozen(_HEARTBEAT_2_4),
    commit=_frozen(_COMMIT_2_4))
CLIENT_2_7 = ClientVersion(
    "2.7", join_group_version=7, join_group_v4=True, join_group_v1=True, heartbeat_states=_COMPLETING_AND_STABLE,
    rip_rejoins_only_when_stable=True, generation_guard=True, reset_aborts_join=True,
    join=_frozen(_JOIN_2_7), sync=_frozen(_SYNC_2_4), heartbeat=_frozen(_HEARTBEAT_2_4),
    commit=_frozen(_COMMIT_2_4))
CLIENT_3_X = ClientVersion(
    "3.x", join_group_version=9, join_group_v4=True, join_group_v1=True, heartbeat_states=_COMPLETING_AND_STABLE,
    rip_rejoins_only_when_stable=True, generation_guard=True, reset_aborts_join=True,
    join=_frozen(_JOIN_2_7), sync=_frozen({**_SYNC_2_4, **_KEEP_ID}),
    heartbeat=_frozen({**_HEARTBEAT_2_4, **_KEEP_ID}), commit=_frozen({**_COMMIT_2_4, **_KEEP_ID}))

CLIENT_VERSIONS: Mapping[str, ClientVersion] = MappingProxyType(
    {v.name: v for v in (CLIENT_0_10, CLIENT_2_4, CLIENT_2_7, CLIENT_3_X)})


def client_version_for(profile_name: str) -> ClientVersion:
    """The consumer generation that talks to a coordinator of release ``profile_name``.

    Cut points are the client facts of model/releases.py: JoinGroup v4 from 2.2, KAFKA-9823 and
    COMPLETING_REBALANCE heartbeats from 2.6, KAFKA-13419 from 3.2 (SPEC.md §7). Releases before
    2.2 get the 0.10 client.
    """
    try:
        version(profile_name)
    except UnknownReleaseError as e:
        raise ValueError(str(e)) from None
    if not fact("client-join-group-v4", profile_name):
        return CLIENT_0_10
    if not fact("client-generation-guard", profile_name):
        return CLIENT_2_4
    return CLIENT_3_X if fact("client-keeps-member-id", profile_name) else CLIENT_2_7
