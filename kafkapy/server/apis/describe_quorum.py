"""DescribeQuorum (key 55), versions 0-2: the KRaft metadata quorum (KIP-595, KIP-853).

An Apache Kafka 4.4 broker forwards this request to its controller quorum, which describes
the partitions of its Raft log (``__cluster_metadata``-0) and answers every other partition
with UNKNOWN_TOPIC_OR_PARTITION ("This server does not host this topic-partition." from v2),
leader, epoch and high watermark 0 and no voters. kafkapy keeps its metadata without a Raft
quorum, so it hosts no quorum partition: every partition asked for gets that answer,
``__cluster_metadata`` included, the top level NONE, and (v2) no nodes.

Authorization: DESCRIBE on the cluster (else CLUSTER_AUTHORIZATION_FAILED at the top level).
"""

from __future__ import annotations

from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import build
from ..security.authorization import CLUSTER_DENIED_MESSAGE, DESCRIBE, authorize_cluster

NOT_HOSTED = "This server does not host this topic-partition."


@api("DescribeQuorum")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    if not authorize_cluster(ctx, DESCRIBE):
        return build(R.DescribeQuorumResponse, error_code=ErrorCode.cluster_authorization_failed,
                     error_message=CLUSTER_DENIED_MESSAGE, topics=(), nodes=())
    topics = tuple(
        build(
            R.TopicData,
            topic_name=t.topic_name,
            partitions=tuple(
                build(R.PartitionData, partition_index=p.partition_index,
                      error_code=ErrorCode.unknown_topic_or_partition, error_message=NOT_HOSTED,
                      leader_id=0, leader_epoch=0, high_watermark=0, current_voters=(),
                      observers=())
                for p in t.partitions
            ),
        )
        for t in request.topics
    )
    return build(R.DescribeQuorumResponse, error_code=ErrorCode.none, error_message="",
                 topics=topics, nodes=())
