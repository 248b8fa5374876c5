"""Refused requests over Z3 terms: model.step._refused, check by check (SPEC.md §3.0, §3.8).

A labelled step can carry a request *cell* in ``AbstractAction.arg`` (not-coordinator, loading,
bad-session, bad-protocol, stale), and a request can come from an identity that is not a member (nor,
for JoinGroup/LeaveGroup, a pending id): cell "" here. The coordinator answers such a request with an
error and changes nothing. ``refusal_branches(profile, voc, kind, cell, m)`` gives the paths on which
it refuses (none where model.step would run the action proper: that is ``steps.branches``'s), each
with its one answer, so that ``prove_outputs`` covers refused requests too and
tests/test_z3_outputs.py compares them with ``model.step.outcomes``. The graph never takes these steps.
"""
from __future__ import annotations

import z3

from model.outputs import ERROR_ID, ERROR_NO_ID, NONE_GEN
from model.profiles import ModelProfile, get_model_profile
from model.state import ABSENT, ABSENT_GROUP, COMPLETING, MEMBER, PENDING, STABLE
from properties.z3.domain import STATUS, Expr
from properties.z3.encoding import Terms, Vocabulary
from properties.z3.outputs import ERROR, GEN, SHAPE, TRUE
from properties.z3.rules import W0
from properties.z3.steps import Branches, answer_by_group
from properties.z3.symbolic import SW, Ctx, Ws, explore

#: the request cells of model/step.py ("" = a request from an unknown member id)
REFUSAL_CELLS = ("", "not-coordinator", "loading", "bad-session", "bad-protocol", "stale")
#: the request kinds (model.step.REQUEST_CELLS_KINDS, in model.step's order) and the API they use
REQUEST_API = {"JoinGroup/new": "JoinGroup", "JoinGroup/new-pending": "JoinGroup", "JoinGroup/known": "JoinGroup",
               "JoinGroup/changed": "JoinGroup", "SyncGroup": "SyncGroup", "Heartbeat": "Heartbeat",
               "OffsetCommit": "OffsetCommit", "LeaveGroup": "LeaveGroup", "OffsetCommit/simple": "OffsetCommit"}
REFUSAL_KINDS: tuple[tuple[str, str], ...] = tuple((k, c) for k in REQUEST_API for c in REFUSAL_CELLS)
#: the static scope's (KIP-345): the instance-id cells on every request, and the two static JoinGroups with every cell
STATIC_CELLS = ("unsupported", "fenced", "unknown-instance")
STATIC_REQUEST_API = {"JoinGroup/static-new": "JoinGroup", "JoinGroup/static-rejoin": "JoinGroup"}
STATIC_REFUSAL_KINDS: tuple[tuple[str, str], ...] = tuple(
    (k, c) for k in REQUEST_API for c in STATIC_CELLS) + tuple(
    (k, c) for k in STATIC_REQUEST_API for c in REFUSAL_CELLS + STATIC_CELLS) + (
    ("JoinGroup/known", "static-pending"), ("LeaveGroup", "static-pending"))


def _valid_requester(w: SW, kind: str, i: Expr | None) -> Expr:
    if kind in ("JoinGroup/new", "JoinGroup/new-pending", "OffsetCommit/simple", "JoinGroup/static-new") or i is None:
        return TRUE
    if kind == "JoinGroup/static-rejoin":
        return z3.And(w.get("static", i), w.get("status", i) == STATUS[MEMBER])
    status = w.get("status", i)
    pending_ok = kind in ("JoinGroup/known", "LeaveGroup")
    return z3.Or(status == STATUS[MEMBER], z3.And(z3.BoolVal(pending_ok), status == STATUS[PENDING]))


