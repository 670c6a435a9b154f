"""franz-go's own integration suite (the Go client's ``pkg/kgo`` tests) against kafkapy.

The test binary is fetched and compiled once (franz_go_build.py). It runs as franz-go's own CI
runs it against Kafka 4.x: one broker with a PLAINTEXT listener (``KGO_SEEDS``) and a
SASL_PLAINTEXT listener (``KGO_TEST_SCRAM_SEEDS``, ``KGO_TEST_OAUTH_SEEDS``) where user
``testuser`` has SCRAM-SHA-256 credentials (``KGO_TEST_SCRAM``), replication factor 1
(``KGO_TEST_RF``) and ``KGO_TEST_STABLE_FETCH``; the broker configured as that CI's Kafka is
(single-node replication factors, both group protocols, no initial rebalance delay). All chosen
tests run in one process of the binary, as ``go test`` runs them (its ``t.Parallel`` tests side
by side), in its package directory; its ``-test.v`` output is parsed into a result per
top-level test: PASSED, FAILED or SKIPPED with its time, the first message the test logged, and
its output. A top-level test the binary never finished (it panicked or timed out) is FAILED.

    .venv/bin/python -m compat_tests.suites.franz_go                  # every test
    .venv/bin/python -m compat_tests.suites.franz_go TestGroupETL TestTxnEtl
    .venv/bin/python -m compat_tests.suites.franz_go --allowlist
    .venv/bin/python -m compat_tests.suites.franz_go --prepare        # fetch and compile only

The allowlist (franz-go-allowlist.txt) holds the tests that pass reliably; every other test is
explained in FINDINGS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from compat_tests.suites import allowlists
from compat_tests.suites.franz_go_build import (
    Build,
    SuiteUnavailable,
    build,
)
from kafkapy.testing import BrokerProcess, free_port

HERE = Path(__file__).resolve().parent
ALLOWLIST = HERE / "franz-go-allowlist.txt"
USER, PASSWORD = "testuser", "testpass"  # the SCRAM user of franz-go's CI
# franz-go's CI runs its tests with `go test -timeout 5m` on a bigger machine; here the whole
# run took 111-148 s on the shared 2-core VM (TestGroupETL about 100 s of it), and a loaded CI
# machine gets more room before go panics with every unfinished test failed
GO_TEST_TIMEOUT = "8m"
PROCESS_TIMEOUT = 600.0
# The broker as franz-go's CI configures its Kafka 4.x (a single KRaft node): replication
# factors and ISR of one for the internal topics, both group protocols (classic and KIP-848),
# and Kafka's shipped server.properties' group.initial.rebalance.delay.ms=0, SCRAM-SHA-256 and
# OAUTHBEARER on the SASL listener with that CI's unsecured-token JAAS line (no validator class:
# Kafka's unsecured validator), and share groups (KIP-932, with __share_group_state at
# replication factor one).
BROKER_CONFIG = {
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "group.coordinator.rebalance.protocols": "classic,consumer,share",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "group.initial.rebalance.delay.ms": "0",
    "sasl.enabled.mechanisms": "SCRAM-SHA-256,OAUTHBEARER",
    "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config":
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
        'unsecuredLoginStringClaim_sub="admin";',
    "inter.broker.listener.name": "PLAINTEXT",
}

_HEADER = re.compile(r"^=== (?:RUN|PAUSE|CONT|NAME)\s+(\S+)")
_RESULT = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+) \(([\d.]+)s\)")
_MESSAGE = re.compile(r"^\s+(\S+\.go:\d+: .*)$")
_STATES = {"PASS": "PASSED", "FAIL": "FAILED", "SKIP": "SKIPPED"}


def read_allowlist(path: Path = ALLOWLIST) -> list[str]:
    return allowlists.read_allowlist(path)


def list_tests(b: Build) -> list[str]:
    """The binary's top-level tests, in file order: its Test and Fuzz functions (a Fuzz
    function runs its seed corpus as a test); benchmarks and examples are left out."""
    out = subprocess.run([str(b.binary), "-test.list", "^(Test|Fuzz)"], cwd=b.package_dir,
                         capture_output=True, text=True, check=True, timeout=60).stdout
    return [ln.strip() for ln in out.splitlines() if re.fullmatch(r"(Test|Fuzz)\w*", ln.strip())]


# ---- the output -------------------------------------------------------------------------------

@dataclass
class Result:
    name: str
    state: str  # PASSED, FAILED, SKIPPED
    seconds: float
    reason: str = ""  # the first `file.go:line: message` the test (or a sub-test) logged
    output: list[str] = field(default_factory=list)


def parse_output(text: str, started: Iterable[str] = ()) -> dict[str, Result]:
    """Results of the top-level tests in a test binary's ``-test.v`` output, by name.

    Each line belongs to the test named by the last ``=== RUN/PAUSE/CONT/NAME`` header (go's
    verbose output names the test before output of another one); a sub-test's lines and result
    go to its top-level test. A top-level test that was run (a header, or named in ``started``)
    and has no result line of its own failed: the binary ended under it, and the reason is the
    binary's ``panic:`` line when there is one."""
    results: dict[str, Result] = {}
    lines_of: dict[str, list[str]] = {}
    current = ""
    panic = ""
    for line in text.splitlines():
        header = _HEADER.match(line)
        result = _RESULT.match(line)
        if header:
            current = header.group(1).split("/", 1)[0]
            lines_of.setdefault(current, [])
            continue
        if result:
            state, name, secs = result.groups()
            top = name.split("/", 1)[0]
            lines_of.setdefault(top, []).append(line)
            if "/" not in name:
                results[name] = Result(name, _STATES[state], float(secs))
            current = top
            continue
        if line.startswith("panic: ") and not panic:
            panic = line
        if current:
            lines_of.setdefault(current, []).append(line)
    for name in [*lines_of, *started]:
        if name not in results:
            results[name] = Result(name, "FAILED", 0.0, panic or "no result: the test binary "
                                   "ended while it ran")
    for name, r in results.items():
        r.output = lines_of.get(name, [])
        if not r.reason and r.state != "PASSED":
            messages = [m.group(1) for m in map(_MESSAGE.match, r.output) if m]
            r.reason = messages[0] if messages else ""
    return results


