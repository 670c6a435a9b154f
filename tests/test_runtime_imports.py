"""The broker imports only what `pip install kafkapy` installs.

Every module of the package except the client-side Spark pieces (kafkapy/spark,
kafkapy/pipelines, with their `spark` extra) and the test harnesses (kafkapy/testing*) is read,
and each import in it, at module level or inside a function, must name the standard library,
kafkapy itself or a distribution listed in pyproject.toml's runtime ``dependencies``. The
runtime-only install test in compat_tests/test_runtime_install.py proves the same by running a
broker from such an install; this check is the fast one that names the offending line.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLIENT_SIDE = ("spark", "pipelines")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_distributions() -> set[str]:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return {canonical(re.split(r"[\s<>=!~;\[]", d, maxsplit=1)[0]) for d in deps}


def broker_modules() -> list[Path]:
    out = []
    for path in sorted((ROOT / "kafkapy").rglob("*.py")):
        first = path.relative_to(ROOT / "kafkapy").parts[0]
        if first in CLIENT_SIDE or first.startswith("testing"):
            continue
        out.append(path)
    return out


def imported_tops(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.split(".")[0]))
    return found


def test_broker_imports_only_runtime_dependencies() -> None:
    allowed = runtime_distributions()
    dists = packages_distributions()
    modules = broker_modules()
    assert len(modules) > 100 and any(p.name == "compression.py" for p in modules)
    offending = []
    for path in modules:
        for line, top in imported_tops(path):
            if top in sys.stdlib_module_names or top == "kafkapy":
                continue
            owners = {canonical(d) for d in dists.get(top, [])}
            if not owners & allowed:
                where = path.relative_to(ROOT)
                offending.append(f"{where}:{line} imports {top} ({sorted(owners) or 'unknown'})")
    assert not offending, "not in pyproject's runtime dependencies:\n" + "\n".join(offending)


def test_kafka_named_scripts_run_the_runtime_install() -> None:
    """scripts/kafka-*.sh run `kafkapy` from .venv-runtime, the install scripts/bootstrap.sh
    builds for users; .venv (the test environment) does not exist in a user's checkout."""
    scripts = sorted((ROOT / "scripts").glob("kafka-*.sh")) + [ROOT / "scripts/zookeeper-shell.sh"]
    assert len(scripts) > 10
    wrong = [
        p.name for p in scripts
        if '"$(dirname "$0")/../.venv-runtime/bin/kafkapy"' not in p.read_text()
    ]
    assert not wrong, f"not run from .venv-runtime: {wrong}"
