"""Refinement of the Java runtime (profile 4.1): every world step is a model path, or a stutter (DESIGN.md §6).

The sibling of harness/refinement.py for Kafka 4.x's coordinator: abstract *states* here, and each judged step's
*answers* against the model outputs of a path between them (harness/answers_4x.py; the armed timers are not compared:
harness/did.py reads the Scala purgatory). The abstract state after a step (harness/abstraction_4x.py) must be the
state before it or reachable from it by model steps (model/step.py with 4.1's profile): one action for a request or a
timer event, and — because one step of the
Java runtime can finish several writes (a commit passes a whole batch, a failed flush fails every write of the open
batch, R2/R5) — a step that finished writes may take one ``CompleteAppend`` per write it finished, then at most one
other action. ``Choose`` re-runs the previous step from the world before it (harness/event_loop.py), so it is
judged from that state.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from core.actions import Action
from harness.abstraction_4x import abstract
from harness.answers_4x import AnswerCheck, Taken as AnswersTaken
from harness.world import World
from model.state import ABSENT_GROUP, AbstractAction, Scope, State, padded
from model.step import JOIN_KINDS, step, successors

#: the longest model path one step may stand for beyond its finished writes (a request or a timer event)
OTHER_ACTIONS = 1
#: the world actions whose step may answer a request (a request, a timer event, the log's and the partition's moves):
#: their answers are judged; any other step (the clock only queues due events, clients, the network) answers nothing
ANSWERING = frozenset({"DeliverRequest", "Receive", "FireTimer", "FlushBatch", "CommitBatch", "CompleteAppend",
                       "UnloadGroup", "LoadGroup"})
#: what the runtime logs and goes on from (a failed timer write, retry=false; a failed Empty-group record, only
#: logged, GMM@4.1.1:6590-6599): any other logged error is an IllegalStateException thrown half-way through an
#: operation, whose partial state change stays (ClassicGroup is no timeline structure) — the model does not predict
#: that, so from then on the run is not judged (as harness/refinement.py's ``halfway``)
BENIGN_LOGS = ("timer write failed", "failed to write the empty group metadata")


@dataclass(frozen=True, slots=True)
class Judged:
    """One judged step: the abstract states padded to one width, and the model path between them (None: none)."""

    before: State
    after: State
    path: tuple[AbstractAction, ...] | None
    #: why the step's answers are no model outcome's (harness/answers_4x.py; None: they are, or not judged)
    answers: str | None = None


def model_scope(world: World, members: int, static: bool) -> Scope:
    """The model scope of a world's Java coordinator (unbounded appends; unload on, as the world may move the
    partition; group.max.size when bounded)."""
    config = world.coord.config
    max_size = config.group_max_size
    return Scope(members=members, deferred_appends=config.append_mode == "deferred",
                 initial_delay=config.group_initial_rebalance_delay_ms > 0, max_appends=1 << 30, unload=True,
                 static=static, max_size=max_size if max_size < 2**31 - 1 else 0)


@lru_cache(maxsize=1 << 14)
def _next(state: State, profile: str, scope: Scope) -> tuple[tuple[AbstractAction, State], ...]:
    """The model's successors of ``state``, and — as harness/refinement.py ``_first_labels`` for 3.9 — a static
    member's restart with other protocol metadata (the ``changed`` cell, which the graph's own actions do not carry):
    in Stable it rebalances when the selected protocol would change (GMM@4.1.1:7206-7212, 7268-7274), and with every
    member joined prepareRebalance completes the join in the same request (GMM@4.1.1:6900, 6914-6916), so a
    restart with another assignor list goes Stable -> CompletingRebalance in one step."""
    out = list(successors(state, profile, scope))
    if scope.static:
        for i, slot in enumerate(state.slots):
            if slot.static and slot.member:
                action = AbstractAction("JoinGroup/static-rejoin", i, "changed")
                out += [(action, target) for target in step(state, action, profile, scope)]
    return tuple(out)


#: the model actions a request of each API is (model/step.py)
_API_KINDS = {"JoinGroup": JOIN_KINDS, "SyncGroup": frozenset({"SyncGroup"}), "Heartbeat": frozenset({"Heartbeat"}),
              "LeaveGroup": frozenset({"LeaveGroup"}),
              "OffsetCommit": frozenset({"OffsetCommit", "OffsetCommit/simple"})}
#: the model action a live timer event of each kind is (impl/java_gc/timers.py ops; a write timeout finishes a write)
_TIMER_KINDS = {"heartbeat": frozenset({"ExpireHeartbeat"}), "join": frozenset({"ExpireJoin"}),
                "initial-join": frozenset({"ExpireJoin"}), "sync": frozenset({"ExpireSync"}),
                "write-timeout": frozenset()}
NOTHING: frozenset[str] = frozenset()


def allowed_kinds(world: World, action: Action) -> frozenset[str] | None:
    """The model action kinds a world step may be besides the CompleteAppends of the writes it finishes, read before
    the step (None: any — a wire request, whose API the world does not name here)."""
    if action.kind == "DeliverRequest":
        req = world.net.requests.get((action.client, action.arg))
        return _API_KINDS.get(req.api, NOTHING) if req is not None else NOTHING
    if action.kind == "FireTimer":   # a queued event, or a task at its deadline that expires into the queue first
        for part in world.coord.partitions.values():
            timer = part.timer
            task = next((t for t in timer.queue + timer.scheduled() if t.seq == action.arg), None)
            if task is not None:
                return _TIMER_KINDS.get(str(task.op[0]), NOTHING) if timer.is_live(task) else NOTHING
        return NOTHING
    if action.kind in ("UnloadGroup", "LoadGroup"):
        return frozenset({action.kind})
    if action.kind == "Receive":
        return None
    return NOTHING   # the log's FlushBatch/CommitBatch, the clock, clients and the network: writes finish at most


def model_path(before: State, after: State, profile: str, scope: Scope, appends: int,
               kinds: frozenset[str] | None = None) -> tuple[AbstractAction, ...] | None:
    """The shortest model path from ``before`` to ``after`` of at most ``appends`` CompleteAppends and
    ``OTHER_ACTIONS`` other actions of ``kinds`` (None: any), in any order (None: there is none)."""
    if before == after:
        return ()
    frontier: dict[State, tuple[tuple[AbstractAction, ...], int, int]] = {before: ((), 0, 0)}
    seen = {before}
    while frontier:
        grown: dict[State, tuple[tuple[AbstractAction, ...], int, int]] = {}
        for state, (path, used_appends, used_other) in sorted(frontier.items(), key=lambda kv: kv[0].short()):
            for action, target in _next(state, profile, scope):
                is_append = action.kind == "CompleteAppend"
                a, o = used_appends + is_append, used_other + (not is_append)
                if a > appends or o > OTHER_ACTIONS or target in seen:
                    continue
                if not is_append and kinds is not None and action.kind not in kinds:
                    continue
                if target == after:
                    return path + (action,)
                seen.add(target)
                grown[target] = (path + (action,), a, o)
        frontier = grown
    return None


@dataclass(frozen=True, slots=True)
class Taken:
    """What a step is judged against, taken before it."""

    appends: int
    group: object
    seqs: frozenset[int]
    logged: int
    kinds: frozenset[str] | None
    answers: AnswersTaken | None = None


class StateRefinement4x:
    """Judges each step of a world running the Java runtime against 4.1's model."""

    def __init__(self, world: World, answers: bool = True) -> None:
        self.world = world
        #: the answers half (harness/answers_4x.py): each judged step's answers against the model outputs of a path
        self.answers = AnswerCheck(world) if answers else None
        self._rerun_answers: AnswersTaken | None = None
        self.profile = world.profile.name
        self.inert: frozenset[int] = frozenset()
        self.state = self._abstract()
        self._rerun_from: State | None = None   # the state the last non-Choose step started from
        self._rerun_kinds: frozenset[str] | None = None
        self.steps = 0
        self.stutters = 0
        self.reverted = 0   # failed creation batches (R5), not judged
        self.halfway = self._thrown(0)

    def _thrown(self, since: int) -> bool:
        return any(not e.split(" ", 1)[-1].startswith(BENIGN_LOGS) for e in self.world.coord.errors[since:])

    def _abstract(self) -> State:
        return abstract(self.world.coord, self.world.group_id, inert=self.inert)

    def _group(self) -> object:
        coord, gid = self.world.coord, self.world.group_id
        part = coord.partitions.get(coord.partition_for(gid))
        return None if part is None else part.groups.get(gid)

    def _task_seqs(self) -> frozenset[int]:
        return frozenset(t.seq for part in self.world.coord.partitions.values() for t in part.timer.tasks.values())

    def _track(self, group_before: object, seqs_before: frozenset[int]) -> None:
        """Tasks that existed before a step that put another group object in the map are that object's
        predecessors' (harness/abstraction_4x.py ``inert``); a restore (Choose) keeps what the world kept."""
        group = self._group()
        if group is not None and getattr(group, "incarnation", None) != getattr(group_before, "incarnation", None):
            self.inert = (self.inert | seqs_before) & self._task_seqs()

    def judge(self, action: Action, appends_before: int, kinds: frozenset[str] | None = None) -> Judged:
        """Judge the step the world just took with ``action`` (``appends_before``: model appends pending before;
        ``kinds``: what the step may be, ``allowed_kinds``)."""
        raw_before = self._rerun_from if action.kind == "Choose" and self._rerun_from is not None else self.state
        if action.kind == "Choose":
            kinds = self._rerun_kinds
        else:
            self._rerun_from, self._rerun_kinds = self.state, kinds
        raw_after = self._abstract()
        self.state = raw_after
        width = max(len(raw_before.slots), len(raw_after.slots)) + 1
        before, after = padded(raw_before, width), padded(raw_after, width)
        self.steps += 1
        if before == after:
            self.stutters += 1
            return Judged(before, after, ())
        if action.kind == "FlushBatch" and action.arg != "NONE" and before.group != ABSENT_GROUP \
                and after.group == ABSENT_GROUP:
            # a failed batch that created the group reverts the group map (R5): a step 4.1's model does not have yet
            # (model/profiles.py); counted, not judged, and the run goes on from the Absent group
            self.reverted += 1
            return Judged(before, after, ())
        static = any(s.static for s in before.slots + after.slots)
        scope = model_scope(self.world, len(before.slots), static)
        return Judged(before, after, model_path(before, after, self.profile, scope, appends_before, kinds))

    def before_step(self, action: Action) -> Taken:
        """What ``after_step`` needs, taken before the world steps with ``action``."""
        answers = None
        if self.answers is not None and action.kind in ANSWERING:
            answers = self.answers.take(action, self.state, self.inert)
        return Taken(len(self.state.appends), self._group(), self._task_seqs(), len(self.world.coord.errors),
                     allowed_kinds(self.world, action), answers)

    def after_step(self, action: Action, taken: Taken) -> Judged:
        """Judge the step the world just took; a step after a half-way throw is not judged (path ``()``)."""
        self._track(taken.group, taken.seqs)
        self.halfway = self.halfway or self._thrown(taken.logged)
        reverted = self.reverted
        answers = taken.answers
        if action.kind == "Choose":   # the previous step again, from the world before it
            answers = self._rerun_answers
        else:
            self._rerun_answers = answers
        judged = self.judge(action, taken.appends, taken.kinds)
        if self.halfway:
            return Judged(judged.before, judged.after, ())
        if self.answers is not None and answers is None and action.kind != "Choose" and self.world.answered:
            return Judged(judged.before, judged.after, judged.path,
                          f"{action} answered {len(self.world.answered)} request(s): no model action answers on a "
                          f"step of this kind")
        if judged.path is None or answers is None or self.answers is None or self.reverted != reverted:
            return judged
        kinds = self._rerun_kinds if action.kind == "Choose" else taken.kinds
        static = any(s.static for s in judged.before.slots + judged.after.slots)
        scope = model_scope(self.world, len(judged.before.slots), static)
        why = self.answers.judge(answers, action, judged.before, judged.after, scope, taken.appends, kinds)
        return Judged(judged.before, judged.after, judged.path, why)

    def step(self, action: Action) -> Judged:
        taken = self.before_step(action)
        self.world.step(action)
        return self.after_step(action, taken)


def reason(judged: Judged, action: Action, step: int, profile: str) -> str | None:
    """The one-line reason a judged step does not refine the model (None: it does)."""
    if judged.path is not None:
        return None if judged.answers is None else f"step {step}: {judged.answers} (profile {profile})"
    return (f"step {step} ({action}) is no model path on profile {profile}:\n  before {judged.before.short()}"
            f"\n  after  {judged.after.short()}")


__all__ = ["Judged", "StateRefinement4x", "model_path", "model_scope", "reason"]
