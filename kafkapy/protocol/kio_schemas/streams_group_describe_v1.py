"""StreamsGroupDescribe v1 (Kafka 4.4): the request and response classes. Each lives in its own
module since both declare nested types of the same names; this one holds the request and every
response type, as the broker builds answers from the response module's names."""

from ._streams_group_describe_v1_request import StreamsGroupDescribeRequest
from ._streams_group_describe_v1_response import (
    Assignment,
    DescribedGroup,
    Endpoint,
    KeyValue,
    Member,
    StreamsGroupDescribeResponse,
    Subtopology,
    TaskIds,
    TaskOffset,
    TopicInfo,
    Topology,
    TopologyDescription,
    TopologyDescriptionGlobalStore,
    TopologyDescriptionNode,
    TopologyDescriptionSubtopology,
)

__all__ = [
    "Assignment",
    "DescribedGroup",
    "Endpoint",
    "KeyValue",
    "Member",
    "StreamsGroupDescribeRequest",
    "StreamsGroupDescribeResponse",
    "Subtopology",
    "TaskIds",
    "TaskOffset",
    "TopicInfo",
    "Topology",
    "TopologyDescription",
    "TopologyDescriptionGlobalStore",
    "TopologyDescriptionNode",
    "TopologyDescriptionSubtopology",
]
