"""The values the graph analyses return — paths, findings, fair cycles, the report — and their text.

A ``Path`` prints one action per line, like a stateright trace: the state reached after each
action, the loop of a lasso marked by where it returns.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from model.state import Scope

if TYPE_CHECKING:
    from model.analysis import Assumption


@dataclass(frozen=True, slots=True)
class Path:
    """Nodes from the initial state; ``actions[i]`` leads from ``nodes[i]`` to ``nodes[i+1]``.

    A lasso has ``loop_from``: the steps after that index form a loop back to ``nodes[loop_from]``
    (``stutter``: the loop is the state repeating itself — no fair action is enabled there).
    """

    nodes: tuple[int, ...]
    states: tuple[str, ...]
    actions: tuple[str, ...]
    loop_from: int | None = None
    stutter: bool = False

    def __len__(self) -> int:
        return len(self.actions)

    def render(self, indent: str = "    ") -> str:
        width = max([len(a) for a in self.actions] + [9])
        lines = [f"{indent}{0:>3}  {'(initial)':<{width}}  {self.states[0]}"]
        for i, (action, state) in enumerate(zip(self.actions, self.states[1:], strict=True), start=1):
            mark = "  <- loop starts here" if self.loop_from == i and i < len(self.actions) else ""
            lines.append(f"{indent}{i:>3}  {action:<{width}}  {state}{mark}")
        if self.loop_from is not None and self.stutter:
            lines.append(f"{indent}     ↺ stays in this state forever: no fair action is enabled here")
        elif self.loop_from is not None:
            lines.append(f"{indent}     ↺ back to step {self.loop_from}, forever")
        if self.loop_from == 0 and not self.stutter:
            lines[0] += "  <- loop starts here"
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Finding:
    """One state an analysis reports, with the BFS-shortest path to it."""

    kind: str
    node: int
    path: Path


@dataclass(frozen=True, slots=True)
class FairCycle:
    """A set of non-progress states a weakly fair run can stay in forever (see model.analysis)."""

    assumption: str
    nodes: tuple[int, ...]
    groups: tuple[str, ...]        # group states inside (PreparingRebalance, CompletingRebalance)
    moves: tuple[str, ...]         # action names on the edges that stay inside
    lasso: Path                    # a fair witness run

    def describe(self) -> str:
        return (f"{len(self.nodes)} state{'s' if len(self.nodes) != 1 else ''} in {' + '.join(self.groups)}; "
                f"moves inside: {', '.join(self.moves) or 'none (stutter)'}")


@dataclass(frozen=True, slots=True)
class Report:
    profile: str
    scope: Scope | None
    states: int
    edges: int
    truncated: bool
    dead: tuple[Finding, ...]
    timer_only: tuple[Finding, ...]
    cannot_settle: tuple[Finding, ...]
    cannot_settle_count: int
    cycles: tuple[tuple["Assumption", tuple[FairCycle, ...]], ...]
    unreachable: tuple[str, ...]
    effect_free: tuple[str, ...]
    unknown: tuple[str, ...]    # action names on edges that model.analysis.ACTION_NAMES does not list

    def cycles_for(self, assumption: str) -> tuple[FairCycle, ...]:
        return next(found for a, found in self.cycles if a.name == assumption)

    def summary(self) -> dict[str, object]:
        """Counts only: what a table or a manifest shows."""
        return {"dead": len(self.dead), "timer_only": len(self.timer_only), "cannot_settle": self.cannot_settle_count,
                **{f"cycles/{a.name}": len(found) for a, found in self.cycles},
                "unreachable": list(self.unreachable), "effect_free": list(self.effect_free)}

    def render_text(self, paths: int = 1) -> str:
        """The whole report; ``paths`` witness paths per finding kind (0: counts only)."""
        scope = self.scope
        where = (f"members={scope.members} deferred_appends={scope.deferred_appends} "
                 f"initial_delay={scope.initial_delay} max_appends={scope.max_appends}") if scope else "hand-made"
        out = [f"model analysis — profile {self.profile}, {where}: {self.states} states, {self.edges} edges"
               + (" (truncated at max_appends: findings hold within the scope)" if self.truncated else "")]
        out += _section("deadlocks (no action changes the state)", self.dead, len(self.dead), paths)
        out += _section("timer-only states (only a timer expiry changes the state)", self.timer_only,
                        len(self.timer_only), paths)
        out += _section("states from which no Stable or Empty state is reachable", self.cannot_settle,
                        self.cannot_settle_count, paths)
        out.append("non-progress cycles (never Stable/Empty/Absent) under weak fairness of ExpireJoin, ExpireSync, "
                   "ExpireHeartbeat, CompleteAppend:")
        for assumption, found in self.cycles:
            size = sum(len(c.nodes) for c in found)
            head = "none" if not found else f"{len(found)} SCC{'s' if len(found) != 1 else ''}, {size} states"
            out.append(f"  {assumption.name}: {head}   ({assumption.claim})")
            for cycle in found[:paths]:
                out.append(f"    e.g. {cycle.describe()}")
                out.append(cycle.lasso.render(indent="      "))
        out.append(f"unreachable actions: {', '.join(self.unreachable) or 'none'}")
        out.append(f"actions that never change the state: {', '.join(self.effect_free) or 'none'}")
        if self.unknown:
            out.append(f"actions missing from model.analysis.ACTION_NAMES: {', '.join(self.unknown)}")
        return "\n".join(out)


def _section(title: str, found: tuple[Finding, ...], count: int, paths: int) -> list[str]:
    if not count:
        return [f"{title}: none"]
    lines = [f"{title}: {count}"]
    for finding in found[:paths]:
        lines.append(f"  e.g. state {finding.node}:")
        lines.append(finding.path.render(indent="    "))
    return lines
