"""Every served API at every served version, against one real broker: each request is built from
kio's own schema for that version and each answer is checked for meaning, not just for decoding.

The table comes from kafkapy.protocol.api_table.served_apis() (Produce from accept_min). Requests
are built generically (compat_tests/version_sweep/builder.py): fields are filled by name (topic
names point at the pre-created topic "sweep", topic ids at its real id, partition indexes 0, ...)
then by kafka_type, and each API's check (compat_tests/version_sweep/, one module per API family)
overrides what it needs. The broker log is checked for "unexpected error" after every request and
once more at the end of the module.
"""

from __future__ import annotations

import pytest

from kafkapy.protocol.api_table import served_apis

from .version_sweep.checks import CHECKS
from .version_sweep.common import create_topic, metadata12, produce, seed_records
from .version_sweep.env import RETENTION_OVERRIDE, SEED, SWEEP, UNEXPECTED, ZERO_UUID, Env

CASES = [
    (name, v) for name, r in served_apis().items() for v in range(r.accept_min, r.max_version + 1)
]


@pytest.fixture(scope="module")
def env(module_broker_factory):
    proc = module_broker_factory({"group.initial.rebalance.delay.ms": "0"}, name="sweep-broker")
    e = Env(broker=proc)
    create_topic(e, SWEEP, 2, {"retention.ms": RETENTION_OVERRIDE})
    for p, n in SEED.items():
        assert produce(e, SWEEP, p, seed_records(p, n)) == 0
        e.hw[p] = n
    md = metadata12(e, [SWEEP])
    (t,) = md.topics
    assert t.error_code == 0 and t.topic_id not in (None, ZERO_UUID), t
    e.topic_id = t.topic_id
    e.node_id = md.brokers[0].node_id
    e.cluster_id = md.cluster_id
    e.leader_epoch = t.partitions[0].leader_epoch
    e.new_log()
    return e


def test_every_served_api_has_a_check():
    assert set(CHECKS) == set(served_apis())


@pytest.mark.parametrize(("api", "version"), CASES, ids=[f"{a}-v{v}" for a, v in CASES])
def test_version(env, api, version):
    try:
        CHECKS[api](env, version)
    finally:
        new = env.new_log()
        bad = [line for line in new.splitlines() if UNEXPECTED in line]
        assert not bad, f"broker logged an unexpected error for {api} v{version}:\n{new[-4000:]}"


def test_broker_log_has_no_unexpected_errors(env):
    text = env.broker.log_text()
    assert UNEXPECTED not in text, text[-4000:]
