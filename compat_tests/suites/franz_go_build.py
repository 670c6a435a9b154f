"""Obtaining and compiling franz-go's integration suite (see franz_go.py, which runs it).

`build()` returns the compiled test binary of franz-go's ``pkg/kgo`` package, the Go client's
own tests, most of which talk to a broker named by ``KGO_SEEDS``. The module is fetched from the
Go module proxy with the ``go`` command (``go mod download``, into a GOPATH of its own), copied
to a writable tree (the module cache is read-only), and its tests compiled once with
``go test -c``. Everything lives under ``$KAFKAPY_SUITES_CACHE`` (default
``~/.cache/kafkapy-suites``) in ``franz-go-<version>/``, with the seconds each step took in
``built.json``; nothing of it is part of the project's tree. Safe to call again: a finished build
is returned as it is.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from compat_tests.suites.librdkafka_build import SuiteUnavailable, cache_root, run_command

MODULE = "github.com/twmb/franz-go"
VERSION = "v1.22.3"
PACKAGE = "./pkg/kgo"
# where Go may be when it is not on PATH (the official tarball's place, Debian's golang-go)
GO_LOCATIONS = ("/usr/local/go/bin/go", "/usr/lib/go/bin/go")


class GoMissing(SuiteUnavailable):
    """No ``go`` command on this machine: the one reason the suite may be skipped."""


def go_command() -> str:
    """The ``go`` executable; GoMissing when there is none."""
    found = shutil.which("go")
    if found:
        return found
    for path in GO_LOCATIONS:
        if os.access(path, os.X_OK):
            return path
    raise GoMissing("no `go` command (scripts/bootstrap.sh --tests installs golang-go)")


def go_version(go: str) -> tuple[int, int]:
    out = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True,
                         check=False).stdout.strip()
    m = re.match(r"go(\d+)\.(\d+)", out)
    if not m:
        raise SuiteUnavailable(f"cannot tell the version of {go}: {out!r}")
    return int(m.group(1)), int(m.group(2))


def go_env(base: Path, go: str) -> dict[str, str]:
    """The environment of every ``go`` command here: a module cache and a build cache of the
    suite's own, writable module directories; a toolchain older than the module's go.mod asks
    for is replaced by the one it names, itself a module from the Go module proxy (Go >= 1.21)."""
    env = {
        **os.environ,
        "GOPATH": str(base / "gopath"),
        "GOMODCACHE": str(base / "gopath" / "pkg" / "mod"),
        "GOCACHE": str(base / "gocache"),
        "GOFLAGS": " ".join(filter(None, (os.environ.get("GOFLAGS", ""), "-modcacherw"))),
    }
    major, minor = go_version(go)
    if (major, minor) < (1, 21):
        raise SuiteUnavailable(f"{go} is go{major}.{minor}; franz-go {VERSION} needs a Go that "
                               "can fetch its toolchain (1.21 or newer)")
    env.setdefault("GOTOOLCHAIN", "auto")
    if env["GOTOOLCHAIN"] == "local":
        env["GOTOOLCHAIN"] = "auto"  # a newer go.mod then fetches its toolchain, not fails
    return env


@dataclass
class Build:
    version: str
    base: Path
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def source(self) -> Path:
        """The writable copy of the module."""
        return self.base / "src"

    @property
    def package_dir(self) -> Path:
        """Where the test binary runs, as `go test` runs it: the package's directory."""
        return self.source / "pkg" / "kgo"

    @property
    def binary(self) -> Path:
        return self.base / "kgo.test"


def build(version: str = VERSION, progress: Callable[[str], None] = lambda s: None) -> Build:
    """The compiled ``pkg/kgo`` test binary of franz-go ``version``, from the cache when there."""
    base = cache_root() / f"franz-go-{version}"
    stamp = base / "built.json"
    found = Build(version, base)
    if stamp.is_file() and found.binary.is_file() and found.package_dir.is_dir():
        found.seconds = json.loads(stamp.read_text())["seconds"]
        return found
    go = go_command()
    env = go_env(base, go)
    base.mkdir(parents=True, exist_ok=True)
    log = base / "build.log"
    log.write_text("")
    seconds: dict[str, float] = {}
    t = time.monotonic()
    progress(f"franz-go suite: go mod download {MODULE}@{version}")
    info = json.loads(run_command([go, "mod", "download", "-json", f"{MODULE}@{version}"], log,
                                  cwd=base, env=env))
    module_dir = Path(info["Dir"])
    shutil.rmtree(found.source, ignore_errors=True)
    shutil.copytree(module_dir, found.source)
    for d, _dirs, files in os.walk(found.source):  # module cache files are read-only
        for name in [*files, "."]:
            p = Path(d) / name
            p.chmod(p.stat().st_mode | 0o200)
    seconds["fetch"] = time.monotonic() - t
    t = time.monotonic()
    progress(f"franz-go suite: go test -c {PACKAGE}")
    tmp = found.binary.with_suffix(".tmp")
    run_command([go, "test", "-c", "-o", str(tmp), PACKAGE], log, cwd=found.source, env=env)
    tmp.replace(found.binary)
    seconds["compile"] = time.monotonic() - t
    stamp.write_text(json.dumps({"version": version, "seconds": seconds}, indent=1))
    found.seconds = seconds
    return found
