"""No import circles among holdem.* modules, counting imports inside functions, and none of the
core's modules loads numba or holdem.math, even lazily.

An AST scan of every module under shared/*/src and services/*/src: each ``import`` and
``from ... import`` statement, at any depth (function bodies included: an import deferred into a
function only hides a circle, it does not remove it), becomes an edge to the deepest holdem module
it names. Imports under ``if TYPE_CHECKING:`` never run, but a circle through one is still a
type in the wrong module: there is none either (issue 27).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [*ROOT.glob("shared/*/src"), *ROOT.glob("services/*/src")]


def modules() -> dict[str, Path]:
    found = {}
    for src in SOURCES:
        for path in src.rglob("*.py"):
            parts = path.relative_to(src).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node except the bodies of ``if TYPE_CHECKING:`` blocks."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                yield child
                yield from _runtime_nodes(child)
            continue
        yield node
        yield from _runtime_nodes(node)


def imported_names(
    path: Path, module: str, bases: set[str] | None = None, type_checking: bool = False
) -> set[str]:
    """Every dotted module name ``path`` imports (``from a import b`` gives ``a`` and ``a.b``);
    ``bases`` collects the names that must be modules (``import a.b``, ``from a.b import c``)."""
    names: set[str] = set()
    bases = set() if bases is None else bases
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree) if type_checking else _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
            bases.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names.add(base)
            bases.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def graph(type_checking: bool = False) -> dict[str, set[str]]:
    known = modules()
    edges: dict[str, set[str]] = {}
    for module, path in known.items():
        targets = set()
        for name in imported_names(path, module, type_checking=type_checking):
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module:
                targets.add(name)
        edges[module] = targets
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_scan_sees_every_package_and_function_level_imports() -> None:
    edges = graph()
    assert {"holdem.core.evaluator", "holdem.math.rtp", "holdem.dealer.app"} <= set(edges)
    # holdem.core.cli finds its subcommands through entry points, which are not edges;
    # evaluator_tables imports its generated data inside a function, which is one
    assert "holdem.core.evaluator_data" in edges["holdem.core.evaluator_tables"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_there_is_no_import_circle_among_holdem_modules() -> None:
    assert cycles(graph()) == []


def test_there_is_no_import_circle_even_through_imports_for_type_checking_only() -> None:
    edges = graph(type_checking=True)
    assert "holdem.settlement.state" in edges["holdem.settlement.snapshot"]  # a TYPE_CHECKING one
    assert cycles(edges) == []


def test_no_core_module_imports_numba_or_the_math_even_inside_a_function() -> None:
    known = modules()
    offenders = {
        module: sorted(
            name
            for name in imported_names(path, module)
            if name.split(".")[0] in {"numba", "llvmlite"} or name.startswith("holdem.math")
        )
        for module, path in known.items()
        if module.startswith("holdem.core")
    }
    assert {module: names for module, names in offenders.items() if names} == {}


def test_every_holdem_import_names_a_module_that_exists() -> None:
    """mypy (ignore_missing_imports) and import-linter do not see an import of a moved module."""
    known = modules()
    packages = {m.rsplit(".", k)[0] for m in known for k in range(1, m.count(".") + 1)}
    missing = {}
    for module, path in known.items():
        bases: set[str] = set()
        imported_names(path, module, bases)
        gone = sorted(
            b for b in bases if b.startswith("holdem.") and b not in known and b not in packages
        )
        if gone:
            missing[module] = gone
    assert missing == {}
