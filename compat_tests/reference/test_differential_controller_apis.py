"""Differential sessions of the APIs a 4.4 broker forwards to its controller quorum, and of
AlterReplicaLogDirs: UpdateFeatures (every version, valid and refused updates), DescribeQuorum,
UnregisterBroker, UnregisterController, AddRaftVoter and RemoveRaftVoter as they reach a broker,
and AlterReplicaLogDirs with a directory the broker has, one it has not and unknown partitions. Raw
requests, for the exact error fields. Each runs against Apache Kafka 4.4 and kafkapy; differences
not in known_differences.py fail the test.
"""

from __future__ import annotations

import datetime
import importlib
import uuid
from typing import Any

from compat_tests.reference.differential import Differential, Target
from compat_tests.reference.observe import create_topic, entity_obs, raw
from kafkapy.protocol.kio_schemas.unregister_controller_v0 import UnregisterControllerRequest

TIMEOUT = datetime.timedelta(seconds=30)
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
TOPIC = "diff-log-dirs"


def _schema(api: str, version: int) -> Any:
    return importlib.import_module(f"kio.schema.{api}.v{version}.request")


def _update(target: Target, version: int, updates: list[tuple[str, int, int]],
            validate_only: bool = True) -> Any:
    m = _schema("update_features", version)
    keys = []
    for feature, level, upgrade_type in updates:
        if version == 0:
            keys.append(m.FeatureUpdateKey(feature=feature, max_version_level=level,
                                           allow_downgrade=upgrade_type != UPGRADE))
        else:
            keys.append(m.FeatureUpdateKey(feature=feature, max_version_level=level,
                                           upgrade_type=upgrade_type))
    extra = {} if version == 0 else {"validate_only": validate_only}
    with raw(target) as client:
        return entity_obs(client.request(m.UpdateFeaturesRequest(
            timeout=TIMEOUT, feature_updates=tuple(keys), **extra)))


def update_features(target: Target) -> dict[str, Any]:
    cases = {
        "unknown_feature": [("diff.unknown.version", 1, UPGRADE)],
        "running_level": [("group.version", 1, UPGRADE)],
        "no_updates": [],
        "above_every_level": [("group.version", 9, UPGRADE)],
        "downgrade_as_upgrade": [("group.version", 0, UPGRADE)],
        "share_version_up": [("share.version", 1, UPGRADE)],
        "negative_level": [("group.version", -1, SAFE_DOWNGRADE)],
        "second_refused": [("group.version", 1, UPGRADE), ("diff.unknown.version", 1, UPGRADE)],
    }
    out: dict[str, Any] = {}
    for version in (0, 1, 2):
        for name, updates in cases.items():
            out[f"v{version}.{name}"] = _update(target, version, updates)
    out["v1.unknown_upgrade_type"] = _update(target, 1, [("group.version", 1, 7)])
    return out


def test_update_features(differential: Differential) -> None:
    outcome = differential.check("update_features", update_features)
    assert outcome.observations > 20


def _cluster_id(client: Any) -> str:
    from kio.schema.describe_cluster.v0.request import DescribeClusterRequest

    return str(client.request(DescribeClusterRequest(
        include_cluster_authorized_operations=False)).cluster_id)


def quorum_and_voters(target: Target) -> dict[str, Any]:
    """(Each broker's own cluster id in messages reads <cluster-id>.)"""
    out: dict[str, Any] = {}
    with raw(target) as client:
        cluster_id = _cluster_id(client)
        for version in (0, 1, 2):
            m = _schema("describe_quorum", version)
            for name, topic in (("other_partition", "diff-not-the-quorum"), ("none", None)):
                topics = () if topic is None else (m.TopicData(topic_name=topic, partitions=(
                    m.PartitionData(partition_index=0),)),)
                out[f"describe_quorum.v{version}.{name}"] = entity_obs(
                    client.request(m.DescribeQuorumRequest(topics=topics)))
        m = _schema("unregister_broker", 0)
        out["unregister_unknown_broker"] = entity_obs(
            client.request(m.UnregisterBrokerRequest(broker_id=4711)))
        for controller_id in (4711, -1):
            out[f"unregister_controller.{controller_id}"] = entity_obs(client.request(
                UnregisterControllerRequest(controller_id=controller_id)))
        m = _schema("remove_raft_voter", 0)
        for name, given in (("null_cluster_id", None), ("wrong_cluster_id", "diff-other")):
            out[f"remove_raft_voter.{name}"] = entity_obs(client.request(
                m.RemoveRaftVoterRequest(cluster_id=given, voter_id=4711,
                                         voter_directory_id=uuid.UUID(int=7))))
        for version in (0, 1):
            m = _schema("add_raft_voter", version)
            out[f"add_raft_voter.v{version}.wrong_cluster_id"] = entity_obs(client.request(
                m.AddRaftVoterRequest(cluster_id="diff-other", timeout=TIMEOUT, voter_id=4711,
                                      voter_directory_id=uuid.UUID(int=7), listeners=())))
    for obs in out.values():
        if isinstance(obs.get("error_message"), str):
            obs["error_message"] = obs["error_message"].replace(cluster_id, "<cluster-id>")
    return out


def test_quorum_and_voters(differential: Differential) -> None:
    outcome = differential.check("quorum_and_voters", quorum_and_voters)
    assert outcome.observations > 20


def alter_replica_log_dirs(target: Target) -> dict[str, Any]:
    from kio.schema.describe_log_dirs.v4.request import DescribeLogDirsRequest

    create_topic(target, TOPIC, partitions=2)
    with raw(target) as client:
        dirs = client.request(DescribeLogDirsRequest(topics=None)).results
        home = dirs[0].log_dir  # each broker here has one log dir
        out: dict[str, Any] = {}
        for version in (1, 2):
            m = _schema("alter_replica_log_dirs", version)
            for name, path, topic, partitions in (
                ("same_dir", home, TOPIC, (0, 1)),
                ("unknown_partition", home, TOPIC, (0, 9)),
                ("unknown_topic", home, "diff-log-dirs-unknown", (0,)),
                ("unknown_dir", home + "-elsewhere", TOPIC, (0,)),
                ("relative_dir", "diff-relative", TOPIC, (1,)),
            ):
                resp = client.request(m.AlterReplicaLogDirsRequest(dirs=(m.AlterReplicaLogDir(
                    path=path, topics=(m.AlterReplicaLogDirTopic(name=topic,
                                                                 partitions=partitions),)),)))
                obs = entity_obs(resp)
                for result in obs["results"]:  # Kafka's order is a hash map's: by partition
                    result["partitions"].sort(key=lambda p: p["partition_index"])
                out[f"v{version}.{name}"] = obs
        after = client.request(DescribeLogDirsRequest(topics=None)).results
    out["partitions_after"] = sorted(p.partition_index for r in after for t in r.topics
                                     if t.name == TOPIC for p in t.partitions)
    return out


def test_alter_replica_log_dirs(differential: Differential) -> None:
    outcome = differential.check("alter_replica_log_dirs", alter_replica_log_dirs)
    assert outcome.observations > 10
