"""Pictures of a model graph with matplotlib (Agg, no Graphviz needed); the only module importing matplotlib.

``quotient_figure``: the five group states at fixed places, each arrow labelled with the action
kinds that move between them and how many model edges each stands for; ``graph_figure``: a whole
small graph (1–2 member slots) in a seeded layout, nodes coloured by group state. ``save`` writes
SVG or PNG byte-for-byte deterministically (fixed SVG hash salt, no date, no software stamp).
"""
from __future__ import annotations

import io
from pathlib import Path

import networkx as nx
from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from model.export import GROUP_COLOURS
from model.graph import quotient
from model.state import ABSENT_GROUP, COMPLETING, EMPTY, GROUP_STATES, PREPARING, STABLE, Scope

#: fixed places of the group states: the rebalance loop Preparing -> Completing -> Stable -> Preparing on
#: the right, the group's creation (and E0's death) on the left
POSITIONS = {ABSENT_GROUP: (0.0, 0.0), EMPTY: (5.0, 0.0), PREPARING: (5.0, 3.6), COMPLETING: (10.0, 3.6),
             STABLE: (10.0, 0.0)}
#: where the box of actions that keep a group state is drawn, relative to the state
LOOP_OFFSET = {ABSENT_GROUP: (-0.6, -1.5), EMPTY: (0.0, -1.5), PREPARING: (0.0, 1.5), COMPLETING: (0.9, 1.5),
               STABLE: (0.9, -1.5)}
#: arrow curvature (matplotlib arc3 ``rad``) where the default (0.08, or 0.22 for a pair of opposite
#: arrows) would run through a state
CURVE = {(STABLE, ABSENT_GROUP): -0.12, (ABSENT_GROUP, COMPLETING): 0.1, (COMPLETING, ABSENT_GROUP): 0.12}
#: where along an arrow a label may sit, tried in this order until it overlaps nothing placed before
LABEL_SPOTS = (0.5, 0.38, 0.62, 0.28, 0.72, 0.2, 0.8)
DPI = 110
SEED = 7
MAX_FULL_MEMBERS = 2
#: networkx lays out at most this many nodes without scipy (which kgc does not depend on)
MAX_FULL_STATES = 499
#: up to this many states each node is numbered (the numbers of the DOT/JSON exports)
MAX_NUMBERED = 100


def _title(g: nx.MultiDiGraph) -> str:
    scope = g.graph.get("scope")
    where = (f"{scope.members} member slot{'s' if scope.members != 1 else ''}, "
             f"{'deferred' if scope.deferred_appends else 'sync'} appends, max_appends {scope.max_appends}"
             if isinstance(scope, Scope) else "")
    return (f"profile {g.graph.get('profile', '?')} — {where}: {g.number_of_nodes()} states, "
            f"{g.number_of_edges()} edges")


def _label(counts: dict[str, int]) -> str:
    return "\n".join(f"{name} ×{n}" for name, n in counts.items())


def quotient_figure(g: nx.MultiDiGraph) -> Figure:
    """The group-state quotient of ``g``: arrows between group states, a box of the actions that stay."""
    q = quotient(g)
    used = {s for pair in q for s in pair} | {g.nodes[0]["group"]}
    fig = Figure(figsize=(15, 9.5), dpi=DPI)
    renderer = FigureCanvasAgg(fig).get_renderer()
    ax = fig.add_axes((0.01, 0.01, 0.98, 0.92))
    ax.set_xlim(-2.2, 12.4)
    ax.set_ylim(-2.7, 5.9)
    ax.axis("off")
    fig.suptitle(f"group-state quotient — {_title(g)}\n(arrow labels: action kind × model edges it stands for)",
                 fontsize=11)
    placed = []
    for s in GROUP_STATES:
        x, y = POSITIONS[s]
        n = sum(1 for _, grp in g.nodes(data="group") if grp == s)
        reached = s in used
        box = ax.text(x, y, f"{s}\n{n} states" if reached else f"{s}\n(not reached)", ha="center", va="center",
                      fontsize=9, weight="bold" if reached else "normal", color="black" if reached else "#999999",
                      bbox={"boxstyle": "round,pad=0.6", "fc": GROUP_COLOURS[s] if reached else "white",
                            "ec": "#333333" if reached else "#cccccc"})
        placed.append(_extent(box, renderer))
    for (a, b), counts in q.items():
        if a == b:
            (x, y), (dx, dy) = POSITIONS[a], LOOP_OFFSET[a]
            box = ax.text(x + dx, y + dy, "stays " + a + ":\n" + _label(counts), fontsize=6.5, ha="center",
                          va="center", color="#444444", bbox={"boxstyle": "round", "fc": "#f7f7f7",
                                                               "ec": GROUP_COLOURS[a]})
            placed.append(_extent(box, renderer))
    for (a, b), counts in q.items():
        if a != b:
            rad = CURVE.get((a, b), 0.22 if (b, a) in q else 0.08)
            ax.add_patch(FancyArrowPatch(POSITIONS[a], POSITIONS[b], connectionstyle=f"arc3,rad={rad}",
                                         arrowstyle="-|>", mutation_scale=14, lw=1.1, color="#555555",
                                         shrinkA=34, shrinkB=34))
            placed.append(_place_label(ax, renderer, placed, POSITIONS[a], POSITIONS[b], rad, _label(counts)))
    return fig


def _extent(text: Text, renderer: RendererAgg) -> Bbox:
    return text.get_window_extent(renderer).expanded(1.0, 1.0).padded(5)


