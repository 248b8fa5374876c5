"""The answers half of the 4.1 refinement (issue 25): each judged step's answers against the model outputs of a path.

harness/refinement_4x.py judges abstract states; this judges what the Java runtime (impl/java_gc) *answers* on the same
step, with the machinery of the Scala profiles' labelled refinement (harness/labels.py ``label_all`` names a request's
abstract action and cell, harness/did.py ``gots`` attributes each answer to a slot, harness/answers.py ``match``
compares API, error, generation and the JoinGroup fields). What differs on 4.x and how it is read:

- a request is labelled from a ``Before`` filled from the runtime (``capture``; the group is the one in its partition's
  group map); a timer event is the Expire action of its key's task (a heartbeat task: of its member's slot);
- a step is a *sequence*: the labelled request (or at most one other action of the kinds harness/refinement_4x.py
  ``allowed_kinds`` allows) and one ``CompleteAppend`` per modelled write the step finished, in any order (a batch
  commit finishes several writes and answers the requests of each, in order: R3). Slot positions are kept along the
  sequence (model.step ``outcomes_written(canonical=False)``) so that every model answer names a slot of the state
  before the step, the value ``did.gots`` attributes the coordinator's answers to. An answer that fits no outcome of
  any sequence reaching the state after the step is a refinement violation;
- an answer the runtime *holds* behind earlier writes (a Heartbeat, LeaveGroup or OffsetCommit of a write not done,
  R3) is judged when the operation decides it — at the request's step, as the model answers the request — and its
  release by a later commit must be that answer, released in write order;
- a write that *fails* (a failed flush, a write timeout, an unload: R2) answers its request with the failure mapped by
  the model's table (``ModelProfile.store_errors``, R8; a JoinGroup also with generation -1 and no member id); the
  model has no action for a write without a record, so such answers are judged by that table alone. A parked
  JoinGroup/SyncGroup a failed write already answered stays on its member and a later completion answers nothing
  (ClassicGroupMember keeps the completed future): the model's answer to that member is then not expected.

Not judged on 4.1 (README "Kafka 4.x"): the armed timers (``did.arms`` reads the Scala purgatory), and what the Scala
run's shadow checks (harness/shadow.py: stored records, assignment values, protocol selection) — it reads the Scala
coordinator's appends and log.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import product
from typing import Any, Hashable, Iterator

from core.actions import Action
from core.responses import Response
from harness import did
from harness.abstraction_4x import pending_appends, slots_by_id
from harness.answers import Context, Got, Want, match, show
from harness.external import WireRequest
from harness.labels import Before, label_all, take_request
from harness.world import World
from model.outputs import (ERROR_ID, ERROR_NO_ID, PRECHECK_CELLS, Answer, Outputs, leave_layout,
                           store_error)
from model.profiles import ModelProfile, get_model_profile
from model.releases import fact
from model.state import FREE, AbstractAction, Scope, Slot, State
from model.step import enabled, outcomes_written

#: OffsetCommit v9+ answers GROUP_ID_NOT_FOUND for a missing group (OffsetMetadataManager.java@4.1.1:456-479); the
#: world's simulated clients send the newest version
COMMIT_NOT_FOUND_SINCE = 9
#: the most sequences (with the silenced-answer variants) one step's answers are tried against
MAX_VARIANTS = 64
Key = Hashable


@dataclass(frozen=True, slots=True)
class GroupAccess:
    """The fields harness/answers.py reads of a group, from a ClassicGroup (impl/java_gc/group.py)."""

    members: dict[str, Any]
    leader_id: str | None
    protocol_name: str | None
    protocol_type: str | None
    pending_members: frozenset[str]

    @staticmethod
    def of(group: Any) -> "GroupAccess | None":
        if group is None:
            return None
        return GroupAccess(dict(group.members), group.leader_id, group.protocol_name, group.protocol_type,
                           frozenset(group.pending_join_members))


def _partition(world: World) -> Any:
    coord = world.coord
    return coord.partitions.get(coord.partition_for(world.group_id))


def live_group(world: World) -> Any:
    part = _partition(world)
    return None if part is None else part.groups.get(world.group_id)


def capture(world: World, state: State, inert: frozenset[int], action: Action) -> Before:
    """harness/labels.py ``capture`` for the Java runtime: what labelling the step and attributing its answers need."""
    group = live_group(world)
    before = Before(state, partition=world.partition, action=action, group=group)
    appends = pending_appends(world.coord, world.group_id)
    if appends:
        first = appends[0].callback
        if first[0] in ("assignment", "static"):
            before.append_group = first[1]
            before.append_generation = first[1].generation_id
    if group is not None:
        before.slot_of = slots_by_id(world.coord, group, inert)
        before.generation, before.protocol_type = group.generation_id, group.protocol_type
        before.statics = dict(group.static_members)
        before.leader_id, before.state_name = group.leader_id, group.state.value
        for mid, m in group.members.items():
            for fut in (m.awaiting_join, m.awaiting_sync):
                if fut is not None and not fut.done:
                    before.parked[fut.key] = mid
            before.protocols[mid] = (m.protocol_type, m.protocols)
            before.timeouts[mid] = (m.session_timeout_ms, m.rebalance_timeout_ms)
    take_request(world, before, action)
    return before


@dataclass(frozen=True, slots=True)
class Pending:
    """A write not done before the step whose request is not answered yet."""

    seq: int
    api: str


@dataclass
class Taken:
    """What a step's answers are judged against, taken before it."""

    before: Before
    pending: dict[Key, Pending]                  # request key -> its write (not done, future not completed)
    silenced: list[tuple[Slot, str]]            # (slot value, API) of parked futures a failed write answered
    timer: tuple[str, str] | None                # a FireTimer's task: (kind, member id) — None: not a live timer
    held: dict[Key, Response]                    # the checker's held answers before the step


