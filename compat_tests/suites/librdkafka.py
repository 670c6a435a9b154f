"""librdkafka's own regression suite against kafkapy: run it and report.

The suite of librdkafka 2.0.2 (the library the environment links) or 2.14.2 (the current
release, `--version 2.14.2`) is built from Debian's source of that version (librdkafka_build.py);
each version has its own allowlist (`ALLOWLISTS`).
Each test runs in its own `test-runner` process (quick mode, `-Q`; no socket emulation, `-E`; no
broker-less tests, `-L`), a few at a time, because test-runner SIGKILLs itself when one test
times out. Tests that create topics with replication factor 3 run against a 3-broker ZooKeeper
cluster, the SSL and SASL tests against a broker with secured listeners (their test.conf
carries the client's security settings), the others against one broker, each configured as
librdkafka's own test clusters (trivup) are for the test's scenario: auto-created topics with 4
partitions, or auto-creation off for `noautocreate` (librdkafka_brokers.py). `$KAFKA_PATH/bin/`
is a directory of wrappers around kafkapy's Kafka-named scripts, `BROKERS` the bootstrap list.

    .venv/bin/python -m compat_tests.suites.librdkafka            # every broker test
    .venv/bin/python -m compat_tests.suites.librdkafka 0017 0081  # some tests
    .venv/bin/python -m compat_tests.suites.librdkafka --allowlist
    .venv/bin/python -m compat_tests.suites.librdkafka --security SASL_SSL:SCRAM-SHA-512
    .venv/bin/python -m compat_tests.suites.librdkafka --version 2.14.2 --allowlist

Out of scope by design, never run: the broker-less tests (TEST_F_LOCAL: unit tests, the mock
cluster; and the `*_mock` tests the table leaves unflagged), the socket-emulation tests
(TEST_F_SOCKEM) and the ones librdkafka itself flags as known issues or manual. The tests in
FULL_MODE_TESTS run without quick mode, which would skip all of their sub-tests.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import functools
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from compat_tests.suites import allowlists
from compat_tests.suites.librdkafka_brokers import (
    SecureBroker,
    SingleBroker,
    Target,
    ThreeBrokerCluster,
    parse_security,
)
from compat_tests.suites.librdkafka_build import (
    DEFAULT_VERSION,
    ROOT,
    Build,
    SuiteUnavailable,
    build,
    run_command,
)

HERE = Path(__file__).resolve().parent
ALLOWLIST = HERE / "librdkafka-allowlist.txt"
# each suite version's allowlist (upstream version -> file); FINDINGS.md has a section for each
ALLOWLISTS = {
    "2.0.2": ALLOWLIST,
    "2.14.2": HERE / "librdkafka-2.14-allowlist.txt",
}
# the broker version test-runner is told (TEST_BRKVER gates, kafka-topics.sh --bootstrap-server)
BROKER_VERSION = "3.9.0"
# ... by suite version: 2.14.2's suite knows Apache Kafka 4.0, whose protocol kafkapy serves
# (4.0's version ranges, Produce v0-v2 and message format v0/v1 refused); its tests gate 4.0's
# behaviour on it (0052, 0092 and 0081's group configs, FINDINGS.md). $KAFKAPY_LIBRDKAFKA_
# BROKER_VERSION (--broker-version) overrides it, to see what the other gates do
BROKER_VERSIONS = {"2.0.2": BROKER_VERSION, "2.14.2": "4.0.0"}
# tests that create topics with replication factor 3: they run on the 3-broker cluster
CLUSTER_TESTS = frozenset({"0098", "0101", "0103", "0107", "0111"})
# tests that need a secured listener, and the client security they get (PROTOCOL[:MECHANISM]):
# they run against a broker with SSL and SASL listeners (librdkafka_brokers.SecureBroker)
SECURITY_TESTS = {
    "0097": "SSL",
    "0126": "SASL_SSL:PLAIN",  # skips itself: it needs SASL/OAUTHBEARER with an OIDC endpoint
    "0135": "SASL_PLAINTEXT:SCRAM-SHA-256",
    "0142": "SASL_PLAINTEXT:SCRAM-SHA-256",  # 2.14.2: re-authentication (KIP-368)
}
# broker config a suite version's secured broker adds: 2.14.2 re-authenticates SASL sessions
# (KIP-368), and 0142_reauthentication runs only where connections.max.reauth.ms is set, as
# librdkafka's own test clusters set it (tests/interactive_broker_version.py --max-reauth-ms)
SECURE_BROKER_CONFIG = {
    "2.14.2": {"connections.max.reauth.ms": "10000"},
}
# tests run without quick mode: in quick mode every sub-test of theirs is skipped (SUB_TEST, not
# SUB_TEST_QUICK) and the test "passes" having done nothing
FULL_MODE_TESTS = frozenset({"0142"})
# the scopes of the tests run against kafkapy
RUNNABLE = ("broker", "cluster", "secure")
TEST_PROCESS_TIMEOUT = 420.0
# test-runner processes at once: most tests wait on timers (session timeouts, max.poll.interval),
# so six overlap well on two cores; KAFKAPY_LIBRDKAFKA_PARALLEL overrides
PARALLEL = int(os.environ.get("KAFKAPY_LIBRDKAFKA_PARALLEL", "6"))
# started first, slowest first, so that they overlap the many short ones (seconds in quick mode
# with six at a time on the 2-core development VM: 0081 115, 0091 65, 0033 59, 0103 56, 0093 30,
# 0077 27, 0098 26, 0109 24, 0084 23, 0030 20, 0114 19, 0089 18, 0119 17, 0123 16)
SLOW_FIRST = ("0081", "0091", "0033", "0103", "0093", "0077", "0098", "0109", "0084", "0030",
              "0114", "0089", "0119", "0123", "0020", "0015", "0125")

# client-side timing assertions that a loaded 2-core machine can lose whatever the broker does,
# each explained in FINDINGS.md ("Run once more"): a test failing with exactly this message runs
# once more, and passes only if that run passes; the first failure stays in its result
CLIENT_TIMING_FAILURES = {
    # do_test_misuse_txn: init_transactions(p, 1) after a successful one must return ERR__STATE
    # from the client's main thread within 1 ms, or the API call itself times out
    "0103_transactions": "Expected ERR__STATE error, not _TIMED_OUT",
}

_SUMMARY = re.compile(r"^\|\s*(\d{4}\w*)\s*\|\s*([A-Z_]+)\s*\|\s*([\d.]+)s\s*\|\s?(.*)$")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


# ---- the test table ---------------------------------------------------------------------------

@dataclass(frozen=True)
class SuiteTest:
    name: str
    flags: frozenset[str]
    scenario: str = "default"  # librdkafka's test scenarios this test runs in, comma-separated
    subtests: str = ""  # only the sub-tests whose name contains this (test-runner's SUBTESTS)

    @property
    def label(self) -> str:
        return label(self.name, self.subtests)

    @property
    def number(self) -> str:
        return self.name[:4]

    @property
    def scope(self) -> str:
        """Where the test runs: broker, cluster, or why it is never run against a broker."""
        if "TEST_F_MANUAL" in self.flags:
            return "manual"
        if "TEST_F_KNOWN_ISSUE" in self.flags:
            return "known-issue"
        if "TEST_F_LOCAL" in self.flags:
            return "local"
        if self.name.endswith("_mock"):
            # against librdkafka's mock cluster only, though unflagged in the table
            # (2.14.2's 0139_offset_validation_mock, 0150_telemetry_mock): no broker takes part
            return "mock"
        if "TEST_F_SOCKEM" in self.flags:
            return "sockem"
        if self.number in SECURITY_TESTS:
            return "secure"
        return "cluster" if self.number in CLUSTER_TESTS else "broker"

    def environment(self, security: str = "") -> tuple[str, str, str]:
        """(broker, cluster or secure; scenario; client security): the kafkapy setup this test
        runs against. ``security`` (PROTOCOL[:MECHANISM]) moves the single-broker tests to the
        secured broker."""
        scenarios = self.scenario.split(",")
        scenario = "default" if "default" in scenarios else scenarios[0]
        if self.scope == "secure":
            return self.scope, scenario, SECURITY_TESTS[self.number]
        if self.scope == "broker" and security:
            return "secure", scenario, security
        return self.scope, scenario, ""


def label(name: str, subtests: str = "") -> str:
    """How a test (restricted to some sub-tests) is named in the allowlist and reports:
    `0081_admin` or `0081_admin:DeleteRecords`."""
    return f"{name}:{subtests}" if subtests else name


def select(table: Iterable[SuiteTest], labels: Iterable[str]) -> list[SuiteTest]:
    """The tests named by labels (`name` or `name:subtests`); unknown names are left out."""
    by_name = {t.name: t for t in table}
    chosen = []
    for text in labels:
        name, _, sub = text.partition(":")
        if name in by_name:
            chosen.append(dataclasses.replace(by_name[name], subtests=sub))
    return chosen


def list_tests(build: Build) -> list[SuiteTest]:
    """The suite's test table (tests/test.c), with each test's flags (Linux values) and
    scenario."""
    text = (build.tests_dir / "test.c").read_text()
    table = text[text.index("struct test tests[] = {"):]
    table = table[:table.index("\n};")]
    tests = []
    for entry in table.split("_TEST(")[1:]:
        m = re.match(r"\s*(\d{4}\w*)\s*,\s*([^,)]*)", entry)
        if not m:
            continue
        flags = frozenset(f for f in re.findall(r"TEST_F_\w+", m.group(2))
                          if not f.endswith(("_WIN32", "_OSX")))
        scenario = re.search(r'\.scenario\s*=\s*"([^"]*)"', entry)
        tests.append(SuiteTest(m.group(1), flags, scenario.group(1) if scenario else "default"))
    return tests


def allowlist_path(version: str = DEFAULT_VERSION) -> Path:
    """The allowlist of a suite version (upstream, "2.14.2", or Debian's, "2.14.2-1")."""
    upstream = version.split(":")[-1].split("-")[0]
    if upstream not in ALLOWLISTS:
        raise SuiteUnavailable(f"no allowlist for librdkafka {version}: "
                               f"one of {sorted(ALLOWLISTS)}")
    return ALLOWLISTS[upstream]


def broker_version(build: Build) -> str:
    """The Kafka version test-runner is told for this suite (BROKER_VERSIONS)."""
    upstream = build.version.split(":")[-1].split("-")[0]
    return (os.environ.get("KAFKAPY_LIBRDKAFKA_BROKER_VERSION")
            or BROKER_VERSIONS.get(upstream, BROKER_VERSION))


def read_allowlist(path: Path = ALLOWLIST) -> list[str]:
    return allowlists.read_allowlist(path)


# ---- running ----------------------------------------------------------------------------------

@dataclass
class Result:
    name: str
    state: str  # PASSED, FAILED, SKIPPED, TIMEOUT (process killed), NOT_RUN
    seconds: float
    reason: str = ""
    log: str = ""
    first_failure: str = ""  # the client-timing failure of a first run, when it ran twice


def kafka_path_view(dest: Path) -> Path:
    """A KAFKA_PATH whose bin/ runs kafkapy's Kafka-named scripts (scripts/kafka-*.sh), and,
    when Apache Kafka's jars are at hand (artifacts.kafka_home(): Kafka 4.4 from Maven Central),
    whose libs/ holds them and whose bin/kafka-run-class.sh runs a class with them: the tests
    that drive a Java producer (0098, 0113) build their helpers in tests/java against
    $KAFKA_PATH/libs."""
    from compat_tests.suites import artifacts

    bin_dir = dest / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for script in sorted((ROOT / "scripts").glob("kafka-*.sh")):
        wrapper = bin_dir / script.name
        wrapper.write_text(f'#!/bin/sh\nexec "{script}" "$@"\n')
        wrapper.chmod(0o755)
    try:
        home = artifacts.kafka_home()
    except artifacts.ArtifactsUnavailable:
        return dest  # the Java-driving tests fail, saying $KAFKA_PATH/libs is missing
    libs = dest / "libs"
    libs.mkdir(exist_ok=True)
    for jar in (home / "libs").glob("*.jar"):
        if not (libs / jar.name).exists():
            (libs / jar.name).symlink_to(jar)
    run_class = bin_dir / "kafka-run-class.sh"
    run_class.write_text("#!/bin/sh\n# kafka-run-class.sh: run a class with Kafka's jars\n"
                         f'exec "{home / "bin" / "kafka-run-class.sh"}" "$@"\n')
    run_class.chmod(0o755)
    return dest


def prepare_java_helpers(build: Build, kafka_path: Path) -> bool:
    """Compile tests/java (the suite's Java producer helpers) against $KAFKA_PATH/libs once,
    before tests run in parallel; False when Kafka's Java client is not at hand."""
    if not (kafka_path / "libs").is_dir():
        return False
    try:
        run_command(["make", "-s", "-C", str(build.tests_dir / "java"),
              f"KAFKA_JARS={kafka_path / 'libs'}"])
    except SuiteUnavailable:
        return False
    return True


def parse_summary(output: str) -> dict[str, tuple[str, float, str]]:
    """test-runner's summary table: name -> (state, seconds, reason)."""
    found: dict[str, tuple[str, float, str]] = {}
    for line in _ANSI.sub("", output).splitlines():
        m = _SUMMARY.match(line)
        if m:
            found[m.group(1)] = (m.group(2), float(m.group(3)), m.group(4).strip())
    return found


def _failure_reason(output: str, name: str) -> str:
    """The message test-runner printed under '### Test "<name>" failed at ...'."""
    lines = _ANSI.sub("", output).splitlines()
    for i, line in enumerate(lines[:-1]):
        if line.startswith(f'### Test "{name}') and " failed at " in line:
            return lines[i + 1].strip()[:400]
    return ""


def run_number(build: Build, number: str, target: Target, workdir: Path, scenario: str,
               subtests: str = "", timeout: float = TEST_PROCESS_TIMEOUT
               ) -> dict[str, Result]:
    """Run every (broker) test with this number, only its sub-tests whose name contains
    `subtests` when given, in one test-runner process in workdir (whose parent gets src/ and
    src-cpp/ links: tests open ../src/statistics_schema.json). Results by test label."""
    workdir.mkdir(parents=True, exist_ok=True)
    for d in ("src", "src-cpp"):
        try:
            (workdir.parent / d).symlink_to(build.source / d)
        except FileExistsError:  # made by the run of another test
            pass
    kafka_path = workdir.parent / "kafka"  # made by run_tests
    # test_run_java() runs `make -s java` in its directory, then java/run-class.sh
    (workdir / "Makefile").write_text(
        f"java:\n\t@$(MAKE) -s -C {build.tests_dir / 'java'} KAFKA_JARS={kafka_path / 'libs'}\n")
    # tests/java; and tests/fixtures, 2.14.2's certificates signed by a CA the broker does not
    # trust (0097 opens ./fixtures/ssl/): the tests' own files, where test-runner runs
    for d in ("java", "fixtures"):
        if (build.tests_dir / d).is_dir():
            try:
                (workdir / d).symlink_to(build.tests_dir / d)
            except FileExistsError:
                pass
    conf = workdir / "test.conf"
    conf.write_text("".join(f"{k}={v}\n" for k, v in
                            {"metadata.broker.list": target.bootstrap, **target.conf}.items()))
    env = {
        **os.environ,
        **target.env,
        "TESTS": number,
        "RDKAFKA_TEST_CONF": str(conf),
        "TEST_KAFKA_VERSION": broker_version(build),
        "BROKERS": target.bootstrap,
        "KAFKA_PATH": str(kafka_path),
        "LD_LIBRARY_PATH": build.library_path(),
        "RDKAFKA_GITVER": build.version,
    }
    env.pop("SUBTESTS", None)
    if subtests:
        env["SUBTESTS"] = subtests
    start = time.monotonic()
    try:
        # line-buffered stdout: test-runner prints its summary with printf, then abort()s when
        # a test failed, which would lose a block-buffered summary
        quick = [] if number in FULL_MODE_TESTS else ["-Q"]
        proc = subprocess.run(["stdbuf", "-oL", str(build.runner), *quick, "-E", "-L",
                               "-s", scenario],
                              cwd=workdir, env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=timeout, text=True,
                              errors="replace")
        output, killed = proc.stdout, False
    except subprocess.TimeoutExpired as e:
        out = e.stdout or ""
        output = out if isinstance(out, str) else out.decode(errors="replace")
        killed = True  # by us: the test hung past TEST_PROCESS_TIMEOUT
    log = workdir / f"{number}.log"
    log.write_text(output)
    elapsed = time.monotonic() - start
    results = {}
    for name, (state, secs, reason) in parse_summary(output).items():
        if name.startswith(number):
            if state == "RUNNING" or (killed and state not in ("PASSED", "SKIPPED")):
                state = "TIMEOUT"
            if state != "PASSED":
                reason = _failure_reason(output, name) or reason
            results[label(name, subtests)] = Result(label(name, subtests), state, secs, reason,
                                                    str(log))
    if not results:
        state = "TIMEOUT" if killed else "FAILED"
        results[label(number, subtests)] = Result(
            label(number, subtests), state, elapsed,
            _failure_reason(output, number) or "no summary from test-runner", str(log))
    return results


def _lost_client_timing(results: dict[str, Result]) -> Result | None:
    """The result among these that failed only on a client-side timing assertion
    (CLIENT_TIMING_FAILURES), if any."""
    for r in results.values():
        text = CLIENT_TIMING_FAILURES.get(r.name.partition(":")[0])
        if text and r.state == "FAILED" and text in r.reason:
            return r
    return None


def run_tests(build: Build, tests: Iterable[SuiteTest], target: Target, workdir: Path,
              scenario: str = "default", parallel: int = PARALLEL,
              progress: Callable[[str], None] = lambda s: None) -> dict[str, Result]:
    """Run tests, one test-runner process per test number (and sub-test filter), `parallel` at
    a time, the known slow ones first; results by test label. A test that lost a client-side
    timing race (CLIENT_TIMING_FAILURES) runs once more."""
    tests = list(tests)
    kafka_path_view(workdir / "kafka")  # the KAFKA_PATH of every run below
    wanted = {t.label for t in tests}
    jobs = sorted({(t.number, t.subtests) for t in tests},
                  key=lambda j: (j[0] not in SLOW_FIRST, SLOW_FIRST.index(j[0])
                                 if j[0] in SLOW_FIRST else 0, j))
    results: dict[str, Result] = {}
    jobs_of: dict[concurrent.futures.Future, tuple[str, str, str]] = {}
    first_failures: dict[str, str] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=parallel) as pool:

        def submit(number: str, sub: str, suffix: str = "") -> concurrent.futures.Future:
            where = workdir / (number + (f"-{sub}" if sub else "") + suffix)
            fut = pool.submit(run_number, build, number, target, where, scenario, sub)
            jobs_of[fut] = (number, sub, suffix)
            return fut

        pending = {submit(number, sub) for number, sub in jobs}
        while pending:
            done, pending = concurrent.futures.wait(
                pending, return_when=concurrent.futures.FIRST_COMPLETED)
            for fut in done:
                number, sub, suffix = jobs_of.pop(fut)
                got = fut.result()
                lost = None if suffix else _lost_client_timing(got)
                if lost is not None:
                    first_failures[lost.name] = lost.reason
                    progress(f"{'RERUN':8} {lost.seconds:7.1f}s  {lost.name}  lost a client "
                             f"timing race: {lost.reason[:120]}")
                    pending.add(submit(number, sub, "-again"))
                    continue
                for name, r in got.items():
                    # a label of a bare number: test-runner printed no summary (crashed, hung)
                    if name in wanted or len(name.partition(":")[0]) == 4:
                        r.first_failure = first_failures.get(name, "")
                        results[name] = r
                        progress(f"{r.state:8} {r.seconds:7.1f}s  {name}  {r.reason[:150]}")
    for t in tests:
        if t.label not in results and label(t.number, t.subtests) not in results:
            results[t.label] = Result(t.label, "NOT_RUN", 0.0, "not in test-runner's summary")
    return results


