"""`kgc graph` (kgc/graph_cmd.py): summary, analysis, exports, pinning, and one-sentence errors with exit 2.

Driven through its own ``add_parser``/``run`` so that it is tested whether or not kgc/cli.py wires it.
"""
from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from kgc import graph_cmd
from model import manifest
from model.state import Scope


def kgc_graph(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="kgc")
    graph_cmd.add_parser(parser.add_subparsers(dest="command"))
    code = graph_cmd.run(parser.parse_args(["graph", *argv]), Console(width=200, soft_wrap=True))
    out, err = capsys.readouterr()
    return code, out, err


def test_summary_prints_sizes_group_counts_and_analysis_counts(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = kgc_graph(capsys, "--profile", "0.10.0", "--members", "2")
    assert code == 0 and err == ""
    sizes = next(line for line in out.splitlines() if "139" in line)
    assert [c.strip() for c in sizes.strip("│ ").split("│")] == ["139", "2319", "8", "yes", "3", "0", "62", "54", "20"]
    assert "JoinGroup/new-pending, ExpireSync, OffsetCommit/simple" in out
    assert "1 (15 states)" in out   # fair non-progress SCCs under cooperative clients and a healthy log


def test_analyse_prints_the_report_with_paths(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = kgc_graph(capsys, "--profile", "3.9", "--members", "1", "--analyse")
    assert code == 0
    assert "model analysis — profile 3.9, members=1" in out and "↺ back to step" in out


def test_text_exports_go_to_stdout_or_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = kgc_graph(capsys, "--members", "1", "--format", "dot")
    assert code == 0 and out.startswith('digraph "kgc model 3.9 members=1" {') and out.count(" -> ") == 549
    target = tmp_path / "g.json"
    code, out, _ = kgc_graph(capsys, "--members", "1", "--profile", "0.10.0", "--out", str(target))
    assert code == 0 and f"json written to {target}" in out
    assert len(json.loads(target.read_text(encoding="utf-8"))["nodes"]) == 20


def test_pictures_are_written(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    png, svg = tmp_path / "q.png", tmp_path / "g.svg"
    assert kgc_graph(capsys, "--members", "3", "--quotient", "--out", str(png))[0] == 0
    assert png.read_bytes().startswith(b"\x89PNG")
    assert kgc_graph(capsys, "--members", "1", "--format", "svg", "--out", str(svg))[0] == 0
    assert svg.read_bytes().startswith(b"<?xml")


@pytest.mark.parametrize(("argv", "sentence"), [
    (["--profile", "9.9"], "unknown profile '9.9'; known profiles: 0.10.0, 2.4.1, 2.7.0, 3.9, 4.1."),
    (["--members", "0"], "--members must be 1 to 5 (the graph grows fast), not 0."),
    (["--members", "6"], "--members must be 1 to 5 (the graph grows fast), not 6."),
    (["--max-appends", "9"], "--max-appends must be 0 to 4, not 9."),
    (["--format", "png"], "a png picture needs a file: add --out FILE.png."),
    (["--out", "g.txt"], "cannot tell the format of g.txt: add --format (dot, graphml, json, svg, png)."),
    (["--quotient"], "--quotient chooses what to export: add --format dot, svg or png."),
    (["--quotient", "--format", "json"], "the group-state quotient exports as dot, svg or png only."),
    (["--members", "3", "--format", "svg", "--out", "x.svg"],
     "a picture of the whole graph is legible only up to 2 member slots; draw the group-state quotient instead "
     "(--quotient)."),
])
def test_bad_input_is_one_sentence_and_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch, argv: list[str], sentence: str) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = kgc_graph(capsys, *argv)
    assert code == 2 and out == ""
    assert err == f"kgc: error: {sentence}\n"
    assert not list(tmp_path.iterdir())   # nothing was written


def test_pin_rewrites_the_manifest_and_names_the_changed_rows(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """--pin on a copy: a row with a wrong number is reported and fixed; a second run changes nothing."""
    copy = tmp_path / "manifest.toml"
    shutil.copy(manifest.MANIFEST, copy)
    scopes = [("0.10.0", Scope(members=1)), ("3.9", Scope(members=1))]
    rows = [r for r in manifest.load_manifest(copy) if (r.profile, r.scope) in scopes]
    copy.write_text(manifest.render_manifest(rows).replace("edges = 549", "edges = 548"), encoding="utf-8")
    monkeypatch.setattr(manifest, "MANIFEST", copy)
    monkeypatch.setattr(manifest, "pinned_scopes", lambda: scopes)
    code, out, _ = kgc_graph(capsys, "--pin")
    assert code == 0 and "3.9-m1-deferred-a2" in out and "edges=548" in out and "edges=549" in out
    assert "0.10.0-m1" not in out
    assert manifest.load_manifest(copy) == rows
    code, out, _ = kgc_graph(capsys, "--pin")
    assert code == 0 and "every pinned number is unchanged" in out