def _pending(world: World) -> dict[Key, Pending]:
    part = _partition(world)
    if part is None:
        return {}
    return {w.future.key: Pending(w.seq, w.api) for _, w in sorted(part.log.writes.items())
            if not w.done and w.future is not None and not w.future.done}


def _silenced(world: World, before: Before) -> list[tuple[Slot, str]]:
    """Model answers the runtime cannot give: to a member whose parked future a failed write already answered, and
    the store callback's answer to a static restart whose JoinGroup was answered since (a join completion): a
    CompletableFuture completes once (GroupMetadataManager.java@4.1.1:7218-7261 completes the restart's future)."""
    group = before.group
    if group is None:
        return []
    out = []
    part = _partition(world)
    for write in sorted(part.log.writes.values(), key=lambda w: w.seq) if part is not None else ():
        callback = write.callback
        if not write.done and callback and callback[0] == "static" and write.future is not None \
                and write.future.done:
            out.append((before.slot_of.get(str(callback[4]), FREE), "JoinGroup"))
    for mid, m in sorted(group.members.items()):
        for fut, api in ((m.awaiting_join, "JoinGroup"), (m.awaiting_sync, "SyncGroup")):
            if fut is not None and fut.done:
                out.append((before.slot_of.get(mid, FREE), api))
    return out


def _timer(world: World, action: Action) -> tuple[str, str] | None:
    if action.kind != "FireTimer":
        return None
    for part in world.coord.partitions.values():
        timer = part.timer
        task = next((t for t in timer.queue + timer.scheduled() if t.seq == action.arg), None)
        if task is not None:
            if not timer.is_live(task):
                return None
            kind = str(task.op[0])
            return kind, str(task.op[2]) if kind == "heartbeat" else ""
    return None


def _detail(action: Action, timer: tuple[str, str] | None) -> str:
    """The raw error of the writes a step fails (R2): a failed flush's, a write timeout's, an unload's."""
    if action.kind in ("FlushBatch", "CompleteAppend") and action.arg not in ("NONE", None):
        return str(action.arg)
    if timer is not None and timer[0] == "write-timeout":
        return "REQUEST_TIMED_OUT"
    if action.kind in ("UnloadGroup", "LoadGroup"):
        return "NOT_COORDINATOR"   # impl: unload fails every pending write NOT_COORDINATOR (CR:736-753)
    return ""


# -- the model side: sequences of actions and their answers -----------------------------------------------------
@dataclass(frozen=True, slots=True)
class Sequence:
    actions: tuple[AbstractAction, ...]
    answers: tuple[tuple[int, Any], ...]   # (slot position in the state before, model Answer)


def _others(state: State, p: ModelProfile, scope: Scope, kinds: frozenset[str] | None, fixed: Any,
            b: State, heartbeat_value: Any) -> list[Any]:
    if fixed is not None:
        return [fixed]
    out = []
    for a in enabled(state, p, scope):
        if a.kind == "CompleteAppend" or (kinds is not None and a.kind not in kinds):
            continue
        if a.kind == "ExpireHeartbeat" and heartbeat_value is not None and b.slots[a.slot] != heartbeat_value:
            continue
        out.append(a)
    return out