# ---- the broker -------------------------------------------------------------------------------

class FranzBroker:
    """One kafkapy broker as franz-go's CI sets up Kafka: PLAINTEXT and SASL_PLAINTEXT
    listeners, SCRAM-SHA-256 user ``testuser``; ``env()`` is the suite's KGO_* environment."""

    def __init__(self, base: Path) -> None:
        port, self.sasl_port = free_port(), free_port()
        config = {
            **BROKER_CONFIG,
            "listeners": f"PLAINTEXT://127.0.0.1:{port},SASL_PLAINTEXT://127.0.0.1:"
                         f"{self.sasl_port}",
        }
        self.broker = BrokerProcess(base / "broker", config, port=port)

    def __enter__(self) -> FranzBroker:
        self.broker.start()
        try:
            self._create_scram_user()
        except BaseException:
            self.broker.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.broker.stop()

    def _create_scram_user(self) -> None:
        """As franz-go's CI does with kafka-configs.sh: SCRAM-SHA-256, 4096 iterations."""
        from confluent_kafka.admin import (
            AdminClient,
            ScramCredentialInfo,
            ScramMechanism,
            UserScramCredentialUpsertion,
        )

        admin = AdminClient({"bootstrap.servers": self.broker.bootstrap})
        upsert = UserScramCredentialUpsertion(
            USER, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), PASSWORD.encode())
        for f in admin.alter_user_scram_credentials([upsert]).values():
            f.result(30)

    def env(self) -> dict[str, str]:
        sasl = f"127.0.0.1:{self.sasl_port}"
        return {
            "KGO_SEEDS": self.broker.bootstrap,
            "KGO_TEST_RF": "1",
            "KGO_TEST_STABLE_FETCH": "true",
            "KGO_TEST_SCRAM_SEEDS": sasl,
            "KGO_TEST_SCRAM": f"{USER}:{PASSWORD}",
            "KGO_TEST_OAUTH_SEEDS": sasl,
        }


# ---- running ----------------------------------------------------------------------------------

