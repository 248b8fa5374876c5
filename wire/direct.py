"""One group's coordinator stepped directly, for a profile the harness's World does not drive yet: unchecked.

``kgc serve`` runs each group in a checked World (wire/session.py). A profile served by a sibling runtime that
the harness cannot run yet (profile 4.1 until issue 25 phase B lands in harness/) still answers real clients: a
``DirectGroup`` hands each request off the wire and each clock step to the coordinator itself, as the World
would, with no catalog, no refinement and no trace. The session decides by capability (``world_runs``), never by
profile name, so once the World drives a profile its sessions are worlds again.

Writes complete inside the request that made them: the coordinator runs in append mode "sync" (impl/results.py),
so a 4.x write is flushed and committed at once and every answer held behind it (R3) goes out in the same call.
"""
from __future__ import annotations

from typing import Any, Hashable

from core.actions import Action
from harness.external import WireRequest
from harness.scope import Scope
from harness.world import World
from properties.catalog import CONCRETE_PROFILES   # the releases the catalog judges (model/releases.py)
from impl import CoordinatorConfig, GroupCoordinator
from impl.profiles import UnknownProfileError


def world_runs(profile: str) -> bool:
    """Whether a session of ``profile`` is served through the harness's World: the World drives it (a profile impl
    does not know raises UnknownProfileError) and the catalog judges it (properties/catalog.py CONCRETE_PROFILES: the
    modelled releases, 4.1 included). A Receive carries the OffsetCommit version the Java runtime's answer depends
    on (R15), and DescribeGroups is answered by the world's coordinator at the request's version (R16)."""
    if profile not in CONCRETE_PROFILES:
        return False
    try:
        World(profile, Scope(), clients=0, record=False)
    except UnknownProfileError:
        return False
    return True


class DirectGroup:
    """The coordinator of one group behind real connections, with the World's stepping surface that a session
    uses (``step`` of Receive / FireTimer / AdvanceClock actions, ``take_outbox``, ``coord``), and nothing else."""

    def __init__(self, profile: str, group_id: str, coordinator: dict[str, int]) -> None:
        self.group_id = group_id
        self.coord: Any = GroupCoordinator(CoordinatorConfig(profile=profile, append_mode="sync", **coordinator))
        self.steps = 0

    def add_client(self, kind: str) -> None:
        """A new connection: nothing to model (the coordinator knows members, not connections)."""

    def step(self, action: Action) -> None:
        self.steps += 1
        if action.kind == "Receive":
            self._call(action.client, WireRequest.from_payload(str(action.arg)), None)
        elif action.kind == "FireTimer":
            self.coord.fire_timer(int(action.arg))
        elif action.kind == "AdvanceClock":
            self.coord.advance_time(int(action.arg))
        else:
            raise ValueError(f"a served group steps Receive, FireTimer and AdvanceClock, not {action.kind}.")

    def receive(self, conn: int, request: WireRequest, api_version: int | None) -> None:
        """A request off the wire at ``api_version`` (the coordinator's answer may depend on it: R15)."""
        self.steps += 1
        self._call(conn, request, api_version)

    def take_outbox(self) -> list[tuple[Hashable, str, Any]]:
        """The answers produced since the last call, keyed (connection, request number), in completion order."""
        return [(key, api, result) for key, api, result in self.coord.take_responses() if isinstance(key, tuple)]

    def _call(self, conn: int, w: WireRequest, api_version: int | None) -> None:
        coord, key, g = self.coord, (conn, w.corr), w.group_id
        if w.api == "JoinGroup":
            coord.join_group(g, w.member_id, w.session_timeout_ms, w.rebalance_timeout_ms, w.protocol_type,
                             list(w.protocols), group_instance_id=w.group_instance_id,
                             require_known_member_id=w.require_known_member_id, client_id=w.client_id,
                             request_key=key, support_skipping_assignment=w.support_skipping_assignment)
        elif w.api == "SyncGroup":
            coord.sync_group(g, w.generation_id, w.member_id, dict(w.assignments),
                             group_instance_id=w.group_instance_id, request_key=key)
        elif w.api == "Heartbeat":
            coord.heartbeat(g, w.member_id, w.generation_id, group_instance_id=w.group_instance_id, request_key=key)
        elif w.api == "LeaveGroup":
            coord.leave_group(g, list(w.members) or [(w.member_id, w.group_instance_id)], request_key=key)
        else:
            coord.commit_offsets(g, w.member_id, w.generation_id, dict(w.offsets),
                                 group_instance_id=w.group_instance_id, request_key=key, api_version=api_version)
