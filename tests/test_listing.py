"""List commands at 80 and 120 columns (issue 26 §5): every name — the strings a user types next — whole, and no
line wider than the terminal except one that ends in a name or path too long for any line. Rendered on a rich
Console of that width, as kgc prints on a terminal that wide."""
from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest
from rich.cells import cell_len
from rich.console import Console

from harness.scenarios import SCENARIOS
from impl.mutants import all_mutants
from kgc.cli import _dispatch, _parser
from kgc.findings_cmd import rel, reproduce
from properties.catalog import CATALOG
from properties.findings import FINDINGS
from wire.conform.probes import get_probes
from wire.conform.script import BrokerConfig


def _mutant_names() -> set[str]:
    return {m.name for m in all_mutants()} | {c for m in all_mutants() for c in m.catches}


def _finding_names() -> set[str]:
    names = {f.name for f in FINDINGS} | {p for f in FINDINGS if f.gated for p in f.properties}
    names |= {rel(r.report) for f in FINDINGS if f.gated for p in f.profiles
              if (r := reproduce(f, p)).report is not None}
    return names


LISTS: dict[str, tuple[list[str], Callable[[], set[str]]]] = {
    "mutants": (["check", "--list-mutants"], _mutant_names),
    "probes": (["conform", "--list"], lambda: {p.name for p in get_probes(None, BrokerConfig())}),
    "scenarios": (["scenario", "--list"], lambda: {s.name for s in SCENARIOS}),
    "properties": (["properties"], lambda: set(CATALOG)),
    "findings": (["findings"], _finding_names),
}


def _render(argv: list[str], columns: int) -> str:
    """What ``kgc ARGV`` prints on a terminal ``columns`` wide (the command's own run() on a rich Console)."""
    args = _parser().parse_args(argv)
    console = Console(width=columns, file=io.StringIO(), soft_wrap=True)   # soft_wrap as kgc.cli.main's console
    assert _dispatch(_parser(), args, console) == 0
    return console.file.getvalue()      # type: ignore[attr-defined]


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("what", sorted(LISTS))
def test_every_name_is_whole(what: str, columns: int, monkeypatch: pytest.MonkeyPatch) -> None:
    argv, expected = LISTS[what]
    monkeypatch.chdir(Path(__file__).resolve().parents[1])     # the findings' report paths relative to the repo
    out = _render(argv, columns)
    names = expected()
    lines = out.splitlines()
    missing = sorted(n for n in names if not any(n in line for line in lines))
    assert not missing, f"not whole on any line at {columns} columns: {missing[:5]}"
    for line in lines:
        if cell_len(line) > columns:     # only a name or path too long for the line may run past its edge
            head, _, last = line.rstrip().rpartition(" ")
            assert last in names and cell_len(head) < columns, line


def test_columns_sets_the_width_off_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Piped into a log or ``less``, kgc is as wide as COLUMNS says (a list of mutants at COLUMNS=80 fits in 80
    cells), and 160 when COLUMNS is unset or not a positive number — not rich's 80 for a non-terminal."""
    root = Path(__file__).resolve().parents[1]

    def widest(columns: str | None) -> int:
        env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
        if columns is not None:
            env["COLUMNS"] = columns
        out = subprocess.run([sys.executable, "-m", "kgc", "check", "--list-mutants"], cwd=root, env=env,
                             capture_output=True, text=True, check=True).stdout
        return max(cell_len(line) for line in out.splitlines())

    assert widest("80") <= 80
    assert 80 < widest(None) <= 160
    assert widest("zero") == widest(None)
