#!/usr/bin/env python3
"""Build the runtime-only install of this checkout: what `pip install kafkapy` gives a user.

    python3 scripts/runtime_venv.py DIR          a venv in DIR, kept current with the sources
    python3 scripts/runtime_venv.py --keyed DIR  a venv in DIR/runtime-<hash>, built once per
                                                 state of the sources (concurrent checkouts
                                                 with different sources never share one); the
                                                 others in DIR are removed once unused for a
                                                 day or beyond the 8 most recently used

Either way the venv is made with the standard library's venv module and filled with exactly
``pip install <checkout>``: the package (not editable) and pyproject.toml's runtime
``dependencies``, no extras. The path of the venv is printed on stdout.

The state of the sources is a SHA-256 over pyproject.toml, setup.py and every file that goes
into the package (kafkapy/ and the protocol_specs/ it links to, without caches and build
products); the venv records the state it was built from. When pyproject.toml or setup.py changed
it is rebuilt from scratch; when only package sources did, the package alone is reinstalled
(``pip install --no-deps --force-reinstall``) over the same dependencies. pip's cache keeps
either to seconds. Builders of the same venv take turns (a lock file next to it).

Used by scripts/bootstrap.sh (the venv `scripts/run-broker.sh` runs), docker/Dockerfile and
compat_tests/test_runtime_install.py, so all three run one install.

Standard library only: this runs before anything is installed.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STAMP = ".kafkapy-sources"
SKIPPED_DIRS = {"__pycache__", "build"}
SKIPPED_SUFFIXES = (".pyc", ".so", ".pyd")
KEYED_KEEP_S = 24 * 3600  # keyed venvs used this recently are kept ...
KEYED_KEEP_MAX = 8  # ... up to this many (each is about 70 MB)


def package_files(root: Path = ROOT) -> list[Path]:
    """The files whose content decides what `pip install .` installs."""
    files = [root / "pyproject.toml", root / "setup.py"]
    for top in ("kafkapy", "protocol_specs"):
        for dirpath, dirnames, filenames in os.walk(root / top):
            # kafkapy/protocol_specs is a link to protocol_specs/: walked once, from there
            dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
            files += [
                Path(dirpath) / f for f in sorted(filenames) if not f.endswith(SKIPPED_SUFFIXES)
            ]
    return [f for f in files if f.is_file()]


def _digest(paths: list[Path], root: Path) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def sources_state(root: Path = ROOT) -> tuple[str, str]:
    """(hash of pyproject.toml and setup.py: the dependencies and the build, hash of every file
    that goes into the install)."""
    declarations = [root / "pyproject.toml", root / "setup.py"]
    return _digest([f for f in declarations if f.is_file()], root), _digest(
        package_files(root), root
    )


def _quiet_pip(python: Path, *args: str) -> None:
    """Run pip; show its output only if it fails (minus this machine's index warnings)."""
    proc = subprocess.run(
        [str(python), "-m", "pip", "--disable-pip-version-check", "-q", *args],
        capture_output=True,
        text=True,
    )
    if proc.returncode:
        noise = "WARNING: Location"
        lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if noise not in ln]
        sys.stderr.write("\n".join(lines[-40:]) + "\n")
        raise SystemExit(f"runtime_venv: pip {' '.join(args)} failed (exit {proc.returncode})")


def build(target: Path, state: tuple[str, str]) -> None:
    """Rebuild ``target`` from scratch, or, when only package sources changed since it was built
    (same pyproject.toml and setup.py), reinstall just the package over the same dependencies."""
    stamp, python = target / STAMP, target / "bin" / "python"
    built = stamp.read_text().split() if stamp.is_file() else []
    if len(built) == 2 and built[0] == state[0] and python.exists():
        print(f"runtime_venv: sources changed, reinstalling kafkapy in {target}", file=sys.stderr)
        _quiet_pip(python, "install", "--no-deps", "--force-reinstall", str(ROOT))
    else:
        print(
            f"runtime_venv: installing kafkapy (runtime dependencies only) into {target}",
            file=sys.stderr,
        )
        shutil.rmtree(target, ignore_errors=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(target)
        _quiet_pip(python, "install", str(ROOT))
    subprocess.run(
        [str(target / "bin" / "kafkapy"), "--help"], check=True, stdout=subprocess.DEVNULL
    )
    stamp.write_text(" ".join(state) + "\n")


def ensure(target: Path, state: tuple[str, str] | None = None) -> Path:
    """Make ``target`` a runtime venv of the current sources (no-op when it already is)."""
    state = state or sources_state()
    target = target.absolute()
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name.lstrip('.')}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = target / STAMP
        if stamp.is_file() and stamp.read_text().split() == list(state):
            os.utime(stamp)  # recently used: spared by the keyed pruning
        else:
            build(target, state)
    return target


def prune_keyed(root: Path, keep: Path) -> None:
    """Remove the keyed venvs not used for a day, and all but the most recently used ones beyond
    KEYED_KEEP_MAX; never ``keep``, nor one being built (that holds its lock)."""
    now = time.time()

    def last_used(d: Path) -> float:
        stamp = d / STAMP
        return stamp.stat().st_mtime if stamp.is_file() else 0.0

    others = sorted(
        (d for d in root.glob("runtime-*") if d.is_dir() and d != keep), key=last_used, reverse=True
    )
    for rank, old in enumerate(others, start=1):
        if rank < KEYED_KEEP_MAX and now - last_used(old) < KEYED_KEEP_S:
            continue
        with open(root / f".{old.name}.lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            shutil.rmtree(old, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--keyed", action="store_true", help="DIR/runtime-<hash>, built once")
    args = parser.parse_args()
    state = sources_state()
    if args.keyed:
        target = ensure(args.dir / f"runtime-{state[1][:16]}", state)
        prune_keyed(args.dir.absolute(), target)
    else:
        target = ensure(args.dir, state)
    print(target)


if __name__ == "__main__":
    main()