def sequences(b: State, after: State, p: ModelProfile, scope: Scope, appends: int, detail: str,
              kinds: frozenset[str] | None, fixed: tuple[AbstractAction, ...] | None,
              heartbeat_value: Any = None) -> list[Sequence]:
    """Every sequence from ``b`` reaching ``after`` (canonically) of at most ``appends`` CompleteAppends and one other
    action — ``fixed`` (a labelled request: exactly it), else at most one of ``kinds`` (None: any) — with the model's
    answers, each naming a slot position of ``b``."""
    found: list[Sequence] = []

    def walk(state: State, path: tuple[AbstractAction, ...], answers: tuple[tuple[int, Any], ...], used: int,
             other: bool) -> None:
        if state.canonical() == after and (other or fixed is None):
            found.append(Sequence(path, answers))
        moves: list[Any] = []
        if used < appends and state.appends:
            moves += [AbstractAction("CompleteAppend", arg="ok"), AbstractAction("CompleteAppend", arg="error")]
        if not other:
            moves += _others(state, p, scope, kinds, fixed, b, heartbeat_value)
        for move in moves:
            is_append = isinstance(move, AbstractAction) and move.kind == "CompleteAppend"
            acts = move if isinstance(move, tuple) else (move,)
            step_detail = detail if is_append else ""
            for target, outputs, _ in _outcomes(state, acts, p, scope, step_detail):
                said = tuple((a.slot, a) for a in outputs.answers)
                walk(target, path + acts, answers + said, used + is_append, other or not is_append)

    walk(b, (), (), 0, False)
    return found


def _outcomes(state: State, acts: tuple[AbstractAction, ...], p: ModelProfile, scope: Scope, detail: str
              ) -> tuple[Any, ...]:
    if not acts:   # a LeaveGroup v3+ naming nobody (harness/labels.py ``_outcomes``)
        return ((state, Outputs((Answer(-1, "LeaveGroup", "NONE"),)), ()),)
    one = acts if len(acts) > 1 else acts[0]
    return outcomes_written(state, one, p, scope, detail, canonical=False)


# -- the check --------------------------------------------------------------------------------------------------
class _Answered:
    """What harness/did.py ``gots`` reads of a world: the step's answers."""

    def __init__(self, answered: list[Response]) -> None:
        self.answered = answered