def _place_label(ax: Axes, renderer: RendererAgg, placed: list[Bbox], p1: tuple[float, float],
                 p2: tuple[float, float], rad: float, text: str) -> Bbox:
    """Put ``text`` on the first spot along the arrow (LABEL_SPOTS) where it overlaps nothing placed
    before, or else where it overlaps least; returns its extent."""
    best: tuple[float, Text, Bbox] | None = None
    for t in LABEL_SPOTS:
        label = _arc_label(ax, p1, p2, rad, t, text)
        box = _extent(label, renderer)
        overlap = sum(_overlap(box, other) for other in placed)
        if best is None or overlap < best[0]:
            if best is not None:
                best[1].remove()
            best = (overlap, label, box)
        else:
            label.remove()
        if overlap == 0:
            break
    assert best is not None
    return best[2]


def _arc_label(ax: Axes, p1: tuple[float, float], p2: tuple[float, float], rad: float, t: float,
               text: str) -> Text:
    """``text`` at ``t`` along an arc3 arrow, on its outer side, so that the two arrows of a pair (which
    curve to opposite sides) do not start from the same spot."""
    (x1, y1), (x2, y2) = p1, p2
    nx_, ny_ = rad * (y2 - y1), -rad * (x2 - x1)          # matplotlib arc3: control point = middle + this
    cx, cy = (x1 + x2) / 2 + nx_, (y1 + y2) / 2 + ny_
    x = (1 - t) ** 2 * x1 + 2 * (1 - t) * t * cx + t * t * x2   # the quadratic Bezier at t
    y = (1 - t) ** 2 * y1 + 2 * (1 - t) * t * cy + t * t * y2
    ha = "left" if nx_ > 0.15 else "right" if nx_ < -0.15 else "center"
    va = "bottom" if ny_ > 0.15 else "top" if ny_ < -0.15 else "center"
    return ax.text(x + (0.08 if ha == "left" else -0.08 if ha == "right" else 0.0), y, text, fontsize=6.5, ha=ha,
                   va=va, bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "#bbbbbb", "alpha": 0.92})


def _overlap(a: Bbox, b: Bbox) -> float:
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return w * h if w > 0 and h > 0 else 0.0


def graph_figure(g: nx.MultiDiGraph) -> Figure:
    """A whole graph of 1–2 member slots: seeded spring layout started from BFS layers, coloured by group."""
    scope = g.graph.get("scope")
    if isinstance(scope, Scope) and scope.members > MAX_FULL_MEMBERS:
        raise ValueError(f"a picture of the whole graph is legible only up to {MAX_FULL_MEMBERS} member slots; "
                         f"draw the group-state quotient instead (--quotient).")
    if g.number_of_nodes() > MAX_FULL_STATES:
        raise ValueError(f"a picture of the whole graph is drawn for at most {MAX_FULL_STATES} states, this one has "
                         f"{g.number_of_nodes()}; draw the group-state quotient instead (--quotient).")
    simple = nx.Graph((u, v) for u, v in g.edges() if u != v)
    simple.add_nodes_from(g.nodes)
    pos = nx.spring_layout(simple, seed=SEED, iterations=200, k=2.5 / max(1, simple.number_of_nodes()) ** 0.5)
    fig = Figure(figsize=(14, 10), dpi=DPI)
    ax = fig.add_axes((0.01, 0.01, 0.98, 0.93))
    ax.axis("off")
    fig.suptitle(f"model graph — {_title(g)}\n(BFS from the initial state, ringed; self-loops not drawn)",
                 fontsize=11)
    for u, v in sorted(simple.edges()):
        ax.plot([pos[u][0], pos[v][0]], [pos[u][1], pos[v][1]], color="#999999", lw=0.3, alpha=0.5, zorder=1)
    nodes = sorted(g.nodes)
    ax.scatter([pos[n][0] for n in nodes], [pos[n][1] for n in nodes], s=22, zorder=2, linewidths=0.3,
               edgecolors="#333333", c=[GROUP_COLOURS[g.nodes[n]["group"]] for n in nodes])
    ax.scatter([pos[0][0]], [pos[0][1]], s=140, facecolors="none", edgecolors="black", linewidths=1.5, zorder=3)
    if len(nodes) <= MAX_NUMBERED:
        for n in nodes:
            ax.annotate(str(n), pos[n], xytext=(4, 4), textcoords="offset points", fontsize=7, color="#333333")
    handles = [Line2D([], [], marker="o", ls="", markerfacecolor=GROUP_COLOURS[s], markeredgecolor="#333333",
                      label=f"{s} ({sum(1 for _, x in g.nodes(data='group') if x == s)})") for s in GROUP_STATES]
    ax.legend(handles=handles, loc="lower right", fontsize=9, frameon=True)
    return fig


def figure_bytes(fig: Figure, fmt: str) -> bytes:
    """SVG or PNG bytes, the same for the same figure on every run."""
    if fmt not in ("svg", "png"):
        raise ValueError(f"pictures are svg or png, not {fmt!r}.")
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    with rc_context({"svg.hashsalt": "kgc-model", "svg.fonttype": "path"}):
        fig.savefig(buf, format=fmt, metadata=metadata, dpi=DPI)
    return buf.getvalue()


def save(fig: Figure, path: str | Path) -> None:
    fmt = Path(path).suffix.lstrip(".").lower()
    Path(path).write_bytes(figure_bytes(fig, fmt))