def run_suite(build: Build, tests: list[SuiteTest], workdir: Path, parallel: int = PARALLEL,
              progress: Callable[[str], None] = lambda s: None, security: str = ""
              ) -> dict[str, Result]:
    """The tests run against kafkapy, each group against a fresh kafkapy setup of its scope
    and scenario (the secured broker's tests one client security after the other); nothing
    else is run. ``security`` (PROTOCOL[:MECHANISM]) runs the single-broker tests over that
    listener of the secured broker instead."""
    results: dict[str, Result] = {}
    # the runtime install kafkapy's scripts run from, made before tests call them in parallel
    run_command([str(ROOT / "scripts" / "bootstrap.sh")])
    workdir.mkdir(parents=True, exist_ok=True)
    prepare_java_helpers(build, kafka_path_view(workdir / "kafka"))
    groups: dict[tuple[str, str], dict[str, list[SuiteTest]]] = {}
    for t in tests:
        if t.scope in RUNNABLE:
            scope, scenario, client_security = t.environment(security)
            groups.setdefault((scope, scenario), {}).setdefault(client_security, []).append(t)

    def run_group(key: tuple[str, str]) -> dict[str, Result]:
        scope, scenario = key
        base = workdir / f"{scope}-{scenario}"
        setups = {"broker": SingleBroker, "cluster": ThreeBrokerCluster, "secure": SecureBroker}
        what = {"cluster": "a 3-broker cluster", "secure": "a broker with SSL and SASL"}
        got: dict[str, Result] = {}
        upstream = build.version.split(":")[-1].split("-")[0]
        setup_of = setups[scope]
        if scope == "secure":
            setup_of = functools.partial(SecureBroker,
                                         config=SECURE_BROKER_CONFIG.get(upstream, {}))
        with setup_of(base, scenario) as setup:
            for client_security, chosen in sorted(groups[key].items()):
                target = setup.target(client_security) if client_security else setup
                progress(f"-- {len(chosen)} tests against {what.get(scope, 'one broker')}, "
                         f"scenario {scenario}" + (f", {client_security}" if client_security
                                                   else ""))
                runs = base / ("runs" + (f"-{client_security}" if client_security else ""))
                got.update(run_tests(build, chosen, target, runs, scenario, parallel, progress))
        return got

    # the setups run side by side: the small groups finish within the big one's longest test
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(groups) or 1) as pool:
        for got in pool.map(run_group, sorted(groups)):
            results.update(got)
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tests", nargs="*", help="test numbers or names (default: every broker "
                    "and cluster test)")
    ap.add_argument("--version", default=DEFAULT_VERSION, choices=sorted(ALLOWLISTS),
                    help=f"the suite's librdkafka version (default {DEFAULT_VERSION})")
    ap.add_argument("--allowlist", action="store_true", help="only the allowlisted tests")
    ap.add_argument("--broker-version", metavar="X.Y.Z",
                    help="the Kafka version test-runner is told (default: by suite version, "
                    + ", ".join(f"{k}: {v}" for k, v in BROKER_VERSIONS.items()) + ")")
    ap.add_argument("--parallel", type=int, default=PARALLEL,
                    help="test-runner processes at once")
    ap.add_argument("--workdir", type=Path, help="keep logs here (default: a temp dir)")
    ap.add_argument("--report", type=Path, help="write the results as JSON here")
    ap.add_argument("--security", default="", metavar="PROTOCOL[:MECHANISM]",
                    help="run the single-broker tests over a secured listener: SSL, "
                    "SASL_PLAINTEXT or SASL_SSL, with PLAIN (default), SCRAM-SHA-256 or "
                    "SCRAM-SHA-512")
    args = ap.parse_args(argv)
    if args.security:
        try:
            parse_security(args.security)
        except ValueError as e:
            ap.error(str(e))

    def say(line: str) -> None:
        print(line, flush=True)

    if args.broker_version:
        os.environ["KAFKAPY_LIBRDKAFKA_BROKER_VERSION"] = args.broker_version
    try:
        b = build(args.version, progress=say)
    except SuiteUnavailable as e:
        print(f"librdkafka suite unavailable: {e}", file=sys.stderr)
        return 2
    say(f"librdkafka {b.version} suite at {b.source}, told Kafka {broker_version(b)} (build "
        "seconds: "
        + ", ".join(f"{k} {v:.0f}" for k, v in b.seconds.items()) + ")")
    table = list_tests(b)
    if args.allowlist:
        chosen = select(table, read_allowlist(allowlist_path(b.version)))
    elif args.tests:
        chosen = [t for t in table if any(t.name.startswith(x) for x in args.tests)]
    else:
        chosen = table
    runnable = [t for t in chosen if t.scope in RUNNABLE]
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="kafkapy-librdkafka-"))
    workdir.mkdir(parents=True, exist_ok=True)
    say(f"running {len(runnable)} tests, logs in {workdir}")
    results = run_suite(b, runnable, workdir, args.parallel, say, args.security)
    counts: dict[str, int] = {}
    for r in results.values():
        counts[r.state] = counts.get(r.state, 0) + 1
    scopes: dict[str, int] = {}
    for t in chosen:
        if t.scope not in RUNNABLE:
            scopes[t.scope] = scopes.get(t.scope, 0) + 1
    if args.report:
        args.report.write_text(json.dumps(
            {"version": b.version, "results": [asdict(r) for r in results.values()],
             "not_run": {t.label: t.scope for t in chosen if t not in runnable}}, indent=1))
    say("")
    for name in sorted(results):
        r = results[name]
        if r.state != "PASSED":
            say(f"{r.state:8} {name}: {r.reason[:200]}")
        elif r.first_failure:
            say(f"{'RERUN':8} {name}: passed on its second run; first: {r.first_failure[:160]}")
    say("not run (out of scope): " + ", ".join(f"{k} {v}" for k, v in sorted(scopes.items())))
    passed = counts.get("PASSED", 0)
    failed = sum(v for k, v in counts.items() if k in ("FAILED", "TIMEOUT", "NOT_RUN"))
    say(f"{passed} passed, {failed} failed, {counts.get('SKIPPED', 0)} skipped")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())


def check_allowlisted(name: str, results: dict[str, Result]) -> None:
    """An allowlisted test's verdict in a pytest test: it ran and passed (a pass on the second run
    after a listed client-side timing race is warned about, FINDINGS.md "Run once more")."""
    import warnings

    import pytest

    r = results.get(name)
    assert r is not None, f"{name} did not run"
    if r.state != "PASSED":
        tail = Path(r.log).read_text(errors="replace")[-4000:] if r.log else ""
        pytest.fail(f"{name} {r.state} after {r.seconds:.1f}s: {r.reason}\n--- log tail "
                    f"({r.log}) ---\n{tail}")
    if r.first_failure:  # lost a client-side timing race, then passed (FINDINGS.md)
        warnings.warn(f"{name} passed on its second run; its first lost a client-side timing "
                      f"race: {r.first_failure}", stacklevel=2)