@dataclass
class AnswerCheck:
    """Judges a Java runtime world's answers step by step (one linear run; harness/refinement_4x.py keeps it)."""

    world: World
    held: dict[Key, Response] = field(default_factory=dict)          # held answers judged, not released yet
    prior: dict[Key, str] = field(default_factory=dict)              # static restart -> leader id then
    skip: dict[Key, bool] = field(default_factory=dict)              # static restart -> asked to skip (v9+)
    judged: dict[str, int] = field(default_factory=dict)             # answers judged, by API (non-vacuity)

    def take(self, action: Action, state: State, inert: frozenset[int]) -> Taken:
        before = capture(self.world, state, inert, action)
        return Taken(before, _pending(self.world), _silenced(self.world, before), _timer(self.world, action),
                     dict(self.held))

    def judge(self, taken: Taken, action: Action, b: State, a: State, scope: Scope, appends: int,
              kinds: frozenset[str] | None) -> str | None:
        """None if the step's answers are those of a model sequence from ``b`` to ``a`` — else why not."""
        world, before = self.world, taken.before
        self.held = dict(taken.held)   # a Choose re-runs its step from the same checker state
        if action.kind == "Choose" and before.action is not None:
            action = before.action     # ... and is that step again, with other picks
        if action.kind == "Receive" and before.request is None:
            return None   # a request of another group
        p = get_model_profile(world.profile.name)
        detail = _detail(action, taken.timer)
        failed, ambiguous, fresh, why = self._split(taken, action, detail)
        if why is not None:
            return why
        fixed = None
        if before.request is not None:
            labelled = label_all(world, before, action, b)
            fixed = labelled[0] if labelled is not None else None
        elif b == a and not (failed or ambiguous or fresh):
            return None   # no request, no answer, no state change: the empty sequence says exactly that
        if taken.timer is not None and taken.timer[0] == "write-timeout":
            kinds = frozenset()
        hb = before.slot_of.get(taken.timer[1], FREE) if taken.timer and taken.timer[0] == "heartbeat" else None
        found = sequences(b, a, p, scope, appends, detail, kinds if fixed is None else None, fixed, hb)
        ctx = self._context(before, fixed)
        commit_not_found = _commit_not_found(world, before, action)
        broken = [why for r in failed if (why := _table(r, detail, p)) is not None]
        if broken:
            return f"{action}: {broken[0]}"
        tried, broke = 0, None
        for mask in product((False, True), repeat=len(ambiguous)):
            as_failed = [r for r, f in zip(ambiguous, mask, strict=True) if f]
            if any(_table(r, detail, p) is not None for r in as_failed):
                continue
            answers = fresh + [r for r, f in zip(ambiguous, mask, strict=True) if not f]
            gots = did.gots(_Answered(answers), before, p.batch_leave)   # type: ignore[arg-type]
            silenced = taken.silenced + [(before.slot_of.get(before.parked[r.key], FREE), r.api) for r in as_failed]
            for seq in found:
                for wants in _variants(seq, b, silenced, self._gens(before, p), p, commit_not_found):
                    tried += 1
                    coarse, rule = match(wants, gots, ctx)
                    if coarse and rule is None:
                        self._commit(taken, fixed, gots, failed + as_failed)
                        return None
                    if coarse and broke is None:
                        broke = rule
                    if tried > MAX_VARIANTS * 16:
                        break
        gots = did.gots(_Answered(fresh + ambiguous), before, p.batch_leave)   # type: ignore[arg-type]
        said = "; ".join(" ".join(map(str, s.actions)) + " answers " + (", ".join(str(x) for _, x in s.answers)
                                                                         or "nothing") for s in found[:6])
        name = " ".join(map(str, fixed)) if fixed else ""
        rule = f"rule {broke} — " if broke else ""   # the answers are the model's but for this field (RULES)
        return (f"{rule}{action}{' is ' + name if name else ''}: the coordinator answered "
                f"{'; '.join(sorted(show(gots))) or 'nothing'} — no model outcome reaching {a.short()} answers so; "
                f"the model: {said or 'no path of this step reaches that state'}")

    # -- the coordinator side ---------------------------------------------------------------------------------
    def _split(self, taken: Taken, action: Action, detail: str) -> tuple[list[Response], list[Response], list[Response],
                                                            str | None]:
        """The step's answers: those of failed writes (judged by the model's error table), those that may be a failed
        write's or the model's (a parked request whose write failed), and the rest — with the answer the step's own
        write holds back (judged now, as the model answers the request). A held answer released must be the one
        judged, released in its writes' order (R3)."""
        failed, ambiguous, fresh, released = [], [], [], []
        own = _request_key(taken.before)
        for resp in self.world.answered:
            held = self.held.pop(resp.key, None)
            pending = resp.key in taken.pending and resp.key != own
            if held is not None and resp == held:
                released.append(taken.pending[resp.key].seq if resp.key in taken.pending else -1)
            elif held is not None and not (pending and detail):
                return [], [], [], (f"{action} released {show([_plain(resp)])[0]} for request {resp.key}, whose "
                                    f"operation had decided {show([_plain(held)])[0]} (R3)")
            elif pending and resp.key in taken.before.parked:
                ambiguous.append(resp)
            elif pending:
                failed.append(resp)
            else:
                fresh.append(resp)
        if released != sorted(released):
            return [], [], [], f"{action} released held answers out of their writes' order (R3): {released}"
        part = _partition(self.world)
        for write in (sorted(part.log.writes.values(), key=lambda w: w.seq) if part is not None else ()):
            fut = write.future
            if not write.done and fut is not None and not fut.done and write.response is not None \
                    and fut.key == own:
                resp = Response.from_result(write.api, fut.key[0], fut.key[1], write.response)
                fresh.append(resp)
                self.held[fut.key] = resp
        return failed, ambiguous, fresh, None

    def _gens(self, before: Before, p: ModelProfile) -> dict[str, Any]:
        return {"current": before.generation, "new": _generation_after(self.world), "none": p.no_generation,
                "-": "-", "append": before.append_generation}

    def _context(self, before: Before, fixed: tuple[AbstractAction, ...] | None) -> Context:
        profile = self.world.profile.name
        # the group answers are read from: the one in the map after the step, else (an unload) the object the step
        # left Dead, whose fields the callbacks it ran answered from
        group = live_group(self.world) or before.group
        ctx = Context(GroupAccess.of(group), GroupAccess.of(before.append_group),
                      fact("join-response-protocol-type", profile), fact("static-rejoin-skips-assignment", profile),
                      dict(self.prior), dict(self.skip))
        req = before.request
        if req is not None and fixed and fixed[0].kind == "JoinGroup/static-rejoin":
            ctx.prior[req.key] = before.leader_id or ""   # type: ignore[index]
            ctx.skip[req.key] = req.support_skipping_assignment   # type: ignore[index]
        return ctx

    def _commit(self, taken: Taken, fixed: tuple[AbstractAction, ...] | None, gots: list[Got],
                failed: list[Response]) -> None:
        req = taken.before.request
        if req is not None and fixed and fixed[0].kind == "JoinGroup/static-rejoin":
            self.prior[req.key] = taken.before.leader_id or ""
            self.skip[req.key] = req.support_skipping_assignment
        for name in [g.api for g in gots] + [f"{r.api}/failed-write" for r in failed]:
            self.judged[name] = self.judged.get(name, 0) + 1


