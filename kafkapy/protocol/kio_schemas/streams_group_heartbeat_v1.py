"""StreamsGroupHeartbeat v1 (Kafka 4.4): the request and response classes. Each lives in its own
module since both declare nested types of the same names; this one holds the request and every
response type, as the broker builds answers from the response module's names."""

from ._streams_group_heartbeat_v1_request import StreamsGroupHeartbeatRequest
from ._streams_group_heartbeat_v1_response import (
    Endpoint,
    EndpointToPartitions,
    Status,
    StreamsGroupHeartbeatResponse,
    TaskIds,
    TopicPartition,
)

__all__ = [
    "Endpoint",
    "EndpointToPartitions",
    "Status",
    "StreamsGroupHeartbeatRequest",
    "StreamsGroupHeartbeatResponse",
    "TaskIds",
    "TopicPartition",
]
