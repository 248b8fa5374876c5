"""The pinned graph sizes of model/manifest.toml: rows, loading, and regeneration (``kgc graph --pin``).

A row names a (profile, scope) and records ``distinct_states``, ``edges``, ``depth`` and
``truncated`` of its graph. tests/test_model_graph.py rebuilds every row and compares, so a change
to the model shows up as a changed number in a reviewed diff — the test never rewrites the file.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from model.graph import build
from model.profiles import MODEL_PROFILES
from model.state import Scope

MANIFEST = Path(__file__).with_name("manifest.toml")
#: a row with more states is marked slow (tested only with -m slow). A state count, not a time, so
#: that the manifest does not depend on the machine: ~20 s of building at ~1,000 states/s.
SLOW_STATES = 20_000
#: ... or more edges than this (the static scope's 3-member graphs: ~15 s each for ~17,000 states)
SLOW_EDGES = 300_000
HEADER = """\
# Pinned sizes of the abstract transition graph (model/graph.py), one [[graph]] row per
# (profile, scope). tests/test_model_graph.py rebuilds every row and compares: a change to the
# model is a visible change here. Regenerate with `kgc graph --pin` and review the diff.
# Rows marked slow = true are checked only by `bin/test -m slow`.
"""


@dataclass(frozen=True, slots=True)
class Row:
    profile: str
    scope: Scope
    distinct_states: int
    edges: int
    depth: int
    truncated: bool
    slow: bool = False

    @property
    def name(self) -> str:
        s = self.scope
        mode = "deferred" if s.deferred_appends else "sync"
        delay = "" if s.initial_delay else "-nodelay"
        static = "-static" if s.static else ""
        return f"{self.profile}-m{s.members}-{mode}{delay}-a{s.max_appends}{static}"

    def figures(self) -> dict[str, object]:
        return {"distinct_states": self.distinct_states, "edges": self.edges, "depth": self.depth,
                "truncated": self.truncated}


def pinned_scopes() -> list[tuple[str, Scope]]:
    """Every (profile, scope) the manifest pins: 1–4 member slots with the default flags, one row per profile
    with synchronous appends, and the static-membership scope (KIP-345) with 1–3 member slots — on 0.10.0, which
    has no static members, its graph is the default one."""
    out = []
    for profile in sorted(MODEL_PROFILES):
        out += [(profile, Scope(members=n)) for n in (1, 2, 3, 4)]
        out.append((profile, Scope(members=2, deferred_appends=False)))
    for profile in sorted(MODEL_PROFILES):
        out += [(profile, Scope(members=n, static=True)) for n in (1, 2, 3)]
    return out


def load_manifest(path: Path = MANIFEST) -> list[Row]:
    """The rows of the manifest; a malformed row is a ValueError naming it."""
    with path.open("rb") as f:
        data = tomllib.load(f)
    rows = []
    for i, r in enumerate(data.get("graph", [])):
        try:
            scope = Scope(members=r["members"], deferred_appends=r["deferred_appends"],
                          initial_delay=r["initial_delay"], max_appends=r["max_appends"], static=r.get("static", False))
            rows.append(Row(r["profile"], scope, r["distinct_states"], r["edges"], r["depth"], r["truncated"],
                            r.get("slow", False)))
        except KeyError as exc:
            raise ValueError(f"{path}: [[graph]] row {i + 1} lacks {exc.args[0]}.") from None
    return rows


def measure(profile: str, scope: Scope) -> Row:
    g = build(scope, profile)
    return Row(profile, scope, g.graph["distinct_states"], g.graph["edges"], g.graph["depth"], g.graph["truncated"],
               g.graph["distinct_states"] > SLOW_STATES or g.graph["edges"] > SLOW_EDGES)


def render_manifest(rows: list[Row]) -> str:
    out = [HEADER]
    for r in rows:
        s = r.scope
        out.append(
            f"[[graph]]\nprofile = \"{r.profile}\"\nmembers = {s.members}\n"
            f"deferred_appends = {str(s.deferred_appends).lower()}\ninitial_delay = {str(s.initial_delay).lower()}\n"
            f"max_appends = {s.max_appends}\n" + ("static = true\n" if s.static else "")
            + f"distinct_states = {r.distinct_states}\nedges = {r.edges}\n"
            f"depth = {r.depth}\ntruncated = {str(r.truncated).lower()}\n" + ("slow = true\n" if r.slow else ""))
    return "\n".join(out)


Change = tuple[str, dict[str, object], dict[str, object]]


def write_manifest(path: Path | None = None, scopes: list[tuple[str, Scope]] | None = None) -> list[Change]:
    """Rebuild every pinned graph and rewrite the manifest (default: model/manifest.toml and
    ``pinned_scopes()``); returns (row, old figures, new figures) for each row that changed."""
    path = path if path is not None else MANIFEST
    old = {r.name: r.figures() for r in load_manifest(path)} if path.exists() else {}
    rows = [measure(profile, scope) for profile, scope in (scopes if scopes is not None else pinned_scopes())]
    path.write_text(render_manifest(rows), encoding="utf-8")
    return [(r.name, old.get(r.name, {}), r.figures()) for r in rows if old.get(r.name) != r.figures()]