def _commit_not_found(world: World, before: Before, action: Action) -> bool:
    """An OffsetCommit with a generation to a group the coordinator does not hold, of a version that is answered
    GROUP_ID_NOT_FOUND on this release (R15)."""
    req = before.request
    if req is None or req.api != "OffsetCommit" or req.generation_id < 0 or before.group is not None:
        return False
    version = WireRequest.from_payload(str(action.arg)).api_version if action.kind == "Receive" else None
    return fact("commit-to-missing-group-not-found", world.profile.name) and (
        version is None or version >= COMMIT_NOT_FOUND_SINCE)


def _table(resp: Response, detail: str, p: ModelProfile) -> str | None:
    """Why a failed write's answer is not the model's mapped error (None: it is): the raw error mapped by
    ``ModelProfile.store_errors`` (R8); a JoinGroup's with generation NoGeneration and no member id."""
    want = store_error(detail, p.store_errors) if detail else None
    ok = want is not None and resp.request_error == want and (
        resp.api != "JoinGroup" or (resp.generation_id == p.no_generation and resp.member_id == ""))
    if ok:
        return None
    return (f"the failed write of request {resp.key} answered {resp.api} {resp.request_error} "
            f"gen={resp.generation_id}; the model maps {detail or 'no failure (nothing failed in this step)'} to "
            f"{want} (R2, R8)")


def _java_service(x: Answer, cell: str, commit_not_found: bool) -> Answer:
    """What Kafka 4.x's service answers where the model's action does not say it: a JoinGroup the runtime refuses
    before its operation runs (the partition not led, or loading) is answered through handleOperationException with
    no member id (GroupCoordinatorService.java@4.1.1:876-889; 3.x echoed it, the model's ``error+id``); an OffsetCommit
    v9+ with a generation to a missing group is GROUP_ID_NOT_FOUND (release fact commit-to-missing-group-not-found,
    R15: the version is the request's, which the model's action does not carry)."""
    if x.api == "JoinGroup" and x.shape == ERROR_ID and cell in PRECHECK_CELLS:
        return replace(x, shape=ERROR_NO_ID)
    if x.api == "OffsetCommit" and commit_not_found and x.error == "ILLEGAL_GENERATION":
        return replace(x, error="GROUP_ID_NOT_FOUND")
    return x


def _variants(seq: Sequence, b: State, silenced: list[tuple[Any, str]], gens: dict[str, Any], p: ModelProfile,
              commit_not_found: bool = False) -> Iterator[list[Want]]:
    """The model's answers as ``Want`` values of ``b``'s slots; then without the answers of members whose parked
    future a failed write answered (for each such member one answer of its value and API may be missing)."""
    cell = next((x.arg for x in seq.actions if x.kind != "CompleteAppend"), "")
    tag = leave_layout(p.batch_leave, cell)
    wants = [Want(b.slots[i] if i >= 0 else FREE, _java_service(x, cell, commit_not_found), gens[x.generation],
                  tag if x.api == "LeaveGroup" else "-") for i, x in seq.answers]
    yield wants
    options = [[k for k, w in enumerate(wants) if w.value == value and w.answer.api == api] + [None]
               for value, api in silenced]
    for picks in product(*options):
        chosen = [k for k in picks if k is not None]
        if chosen and len(set(chosen)) == len(chosen):
            yield [w for k, w in enumerate(wants) if k not in chosen]


def _request_key(before: Before) -> Key | None:
    return None if before.request is None else before.request.key


def _generation_after(world: World) -> int:
    group = live_group(world)
    return group.generation_id if group is not None else -1


def _plain(resp: Response) -> Got:
    return Got(FREE, resp.api, resp.error, resp.generation_id if resp.api == "JoinGroup" else "-", "-", resp, "")


__all__ = ["AnswerCheck", "GroupAccess", "Sequence", "Taken", "capture", "sequences"]
