"""Start-up of test brokers and what the pytest plugin adds to a test session.

    .venv/bin/python benchmarks/startup.py [--repeats 7] [--tests 200]

* subprocess broker: ``BrokerProcess(storage="memory").start()``, from the call until the broker
  answers ApiVersions (wall time), in a fresh interpreter: the first one (a plain process) and
  one forked from the zygote (kafkapy/testing/zygote.py) once it is ready; and a plain
  ``kafkapy server`` process (``KAFKAPY_TEST_NO_ZYGOTE=1``, what it costs anywhere), its CPU time
  (user+sys, from /proc) at that moment: on a shared machine the CPU time is the steadier figure;
* in-process broker, cold: a fresh interpreter runs ``kafkapy.testing.broker()`` (imports of the
  broker included) until it answers ApiVersions; warm: a second broker in that process;
* a session of N tests each with its own topic (``kafka_topic``) against the same N tests without
  a broker, both run with pytest in a subprocess; the difference is what the broker adds (its
  start, N topic creations and deletions). The plugin's own summary line is kept too.

Medians and minima of ``--repeats`` runs; every sample goes to benchmarks/results/startup.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "startup.json"

COLD = """
import json, time
t0 = time.perf_counter()
import kafkapy.testing as kt
from kafkapy.testing.probe import api_versions_answered

def answered_after(started):
    embedded = kt.broker()
    b = embedded.start()
    while not api_versions_answered(b.host, b.port):
        pass
    return time.perf_counter() - started, embedded

cold, first = answered_after(t0)
warm, second = answered_after(time.perf_counter())
first.close()
second.close()
print(json.dumps({"cold": cold, "warm": warm}))
"""

TESTS = """
import pytest

@pytest.mark.parametrize("i", range({n}))
def test_t({fixture}i):
    assert i >= 0
"""


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


PROCESSES = """
import json, tempfile, time
from kafkapy.testing import BrokerProcess, api_versions_answered
from kafkapy.testing.zygote import warm
out = []
for i in range(2):
    if i:  # the zygote a second broker would start, ready
        zygote = warm()
        while not zygote.alive:
            time.sleep(0.01)
    b = BrokerProcess(tempfile.mkdtemp(), storage="memory")
    t0 = time.perf_counter()
    b.start()
    while not api_versions_answered(b.host, b.port):
        pass
    out.append(time.perf_counter() - t0)
    b.close()
print(json.dumps(out))
"""


def subprocess_start(repeats: int) -> dict:
    from kafkapy.testing import BrokerProcess, api_versions_answered

    first, forked = [], []
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, "-c", PROCESSES], capture_output=True, text=True, check=True,
            cwd="/tmp",
        ).stdout
        got = json.loads(out.strip().splitlines()[-1])
        first.append(got[0])
        forked.append(got[1])
    wall, cpu = [], []
    os.environ["KAFKAPY_TEST_NO_ZYGOTE"] = "1"
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as d:
            b = BrokerProcess(d, storage="memory")
            t0 = time.perf_counter()
            b.start()
            while not api_versions_answered(b.host, b.port):
                pass
            wall.append(time.perf_counter() - t0)
            cpu.append(cpu_seconds(b.pid))
            b.close()
    del os.environ["KAFKAPY_TEST_NO_ZYGOTE"]
    return {"first_s": first, "forked_s": forked, "plain_wall_s": wall, "plain_cpu_s": cpu}


def in_process_start(repeats: int) -> dict:
    cold, warm = [], []
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, "-c", COLD], capture_output=True, text=True, check=True, cwd="/tmp"
        ).stdout
        got = json.loads(out.strip().splitlines()[-1])
        cold.append(got["cold"])
        warm.append(got["warm"])
    return {"cold_s": cold, "warm_s": warm}


def session(n: int, repeats: int) -> dict:
    with_s, without_s, summaries = [], [], []
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "test_with.py").write_text(TESTS.format(n=n, fixture="kafka_topic, "))
        (Path(d) / "test_without.py").write_text(TESTS.format(n=n, fixture=""))
        for _ in range(repeats):
            for name, into in (("test_with.py", with_s), ("test_without.py", without_s)):
                t0 = time.perf_counter()
                done = subprocess.run(
                    [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", name],
                    cwd=d, capture_output=True, text=True,
                )
                into.append(time.perf_counter() - t0)
                assert done.returncode == 0, done.stdout[-2000:]
                if name == "test_with.py":
                    summaries.append(
                        [ln for ln in done.stdout.splitlines() if ln.startswith("kafkapy:")]
                    )
    return {"tests": n, "with_topic_s": with_s, "without_s": without_s, "summaries": summaries}


def ms(xs: list[float]) -> str:
    return f"{1000 * statistics.median(xs):.0f} ms (min {1000 * min(xs):.0f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--tests", type=int, default=200)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    sub = subprocess_start(args.repeats)
    inproc = in_process_start(args.repeats)
    sess = session(args.tests, max(2, args.repeats // 3))
    overhead = [w - o for w, o in zip(sess["with_topic_s"], sess["without_s"], strict=True)]
    topic_ms = [
        float(re.search(r"\(([\d.]+) ms per topic\)", " ".join(s)).group(1))
        for s in sess["summaries"]
    ]
    print(f"load average at start: {load:.1f}")
    print(f"subprocess broker, first of a run:                {ms(sub['first_s'])}")
    print(f"subprocess broker, forked from the zygote:        {ms(sub['forked_s'])}")
    print(f"plain `kafkapy server` process, ApiVersions:      {ms(sub['plain_wall_s'])}")
    print(f"plain `kafkapy server` process, CPU by then:      {ms(sub['plain_cpu_s'])}")
    print(f"in-process broker, cold (imports included):      {ms(inproc['cold_s'])}")
    print(f"in-process broker, warm (modules imported):      {ms(inproc['warm_s'])}")
    print(
        f"{args.tests} tests with kafka_topic vs without: {ms(sess['with_topic_s'])} vs "
        f"{ms(sess['without_s'])}: {ms(overhead)} added; topic create+delete "
        f"{statistics.median(topic_ms):.1f} ms per test"
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "load_average": load,
                "subprocess": sub,
                "in_process": inproc,
                "session": {**sess, "overhead_s": overhead, "topic_ms": topic_ms},
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
