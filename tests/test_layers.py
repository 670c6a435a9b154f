"""The layers of the architecture, checked over the import graph of kafkapy/.

Each package of the core may import only the layers below it (protocol at the bottom; storage,
metadata, coordinator and security above it; replication above those; server and the command
line over everything), and the layers below the server do no network I/O of their own: no trio,
asyncio, sockets or selectors (the server's trio code is the only network code). The shared
top-level modules (logs, specs, java_properties) may be imported from anywhere. Every import of
every module counts, at any depth: a lazy import inside a function breaks a layer as much as one
at the top.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "kafkapy"
SHARED = {"logs", "specs", "java_properties", "clock"}
# what each core layer may import of kafkapy's own packages (besides SHARED)
ALLOWED = {
    "protocol": set(),
    "storage": {"protocol"},
    "metadata": set(),
    "quotas": set(),
    "coordinator": {"protocol", "storage", "metadata"},
    "security": {"protocol", "metadata"},
    "replication": {"protocol", "storage", "metadata", "coordinator", "security", "quotas"},
    "spark": set(),
    "pipelines": {"spark"},
}
NETWORK = {"trio", "asyncio", "socket", "selectors", "sniffio"}
NO_NETWORK = {"protocol", "storage", "metadata", "quotas", "coordinator", "security",
              "replication"}


def module_imports(path: Path) -> set[str]:
    """Absolute names of everything a module imports (relative imports resolved)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    package = parts[:-1]  # a module's package; an __init__'s is the package itself
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - (node.level - 1)])
                names.add(".".join(base + ([node.module] if node.module else [])))
            elif node.module:
                names.add(node.module)
    return names


def layer_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def test_module_imports_resolve_relative_imports():
    names = module_imports(PACKAGE / "server" / "apis" / "describe_transactions.py")
    assert {"kafkapy.server.security.authorization", "kafkapy.server.registry"} <= names, names
    assert any(n.startswith("kafkapy.protocol") for n in module_imports(
        PACKAGE / "storage" / "log.py"))


def test_each_layer_imports_only_the_layers_below_it():
    broken = []
    for path in sorted(PACKAGE.rglob("*.py")):
        layer = layer_of(path)
        if layer not in ALLOWED:
            continue
        for name in module_imports(path):
            if name.startswith("kafkapy."):
                target = name.split(".")[1]
                if target != layer and target not in SHARED and target not in ALLOWED[layer]:
                    broken.append(f"{path.relative_to(PACKAGE)} imports {name}")
            if layer in NO_NETWORK and name.split(".")[0] in NETWORK:
                broken.append(f"{path.relative_to(PACKAGE)} ({layer}) does network I/O: {name}")
    assert not broken, "\n".join(broken)
