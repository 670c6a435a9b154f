"""Obtaining and building librdkafka's regression suite (see librdkafka.py, which runs it).

`build()` returns the suite of one librdkafka version, built from Debian's source package of it:

- 2.0.2, the default: the librdkafka the test environment links (Debian bookworm's
  `librdkafka1`, which kcat uses), `apt-get source librdkafka=<installed version>` through deb-src
  entries derived from the system's own sources, Debian's patches applied;
- 2.14.2: the current release, from Debian sid (`SID_DEB_SRC`), `apt-get source
  librdkafka=2.14.2-<n>`. Debian's three patches for it only switch the build to the system's
  cJSON and nanopb and regenerate the OpenTelemetry sources with `nanopb_generator` from
  opentelemetry-proto, which bookworm does not carry; they are left out (`dpkg-source
  --skip-patches`), so the tree builds with the copies upstream bundles. libcurl (Debian's
  `libcurl4-openssl-dev`, a build dependency of sid's package) enables OIDC.

Either way through a private apt configuration (nothing under /etc is changed), then librdkafka
and `tests/test-runner` built from that one source tree, the test-runner linked to the library
built beside it, so the suite runs against the library it was written for. Cached under
``$KAFKAPY_SUITES_CACHE`` (default ``~/.cache/kafkapy-suites``), keyed by the Debian version,
with the seconds each step took in ``built.json``. ``python -m
compat_tests.suites.librdkafka_build [VERSION ...]`` builds (scripts/bootstrap.sh --tests runs it).
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
                  "zlib1g-dev", "libsasl2-dev", "rapidjson-dev", "libcurl4-openssl-dev")
# the suite of the installed library (bookworm's librdkafka1) unless another version is asked for
DEFAULT_VERSION = "2.0.2"
# versions obtained from Debian sid (deb-src entry below), patches left out (module docstring)
SID_VERSIONS = frozenset({"2.14.2"})
SID_DEB_SRC = """Types: deb-src
URIs: http://deb.debian.org/debian
Suites: sid
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""

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


def fetch_source(version: str, dest: Path, log: Path, deb_src: str | None = None,
                 skip_patches: bool = False) -> Path:
    """`apt-get source librdkafka=<version>` unpacked at dest, through deb-src entries `deb_src`
    (default: the system's own sources'), Debian's patches applied unless `skip_patches`."""
    apt_dir = _private_apt(dest.parent / "apt", deb_src, log)
    download = dest.parent / "download"
    shutil.rmtree(download, ignore_errors=True)
    download.mkdir()
    run_command(["apt-get", *_apt_options(apt_dir), "source", "--download-only",
                 f"{PACKAGE}={version}"], log, cwd=download)
    dsc = next(download.glob("*.dsc"))
    shutil.rmtree(dest, ignore_errors=True)
    run_command(["dpkg-source", "--no-check", *(["--skip-patches"] if skip_patches else []),
                 "-x", str(dsc), str(dest)], log)
    shutil.rmtree(download, ignore_errors=True)
    return dest


def _private_apt(apt_dir: Path, deb_src: str | None, log: Path) -> Path:
    """An apt state of our own under apt_dir with these deb-src entries, updated."""
    for d in ("sources", "lists/partial", "cache/archives/partial"):
        (apt_dir / d).mkdir(parents=True, exist_ok=True)
    (apt_dir / "sources" / "kafkapy-deb-src.sources").write_text(deb_src or _deb_src_entries())
    if (apt_dir / "sources" / "kafkapy-deb-src.list").exists():
        (apt_dir / "sources" / "kafkapy-deb-src.list").unlink()
    try:
        run_command(["apt-get", *_apt_options(apt_dir), "update"], log)
    except SuiteUnavailable as e:
        where = "Debian sid's deb-src (deb.debian.org)" if deb_src else "the deb-src entries"
        raise SuiteUnavailable(f"{where} refused: {e}") from e
    return apt_dir


def sid_debian_version(upstream: str, apt_dir: Path, log: Path) -> str:
    """The Debian version of librdkafka `upstream` that sid's sources carry (2.14.2-1...)."""
    _private_apt(apt_dir, SID_DEB_SRC, log)
    out = run_command(["apt-cache", *_apt_options(apt_dir), "showsrc", PACKAGE], log)
    found = sorted({v for v in re.findall(r"^Version: (\S+)$", out, re.M)
                    if v.split(":")[-1].rsplit("-", 1)[0] == upstream})
    if not found:
        have = ", ".join(re.findall(r"^Version: (\S+)$", out, re.M)) or "none"
        raise SuiteUnavailable(f"Debian sid has no {PACKAGE} {upstream} source (it has: {have})")
    return found[-1]


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


def linked_elsewhere(b: Build, library_path: str | None = None) -> list[str]:
    """The librdkafka libraries the test-runner loads from outside its source tree (ldd, with
    LD_LIBRARY_PATH set to library_path, or unset): none for a suite built here."""
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    if library_path:
        env["LD_LIBRARY_PATH"] = library_path
    out = subprocess.run(["ldd", str(b.runner)], capture_output=True, text=True, env=env,
                         check=False).stdout
    wrong = []
    for line in out.splitlines():
        name, _, where = line.strip().partition(" => ")
        if name.startswith("librdkafka") and not where.startswith(str(b.source) + "/"):
            wrong.append(f"{name} => {where.split(' (')[0]}")
    return wrong


