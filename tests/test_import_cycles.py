"""No import circle in kafkapy/: the module graph, as Python runs it, is acyclic.

An edge A -> B means running A imports B: at the top of A or inside one of its functions (a lazy
import closes a circle as surely, only later), including the packages Python initialises on the
way (importing ``a.b.c`` runs ``a/b/__init__.py``). Imports under ``if TYPE_CHECKING:`` are left
out: they never run. A circle makes the import order matter, so a reordering of imports (an
editor's, ruff's) can break the program; this test names every circle with its edges.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "kafkapy"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                skipped.update(id(n) for n in ast.walk(stmt))
    return skipped


def runtime_imports(name: str) -> set[str]:
    """The kafkapy modules that running module ``name`` imports (see the module doc)."""
    path = MODULES[name]
    is_package = path.name == "__init__.py"
    package = name.split(".") if is_package else name.split(".")[:-1]
    tree = ast.parse(path.read_text(), str(path))
    skipped = _type_checking_nodes(tree)
    targets: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            submodules = {f"{source}.{a.name}" for a in node.names} & MODULES.keys()
            targets.update(submodules)
            if len(submodules) < len(node.names):
                targets.add(source)
    own = name.split(".")
    ancestors = {".".join(own[:i]) for i in range(1, len(own) + 1)}
    edges: set[str] = set()
    for target in targets:
        parts = target.split(".")
        for i in range(2, len(parts) + 1):  # the packages initialised on the way, then itself
            step = ".".join(parts[:i])
            if step in MODULES and step not in ancestors:
                edges.add(step)
    edges.discard(name)
    return edges


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
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

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_circles_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]


def test_runtime_imports_follow_packages_and_skip_type_checking():
    edges = runtime_imports("kafkapy.server.registry")
    assert "kafkapy.protocol.api_table" in edges and "kafkapy.protocol" in edges, edges
    # connection.py imports the Broker only for its annotations
    assert "kafkapy.server.broker" not in runtime_imports("kafkapy.server.network.connection")


def test_no_import_circle():
    graph = {name: runtime_imports(name) for name in MODULES}
    found = circles(graph)
    report = []
    for component in found:
        members = set(component)
        report.append(" <-> ".join(component))
        report += [f"    {m} -> {', '.join(sorted(graph[m] & members))}" for m in component]
    assert not found, "import circles:\n" + "\n".join(report)