def _refused(p: ModelProfile, w: SW, kind: str, cell: str, i: Expr | None) -> Ws:
    """The error answer of a refused request, in SPEC.md's order of checks; [] = not refused here."""
    api = {**REQUEST_API, **STATIC_REQUEST_API}[kind]
    join_shape = SHAPE[ERROR_ID] if kind in ("JoinGroup/known", "JoinGroup/changed") else SHAPE[ERROR_NO_ID]

    def refuse(error: Expr) -> Ws:
        if i is None:   # a requester without a slot (OffsetCommit/simple): W.answer with slot -1
            w.outs.group["anonymous.answered"], w.outs.group["anonymous.error"] = TRUE, error
        elif api == "JoinGroup":
            w.answer(i, api, error, GEN[NONE_GEN], join_shape)
        else:
            w.answer(i, api, error)
        return [w]

    valid = _valid_requester(w, kind, i)
    if not cell and w.holds(valid):   # model.step._apply: no cell and a valid requester: the action proper
        return []
    if cell == "not-coordinator":
        return refuse(ERROR["NOT_COORDINATOR"])
    if cell == "loading":
        return refuse(ERROR[p.loading_answers[api]])
    if cell == "unsupported":   # KafkaApis: no KIP-345 in this release
        return refuse(ERROR["UNSUPPORTED_VERSION"])
    if cell == "bad-session":
        return refuse(ERROR["INVALID_SESSION_TIMEOUT"])
    if cell == "bad-protocol":   # J5a/J5b step 2, before the member id is looked at (§3.1, §3.6)
        return refuse(ERROR["INCONSISTENT_GROUP_PROTOCOL"])
    if cell == "static-pending":   # J5b step 3, §3.4 [2.4]: IllegalStateException → the handler's error response
        assert i is not None
        if api != "JoinGroup":
            return refuse(ERROR["UNKNOWN_SERVER_ERROR"])
        w.answer(i, api, ERROR["UNKNOWN_SERVER_ERROR"], GEN[NONE_GEN], SHAPE[ERROR_NO_ID])
        return [w]
    absent = cell in ("fenced", "unknown-instance") and w.holds(w.is_group(ABSENT_GROUP))
    # §3.4 [3.x]: a LeaveGroup from a pending member id removes it before validateCurrentMember reads the instance id
    pending_leave = (cell in ("fenced", "unknown-instance") and not absent and api == "LeaveGroup"
                     and p.validate_current_member and i is not None
                     and w.holds(w.get("status", i) == STATUS[PENDING]))
    if cell == "fenced" and not absent and not pending_leave:   # J5b 4, §3.2 2, §3.3, §3.4, §3.5
        return refuse(ERROR["FENCED_INSTANCE_ID"])
    unknown_instance = cell == "unknown-instance" and (p.validate_current_member or api == "JoinGroup")   # J5b 5
    if unknown_instance and not absent and not pending_leave:
        return refuse(ERROR["UNKNOWN_MEMBER_ID"])
    if api == "JoinGroup":
        return [] if w.holds(valid) else refuse(ERROR["UNKNOWN_MEMBER_ID"])
    if w.holds(w.is_group(ABSENT_GROUP)):
        return refuse(ERROR["ILLEGAL_GENERATION" if api == "OffsetCommit" else "UNKNOWN_MEMBER_ID"])
    if api == "Heartbeat" and p.heartbeat_state_first and not w.holds(w.is_group(STABLE)):
        return refuse(answer_by_group(w, p.heartbeat_answers))
    if api == "OffsetCommit" and p.commit_state_first and w.holds(w.is_group(COMPLETING)):
        return refuse(ERROR["REBALANCE_IN_PROGRESS"])
    if not w.holds(valid):
        return refuse(ERROR["UNKNOWN_MEMBER_ID"])
    if cell == "stale":
        return refuse(ERROR["ILLEGAL_GENERATION"])
    return []


_CACHE: dict[tuple[object, ...], Branches] = {}


def refusal_branches(profile: str | ModelProfile, voc: Vocabulary, kind: str, cell: str, m: Expr | None = None,
                     pre: Terms | None = None) -> Branches:
    """The paths on which ``kind`` with ``cell`` is refused, from ``pre`` (acting member ``m``; none for
    OffsetCommit/simple). A new member's JoinGroup names a free slot, as the model offers it."""
    p = profile if isinstance(profile, ModelProfile) else get_model_profile(profile)
    if (kind, cell) not in REFUSAL_KINDS + STATIC_REFUSAL_KINDS:
        raise ValueError(f"not a refused request: {kind}[{cell}]")
    pre = pre if pre is not None else voc.state("pre")
    slotted = kind != "OffsetCommit/simple"
    m = (m if m is not None else voc.dom.member("m")) if slotted else None
    key = (repr(p), voc.key, kind, cell, None if m is None else m.get_id(), pre.group.get_id())
    if key in _CACHE:
        return _CACHE[key]

    def run(ctx: Ctx) -> Ws:
        w = SW(pre, ctx)
        if kind in ("JoinGroup/new", "JoinGroup/new-pending", "JoinGroup/static-new") and m is not None:
            if not w.holds(z3.And(w.get("status", m) == STATUS[ABSENT], w.get("watch", m) == W0)):
                return []
        return _refused(p, w, kind, cell, m)
    atoms = [pre.group] + ([pre.get(f, m) for f in pre.slots] if m is not None else [])
    paths = tuple(explore(run, atoms))
    out = Branches(p.name, kind, cell, pre, m, paths)
    _CACHE[key] = out
    return out