def upstream_of(debian_version: str) -> str:
    """2.0.2-1 -> 2.0.2 (epoch and Debian revision dropped)."""
    return debian_version.split(":")[-1].rsplit("-", 1)[0]


def _cached_at(base: Path) -> Build | None:
    """The build cached in base (librdkafka-<Debian version>), if complete."""
    stamp, source = base / "built.json", base / "src"
    if not (stamp.is_file() and (source / "tests" / "test-runner").is_file()):
        return None
    data = json.loads(stamp.read_text())
    return Build(data.get("version", base.name.removeprefix("librdkafka-")), source,
                 data["seconds"])


def _cached(upstream: str) -> Build | None:
    """The newest cached build of any Debian revision of this upstream version."""
    for base in sorted(cache_root().glob(f"librdkafka-{upstream}-*"), reverse=True):
        found = _cached_at(base)
        if found is not None:
            return found
    return None


def build(version: str | None = None, progress: Callable[[str], None] = lambda s: None) -> Build:
    """The built suite of librdkafka `version` (upstream, e.g. "2.14.2"; default: the installed
    one, 2.0.2), from the cache when there."""
    try:
        installed = installed_version()
    except SuiteUnavailable:
        if version not in SID_VERSIONS:
            raise
        installed = ""  # sid's versions do not need the installed library
    if version is None or version == upstream_of(installed):
        debian_version, deb_src, skip_patches = installed, None, False
        # bookworm's librdkafka1 is built without libcurl (no OIDC): so is its suite
        configure = ["./configure", "--disable-gssapi", "--disable-curl"]
        cached = _cached_at(cache_root() / f"librdkafka-{installed}")
    elif version in SID_VERSIONS:
        debian_version, deb_src, skip_patches = "", SID_DEB_SRC, True
        configure = ["./configure", "--disable-gssapi"]
        cached = _cached(version)
    else:
        raise SuiteUnavailable(f"no source for librdkafka {version}: the installed "
                               f"{upstream_of(installed)} or one of {sorted(SID_VERSIONS)}")
    if cached is not None:
        return cached
    missing = missing_build_packages()
    if missing:
        raise SuiteUnavailable("build dependencies missing: " + " ".join(missing)
                               + " (scripts/bootstrap.sh --tests installs them)")
    work = cache_root() / f"librdkafka-{version or upstream_of(installed)}.partial"
    work.mkdir(parents=True, exist_ok=True)
    log = work / "build.log"
    log.write_text("")
    seconds: dict[str, float] = {}
    t = time.monotonic()
    if not debian_version:
        assert version is not None
        progress(f"librdkafka suite: looking up {PACKAGE} {version} in Debian sid's sources")
        debian_version = sid_debian_version(version, work / "apt", log)
    base = cache_root() / f"librdkafka-{debian_version}"
    base.mkdir(parents=True, exist_ok=True)
    source = base / "src"
    progress(f"librdkafka suite: fetching Debian's source of {PACKAGE} {debian_version}")
    fetch_source(debian_version, source, log, deb_src, skip_patches)
    seconds["fetch"] = time.monotonic() - t
    jobs = f"-j{os.cpu_count() or 2}"
    # the test-runner finds the library built beside it without LD_LIBRARY_PATH too (the
    # system's librdkafka.so.1 is 2.0.2): a run path to src/ and src-cpp/
    linked = {**os.environ, "LDFLAGS": f"-Wl,-rpath,{source / 'src'}:{source / 'src-cpp'}"}
    steps = [
        ("configure", configure, source, None),
        ("library", ["nice", "make", jobs, "libs"], source, None),
        ("test-runner", ["nice", "make", jobs, "test-runner"], source / "tests", linked),
    ]
    for name, cmd, cwd, env in steps:
        progress(f"librdkafka suite: {name} ({' '.join(cmd)})")
        t = time.monotonic()
        run_command(cmd, log, cwd=cwd, env=env)
        seconds[name] = time.monotonic() - t
    wrong = linked_elsewhere(Build(debian_version, source))
    if wrong:
        raise SuiteUnavailable(f"{source / 'tests' / 'test-runner'} links {wrong}, not the "
                               f"librdkafka built in {source}")
    shutil.copy(log, base / "build.log")
    shutil.rmtree(work, ignore_errors=True)
    (base / "built.json").write_text(json.dumps({"version": debian_version,
                                                 "seconds": seconds}, indent=1))
    return Build(debian_version, source, seconds)


def main(argv: list[str] | None = None) -> int:
    """Build (or find cached) the suites of the versions named, default both."""
    import sys

    versions = (argv if argv is not None else sys.argv[1:]) or [DEFAULT_VERSION,
                                                                 *sorted(SID_VERSIONS)]
    status = 0
    for v in versions:
        t = time.monotonic()
        try:
            b = build(v, progress=lambda line: print(line, file=sys.stderr, flush=True))
        except SuiteUnavailable as e:
            print(f"librdkafka {v} suite unavailable: {e}", file=sys.stderr)
            status = 1
            continue
        took = ", ".join(f"{k} {s:.0f}s" for k, s in b.seconds.items())
        print(f"librdkafka {b.version} suite: {b.runner} (built in: {took}; "
              f"{time.monotonic() - t:.0f}s now)", file=sys.stderr)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