def run_binary(b: Build, tests: list[str], env: dict[str, str], log: Path,
               timeout: float = PROCESS_TIMEOUT) -> dict[str, Result]:
    """Run ``tests`` (top-level names) in one process of the test binary with ``env`` added
    (any other KGO_* variable removed); results by name, the whole output in ``log``."""
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("KGO_")}
    pattern = "^(" + "|".join(re.escape(t) for t in tests) + ")$"
    cmd = [str(b.binary), "-test.v", "-test.count=1", f"-test.timeout={GO_TEST_TIMEOUT}",
           "-test.run", pattern]
    try:
        proc = subprocess.run(cmd, cwd=b.package_dir, env={**base_env, **env},
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=timeout, text=True,
                              errors="replace")
        output = proc.stdout
    except subprocess.TimeoutExpired as e:  # past go's own timeout: killed, no panic line
        out = e.stdout or ""
        output = out if isinstance(out, str) else out.decode(errors="replace")
        output += f"\npanic: killed after {timeout:.0f}s\n"
    log.write_text(output)
    results = parse_output(output)
    wanted = set(tests)
    for name in tests:
        if name not in results:
            results[name] = Result(name, "FAILED", 0.0, "not run: no output of this test")
    return {n: r for n, r in results.items() if n in wanted}


def run_suite(b: Build, tests: list[str], workdir: Path,
              progress: Callable[[str], None] = lambda s: None) -> dict[str, Result]:
    """``tests`` against a fresh kafkapy broker (FranzBroker) in ``workdir``; results by name.
    The broker's log stays at ``workdir/broker/broker.log``, the binary's at
    ``workdir/kgo.log``."""
    workdir.mkdir(parents=True, exist_ok=True)
    with FranzBroker(workdir) as setup:
        progress(f"-- {len(tests)} tests against one broker (PLAINTEXT {setup.broker.bootstrap},"
                 f" SASL_PLAINTEXT 127.0.0.1:{setup.sasl_port})")
        results = run_binary(b, tests, setup.env(), workdir / "kgo.log")
    for name in tests:
        r = results[name]
        progress(f"{r.state:8} {r.seconds:7.2f}s  {name}  {r.reason[:150]}")
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tests", nargs="*", help="top-level test names (default: every test)")
    ap.add_argument("--allowlist", action="store_true", help="only the allowlisted tests")
    ap.add_argument("--prepare", action="store_true",
                    help="fetch and compile the suite, run nothing")
    ap.add_argument("--workdir", type=Path, help="keep logs here (default: a temp dir)")
    ap.add_argument("--report", type=Path, help="write the results as JSON here")
    args = ap.parse_args(argv)

    def say(line: str) -> None:
        print(line, flush=True)

    try:
        b = build(progress=say)
    except SuiteUnavailable as e:
        print(f"franz-go suite unavailable: {e}", file=sys.stderr)
        return 2
    say(f"franz-go {b.version} suite: {b.binary} (build seconds: "
        + ", ".join(f"{k} {v:.0f}" for k, v in b.seconds.items()) + ")")
    if args.prepare:
        return 0
    table = list_tests(b)
    if args.allowlist:
        chosen = [t for t in read_allowlist() if t in table]
    elif args.tests:
        unknown = [t for t in args.tests if t not in table]
        if unknown:
            ap.error(f"not tests of this suite: {' '.join(unknown)}")
        chosen = list(args.tests)
    else:
        chosen = table
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="kafkapy-franz-go-"))
    say(f"running {len(chosen)} tests, logs in {workdir}")
    start = time.monotonic()
    results = run_suite(b, chosen, workdir, say)
    elapsed = time.monotonic() - start
    if args.report:
        args.report.write_text(json.dumps(
            {"version": b.version, "seconds": elapsed,
             "results": [asdict(r) for r in results.values()]}, indent=1))
    counts: dict[str, int] = {}
    for r in results.values():
        counts[r.state] = counts.get(r.state, 0) + 1
    say("")
    say(f"| {'test':<52} | {'state':<7} | {'seconds':>7} | reason")
    say(f"|{'-' * 54}|{'-' * 9}|{'-' * 9}|{'-' * 8}")
    for name in chosen:
        r = results[name]
        say(f"| {name:<52} | {r.state:<7} | {r.seconds:7.2f} | {r.reason[:100]}")
    say("")
    say(f"{elapsed:.0f} s in all, logs in {workdir}")
    failed = counts.get("FAILED", 0)
    say(f"{counts.get('PASSED', 0)} passed, {failed} failed, {counts.get('SKIPPED', 0)} skipped")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
