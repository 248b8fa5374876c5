"""Response-level properties of a target run: the part of the catalog that needs no internal state.

Pure functions over a run's recorded exchanges (wire/conform/driver.py ``Run``), checked on every
target run whatever the reference says. Each returns the steps where it fails, with a sentence.
They mirror catalog properties (properties/concrete_requests.py, properties/abstract_outputs.py)
as far as answers alone can show them; the names are kebab-case and never change once published.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from wire.conform.driver import Exchange, Run

NONE, FENCED = 0, 82


@dataclass(frozen=True, slots=True)
class PropertyFailure:
    property: str
    step: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"property": self.property, "step": self.step, "message": self.message}


Check = Callable[[Run], list[tuple[str, str]]]


def _no_ids(text: str, labels: dict[str, str]) -> str:
    """Messages name members by their structural labels, never by the broker's ids (stable report bytes)."""
    for raw, label in sorted(labels.items(), key=lambda kv: -len(kv[0])):
        if raw:
            text = text.replace(raw, label)
    return text


def _answered(run: Run) -> list[Exchange]:
    """Exchanges with an answer, in the order the answers arrived (script order breaks ties)."""
    done = [e for e in run.exchanges if e.response is not None and e.answered_ms is not None]
    order = {e.label: i for i, e in enumerate(run.exchanges)}
    return sorted(done, key=lambda e: (e.answered_ms, order[e.label]))


def _joined(run: Run) -> list[Exchange]:
    return [e for e in _answered(run) if e.api == "JoinGroup" and e.response["error_code"] == NONE]


def answered_at_most_once(run: Run) -> list[tuple[str, str]]:
    bad = [(e.label, "the answer carried another request's correlation id") for e in run.exchanges
           if not e.correlation_ok]
    bad += [(f"{m}.connection", f"member {m}'s connection received an answer to no outstanding request")
            for m in run.stray]
    return bad


def generation_monotone(run: Run) -> list[tuple[str, str]]:
    bad, highest = [], None
    for e in _joined(run):
        gen = e.response["generation_id"]
        if highest is not None and gen < highest:
            bad.append((e.label, f"generation {gen} was answered after generation {highest}"))
        highest = gen if highest is None else max(highest, gen)
    return bad


def one_leader_and_protocol_per_generation(run: Run) -> list[tuple[str, str]]:
    """A v9 answer with skipAssignment (KIP-814) is the leader's static restart inside its generation: the leader is
    re-keyed to the restart's new member id (GroupCoordinator.scala 3.9.0-rc3 1407-1422, SPEC.md Corrections 1), so
    it names itself and the generation's leader is that id from then on; the protocol stays."""
    bad, seen = [], {}
    for e in _joined(run):
        r = e.response
        shape = (r["leader"], r["protocol_name"], r["protocol_type"] if e.version >= 7 else None)
        if r.get("skip_assignment") and r["leader"] == r["member_id"] and r["generation_id"] in seen:
            label, (_, protocol, kind) = seen[r["generation_id"]]
            seen[r["generation_id"]] = (label, (r["leader"], protocol, kind))
        first = seen.setdefault(r["generation_id"], (e.label, shape))
        if first[1][:2] != shape[:2] or (shape[2] is not None and first[1][2] not in (None, shape[2])):
            bad.append((e.label, f"generation {r['generation_id']} was told leader {shape[0]} and protocol "
                                 f"{shape[1]}, but {first[0]} was told leader {first[1][0]} and {first[1][1]}"))
    return bad


def leader_gets_the_member_list(run: Run) -> list[tuple[str, str]]:
    bad = []
    for e in _joined(run):
        r = e.response
        ids = [m["member_id"] for m in r["members"]]
        if r["member_id"] == r["leader"] and r["member_id"] not in ids:
            bad.append((e.label, f"the leader's JoinGroup answer lists {len(ids)} member(s), not the leader itself"))
        if r["member_id"] != r["leader"] and ids:
            bad.append((e.label, f"a follower's JoinGroup answer lists {len(ids)} member(s)"))
        if len(set(ids)) != len(ids):
            bad.append((e.label, "the member list names a member twice"))
    return bad


def _removed_by(e: Exchange) -> list[str]:
    """Member ids this answer says are gone: fenced, or left with success."""
    r, f = e.response or {}, e.request
    if r.get("error_code") == FENCED and f.get("member_id"):
        return [str(f["member_id"])]
    if e.api == "LeaveGroup" and e.version < 3 and r.get("error_code") == NONE:
        return [str(f["member_id"])]
    if e.api == "LeaveGroup" and e.version >= 3:
        return [m["member_id"] for m in r.get("members", []) if m["error_code"] == NONE and m["member_id"]]
    return []


def removed_member_gets_no_success(run: Run) -> list[tuple[str, str]]:
    bad, gone = [], {}
    for e in _answered(run):
        mid = str(e.request.get("member_id", ""))
        if mid in gone and e.api != "LeaveGroup" and e.sent_ms is not None and e.sent_ms >= gone[mid][1] \
                and e.response["error_code"] == NONE:
            bad.append((e.label, f"member {gone[mid][0]}'s id was fenced or left, yet {e.api} answered NONE"))
        for removed in _removed_by(e):
            gone.setdefault(removed, (e.member, e.answered_ms or 0))
    return bad


PROPERTIES: dict[str, tuple[str, Check]] = {
    "each-request-answered-at-most-once": (
        "every answer belongs to one outstanding request, and no request is answered twice", answered_at_most_once),
    "generation-monotone-per-group": (
        "the generations successful JoinGroup answers carry never decrease", generation_monotone),
    "one-leader-and-protocol-per-generation": (
        "every member of a generation is told the same leader and protocol", one_leader_and_protocol_per_generation),
    "leader-gets-the-member-list": (
        "the leader's JoinGroup answer lists the members (itself included, each once); a follower's lists none",
        leader_gets_the_member_list),
    "removed-member-gets-no-success": (
        "a member id that was fenced or left gets no successful answer afterwards", removed_member_gets_no_success),
}


def check_run(run: Run, labels: dict[str, str] | None = None) -> list[PropertyFailure]:
    """Every property failure of one run, property by property in catalog order (ids shown by ``labels``)."""
    return [PropertyFailure(name, step, _no_ids(message, labels or {})) for name, (_claim, fn) in PROPERTIES.items()
            for step, message in fn(run)]
