"""A step's answers against the model's, field by field (issue 27 item 4): the coordinator's responses as ``Got``
values, the model's answers as ``Want`` values, and a matching in which every field of every answer is either
compared or named in the README as not predicted.

The coarse key of an answer is (slot value before the step, API, error, generation, layout tag); the fine fields are
compared by *rule*, each named so that a run says which one a step broke and a test can switch one off
(``rules_off``) to show that a seeded mutant is caught by that rule and no other:

  join-member-id        a JoinGroup answer's member id: the member's own id after the step, the id it carried, or ""
  join-leader-id        its leader id: the member's own, the group's leader after the step, the leader of when a static
                        replacement was taken, or ""
  join-member-list      its member list: every member after the step with its group.instance.id (and, with a shadow,
                        the metadata of the group's protocol), or none
  join-skip-assignment  skipAssignment (KIP-814): true for the static leader of a v9 restart only
  join-protocol         protocol name and type: the group's, or none
  sync-assignment       a SyncGroup answer's assignment: the member's, or none for an error
  leave-member-errors   a LeaveGroup v3+ answer: the top-level error and one error per identity, in request order
  stored-record         what an append stores and what a load brings back (harness/shadow.py)
  static-protocol-selection  a static restart with new metadata in Stable rebalances iff it changes the protocol

What a layout means is the model's (model/outputs.py ``join_layout``, ``leave_layout``, ``sync_assignment``).
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Iterator, Mapping

from core.responses import Response
from model.outputs import (APPEND_GEN, ECHO, EMPTY_ID, FORMER_ID, FORMER_LEADER, GROUP_LEADER, GROUP_PROTOCOL,
                           NO_LEADER, OWN, PRIOR_LEADER, SELF, STATIC, STATIC_FORMER, Answer, JoinLayout,
                           answerable_on_a_dead_group, join_layout)
from model.state import FREE, Slot

RULES = ("join-member-id", "join-leader-id", "join-member-list", "join-skip-assignment", "join-protocol",
         "sync-assignment", "leave-member-errors", "stored-record", "static-protocol-selection")
#: switched off: ``rules_off`` in a test, or KGC_RULES_OFF="a,b" for a whole process and the workers it starts
_DISABLED: set[str] = {r for r in os.environ.get("KGC_RULES_OFF", "").split(",") if r in RULES}


@contextmanager
def rules_off(*names: str) -> Iterator[None]:
    """Switch the named output rules off while the block runs (a test's way to show what only one rule catches)."""
    unknown = sorted(set(names) - set(RULES))
    if unknown:
        raise ValueError(f"unknown output rule(s) {', '.join(unknown)}; the rules are {', '.join(RULES)}.")
    added = set(names) - _DISABLED
    _DISABLED.update(added)
    saved = os.environ.get("KGC_RULES_OFF")
    os.environ["KGC_RULES_OFF"] = ",".join(sorted(_DISABLED))   # for worker processes started meanwhile
    try:
        yield
    finally:
        _DISABLED.difference_update(added)
        if saved is None:
            os.environ.pop("KGC_RULES_OFF", None)
        else:
            os.environ["KGC_RULES_OFF"] = saved


def checks(rule: str) -> bool:
    return rule not in _DISABLED


@dataclass(frozen=True, slots=True)
class Got:
    """One concrete answer: the slot value it goes to (before the step), the coarse fields, the response and the
    member id the answer was attributed to."""

    value: Slot
    api: str
    error: str
    generation: Any
    tag: str
    resp: Response
    mid: str

    def coarse(self) -> tuple[Any, ...]:
        return (self.value, self.api, self.error, self.generation, self.tag)


@dataclass(frozen=True, slots=True)
class Want:
    """One model answer with its layout tag (LeaveGroup) and the number its generation stands for."""

    value: Slot
    answer: Answer
    generation: Any
    tag: str

    def coarse(self) -> tuple[Any, ...]:
        return (self.value, self.answer.api, self.answer.error, self.generation, self.tag)


@dataclass
class Context:
    """What the fine fields are compared with: the answering group objects and what the request history says."""

    group: Any = None                 # the cached group after the step
    orphan: Any = None                # the group object of the oldest pending append before the step
    typed: bool = False               # answers carry the protocol type (2.5+)
    kip814: bool = False              # the release answers a v9 static restart with skipAssignment (3.2+)
    prior: Mapping[Hashable, str] = field(default_factory=dict)    # request key -> leader id at its replacement
    skip: Mapping[Hashable, bool] = field(default_factory=dict)    # request key -> the JoinGroup was v9+
    #: (group object, member id, protocol) -> the member's metadata for it, as the shadow knows it (None: unknown)
    metadata: Callable[[Any, str, str], bytes | None] | None = None
    #: member id a static replacement gave -> (leader id at that replacement, its JoinGroup asked to skip)
    former: Mapping[str, tuple[str, bool]] = field(default_factory=dict)


def _group_of(want: Want, ctx: Context) -> Any:
    return ctx.orphan if want.answer.generation == "append" else ctx.group


def _layouts(want: Want, got: Got, ctx: Context) -> list[JoinLayout]:
    shape = want.answer.shape
    if shape == STATIC_FORMER:   # the closure's request decides the form: the one that got the former id
        known = ctx.former.get(got.resp.member_id)
        return [join_layout(shape, typed=ctx.typed, skip_supported=s)
                for s in ([False, True] if known is None else [known[1] and ctx.kip814])]
    if shape != STATIC:
        return [join_layout(shape, typed=ctx.typed)]
    skip = ctx.skip.get(got.resp.key)
    options = [False, True] if skip is None else [skip and ctx.kip814]
    layouts = [join_layout(shape, typed=ctx.typed, skip_supported=s, leader_after=lead)
               for s in options for lead in ((False, True) if s else (False,))]
    if want.answer.generation == APPEND_GEN:   # the store callback of an unloaded (Dead) group object
        layouts = [x for x in layouts if answerable_on_a_dead_group(x)]
    return layouts


def _join_fails(layout: JoinLayout, got: Got, group: Any, ctx: Context) -> str | None:
    """The first rule a JoinGroup answer breaks against ``layout`` (None: it fits)."""
    r = got.resp
    members = {} if group is None else group.members
    leader = None if group is None else group.leader_id
    if checks("join-member-id") and not {
            OWN: r.member_id != "" and r.member_id in members,
            ECHO: r.member_id != "" and (r.member_id == got.mid
                                         or r.member_id in getattr(group, "pending_members", ())),
            EMPTY_ID: r.member_id == "",
            FORMER_ID: r.member_id != "" and r.member_id not in members and r.member_id in ctx.former}[layout.member]:
        return "join-member-id"
    if checks("join-leader-id"):
        prior = ctx.prior.get(r.key)
        fits = {SELF: r.leader_id != "" and r.leader_id == r.member_id,
                GROUP_LEADER: r.leader_id != "" and r.leader_id == leader and r.leader_id != r.member_id,
                PRIOR_LEADER: r.leader_id == prior if prior is not None else r.leader_id != "",
                NO_LEADER: r.leader_id == "",
                FORMER_LEADER: r.member_id in ctx.former and r.leader_id == ctx.former[r.member_id][0]}[layout.leader]
        if not fits:
            return "join-leader-id"
    if checks("join-member-list") and not _list_fits(layout.members, r, group, ctx):
        return "join-member-list"
    if checks("join-skip-assignment") and r.skip_assignment != layout.skip:
        return "join-skip-assignment"
    if checks("join-protocol"):
        name = (getattr(group, "protocol_name", None) or "") if layout.protocol == GROUP_PROTOCOL else ""
        typ = (getattr(group, "protocol_type", None) or "") if layout.protocol_type == GROUP_PROTOCOL else ""
        if r.protocol_name != name or r.protocol_type != typ:
            return "join-protocol"
    return None


def _list_fits(listed: bool, r: Response, group: Any, ctx: Context) -> bool:
    """The member list: every member of the group after the step, each with its group.instance.id and its metadata for
    the group's protocol (as the shadow knows it, else as the group holds it) — or nothing."""
    if not listed or group is None:
        return r.members == () and r.member_instances == () and r.member_metadata == ()
    if sorted(r.members) != sorted(group.members) or len(set(r.members)) != len(r.members):
        return False
    protocol = group.protocol_name or ""
    for mid, instance, meta in zip(r.members, r.member_instances, r.member_metadata, strict=True):
        member = group.members[mid]
        if instance != (member.group_instance_id or ""):
            return False
        known = ctx.metadata(group, mid, protocol) if ctx.metadata is not None else None
        if meta != (known if known is not None else dict(member.protocols).get(protocol)):
            return False
    return True


def fails(want: Want, got: Got, ctx: Context) -> str | None:
    """The first output rule ``got`` breaks as the answer ``want`` (None: it is that answer)."""
    if got.api == "JoinGroup":
        first = None
        group = _group_of(want, ctx)
        layouts = _layouts(want, got, ctx)
        if not layouts:
            return "join-member-list"   # no answer of this shape can be built (model/outputs.py)
        for layout in layouts:
            rule = _join_fails(layout, got, group, ctx)
            if rule is None:
                return None
            first = first or rule
        return first
    if got.api == "SyncGroup" and checks("sync-assignment"):
        if got.error != "NONE":
            return None if got.resp.assignment == b"" else "sync-assignment"
        member = None if ctx.group is None else ctx.group.members.get(got.mid)
        if member is not None and got.resp.assignment != member.assignment:
            return "sync-assignment"   # what it answers is what the group holds (the shadow checks the value)
    return None


def match(wants: list[Want], gots: list[Got], ctx: Context) -> tuple[bool, str | None]:
    """(coarse, rule): whether the coarse keys pair up one to one, and — if they do — the first output rule no pairing
    satisfies (None: every answer is the model's, field by field)."""
    def keys(items: list[Any]) -> list[str]:
        return sorted(repr(x.coarse()) for x in items)
    others = [w for w in wants if w.answer.api != "LeaveGroup"], [g for g in gots if g.api != "LeaveGroup"]
    if not checks("leave-member-errors"):   # a LeaveGroup's errors are then not compared at all
        wants, gots = others
    elif keys(wants) != keys(gots):
        # the answers differ only in a LeaveGroup's top-level or per-identity errors (§3.4): that rule's
        return (True, "leave-member-errors") if keys(others[0]) == keys(others[1]) else (False, None)
    failed: list[str] = []
    if _pair(list(wants), list(gots), ctx, failed):
        return True, None
    # the rule of the closest pairing: the one that fits the most fields (rules are checked in RULES order)
    return True, max(failed, key=RULES.index) if failed else "answers"


def _pair(wants: list[Want], gots: list[Got], ctx: Context, failed: list[str]) -> bool:
    """A perfect matching of wants to gots with equal coarse keys whose fine fields fit (backtracking: the lists are
    a handful long)."""
    if not wants:
        return True
    w = wants[0]
    for k, g in enumerate(gots):
        if g.coarse() != w.coarse():
            continue
        rule = fails(w, g, ctx)
        if rule is not None:
            failed.append(rule)
            continue
        if _pair(wants[1:], gots[:k] + gots[k + 1:], ctx, failed):
            return True
    return False


def show(gots: list[Got]) -> list[str]:
    return [f"{g.api}({g.value.short()}) {g.error} gen={g.generation}" + (f" {g.tag}" if g.tag != "-" else "")
            + (f" member={g.resp.member_id or '-'} leader={g.resp.leader_id or '-'} members={list(g.resp.members)}"
               f"{' skip' if g.resp.skip_assignment else ''} protocol={g.resp.protocol_name or '-'}"
               if g.api == "JoinGroup" else "") for g in gots]


__all__ = ["Context", "FREE", "Got", "RULES", "Want", "checks", "fails", "match", "rules_off", "show"]
