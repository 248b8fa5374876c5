"""Structural answers and their comparison, field by field, with every difference classified.

Member ids are the broker's choice, so they are never compared literally: each run's ids are
labelled structurally — an id the broker gave member ``a`` in a JoinGroup answer on ``a``'s own
connection is ``a`` (its second one, after a static restart, ``a#2``), any other id is ``?1``,
``?2``… by first appearance — and labels are compared. Difference classes:

- ``error-code``: the error codes differ (top level, per member of a LeaveGroup, per partition);
- ``generation``: the generation ids differ;
- ``membership``: member id, leader, member list (with instance ids and metadata) or assignment differ;
- ``protocol``: protocol type or name differ;
- ``timing``: the answer came more than the window apart in latency, or one side answered and the
  other did not before the probe ended;
- ``closed``: one side closed the connection instead of answering;
- ``malformed``: one side's answer could not be read as the response asked for (bytes that end early or run
  on, a null in a non-nullable field, a frame size Kafka refuses): a Kafka client drops such an answer.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.types import Errors

from wire.conform.driver import Exchange, Run

#: JoinGroup answers whose member id is the broker's choice for the asking member: NONE, MEMBER_ID_REQUIRED
LEARNED = (0, 79)
CLASSES = ("error-code", "generation", "membership", "protocol", "timing", "closed", "malformed")
_CLASS_OF_FIELD = {"error": "error-code", "member_errors": "error-code", "generation": "generation",
                   "member_id": "membership", "leader": "membership", "members": "membership",
                   "assignment": "membership", "protocol_type": "protocol", "protocol_name": "protocol"}


@dataclass(frozen=True, slots=True)
class Difference:
    """One field of one answer where target and reference disagree."""

    step: str
    cls: str
    field: str
    target: Any
    reference: Any

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, "class": self.cls, "field": self.field, "target": self.target,
                "reference": self.reference}


def error_name(code: int) -> str:
    try:
        return Errors(code).name
    except ValueError:
        return f"ERROR_{code}"


def labeller(run: Run) -> dict[str, str]:
    """Raw member id -> structural label for one run."""
    labels: dict[str, str] = {"": ""}
    counts: dict[str, int] = {}
    for ex in run.exchanges:
        if ex.api == "JoinGroup" and ex.response and ex.response["error_code"] in LEARNED \
                and ex.response.get("member_id") not in labels:
            counts[ex.member] = counts.get(ex.member, 0) + 1
            n = counts[ex.member]
            labels[ex.response["member_id"]] = ex.member if n == 1 else f"{ex.member}#{n}"
    unknown = 0
    for ex in run.exchanges:
        for mid in _ids_in(ex):
            if mid not in labels:
                unknown += 1
                labels[mid] = f"?{unknown}"
    return labels


def _ids_in(ex: Exchange) -> list[str]:
    ids = [str(ex.request.get("member_id", ""))]
    ids += [str(m[0]) for m in ex.request.get("members", ())]
    ids += [str(a[0]) for a in ex.request.get("assignments", ())]
    r = ex.response or {}
    ids += [r.get("member_id") or "", r.get("leader") or ""]
    ids += [m.get("member_id") or "" for m in r.get("members", [])]
    return ids


def answer(ex: Exchange, labels: dict[str, str]) -> dict[str, Any] | None:
    """The structural answer to one exchange (None: not answered; {"closed": True}: connection closed)."""
    if ex.closed:
        return {"closed": True}
    if ex.malformed:
        return {"malformed": ex.malformed}
    r = ex.response
    if r is None:
        return None
    out: dict[str, Any] = {"error": error_name(r["error_code"])}
    if ex.api == "JoinGroup":
        out.update(generation=r["generation_id"], member_id=labels.get(r["member_id"], r["member_id"]),
                   leader=labels.get(r["leader"], r["leader"]), protocol_name=r["protocol_name"] or "",
                   members=sorted(_member_text(m, labels) for m in r["members"]))
        if ex.version >= 7:
            out["protocol_type"] = r["protocol_type"]
    elif ex.api == "SyncGroup":
        out["assignment"] = r["assignment"]
        if ex.version >= 5:
            out.update(protocol_type=r["protocol_type"], protocol_name=r["protocol_name"])
    elif ex.api == "LeaveGroup" and ex.version >= 3:
        out["member_errors"] = [f"{labels.get(m['member_id'], m['member_id'])}/{m['group_instance_id']}:"
                                f"{error_name(m['error_code'])}" for m in r["members"]]
    return out


def _member_text(m: dict[str, Any], labels: dict[str, str]) -> str:
    text = labels.get(m["member_id"], m["member_id"])
    if m.get("group_instance_id"):
        text += f"[{m['group_instance_id']}]"
    return f"{text}:{m['metadata']}"


def request_text(ex: Exchange, labels: dict[str, str]) -> str:
    """One line naming what was sent, ids labelled (for reports)."""
    f = ex.request
    if not f:
        return f"{ex.api} v{ex.version} (not sent)"
    parts = []
    if "member_id" in f:
        parts.append(f"member={_id_text(f['member_id'], labels)}")
    if "generation_id" in f:
        parts.append(f"gen={f['generation_id']}")
    if f.get("group_instance_id"):
        parts.append(f"instance={f['group_instance_id']}")
    if ex.api == "JoinGroup":
        parts.append(f"session={f['session_timeout_ms']}")
        parts.append(f"type={f['protocol_type']}")
        parts.append("protocols=" + ",".join(n for n, _ in f["protocols"]))
    if ex.api == "LeaveGroup" and ex.version >= 3:
        parts.append("members=" + ",".join(f"{_id_text(m, labels)}/{i}" for m, i in f["members"]))
    if ex.api == "SyncGroup" and f.get("assignments"):
        parts.append("assignments=" + ",".join(sorted(labels.get(str(m), m) for m, _ in f["assignments"])))
    return f"{ex.api} v{ex.version} " + " ".join(parts)


def _id_text(mid: object, labels: dict[str, str]) -> str:
    return labels.get(str(mid), str(mid)) or '""'


def latency(ex: Exchange) -> int | None:
    if ex.sent_ms is None or ex.answered_ms is None:
        return None
    return ex.answered_ms - ex.sent_ms


def compare(target: Run, reference: Run, window_ms: int) -> list[Difference]:
    """Every difference between the two runs' answers, step by step in script order."""
    tl, rl = labeller(target), labeller(reference)
    diffs: list[Difference] = []
    for t, r in zip(target.exchanges, reference.exchanges, strict=True):
        ta, ra = answer(t, tl), answer(r, rl)
        if ta is None or ra is None:
            if (ta is None) != (ra is None):
                diffs.append(Difference(t.label, "timing", "answered", ta is not None, ra is not None))
            continue
        if ta.get("closed") or ra.get("closed"):
            if ta != ra:
                diffs.append(Difference(t.label, "closed", "connection", "closed" if ta.get("closed") else "answered",
                                        "closed" if ra.get("closed") else "answered"))
            continue
        if ta.get("malformed") or ra.get("malformed"):
            if ta != ra:
                diffs.append(Difference(t.label, "malformed", "answer", ta.get("malformed", "well-formed"),
                                        ra.get("malformed", "well-formed")))
            continue
        for name in sorted(set(ta) | set(ra), key=list(_CLASS_OF_FIELD).index):
            if ta.get(name) != ra.get(name):
                diffs.append(Difference(t.label, _CLASS_OF_FIELD[name], name, ta.get(name), ra.get(name)))
        lt, lr = latency(t), latency(r)
        if lt is not None and lr is not None and abs(lt - lr) > window_ms:
            diffs.append(Difference(t.label, "timing", "latency_ms", _round(lt), _round(lr)))
    return diffs


def _round(ms: int) -> int:
    """Latencies in reports are rounded to 500 ms (the smallest timing window) so that equal answers give
    equal report bytes: timers fire at multiples of seconds, while the wire adds a few jittery ms."""
    return int(round(ms / 500.0)) * 500
