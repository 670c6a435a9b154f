"""Differential session of the controller's deadline: CreateTopics, DeleteTopics,
CreatePartitions, ElectLeaders and AlterPartitionReassignments sent with a timeout of 0 or -1 ms.
Apache Kafka's controller gives each such request a deadline of its arrival plus timeout_ms and
refuses an operation whose deadline has passed before it starts (REQUEST_TIMED_OUT for every
topic or partition, nothing changed); Metadata afterwards tells whether a topic was created,
grown or deleted all the same. Raw requests, for the exact error fields. Runs against Apache
Kafka 4.4 and kafkapy; differences not in known_differences.py fail the test.
"""

from __future__ import annotations

import datetime
import uuid
from typing import Any

from compat_tests.reference.differential import Differential, Target
from compat_tests.reference.observe import create_topic, entity_obs, raw

EXISTING = "diff-deadline-existing"
NEW = "diff-deadline-new"


def _partition_count(target: Target, name: str) -> int | None:
    """How many partitions Metadata shows for ``name`` (None: no such topic)."""
    from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic

    with raw(target) as client:
        resp = client.request(MetadataRequest(
            topics=(MetadataRequestTopic(topic_id=uuid.UUID(int=0), name=name),),
            allow_auto_topic_creation=False, include_topic_authorized_operations=False))
    topic = resp.topics[0]
    return None if topic.error_code.value else len(topic.partitions)


def controller_deadlines(target: Target) -> dict[str, Any]:
    from kio.schema.alter_partition_reassignments.v0 import request as reassign
    from kio.schema.create_partitions.v3 import request as grow
    from kio.schema.create_topics.v7 import request as create
    from kio.schema.delete_topics.v6 import request as delete
    from kio.schema.elect_leaders.v2 import request as elect

    create_topic(target, EXISTING, partitions=1)
    out: dict[str, Any] = {}
    for ms in (0, -1):
        timeout = datetime.timedelta(milliseconds=ms)
        with raw(target) as client:
            for validate_only in (False, True):
                resp = client.request(create.CreateTopicsRequest(
                    topics=(create.CreatableTopic(
                        name=NEW, num_partitions=1, replication_factor=1, assignments=(),
                        configs=()),),
                    timeout=timeout, validate_only=validate_only))
                out[f"{ms}.create_topics.validate_only={validate_only}"] = entity_obs(resp)
            resp = client.request(grow.CreatePartitionsRequest(
                topics=(grow.CreatePartitionsTopic(name=EXISTING, count=2, assignments=None),),
                timeout=timeout, validate_only=False))
            out[f"{ms}.create_partitions"] = entity_obs(resp)
            resp = client.request(delete.DeleteTopicsRequest(
                topics=(delete.DeleteTopicState(name=EXISTING, topic_id=uuid.UUID(int=0)),
                        delete.DeleteTopicState(name="diff-deadline-missing",
                                                topic_id=uuid.UUID(int=0))),
                timeout=timeout))
            out[f"{ms}.delete_topics"] = entity_obs(resp)
            resp = client.request(elect.ElectLeadersRequest(
                election_type=0,
                topic_partitions=(elect.TopicPartitions(topic=EXISTING, partitions=(0,)),),
                timeout=timeout))
            out[f"{ms}.elect_leaders"] = entity_obs(resp)
            resp = client.request(reassign.AlterPartitionReassignmentsRequest(
                timeout=timeout,
                topics=(reassign.ReassignableTopic(name=EXISTING, partitions=(
                    reassign.ReassignablePartition(partition_index=0, replicas=None),)),)))
            out[f"{ms}.alter_partition_reassignments"] = entity_obs(resp)
        out[f"{ms}.partitions_after"] = {
            EXISTING: _partition_count(target, EXISTING), NEW: _partition_count(target, NEW)}
    return out


def test_controller_deadlines(differential: Differential) -> None:
    outcome = differential.check("controller_deadlines", controller_deadlines)
    assert outcome.observations >= 20
