"""The documentation is part of the test command: the site builds with ``mkdocs build --strict``
(a broken internal link, anchor or nav entry, or a configuration reference that disagrees with
the broker's config definitions, fails it), the package map of docs/architecture.md names
exactly the packages under kafkapy/, the Python samples marked ``<!-- runnable -->`` in the
README and the docs run against a real kafkapy broker on a free port (the plugin's
kafka_broker_factory) and print what their comments say, and the shell samples name scripts,
files and modules that exist.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.parts)]
RUNNABLE = re.compile(r"^<!-- runnable -->\n```python\n(.*?)^```", re.S | re.M)
SHELL = re.compile(r"^```(?:sh|bash|console)\n(.*?)^```", re.S | re.M)
BOOTSTRAP = "127.0.0.1:9092"


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


# ---- the site ---------------------------------------------------------------------------------


def test_site_builds_strict(tmp_path: Path) -> None:
    site = tmp_path / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(site)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    reference = (site / "configuration" / "index.html").read_text()
    assert "<!-- generated:" not in reference
    config = config_reference()
    names = {
        name
        for scope in ("broker", "topic", "group")
        for name in config.config_definitions.definitions(scope)
    }
    missing = sorted(n for n in names if f"<code>{n}</code>" not in reference)
    assert not missing, f"configs missing from the generated reference: {missing}"
    assert (site / "compatibility" / "findings" / "index.html").exists()


def config_reference() -> ModuleType:
    """docs/hooks/config_reference.py, which imports the broker's config definitions."""
    hooks = str(DOCS / "hooks")
    if hooks not in sys.path:
        sys.path.insert(0, hooks)
    return importlib.import_module("config_reference")


def test_config_reference_refuses_an_undescribed_config(monkeypatch: pytest.MonkeyPatch) -> None:
    config = config_reference()
    monkeypatch.delitem(config.DESCRIPTIONS, "num.partitions")
    with pytest.raises(config.ConfigReferenceError, match="num.partitions"):
        config.render_broker_configs()


# ---- the package map --------------------------------------------------------------------------


def packages() -> set[str]:
    """Every package under kafkapy/: a directory holding Python modules."""
    found = set()
    for d in [ROOT / "kafkapy", *(ROOT / "kafkapy").rglob("*")]:
        if d.is_dir() and d.name != "__pycache__" and any(d.glob("*.py")):
            found.add(rel(d))
    return found


def package_map() -> set[str]:
    text = (DOCS / "architecture.md").read_text()
    section = text.split("## Package map", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `(kafkapy[\w/]*)` \|", section, re.M))


def test_the_package_map_names_every_package_and_no_other() -> None:
    mapped, real = package_map(), packages()
    assert mapped, "no package map in docs/architecture.md"
    assert not real - mapped, f"packages missing from docs/architecture.md: {real - mapped}"
    assert not mapped - real, f"docs/architecture.md names packages that do not exist: " \
                              f"{mapped - real}"


# ---- code samples -----------------------------------------------------------------------------


def runnable_samples() -> list[tuple[str, str]]:
    return [(f"{rel(p)}#{i}", code) for p in PAGES
            for i, code in enumerate(RUNNABLE.findall(p.read_text()))]


def test_the_readme_has_a_runnable_example() -> None:
    assert any(name.startswith("README.md#") for name, _ in runnable_samples())


@pytest.mark.parametrize(("name", "code"), runnable_samples(), ids=[n for n, _ in
                                                                      runnable_samples()])
def test_runnable_sample(name: str, code: str, kafka_broker_factory) -> None:
    broker = kafka_broker_factory()
    code = code.replace(BOOTSTRAP, broker.bootstrap_servers)
    namespace: dict[str, object] = {"__name__": "__sample__"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, name, "exec"), namespace)
        for fname, fn in list(namespace.items()):  # a sample written as a pytest test
            if fname.startswith("test_") and callable(fn):
                fixtures = {"kafka_broker": broker, "kafka_topic": f"docs-{fname}"}
                fn(**{p: fixtures[p] for p in inspect.signature(fn).parameters})
    expected = [m.group(1) for m in re.finditer(r"print\(.*\)\s+# (.*)$", code, re.M)]
    if expected:
        assert out.getvalue().splitlines() == expected


PATH = re.compile(r"(?<![\w./-])((?:scripts|benchmarks|compat_tests|kafkapy|config|tests|docs)"
                  r"/[\w./-]*\w)")
MODULE = re.compile(r"python -m ((?:kafkapy|compat_tests|benchmarks|tests)(?:\.\w+)+)")


def test_shell_samples_name_what_exists() -> None:
    missing = []
    for page in PAGES:
        for block in SHELL.findall(page.read_text()):
            for path in PATH.findall(block):
                if not (ROOT / path).exists() and not path.startswith("kafkapy/pipelines/out"):
                    missing.append(f"{rel(page)}: {path}")
            for module in MODULE.findall(block):
                base = ROOT / module.replace(".", "/")
                if not (base.with_suffix(".py").exists() or (base / "__init__.py").exists()):
                    missing.append(f"{rel(page)}: python -m {module}")
    assert not missing, "shell samples name what does not exist:\n" + "\n".join(missing)


def test_shell_samples_are_checked_somewhere() -> None:
    scripts = {p for page in PAGES for block in SHELL.findall(page.read_text())
               for p in PATH.findall(block) if p.startswith("scripts/")}
    assert "scripts/run-broker.sh" in scripts and "scripts/run-tests.sh" in scripts
