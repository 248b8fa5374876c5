"""What the coordinator must remember that the abstract model does not name (issue 27 item 4): each member's
group.instance.id, protocol metadata and assignment, the group's selected protocol and protocol type, the record
each pending append stores and the record that is durable — kept from the requests and the model's transitions,
never read back from the coordinator's own fields, and compared with them.

A ``Shadow`` belongs to one linear run (harness/refinement.py keeps it; a fork copies it). After a step the
labelled refinement matched with a model transition (harness/labels.py), ``advance`` applies that transition to
the shadow and checks what only the shadow can: the values of SyncGroup assignments and of a leader's member list,
the protocol a join completion selects (SPEC.md §3.6: a vote winner among the protocols every member supports),
whether a static restart with new metadata in Stable rebalances (iff it changes the protocol, §3.1 J5a step 4),
what each append stores (model.outputs.Write: §3.7 "what is persisted") and what a load brings back. A failure names
its rule (harness/answers.py RULES) and leaves the shadow as it was.

Identities are the coordinator's member ids (the abstraction already maps them to slots); a static restart or its
revert moves an entry from the old id to the new one as the group.instance.id's mapping moves — and a revert keeps
the restart's metadata (SPEC.md Corrections 2).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Hashable

from harness.answers import Got, checks
from model.outputs import (CURRENT, FROM_MEMBERS, FROM_REQUEST, WRITE_ASSIGNMENT, WRITE_STATIC, WRITE_TOMBSTONE,
                           Write)

Protocols = tuple[tuple[str, bytes], ...]


@dataclass(frozen=True, slots=True)
class Member:
    instance: str | None
    protocol_type: str
    protocols: Protocols
    assignment: bytes = b""


@dataclass(frozen=True, slots=True)
class Record:
    """A group record as the comparison sees it: every field the model and the shadow predict."""

    generation: int
    protocol_type: str | None
    protocol: str | None
    leader: str | None
    members: tuple[tuple[str, str | None, str, Protocols, bytes], ...]   # (id, instance, type, protocols, assignment)

    @staticmethod
    def of_impl(record: tuple[Any, ...] | None) -> "Record | None":
        if record is None:
            return None
        generation, protocol_type, protocol, leader, members = record
        return Record(generation, protocol_type, protocol, leader,
                      tuple(sorted((m[0], m[8], m[5], tuple(m[6]), bytes(m[7])) for m in members)))


def winners(members: dict[str, Member]) -> set[str]:
    """selectProtocol (SPEC.md §3.6): the names every member supports; each member votes for its first such name;
    the names with the most votes (Kafka breaks a tie by hash-map order, so any of them)."""
    if not members:
        return set()
    candidates = set.intersection(*({n for n, _ in m.protocols} for m in members.values()))
    votes: dict[str, int] = {}
    for m in members.values():
        choice = next((n for n, _ in m.protocols if n in candidates), None)
        if choice is not None:
            votes[choice] = votes.get(choice, 0) + 1
    top = max(votes.values(), default=0)
    return {n for n, v in votes.items() if v == top}


@dataclass
class Shadow:
    members: dict[str, Member] = field(default_factory=dict)
    protocol: str | None = None
    protocol_type: str | None = None
    durable: Record | None = None
    pending: dict[int, tuple[Record | None, dict[str, bytes]]] = field(default_factory=dict)   # append seq ->
    prior: dict[Hashable, str] = field(default_factory=dict)    # request key -> leader id when it was replaced
    skip: dict[Hashable, bool] = field(default_factory=dict)    # request key -> a v9 restart on a KIP-814 release
    #: member id a static restart was given -> (leader id when it was replaced, the restart asked to skip): what the
    #: answer of its store callback names when a later restart re-keyed the member (model/static.py ``_rekeyed``)
    former: dict[str, tuple[str, bool]] = field(default_factory=dict)

    def copy(self) -> "Shadow":
        return Shadow(dict(self.members), self.protocol, self.protocol_type, self.durable, dict(self.pending),
                      dict(self.prior), dict(self.skip), dict(self.former))

    @staticmethod
    def adopt(coord: Any, group_id: str) -> "Shadow":
        """A shadow started on a coordinator that already holds state (a run that begins mid-way): it takes the
        coordinator's word for what is there now and checks everything from here on."""
        s = Shadow(durable=Record.of_impl(coord.log.get(group_id)))
        group = coord.groups.get(group_id)
        if group is not None:
            s.members = {m.member_id: Member(m.group_instance_id, m.protocol_type, tuple(m.protocols), m.assignment)
                         for m in group.all_members()}
            s.protocol, s.protocol_type = group.protocol_name, group.protocol_type
        for p in coord.appends:
            s.pending[p.seq] = (Record.of_impl(p.record) if p.group.group_id == group_id else None, dict(p.assignment))
        return s

    def protocol_map(self) -> dict[str, tuple[str, Protocols]]:
        return {mid: (m.protocol_type, m.protocols) for mid, m in self.members.items()}

    def metadata(self, mid: str, protocol: str) -> bytes | None:
        m = self.members.get(mid)
        return None if m is None else dict(m.protocols).get(protocol)

    # -- one step -----------------------------------------------------------------------------------------------
    def advance(self, step: "StepView") -> tuple["Shadow", str | None]:
        """The shadow after ``step`` and None, or (``self``, why the step breaks a rule)."""
        nxt = self.copy()
        why = nxt._take(step)
        return (nxt, None) if why is None else (self, why)

    def _take(self, st: "StepView") -> str | None:
        group = st.group_after
        if st.kind == "LoadGroup":
            return self._loaded(st)
        if st.kind == "JoinGroup/static-rejoin" and st.accepted:   # what its answer names, now or from a callback
            self.prior[st.request.key] = st.leader_before or ""
            self.skip[st.request.key] = st.skip
            given = st.group_after.static_members.get(st.request.group_instance_id) if st.group_after else None
            if given is not None:
                self.former[given] = (st.leader_before or "", st.skip)
        if group is None:
            self.members, self.protocol, self.protocol_type = {}, None, None
        else:
            if group is not st.group_before:   # created by this step: a new group starts with nothing recorded
                self.members, self.protocol, self.protocol_type = {}, None, None
            why = self._members(st)
            if why is not None:
                return why
        return self._records(st)

    def _members(self, st: "StepView") -> str | None:
        group, req = st.group_after, st.request
        rekey = st.rekeyed()
        joining = req is not None and req.api == "JoinGroup" and st.accepted
        out: dict[str, Member] = {}
        for mid in sorted(group.members):
            old = mid if mid in self.members else rekey.get(mid)
            m = self.members.get(old) if old is not None else None
            if m is None:   # a member this step added: the request's identity and metadata
                m = Member(req.group_instance_id if req is not None else None,
                           req.protocol_type if req is not None else "", tuple(req.protocols) if req else ())
                if not self.members and not out and req is not None:
                    self.protocol_type = req.protocol_type   # the first member of an empty table (§1.4)
            elif joining and st.is_requester(mid):
                m = replace(m, protocol_type=req.protocol_type, protocols=tuple(req.protocols))   # updateMember
            out[mid] = m
        before_state, after_state = st.state_before, group.state.value
        if before_state == "CompletingRebalance" and after_state == "PreparingRebalance":
            out = {k: replace(m, assignment=b"") for k, m in out.items()}   # resetAndPropagateAssignmentError
        if before_state == "CompletingRebalance" and after_state == "Stable" and group is st.group_before:
            stored = st.stored_map(self.pending)
            out = {k: replace(m, assignment=stored.get(k, b"")) for k, m in out.items()}
        if st.restart_in_stable and checks("static-protocol-selection"):
            why = _selection(self.protocol, winners(out), after_state)
            if why is not None:
                return why
        self.members = out
        if st.new_generation and after_state == "CompletingRebalance":
            chosen = group.protocol_name
            if checks("join-protocol") and chosen not in winners(out):
                return (f"join-protocol: the join completion selected {chosen!r}, but the protocols the members sent "
                        f"elect {sorted(winners(out))} (SPEC.md §3.6)")
            self.protocol = chosen
        if after_state == "Empty":
            self.protocol = None
        return self._answers(st)

    def _answers(self, st: "StepView") -> str | None:
        """The values only the shadow knows: a SyncGroup's assignment, a leader's member list's metadata."""
        for g in st.gots:
            mid = st.after_id(g.mid)
            m = self.members.get(mid)
            if g.api == "SyncGroup" and g.error == "NONE" and checks("sync-assignment") and m is not None \
                    and g.resp.assignment != m.assignment:
                return (f"sync-assignment: {g.resp.render()} carries {g.resp.assignment!r}, but the member's stored "
                        f"assignment is {m.assignment!r} (SPEC.md §3.2)")
            if g.api == "JoinGroup" and g.resp.members and checks("join-member-list") and st.group_after is not None:
                protocol = g.resp.protocol_name
                for lid, instance, meta in zip(g.resp.members, g.resp.member_instances, g.resp.member_metadata,
                                               strict=False):
                    known = self.members.get(lid)
                    if known is not None and (meta != dict(known.protocols).get(protocol)
                                              or instance != (known.instance or "")):
                        return (f"join-member-list: {g.resp.render()} lists {lid} with ({instance!r}, {meta!r}); "
                                f"that member sent ({known.instance!r}, {dict(known.protocols).get(protocol)!r})")
        return None

    def _records(self, st: "StepView") -> str | None:
        if not checks("stored-record"):
            return None
        if st.kind == "CompleteAppend" and st.completed_seq in self.pending:
            record, _ = self.pending.pop(st.completed_seq)
            if st.ok and st.completed_group_is_ours:
                self.durable = record
                why = _compare("the completed append made durable", record, st.durable_after)
                if why is not None:
                    return why
        made = st.new_appends()
        for k, w in enumerate(st.writes):
            expected = None if w.kind == WRITE_TOMBSTONE else self._record(w, st)
            if st.deferred and w.kind != WRITE_TOMBSTONE:
                if k >= len(made):
                    return f"stored-record: the model appends {w}, the coordinator appends nothing"
                seq, record = made[k]
                self.pending[seq] = (expected, dict(st.request_map()))
                why = _compare(f"the append ({w})", expected, Record.of_impl(record))
            else:
                self.durable = expected
                why = _compare(f"the record ({w})", expected, st.durable_after)
            if why is not None:
                return why
        if len(made) > len([w for w in st.writes if w.kind != WRITE_TOMBSTONE]) and st.deferred:
            return f"stored-record: the coordinator appends {len(made)} record(s), the model {len(st.writes)}"
        return None

    def _record(self, w: Write, st: "StepView") -> Record:
        group = st.group_after
        generation = st.generation_before if w.generation == CURRENT else st.generation_after
        if w.kind not in (WRITE_ASSIGNMENT, WRITE_STATIC) or group is None:
            return Record(generation, self.protocol_type, None, None, ())
        source = st.request_map() if w.assignments == FROM_REQUEST else {}
        members = []
        for mid in sorted(group.members):
            m = self.members[mid]
            assignment = source.get(mid, b"") if w.assignments == FROM_REQUEST else (
                m.assignment if w.assignments == FROM_MEMBERS else b"")
            members.append((mid, m.instance, m.protocol_type, m.protocols, assignment))
        return Record(generation, self.protocol_type, self.protocol, group.leader_id, tuple(members))

    def _loaded(self, st: "StepView") -> str | None:
        group, d = st.group_after, self.durable
        if checks("stored-record"):
            got = None if group is None else Record(
                group.generation_id, group.protocol_type, group.protocol_name, group.leader_id,
                tuple(sorted((m.member_id, m.group_instance_id, m.protocol_type, tuple(m.protocols), m.assignment)
                             for m in group.all_members())))
            if group is not None and d is not None and not d.members:
                d = replace(d, protocol=None, leader=None)
            why = _compare("the loaded group", d, got)
            if why is not None:
                return why
        self.members = {} if d is None else {mid: Member(inst, ptype, protos, assignment)
                                             for mid, inst, ptype, protos, assignment in d.members}
        self.protocol = None if d is None else d.protocol
        self.protocol_type = None if d is None else d.protocol_type
        return None


