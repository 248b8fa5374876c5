"""Text exports of a model graph: DOT (hand-written, one line per edge), GraphML (networkx) and JSON.

Only scalar attributes leave the process: a node's ``State`` is exported as its ``label`` text and
the graph's ``Scope`` as flat ``scope_*`` fields; ``load_json``/``load_graphml`` rebuild a graph the
analyses accept. JSON is networkx's node-link shape (``links``) with sorted keys, so the same graph
gives the same bytes.
"""
from __future__ import annotations

import io
import json
from dataclasses import asdict, fields
from typing import Any

import networkx as nx

from model.graph import quotient
from model.state import ABSENT_GROUP, COMPLETING, EMPTY, GROUP_STATES, PREPARING, STABLE, Scope

FORMAT = "kgc-graph/1"
#: one fill colour per group state, shared by DOT and the matplotlib pictures
GROUP_COLOURS = {ABSENT_GROUP: "#d9d9d9", EMPTY: "#9ecae1", PREPARING: "#fdae6b", COMPLETING: "#fee391",
                 STABLE: "#a1d99b"}
NODE_ATTRS = ("label", "group", "depth", "parent", "via", "cut", "cut_actions")
EDGE_ATTRS = ("kind", "slot", "arg")
GRAPH_ATTRS = ("profile", "distinct_states", "edges", "depth", "truncated")


def graph_attrs(g: nx.MultiDiGraph) -> dict[str, Any]:
    """The graph's attributes as scalars: the scope flattened to ``scope_<field>``."""
    out = {k: g.graph[k] for k in GRAPH_ATTRS if k in g.graph}
    scope = g.graph.get("scope")
    if isinstance(scope, Scope):
        out.update({f"scope_{k}": v for k, v in asdict(scope).items()})
    return out


def _scalar_copy(g: nx.MultiDiGraph) -> nx.MultiDiGraph:
    h = nx.MultiDiGraph(**graph_attrs(g))
    h.add_nodes_from((n, {k: d[k] for k in NODE_ATTRS if k in d}) for n, d in g.nodes(data=True))
    h.add_edges_from((u, v, k, {a: d[a] for a in EDGE_ATTRS}) for u, v, k, d in g.edges(keys=True, data=True))
    return h


def _restore_scope(h: nx.MultiDiGraph) -> nx.MultiDiGraph:
    values = {f.name: h.graph.pop(f"scope_{f.name}") for f in fields(Scope) if f"scope_{f.name}" in h.graph}
    if len(values) == len(fields(Scope)):
        h.graph["scope"] = Scope(**values)
    return h


# -- JSON -----------------------------------------------------------------------------------------
def to_json(g: nx.MultiDiGraph) -> str:
    h = _scalar_copy(g)
    data = {"format": FORMAT, "directed": True, "multigraph": True, "graph": dict(h.graph),
            "nodes": [{"id": n, **d} for n, d in h.nodes(data=True)],
            "links": [{"source": u, "target": v, "key": k, **d} for u, v, k, d in h.edges(keys=True, data=True)]}
    return json.dumps(data, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def load_json(text: str) -> nx.MultiDiGraph:
    """A graph written by ``to_json``; a file of another format is a ValueError saying so."""
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"not a kgc model graph (expected \"format\": \"{FORMAT}\").")
    h = nx.MultiDiGraph(**data["graph"])
    h.add_nodes_from((d["id"], {k: v for k, v in d.items() if k != "id"}) for d in data["nodes"])
    for d in data["links"]:
        h.add_edge(d["source"], d["target"], key=d["key"], **{a: d[a] for a in EDGE_ATTRS})
    return _restore_scope(h)


# -- GraphML --------------------------------------------------------------------------------------
def to_graphml(g: nx.MultiDiGraph) -> str:
    return "\n".join(nx.generate_graphml(_scalar_copy(g))) + "\n"


def load_graphml(text: str) -> nx.MultiDiGraph:
    h = nx.read_graphml(io.BytesIO(text.encode("utf-8")), node_type=int, force_multigraph=True)
    for default in ("node_default", "edge_default"):   # networkx's own bookkeeping, not ours
        h.graph.pop(default, None)
    return _restore_scope(h)


# -- DOT ------------------------------------------------------------------------------------------
def _q(text: object) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _title(g: nx.MultiDiGraph) -> str:
    scope = g.graph.get("scope")
    where = f" members={scope.members}" if isinstance(scope, Scope) else ""
    return f"kgc model {g.graph.get('profile', '?')}{where}"


def to_dot(g: nx.MultiDiGraph) -> str:
    """Graphviz text: one ``u -> v [label=...]`` line per model edge, nodes filled by group state."""
    lines = [f"digraph {_q(_title(g))} {{", "  node [shape=box, style=filled, fontname=\"monospace\"];"]
    for n, d in g.nodes(data=True):
        lines.append(f"  {n} [label={_q(d['label'])}, fillcolor={_q(GROUP_COLOURS[d['group']])}];")
    for u, v, k in g.edges(keys=True):
        lines.append(f"  {u} -> {v} [label={_q(k)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def quotient_to_dot(g: nx.MultiDiGraph) -> str:
    """The group-state quotient: one node per group state, one edge per (from, to) with its action counts."""
    q = quotient(g)
    used = {s for pair in q for s in pair}
    lines = [f"digraph {_q(_title(g) + ' (group states)')} {{", "  node [shape=ellipse, style=filled];"]
    for s in GROUP_STATES:
        if s in used:
            lines.append(f"  {_q(s)} [fillcolor={_q(GROUP_COLOURS[s])}];")
    for (a, b), counts in q.items():
        label = "\\n".join(f"{name} ×{n}" for name, n in counts.items())
        lines.append(f"  {_q(a)} -> {_q(b)} [label=\"{label}\"];")
    lines.append("}")
    return "\n".join(lines) + "\n"
