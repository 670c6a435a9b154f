"""Apache Kafka's Java client against kafkapy: the producer, consumer groups and the AdminClient.

java/JavaClientFlows.java is compiled once per session with javac against Kafka 3.9's
kafka-clients (from Maven Central, see jvm.py); each test runs one of its flows against a broker
with Kafka 4.4's client and with 3.9's, and asserts on the lines it prints.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from compat_tests.suites import jvm
from kafkapy.testing import BrokerProcess

pytestmark = pytest.mark.timeout(300)

@pytest.fixture(scope="session")
def flows_classes(java_classes) -> Path:
    return java_classes


@pytest.fixture(scope="module")
def broker(module_broker_factory):
    jvm.require_kafka_jvm(javac=True)
    # no initial rebalance delay, as Kafka's shipped config/server.properties sets it
    return module_broker_factory({"group.initial.rebalance.delay.ms": "0"},
                                 name="java-client-broker")


@pytest.fixture(scope="module", params=jvm.CLIENTS, ids=[f"java-{c}" for c in jvm.CLIENTS])
def client(request) -> str:
    """The Kafka client line a flow runs with."""
    return request.param


def run_flow(classes: Path, broker: BrokerProcess, flow: str,
             client: str) -> dict[str, list[dict[str, str]]]:
    """Run a flow; its output lines as {check: [{key: value}, ...]}."""
    proc = jvm.run_java("JavaClientFlows", broker.bootstrap, flow, f"j-{flow}-{client}",
                        extra_cp=(classes,), timeout=240, check=False, client=client)
    assert proc.returncode == 0, (f"flow {flow} failed (exit {proc.returncode}):\n"
                                  f"{proc.stdout}\n{proc.stderr[-4000:]}")
    checks: dict[str, list[dict[str, str]]] = {}
    for line in proc.stdout.splitlines():
        name, _, rest = line.partition(" ")
        checks.setdefault(name, []).append(dict(re.findall(r"(\S+?)=(\S*)", rest)))
    return checks


def test_producer_every_codec_and_acks(flows_classes, broker, client):
    got = run_flow(flows_classes, broker, "produce", client)["produce"]
    combos = {(c["codec"], c["acks"]) for c in got}
    assert combos == {(codec, acks) for codec in ("none", "gzip", "snappy", "lz4", "zstd")
                      for acks in ("0", "1", "all")}
    for c in got:
        assert c["sent"] == c["read"] == "200", c
        # acks=all leaves the client's default enable.idempotence=true in force: an
        # InitProducerId-assigned producer id that DescribeProducers reports for the partition
        idempotent = c["acks"] == "all"
        assert c["idempotent_producers"] == ("1" if idempotent else "0"), c
        assert c["producer_id_valid"] == str(idempotent).lower(), c


def test_cooperative_sticky_incremental_rebalance(flows_classes, broker, client):
    got = run_flow(flows_classes, broker, "cooperative", client)
    (c,) = got["cooperative"]
    # the second member takes half the partitions; the first gives up only those two; every
    # record read (records read again after the move, from the last commit, count once)
    assert c == {"c1": "2", "c2": "2", "union": "4", "c1_revoked": "2",
                 "generation_advanced": "true", "consumed": "40"}
    (done,) = got["cooperative-committed"]
    assert done["sum"] == "40" and done["state"] == "Empty"


def test_static_membership_rejoin_without_rebalance(flows_classes, broker, client):
    got = run_flow(flows_classes, broker, "static", client)
    # close() of a static member does not leave the group ...
    assert got["static-after-close"] == [{"members": "1", "instance": "instance-1"}]
    # ... and the restarted member gets its partitions back in the same generation
    (rejoin,) = got["static-rejoin"]
    assert rejoin["generation_before"] == rejoin["generation_after"], rejoin
    assert rejoin["same_assignment"] == "true"


def test_kip848_consumer_protocol(flows_classes, broker, client):
    got = run_flow(flows_classes, broker, "consumer-protocol", client)
    assert got["consumer-protocol"] == [{"c1": "2", "c2": "2", "consumed": "40",
                                         "type": "Consumer", "members": "2",
                                         "state": "Stable"}]
    assert got["consumer-protocol-committed"] == [{"sum": "40"}]


def test_admin_client(flows_classes, broker, client):
    got = run_flow(flows_classes, broker, "admin", client)
    flat = {name: lines[0] for name, lines in got.items()}
    assert flat["cluster"] == {"nodes": "1", "cluster_id_set": "true", "controller_set": "true"}
    assert flat["topics"] == {"listed": "true", "partitions": "2", "topic_id_set": "true",
                              "create_again": "TopicExistsException"}
    assert flat["configs"] == {"retention.ms": "3600000/DYNAMIC_TOPIC_CONFIG",
                               "segment.bytes": "1073741824/DEFAULT_CONFIG"}
    assert flat["configs-altered"] == {"retention.ms": "7200000/DYNAMIC_TOPIC_CONFIG",
                                       "cleanup.policy": "delete/DEFAULT_CONFIG"}
    assert flat["broker-config"] == {"message.max.bytes": "1048588/DEFAULT_CONFIG"}
    assert flat["partitions"] == {"increased_to": "3"}
    # 30 records with timestamps t0 + i: max timestamp at offset 29, t0 + 12 at offset 12
    assert flat["offsets"] == {"earliest": "0", "latest": "30", "max_timestamp": "29",
                               "for_timestamp": "12"}
    assert flat["delete-records"] == {"low_watermark": "10", "earliest": "10"}
    assert flat["groups"] == {"listed": "true", "state": "Empty", "members": "0",
                              "committed_p0": "30"}
    assert flat["group-offsets"] == {"altered": "15", "offset_deleted": "true",
                                     "group_deleted": "true"}
    assert flat["delete-topic"] == {"gone": "true"}


def test_consumer_stays_on_incremental_fetch_sessions(flows_classes, tmp_path, client):
    """Kafka's Java consumer uses fetch sessions (KIP-227): through a proxy that records the
    session metadata, a consumer of 30 partitions reads every record once while its fetches
    after the first are incremental, name (almost) nothing and are answered without errors."""
    from compat_tests.fetch_proxy import FetchProxy
    from kafkapy.testing import free_port

    port = free_port()
    with FetchProxy(port) as proxy:
        proc = BrokerProcess(tmp_path / "broker", {
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{proxy.port}",
        }, port=port).start()
        try:
            front = BrokerProcess(tmp_path / "unused", port=proxy.port)  # bootstrap: the proxy
            got = run_flow(flows_classes, front, "sessions", client)["sessions"][0]
        finally:
            assert proc.stop() == 0, proc.log_text()[-3000:]
    assert got["sent"] == got["read"] == "117" and got["duplicates"] == got["mismatched"] == "0"
    fetches, responses = proxy.snapshot()
    incremental = [f for f in fetches if f.session_id != 0 and f.epoch > 0]
    assert len(incremental) > 10 and len(incremental) > len(fetches) * 3 // 4, fetches[:10]
    assert sum(f.partitions for f in incremental) < len(incremental) * 5
    assert all(r.error == 0 for r in responses), [r for r in responses if r.error][:5]
    assert not proxy.problems, proxy.problems[:3]
