"""The checker's own side of a step: what the runners report when stepping, observing, abstracting,
storing or checking a state goes wrong (issue 10 item 4), so that a bad coordinator never crashes kgc.

A coordinator under test may reach a state no reference run reaches — a member in an impossible
shape, a cached group in a state the abstraction has no image for, a delayed operation its own
snapshot cannot restore — and the checker's code (``observe``, ``abstract``, the model edge, a
property's predicate, a snapshot restore) may then raise. That is a finding about the coordinator
(or a gap in the checker), reported as a violation of ``checker-observes-every-state`` at the step
that reached the state, never as a traceback. Every runner that steps a world turns such an
exception into that violation with ``unobservable`` (properties/check.py, kgc/runs.py,
stateful_tests/machine.py, explore/space.py, explore/traces.py), so the usual machinery gives it a
shortest trace and the usual reports. An exception inside the coordinator's own step is another
property, ``coordinator-raises-no-exception``; a step the model does not allow is
``refines-the-abstract-model``. Neither of those two is a catalog record (nothing evaluates them on
an observation); this one is, so that reports and ``kgc properties`` show its claim and source.
"""
from __future__ import annotations

import re
from typing import Any

from core.actions import Action
from core.trace import Violation
from harness.labels import Before
from harness.refinement import NonRefiningStep, RefinementChecker
from model.state import State
from properties.catalog import Witness, always_step, message

OBSERVES = "checker-observes-every-state"
RAISES = "coordinator-raises-no-exception"
REFINES = "refines-the-abstract-model"
CLAIM = ("Every state the coordinator reaches can be observed, abstracted, stored and checked: no step makes "
         "the checker itself raise.")
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_LIMIT = 300


@always_step(OBSERVES, claim=CLAIM,
             source="DESIGN.md §6–§7 (the abstraction and the catalog read every reachable state); kgc issue 10 item 4")
def checker_observes_every_state(before: Any, step: Any, after: Any) -> Witness | None:
    """Holds on every triple it is given: a step that produced one was observed. Its violations are
    made by the runners, with ``unobservable``, when producing or checking the triple raised."""
    return None


def unobservable(stage: str, exc: BaseException, step_index: int) -> Violation:
    """The violation for ``exc``, raised while ``stage`` ("observing", "abstracting", "checking NAME",
    "restoring the state from its snapshot") on the state reached by step ``step_index`` (-1: the
    initial state). The message drops object addresses: the same run gives the same bytes."""
    text = _ADDRESS.sub("", str(exc))
    witness: Witness = {"stage": stage, "exception": type(exc).__name__,
                        "message": text if len(text) <= _LIMIT else text[:_LIMIT] + "…"}
    return Violation(OBSERVES, step_index, message(OBSERVES, CLAIM, witness), witness=witness)


def verify_step(refinement: RefinementChecker, before: Before | State, action: Action,
                step_index: int) -> list[Violation]:
    """``refinement.verify`` as violations: a step the model does not allow is ``refines-the-abstract-model``,
    any other exception (the abstraction or the model raising on the state after) is ``unobservable``."""
    try:
        refinement.verify(before, action)
    except NonRefiningStep as exc:
        return [Violation(REFINES, step_index, str(exc))]
    except Exception as exc:   # noqa: BLE001 — a state the abstraction has no image for is a finding
        return [unobservable("abstracting", exc, step_index)]
    return []
