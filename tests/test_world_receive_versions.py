"""A real client's request carries its version into the World where the answer depends on it: the Java runtime's
OffsetCommit (SPEC-4x.md R15 — v9+ with a generation to a missing group is GROUP_ID_NOT_FOUND, older versions
ILLEGAL_GENERATION; OffsetMetadataManager.java@4.1.1:456-479). Without the version every served commit would be
answered as the newest version's."""
from __future__ import annotations

import pytest

from core.actions import Action
from harness.external import WireRequest
from harness.scope import Scope
from harness.world import World


def _commit(version: int | None) -> WireRequest:
    return WireRequest("OffsetCommit", 1, "g", client_id="real", member_id="m", generation_id=3,
                       offsets=(("t-0", 5),), api_version=version)


def test_the_version_survives_the_payload_and_older_payloads_keep_their_bytes() -> None:
    assert WireRequest.from_payload(_commit(8).to_payload()).api_version == 8
    assert "api_version" not in _commit(None).to_payload()
    assert WireRequest.from_payload(_commit(None).to_payload()) == _commit(None)


@pytest.mark.parametrize(("version", "error"), [(8, "ILLEGAL_GENERATION"), (9, "GROUP_ID_NOT_FOUND")])
def test_a_served_commit_to_a_missing_group_is_answered_as_its_version(version: int, error: str) -> None:
    world = World("4.1", Scope(group_id="g"), clients=["external"], record=True)
    world.step(Action("Receive", 0, _commit(version).to_payload()))
    for _ in range(5):   # the write (if any) commits and releases the answer
        if world.outbox:
            break
        flush = [a for a in world.enabled() if a.kind in ("FlushBatch", "CompleteAppend")]
        if not flush:
            break
        world.step(flush[0])
    ((_key, api, result),) = world.take_outbox()
    assert api == "OffsetCommit" and result.error.name == error
