"""The committed counterexample example (reports/examples/) is what the renderers produce today.

A change to a renderer shows up here as a difference; regenerate with
``python reports/examples/make_examples.py`` and review the diff of reports/examples/.
"""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from core.trace import Trace
from harness.replay import replay

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "reports" / "examples" / "make_examples.py"
REGENERATE = "regenerate with 'python reports/examples/make_examples.py' and review the diff"


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kgc_make_examples", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def make_examples() -> ModuleType:
    return _load_script()


@pytest.fixture(scope="module")
def fresh(make_examples: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    base = tmp_path_factory.mktemp("examples")
    return base, make_examples.generate(base)


def test_committed_example_equals_a_fresh_generation(make_examples: ModuleType,
                                                     fresh: tuple[Path, dict[str, Path]]) -> None:
    base, files = fresh
    committed_dir = ROOT / make_examples.OUT
    assert committed_dir.is_dir(), f"{make_examples.OUT} is missing: {REGENERATE}"
    generated = {p.name for p in (base / make_examples.OUT).iterdir()}
    # __pycache__ appears when someone runs the example's regression test; it is not committed
    committed = {p.name for p in committed_dir.iterdir() if p.name != "__pycache__"}
    assert committed == generated, f"files differ (stale or missing): {sorted(committed ^ generated)}; {REGENERATE}"
    for rel in files.values():
        new, old = (base / rel).read_bytes(), (ROOT / rel).read_bytes()
        assert new == old, f"{rel} differs from a fresh generation: {REGENERATE}"


def test_recorded_paths_are_repo_relative_and_the_trace_replays(make_examples: ModuleType) -> None:
    out = make_examples.OUT
    md = (ROOT / out / "report.md").read_text(encoding="utf-8")
    trace_rel = (out / "counterexample.json").as_posix()
    assert f"kgc replay {trace_rel}\n" in md and str(ROOT) not in md
    trace = Trace.loads((ROOT / trace_rel).read_text(encoding="utf-8"))
    assert trace.mutant == make_examples.MUTANT and trace.violation is not None
    assert trace.violation.property == make_examples.PROPERTY
    assert trace.violation.step == len(trace.steps) - 1          # cut at the violating step
    replay(trace)


def test_the_replay_command_in_the_report_works_from_the_repo_root(make_examples: ModuleType) -> None:
    trace_rel = (make_examples.OUT / "counterexample.json").as_posix()
    run = subprocess.run([sys.executable, "-m", "kgc", "replay", trace_rel], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "replay ok" in run.stdout
