"""The type checker over kafkapy/: mypy's errors may only become fewer.

mypy runs on the package as pyproject.toml's [tool.mypy] configures it, and its errors are
counted per module and error code. tests/mypy-baseline.txt holds the counts the code had when
the check was introduced: a module or code whose count grows, or appears, fails the test (new
code is type-checked clean); a count that falls is reported, and
``python -m tests.test_type_check --update`` writes the lower counts back.
"""

from __future__ import annotations

import collections
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = Path(__file__).with_name("mypy-baseline.txt")
ERROR = re.compile(r"^(?P<path>[\w/.]+\.py):\d+: error: .*\[(?P<code>[\w-]+)\]$")


def mypy_errors() -> collections.Counter[str]:
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary",
                           "--cache-dir", str(ROOT / ".mypy_cache")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    counts: collections.Counter[str] = collections.Counter()
    for line in proc.stdout.splitlines():
        m = ERROR.match(line)
        if m:
            counts[f"{m['path']} [{m['code']}]"] += 1
    assert proc.returncode in (0, 1) and (proc.returncode == 0) == (not counts), (
        f"mypy did not run as expected (exit {proc.returncode}):\n{proc.stdout[-2000:]}"
        f"{proc.stderr[-2000:]}")
    return counts


def read_baseline() -> collections.Counter[str]:
    counts: collections.Counter[str] = collections.Counter()
    for line in BASELINE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, n = line.rpartition(" ")
            counts[key] = int(n)
    return counts


def write_baseline(counts: collections.Counter[str]) -> None:
    lines = ["# mypy's errors per module and code on kafkapy/ (tests/test_type_check.py): these",
             "# counts may only fall; `python -m tests.test_type_check --update` lowers them.",
             *(f"{key} {n}" for key, n in sorted(counts.items()))]
    BASELINE.write_text("\n".join(lines) + "\n")


def test_type_errors_only_shrink():
    got, baseline = mypy_errors(), read_baseline()
    grown = {k: (baseline.get(k, 0), n) for k, n in got.items() if n > baseline.get(k, 0)}
    assert not grown, ("new mypy errors (module [code]: baseline -> now); type-check new code "
                       "clean:\n" + "\n".join(f"{k}: {a} -> {b}" for k, (a, b) in
                                              sorted(grown.items())))
    fallen = sum(baseline.values()) - sum(got.values())
    if fallen:
        print(f"{fallen} fewer mypy errors than tests/mypy-baseline.txt holds: "
              "python -m tests.test_type_check --update")


if __name__ == "__main__":
    if sys.argv[1:] == ["--update"]:
        # lower the counts that fell; never raise one or add one (the first baseline aside)
        now = mypy_errors()
        base = read_baseline() if BASELINE.exists() else now
        kept = collections.Counter({k: min(n, base[k]) for k, n in now.items() if k in base})
        write_baseline(kept)
        print(f"tests/mypy-baseline.txt: {sum(kept.values())} errors")
