"""Fuzzing the wire (issue 12, point 5): the broker never crashes, hangs or bloats on any input.

``test_fuzz_the_wire`` runs the seeded fuzzer (compat_tests/fuzz) against a broker process: valid
requests of every served (API, version) built from the schemas, then mutated. It runs for about
20 s in the suite; ``--fuzz-minutes N`` runs it for N minutes (``--fuzz-seed`` to choose the
seed) and saves failing inputs to compat_tests/fuzz/cases/, which ``test_saved_cases_replay``
sends again on every run.
"""

from __future__ import annotations

import secrets

import pytest
from kio.schema.api_versions.v3.request import ApiVersionsRequest

from kafkapy.protocol.errors import ErrorCode
from kafkapy.testing import BrokerProcess

from .fuzz.runner import (
    CASES_DIR,
    HANDLER_ERROR,
    Fuzzer,
    load_cases,
    prepare,
    save_cases,
    send_case,
)
from .rawclient import RawClient

SHORT_RUN_S = 20.0
SHORT_RUN_SEED = "kafkapy-12"
FUZZ_CONFIG = {"group.initial.rebalance.delay.ms": "0"}  # joins complete without a 3 s wait
RSS_LIMIT_MB = 400.0


@pytest.fixture
def fuzz_broker(tmp_path):
    proc = BrokerProcess(tmp_path / "broker", FUZZ_CONFIG).start()
    yield proc
    code = proc.stop()
    assert code == 0, f"broker did not shut down cleanly (exit {code}):\n{proc.log_text()[-3000:]}"


def test_fuzz_the_wire(fuzz_broker, request, tmp_path):
    minutes = request.config.getoption("--fuzz-minutes")
    seed = request.config.getoption("--fuzz-seed")
    if seed is None:
        seed = secrets.token_hex(4) if minutes else SHORT_RUN_SEED
    fuzzer = Fuzzer(fuzz_broker, prepare(fuzz_broker), seed, rss_limit_mb=RSS_LIMIT_MB)
    report = fuzzer.run(minutes * 60 if minutes else SHORT_RUN_S)
    print(report.summary())
    saved = save_cases(report.failures, CASES_DIR if minutes else tmp_path / "cases")
    assert not report.failures, (
        f"{report.summary()}\n"
        + "\n".join(f"{c.name()}: {c.reason[:300]}" for c in report.failures[:10])
        + f"\ncases saved: {[str(p) for p in saved[:10]]}"
    )
    assert report.cases > 1000 and report.answered and report.closed


CASES = load_cases(CASES_DIR)


def test_saved_cases_replay(fuzz_broker):
    """Every saved case is answered or closed in time, its handler does not raise, and the
    broker keeps serving a client on another connection after each one."""
    assert CASES, f"no regression cases in {CASES_DIR}"
    prepare(fuzz_broker)
    probe = ApiVersionsRequest(client_software_name="replay", client_software_version="1")
    with RawClient(fuzz_broker.bootstrap) as healthy:
        for case in CASES:
            result = send_case(fuzz_broker.bootstrap, case, timeout=10.0)
            assert result in ("answered", "closed", "long_poll"), (case.name(), result)
            assert healthy.request(probe).error_code == ErrorCode.none, case.name()
            assert fuzz_broker.proc.poll() is None, case.name()
    assert not HANDLER_ERROR.findall(fuzz_broker.log_text())
