"""Obtaining and building librdkafka's regression suite (see librdkafka.py, which runs it).

`build()` returns the suite of the librdkafka that the test environment links (Debian's
`librdkafka1`, which kcat uses): `apt-get source librdkafka=<installed version>` through a private
apt configuration with deb-src entries derived from the system's own sources (nothing under /etc
is changed), then librdkafka and `tests/test-runner` built from that one source tree, so the
suite runs against the library it was written for. Cached under ``$KAFKAPY_SUITES_CACHE``
(default ``~/.cache/kafkapy-suites``), keyed by the Debian version, with the seconds each step
took in ``built.json``.
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

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "librdkafka"
LIBRARY_PACKAGE = "librdkafka1"
# what configure needs for the features the suite exercises (codecs, SASL/SSL code paths)
BUILD_PACKAGES = ("gcc", "g++", "make", "dpkg-dev", "liblz4-dev", "libzstd-dev", "libssl-dev",
                  "zlib1g-dev", "libsasl2-dev", "rapidjson-dev")

class SuiteUnavailable(RuntimeError):
    """The suite cannot be obtained or built on this machine (the message says why)."""


def cache_root() -> Path:
    default = Path.home() / ".cache" / "kafkapy-suites"
    return Path(os.environ.get("KAFKAPY_SUITES_CACHE", default))


def run_command(cmd: list[str], log: Path | None = None, cwd: Path | None = None,
         env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True)
    if log is not None:
        with log.open("a") as f:
            f.write(f"$ {' '.join(cmd)}\n{proc.stdout}{proc.stderr}\n")
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-15:]
        raise SuiteUnavailable(f"{' '.join(cmd[:3])} failed (exit {proc.returncode}):\n"
                               + "\n".join(tail))
    return proc.stdout


# ---- obtaining and building -------------------------------------------------------------------

def installed_version() -> str:
    """Debian version of the librdkafka the test environment links (kcat's)."""
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", LIBRARY_PACKAGE],
                             capture_output=True, text=True, check=False)
    except FileNotFoundError as e:
        raise SuiteUnavailable("dpkg-query not found: this runner needs a Debian system") from e
    if out.returncode != 0 or not out.stdout.strip():
        raise SuiteUnavailable(f"{LIBRARY_PACKAGE} is not installed (scripts/bootstrap.sh "
                               "--tests installs kcat, which brings it)")
    return out.stdout.strip()


def _deb_src_entries() -> str:
    """The system's Debian sources as deb-src entries (deb822 and one-line formats)."""
    parts: list[str] = []
    for f in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        text = f.read_text()
        for stanza in re.split(r"\n\s*\n", text):
            if re.search(r"^Types:.*\bdeb\b", stanza, re.M) and "debian" in stanza:
                parts.append(re.sub(r"^Types:.*$", "Types: deb-src", stanza.strip(), flags=re.M))
    one_line = []
    for f in [Path("/etc/apt/sources.list"), *Path("/etc/apt/sources.list.d").glob("*.list")]:
        if f.is_file():
            for line in f.read_text().splitlines():
                if line.startswith("deb ") and "debian" in line:
                    one_line.append("deb-src " + line[4:])
    if one_line:
        parts.append("\n".join(one_line))
    if not parts:
        raise SuiteUnavailable("no Debian apt sources found under /etc/apt to derive deb-src "
                               "entries from")
    return "\n\n".join(parts) + "\n"


def _apt_options(apt_dir: Path) -> list[str]:
    return ["-o", "Dir::Etc::SourceList=/dev/null",
            "-o", f"Dir::Etc::SourceParts={apt_dir / 'sources'}",
            "-o", f"Dir::State::Lists={apt_dir / 'lists'}",
            "-o", f"Dir::Cache={apt_dir / 'cache'}",
            "-o", "Debug::NoLocking=1", "-q"]


def fetch_source(version: str, dest: Path, log: Path) -> Path:
    """`apt-get source librdkafka=<version>` unpacked (Debian patches applied) at dest."""
    apt_dir = dest.parent / "apt"
    for d in ("sources", "lists/partial", "cache/archives/partial"):
        (apt_dir / d).mkdir(parents=True, exist_ok=True)
    (apt_dir / "sources" / "kafkapy-deb-src.sources").write_text(_deb_src_entries())
    if (apt_dir / "sources" / "kafkapy-deb-src.list").exists():
        (apt_dir / "sources" / "kafkapy-deb-src.list").unlink()
    opts = _apt_options(apt_dir)
    run_command(["apt-get", *opts, "update"], log)
    download = dest.parent / "download"
    shutil.rmtree(download, ignore_errors=True)
    download.mkdir()
    run_command(["apt-get", *opts, "source", "--download-only", f"{PACKAGE}={version}"], log,
         cwd=download)
    dsc = next(download.glob("*.dsc"))
    shutil.rmtree(dest, ignore_errors=True)
    run_command(["dpkg-source", "--no-check", "-x", str(dsc), str(dest)], log)
    shutil.rmtree(download, ignore_errors=True)
    return dest


def missing_build_packages() -> list[str]:
    out = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Status}\n", *BUILD_PACKAGES],
                         capture_output=True, text=True, check=False).stdout
    ok = {ln.split()[0] for ln in out.splitlines() if ln.endswith("install ok installed")}
    return [p for p in BUILD_PACKAGES if p not in ok]


@dataclass
class Build:
    version: str
    source: Path
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def tests_dir(self) -> Path:
        return self.source / "tests"

    @property
    def runner(self) -> Path:
        return self.tests_dir / "test-runner"

    def library_path(self) -> str:
        return f"{self.source / 'src'}:{self.source / 'src-cpp'}"


def build(version: str | None = None, progress: Callable[[str], None] = lambda s: None) -> Build:
    """The built suite for `version` (default: the installed one), from the cache when there."""
    version = version or installed_version()
    base = cache_root() / f"librdkafka-{version}"
    stamp = base / "built.json"
    source = base / "src"
    if stamp.is_file() and (source / "tests" / "test-runner").is_file():
        return Build(version, source, json.loads(stamp.read_text())["seconds"])
    missing = missing_build_packages()
    if missing:
        raise SuiteUnavailable("build dependencies missing: " + " ".join(missing)
                               + " (scripts/bootstrap.sh --tests installs them)")
    base.mkdir(parents=True, exist_ok=True)
    log = base / "build.log"
    log.write_text("")
    seconds: dict[str, float] = {}
    t = time.monotonic()
    progress(f"librdkafka suite: fetching Debian's source of {PACKAGE} {version}")
    fetch_source(version, source, log)
    seconds["fetch"] = time.monotonic() - t
    jobs = f"-j{os.cpu_count() or 2}"
    steps = [
        ("configure", ["./configure", "--disable-gssapi"], source),
        ("library", ["make", jobs, "libs"], source),
        ("test-runner", ["make", jobs, "test-runner"], source / "tests"),
    ]
    for name, cmd, cwd in steps:
        progress(f"librdkafka suite: {name} ({' '.join(cmd)})")
        t = time.monotonic()
        run_command(cmd, log, cwd=cwd)
        seconds[name] = time.monotonic() - t
    stamp.write_text(json.dumps({"version": version, "seconds": seconds}, indent=1))
    return Build(version, source, seconds)
