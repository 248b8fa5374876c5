"""The layer rules of DESIGN.md §2, checked by parsing every import of the shipped layers.

Arrows point only down the layer list; impl and model never meet except in harness; each
third-party package stays in its layer. Imports are found at any depth (inside functions,
try blocks, `if TYPE_CHECKING:`), relative imports are resolved to their package, and
`importlib.import_module("literal")` counts as an import too.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# Which first-party packages each scanned layer may import (its own package is always allowed).
FIRST_PARTY = ("core", "impl", "harness", "model", "properties", "explore", "reports", "wire", "kgc",
               "stateful_tests", "tests", "bench")
ALLOWED_FIRST_PARTY: dict[str, frozenset[str]] = {
    "core": frozenset(),
    "impl": frozenset({"core"}),
    "model": frozenset({"core"}),
    "harness": frozenset({"core", "impl", "model"}),
    "properties": frozenset({"core", "model", "harness"}),
    "explore": frozenset({"core", "harness", "model", "properties"}),
    "reports": frozenset({"core", "properties", "model"}),
    "wire": frozenset({"core", "impl", "harness", "properties"}),
    "kgc": frozenset(FIRST_PARTY) - {"tests", "bench"},
    "stateful_tests": frozenset(FIRST_PARTY) - {"tests", "bench"},
}
LAYERS = tuple(ALLOWED_FIRST_PARTY)

# Third-party packages with a fixed home: top-level import name -> path prefixes allowed to use it.
# (tests/ is not scanned, so hypothesis there needs no entry.)
PLACED_THIRD_PARTY: dict[str, tuple[str, ...]] = {
    "networkx": ("model/", "explore/", "reports/"),
    "z3": ("properties/z3/",),
    "hypothesis": ("stateful_tests/",),
    "pyspark": ("explore/spark/",),
    "py4j": ("explore/spark/",),
    "pandas": ("explore/spark/",),
    "pyarrow": ("explore/spark/",),
    "rich": ("reports/", "kgc/"),
    "matplotlib": ("model/", "reports/"),
    "kafka": ("wire/",),
    "aiokafka": ("wire/",),
    "confluent_kafka": ("wire/",),
}
# Layers that may import nothing outside the standard library and the layers below them.
STDLIB_ONLY = ("core", "impl")
# Directories inside a layer's folder that are not part of its package (no __init__.py, not shipped):
# reports/examples/ holds a committed example report, its generator script (run from the repo root,
# like bin/kgc, so it uses the whole stack) and the regression test generated with it; reports/findings/
# holds the documented findings' recorded counterexamples and their regression tests (kgc/findings_cmd.py).
NOT_IN_LAYER = ("reports/examples/", "reports/findings/")


def _package_of(rel: Path) -> list[str]:
    """The dotted package a file belongs to, as parts: impl/mutants/x.py -> [impl, mutants]."""
    return list(rel.parent.parts)


def _imported_modules(tree: ast.AST, package: list[str]) -> list[tuple[int, str | None]]:
    """(line, absolute dotted module) for every import in the tree; None for one past the top."""
    found: list[tuple[int, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                found.append((node.lineno, node.module))
                continue
            if node.level - 1 >= len(package):
                found.append((node.lineno, None))
                continue
            base = package[: len(package) - (node.level - 1)]
            found.append((node.lineno, ".".join(base + ([node.module] if node.module else []))))
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str) and not node.args[0].value.startswith(".")
              and _is_import_module(node.func)):
            found.append((node.lineno, node.args[0].value))
    return found


def _is_import_module(func: ast.expr) -> bool:
    if isinstance(func, ast.Attribute):
        return func.attr == "import_module"
    return isinstance(func, ast.Name) and func.id in ("import_module", "__import__")


def _check(rel: str, layer: str, line: int, module: str | None) -> str | None:
    """One violation message for one import, or None when the import is allowed."""
    where = f"{rel}:{line}"
    if module is None:
        return f"{where}: relative import goes above the top-level package"
    top = module.split(".")[0]
    if top in FIRST_PARTY:
        if top == layer or top in ALLOWED_FIRST_PARTY[layer]:
            return None
        allowed = ", ".join(sorted(ALLOWED_FIRST_PARTY[layer])) or "the standard library"
        return f"{where}: {layer} imports {module} ({layer} may import only {allowed})"
    if top in sys.stdlib_module_names:
        return None
    if top in PLACED_THIRD_PARTY:
        homes = PLACED_THIRD_PARTY[top]
        if rel.startswith(homes):
            return None
        return f"{where}: {layer} imports {top} ({top} belongs only in {', '.join(homes)})"
    if layer in STDLIB_ONLY:
        return f"{where}: {layer} imports third-party {top} ({layer} may use only the standard library)"
    return None


def violations(root: Path) -> list[str]:
    """Every import under root's layer directories that breaks DESIGN.md §2, in file order."""
    found: list[str] = []
    for layer in LAYERS:
        layer_dir = root / layer
        if not layer_dir.is_dir():
            continue
        for path in sorted(layer_dir.rglob("*.py")):
            rel_path = path.relative_to(root)
            if any(part.startswith(".") or part == "__pycache__" for part in rel_path.parts):
                continue
            rel = rel_path.as_posix()
            if rel.startswith(NOT_IN_LAYER):
                continue
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
            except SyntaxError as err:
                found.append(f"{rel}:{err.lineno}: cannot be parsed, so its imports were not checked")
                continue
            for line, module in sorted(_imported_modules(tree, _package_of(rel_path)),
                                       key=lambda item: (item[0], item[1] or "")):
                message = _check(rel, layer, line, module)
                if message:
                    found.append(message)
    return found


