"""GROUP config resources (KIP-848 group configs) end to end, as Apache Kafka 4.4 serves them:
`kafkapy configs --entity-type groups` alters and describes them through IncrementalAlterConfigs
and DescribeConfigs, values outside the broker's group.* bounds are refused with 4.4's message,
ListConfigResources lists the group, and the group coordinator tells the group's KIP-848 members
the group's heartbeat interval."""

from __future__ import annotations

import datetime
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from kio.schema.consumer_group_heartbeat.v1 import request as cgh1
from kio.schema.list_config_resources.v1.request import ListConfigResourcesRequest

from compat_tests.rawclient import RawClient
from kafkapy.testing import BrokerProcess

ROOT = Path(__file__).resolve().parents[1]


def configs(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "configs", *args],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    if check and proc.returncode != 0:
        raise AssertionError(f"kafkapy configs {' '.join(args)}: {proc.stdout}{proc.stderr}")
    return proc


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    proc = BrokerProcess(tmp_path_factory.mktemp("group-configs"))
    proc.start()
    yield proc
    assert proc.stop() == 0, proc.log_text()[-3000:]


def heartbeat(client: RawClient, group: str):
    """A new member's first heartbeat, once the group's coordinator is ready."""
    from kio.schema.find_coordinator.v4.request import FindCoordinatorRequest

    deadline = time.monotonic() + 30
    while True:
        client.request(FindCoordinatorRequest(key_type=0, coordinator_keys=(group,)))
        resp = _heartbeat(client, group)
        if resp.error_code.name not in ("not_coordinator", "coordinator_load_in_progress",
                                        "coordinator_not_available"):
            return resp
        assert time.monotonic() < deadline, resp
        time.sleep(0.2)


def _heartbeat(client: RawClient, group: str):
    return client.request(cgh1.ConsumerGroupHeartbeatRequest(
        group_id=group, member_id=str(uuid.uuid4()), member_epoch=0, instance_id=None, rack_id=None,
        rebalance_timeout=datetime.timedelta(seconds=30), subscribed_topic_names=("t",),
        subscribed_topic_regex=None, server_assignor=None, topic_partitions=()))


def test_alter_describe_and_apply_group_configs(broker) -> None:
    b = broker.bootstrap
    group = ["--bootstrap-server", b, "--entity-type", "groups", "--entity-name", "gc"]
    done = configs(*group, "--alter", "--add-config",
                   "consumer.heartbeat.interval.ms=7000,consumer.session.timeout.ms=50000")
    assert done.stdout == "Completed updating config for group gc.\n"
    text = configs(*group, "--describe").stdout
    assert text.startswith("Dynamic configs for group gc are:\n")
    assert "  consumer.session.timeout.ms=50000 sensitive=false synonyms={" in text
    assert "consumer.heartbeat.interval.ms=7000" in text
    everything = configs(*group, "--describe", "--all").stdout
    assert "  share.delivery.count.limit=5 " in everything
    assert "streams.assignor.name=sticky" in everything

    refused = configs(*group, "--alter", "--add-config", "consumer.session.timeout.ms=1",
                      check=False)
    assert refused.returncode != 0
    assert "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive." in (
        refused.stdout + refused.stderr)
    unknown = configs(*group, "--alter", "--add-config", "no.such=1", check=False)
    assert "Unknown group config name: no.such" in unknown.stdout + unknown.stderr

    with RawClient(b) as client:
        listed = client.request(ListConfigResourcesRequest(resource_types=(32,)))
        assert [(r.resource_name, r.resource_type) for r in listed.config_resources] == [
            ("gc", 32)]
        # the coordinator tells the group's members its heartbeat interval; another group the
        # broker's default
        resp = heartbeat(client, "gc")
        assert resp.error_code.name == "none", resp
        assert resp.heartbeat_interval == datetime.timedelta(milliseconds=7000)
        other = heartbeat(client, "gc-other")
        assert other.heartbeat_interval == datetime.timedelta(milliseconds=5000)

    configs(*group, "--alter", "--delete-config", "consumer.heartbeat.interval.ms")
    with RawClient(b) as client:
        assert heartbeat(client, "gc").heartbeat_interval == datetime.timedelta(seconds=5)
