"""Checks of the APIs a Kafka 4.4 broker forwards to its controller quorum (DescribeQuorum,
UpdateFeatures, UnregisterBroker, UnregisterController, AddRaftVoter, RemoveRaftVoter) and of
AlterReplicaLogDirs."""

from __future__ import annotations

from typing import Any

from kafkapy.protocol.errors import ErrorCode as E

from .builder import make
from .env import SWEEP, Env, ok


def check_alter_replica_log_dirs(env: Env, v: int) -> None:
    (home,) = [r.log_dir for r in env.request(make("DescribeLogDirs", 4, env, topics=None)).results]
    for path, want in ((home, E.none), (home + "-elsewhere", E.log_dir_not_found)):
        resp = env.request(make("AlterReplicaLogDirs", v, env, dirs=[{"path": path, "topics": [
            {"name": SWEEP, "partitions": (0, 1)}]}]))
        codes = [(t.topic_name, p.partition_index, p.error_code) for t in resp.results
                 for p in t.partitions]
        assert codes == [(SWEEP, 0, want), (SWEEP, 1, want)], resp


def check_describe_quorum(env: Env, v: int) -> None:
    resp = env.request(make("DescribeQuorum", v, env, topics=[{
        "topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]}]))
    assert ok(resp.error_code), resp  # no quorum here: the partition is not hosted
    (part,) = resp.topics[0].partitions
    assert part.error_code == E.unknown_topic_or_partition and part.current_voters == (), resp


def check_update_features(env: Env, v: int) -> None:
    key = {"feature": "group.version", "max_version_level": 1, "upgrade_type": 1,
           "allow_downgrade": False}
    resp = env.request(make("UpdateFeatures", v, env, feature_updates=[key], validate_only=True))
    assert ok(resp.error_code) and resp.error_message is None, resp
    resp = env.request(make("UpdateFeatures", v, env, validate_only=False,
                            feature_updates=[{**key, "feature": "sweep.version"}]))
    assert resp.error_code == E.invalid_update_version, resp
    assert resp.error_message.endswith("does not support this feature."), resp


def check_unregister_broker(env: Env, v: int) -> None:
    resp = env.request(make("UnregisterBroker", v, env, broker_id=4711))
    assert resp.error_code == E.broker_id_not_registered, resp
    assert resp.error_message == "Broker ID 4711 is not currently registered", resp
    resp = env.request(make("UnregisterBroker", v, env, broker_id=env.node_id))
    assert ok(resp.error_code), resp


def check_unregister_controller(env: Env, v: int) -> None:
    for controller_id in (4711, env.node_id):  # kafkapy has no KRaft controller registrations
        resp = env.request(make("UnregisterController", v, env, controller_id=controller_id))
        assert resp.error_code == E.controller_id_not_registered, resp
        assert resp.error_message == (
            f"Controller ID {controller_id} is not currently registered."), resp


def _check_raft_voter(api: str, env: Env, v: int, **fields: Any) -> None:
    resp = env.request(make(api, v, env, cluster_id=env.cluster_id, voter_id=4711, **fields))
    assert resp.error_code == E.unsupported_version, resp  # static voters: kraft.version 0
    assert "because the kraft.version feature is 0" in resp.error_message, resp
    resp = env.request(make(api, v, env, cluster_id="sweep-other", voter_id=4711, **fields))
    assert resp.error_code == E.inconsistent_cluster_id, resp


def check_add_raft_voter(env: Env, v: int) -> None:
    _check_raft_voter("AddRaftVoter", env, v, listeners=[])


def check_remove_raft_voter(env: Env, v: int) -> None:
    _check_raft_voter("RemoveRaftVoter", env, v)
