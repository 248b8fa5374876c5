"""Each answer mutant (impl/mutants/answer_bugs.py) against the gate, with its output rule on and off; prints JSON
(a benchmark, not a test).

    python bench/output_rules.py [--budget SECONDS] [--mutant NAME ...] [--profile P ...] [--off-only]

Per (mutant, profile): the gate's run (kgc.gate.run_gate) with every rule on — killed? by which property, which rule
the violation names, in which phase — and the same run with the mutant's rule switched off (harness/answers.py
``rules_off``): whether any other check of the gate kills it then. A mutant that only its rule catches is killed
in the first run and survives the second.
"""
from __future__ import annotations

import argparse
import json
import platform
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.answers import RULES, rules_off  # noqa: E402
from impl.mutants import all_mutants, get_mutant  # noqa: E402
from kgc import gate  # noqa: E402

_RULE = re.compile(r"rule ([a-z-]+) ")


def rule_of(name: str) -> str:
    """The rule a mutant of answer_bugs.py names in its mistake ("(rule NAME)")."""
    found = re.search(r"rule ([a-z-]+)\)", get_mutant(name).mistake)
    if found is None or found.group(1) not in RULES:
        raise ValueError(f"mutant {name} names no output rule")
    return found.group(1)


def run(name: str, profile: str, budget: float) -> dict[str, object]:
    t0 = time.perf_counter()
    found = gate.run_gate(profile, name, budget, 0).found
    out: dict[str, object] = {"killed": found is not None, "seconds": round(time.perf_counter() - t0, 1)}
    if found is not None:
        named = _RULE.search(found.violation.message)
        out.update(property=found.violation.property, phase=found.phase, rule=named.group(1) if named else None)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budget", type=float, default=75.0, help="per-profile budget (kgc check's default share: 75)")
    ap.add_argument("--mutant", action="append")
    ap.add_argument("--profile", action="append")
    ap.add_argument("--off-only", action="store_true", help="only the runs with the rule switched off")
    args = ap.parse_args()
    mutants = [get_mutant(n) for n in args.mutant] if args.mutant else [
        m for m in all_mutants() if m.cls.__module__ == "impl.mutants.answer_bugs"]
    rows = []
    for m in mutants:
        rule = rule_of(m.name)
        for p in m.profiles:
            if args.profile and p not in args.profile:
                continue
            row: dict[str, object] = {"mutant": m.name, "profile": p, "rule": rule}
            if not args.off_only:
                row["rule_on"] = run(m.name, p, args.budget)
            with rules_off(rule):
                row["rule_off"] = run(m.name, p, args.budget)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    print(json.dumps({"bench": "output-rules", "python": platform.python_version(), "budget_per_profile_s":
                      args.budget, "results": rows}, indent=1))


if __name__ == "__main__":
    main()