def _selection(current: str | None, elected: set[str], after: str) -> str | None:
    """A static restart in Stable with new metadata is stored iff re-selecting keeps the protocol, else rebalances
    (SPEC.md §3.1 J5a step 4, KAFKA-10284); a tie that includes the current protocol allows either."""
    keeps, changes = current in elected, elected != {current}
    if after == "Stable" and not keeps:
        return (f"static-protocol-selection: the restart's metadata elects {sorted(elected)}, not the group's "
                f"{current!r}, yet the group stayed Stable")
    if after == "PreparingRebalance" and not changes:
        return (f"static-protocol-selection: the restart's metadata keeps the protocol {current!r}, yet the group "
                f"rebalanced")
    return None


def _compare(what: str, expected: Record | None, got: Record | None) -> str | None:
    if expected == got:
        return None
    return f"stored-record: {what} should be {expected}, the coordinator has {got}"


class StepView:
    """One step as the shadow reads it (built by harness/labels.py from the capture and the world after)."""

    def __init__(self, *, kind: str, request: Any, accepted: bool, group_before: Any, group_after: Any,
                 state_before: str, generation_before: int, generation_after: int, statics_before: dict[str, str],
                 members_before: frozenset[str], leader_before: str | None, skip: bool,
                 writes: tuple[Write, ...], gots: list[Got], deferred: bool, appends_before: tuple[int, ...],
                 appends_after: list[Any], durable_after: Record | None, completed_seq: int | None, ok: bool,
                 completed_group_is_ours: bool, new_generation: bool, restart_in_stable: bool) -> None:
        self.kind, self.request, self.accepted = kind, request, accepted
        self.group_before, self.group_after, self.state_before = group_before, group_after, state_before
        self.members_before, self.leader_before, self.skip = members_before, leader_before, skip
        self.generation_before, self.generation_after = generation_before, generation_after
        self.statics_before, self.writes, self.gots, self.deferred = statics_before, writes, gots, deferred
        self.appends_before, self.appends_after, self.durable_after = appends_before, appends_after, durable_after
        self.completed_seq, self.ok, self.completed_group_is_ours = completed_seq, ok, completed_group_is_ours
        self.new_generation, self.restart_in_stable = new_generation, restart_in_stable

    def rekeyed(self) -> dict[str, str]:
        """Member id now -> member id before, for each group.instance.id whose mapping this step moved."""
        group = self.group_after
        out = {}
        for instance, mid in group.static_members.items():
            old = self.statics_before.get(instance)
            if old is not None and old != mid:
                out[mid] = old
        return out

    def after_id(self, mid: str) -> str:
        moved = {old: new for new, old in self.rekeyed().items()} if self.group_after is not None else {}
        return moved.get(mid, mid)

    def is_requester(self, mid: str) -> bool:
        req = self.request
        if req.member_id:
            return mid == req.member_id
        return mid not in self.members_before or mid in self.rekeyed()

    def stored_map(self, pending: dict[int, tuple[Record | None, dict[str, bytes]]]) -> dict[str, bytes]:
        """The assignment map of the store that made the group Stable: the completing append's, or (a synchronous
        append) the leader's SyncGroup's."""
        if self.completed_seq is not None:
            return pending.get(self.completed_seq, (None, {}))[1]
        return self.request_map()

    def request_map(self) -> dict[str, bytes]:
        req = self.request
        return dict(req.assignments) if req is not None and req.api == "SyncGroup" else {}

    def new_appends(self) -> list[tuple[int, tuple[Any, ...]]]:
        return [(p.seq, p.record) for p in self.appends_after if p.seq not in self.appends_before]


__all__ = ["Member", "Record", "Shadow", "StepView", "winners"]