def test_the_real_tree_keeps_the_layer_rules() -> None:
    assert (REPO / "core" / "__init__.py").is_file(), f"{REPO} is not the kgc repo root"
    found = violations(REPO)
    assert not found, "layer rule violations (DESIGN.md §2):\n" + "\n".join(found)


def _plant(root: Path, files: dict[str, str]) -> None:
    for rel, source in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")


def test_the_checker_reports_exactly_the_planted_bad_imports(tmp_path: Path) -> None:
    _plant(tmp_path, {
        "core/__init__.py": "",
        "core/y.py": "import json\nimport rich\n",
        "impl/__init__.py": "from . import x\nfrom core import Errors\n",
        "impl/x.py": "from model import graph\n",
        "model/__init__.py": "import networkx as nx\nfrom core.types import GroupState\n",
        "harness/abstraction.py": "from impl import x\nfrom model import State\n",
    })
    assert violations(tmp_path) == [
        "core/y.py:2: core imports rich (rich belongs only in reports/, kgc/)",
        "impl/x.py:1: impl imports model (impl may import only core)",
    ]


@pytest.mark.parametrize(("rel", "source", "expected"), [
    # arrows point only down; impl and model never import each other
    ("core/a.py", "from impl import GroupCoordinator\n",
     "core/a.py:1: core imports impl (core may import only the standard library)"),
    ("model/a.py", "def f():\n    import impl.group\n",
     "model/a.py:2: model imports impl.group (model may import only core)"),
    ("impl/a.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from harness import World\n",
     "impl/a.py:3: impl imports harness (impl may import only core)"),
    ("reports/a.py", "import importlib\nimportlib.import_module('explore.local')\n",
     "reports/a.py:2: reports imports explore.local (reports may import only core, model, properties)"),
    # relative imports resolve to their package
    ("impl/mutants/m.py", "from ...model import State\n",
     "impl/mutants/m.py:1: relative import goes above the top-level package"),
    ("impl/mutants/m.py", "from ..group import GroupMetadata\nfrom .. import group\n", None),
    # third-party placement
    ("properties/catalog.py", "import z3\n",
     "properties/catalog.py:1: properties imports z3 (z3 belongs only in properties/z3/)"),
    ("properties/z3/encode.py", "import z3\nfrom z3 import Solver\n", None),
    ("explore/local.py", "from pyspark.sql import SparkSession\n",
     "explore/local.py:1: explore imports pyspark (pyspark belongs only in explore/spark/)"),
    ("explore/spark/bfs.py", "from pyspark.sql import SparkSession\nimport networkx\n", None),
    ("harness/world.py", "import hypothesis\n",
     "harness/world.py:1: harness imports hypothesis (hypothesis belongs only in stateful_tests/)"),
    ("stateful_tests/test_m.py", "from hypothesis.stateful import RuleBasedStateMachine\n", None),
    ("kgc/cli.py", "import networkx\n",
     "kgc/cli.py:1: kgc imports networkx (networkx belongs only in model/, explore/, reports/)"),
    ("kgc/cli.py", "from rich.console import Console\nimport explore, reports, impl, tomllib\n", None),
    ("kgc/graph_cmd.py", "import matplotlib.pyplot\n",
     "kgc/graph_cmd.py:1: kgc imports matplotlib (matplotlib belongs only in model/, reports/)"),
    ("properties/plots.py", "from matplotlib.figure import Figure\n",
     "properties/plots.py:1: properties imports matplotlib (matplotlib belongs only in model/, reports/)"),
    ("model/render.py", "from matplotlib.figure import Figure\n", None),
    ("reports/pictures.py", "import matplotlib\n", None),
    ("impl/a.py", "import attr\n",
     "impl/a.py:1: impl imports third-party attr (impl may use only the standard library)"),
    ("harness/a.py", "import attr\n", None),
    ("model/a.py", "def f(:\n", "model/a.py:1: cannot be parsed, so its imports were not checked"),
])
def test_each_rule_can_fail(tmp_path: Path, rel: str, source: str, expected: str | None) -> None:
    _plant(tmp_path, {rel: source})
    assert violations(tmp_path) == ([expected] if expected else [])
