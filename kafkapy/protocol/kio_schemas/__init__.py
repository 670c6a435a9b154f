"""Request/response schemas of Kafka 4.4 versions that the pinned kio release lacks.

kio (the protocol data classes kafkapy decodes and encodes with) is generated from an Apache
Kafka release older than 4.4. The versions 4.4 added to APIs kafkapy serves are declared here,
one module per API version, as kio-style frozen dataclasses (same field metadata, so kio's
readers and writers, the request bounds guard and the fuzz generator all work on them), and
:func:`register` adds them to kio's schema index so ``kio.index.load_request_schema`` and
``load_response_schema`` find them like kio's own
(the modules do without ``from __future__ import annotations``: kio reads field types at run
time). The layouts are those of Kafka 4.4's message
definitions (clients/src/main/resources/common/message/*.json):

* ApiVersions v5 (``api_versions_v5``): the request adds ``cluster_id`` (nullable) and
  ``node_id``, which a client sets once it knows which broker it is talking to; the response is
  v4's.
* DeleteGroups v3 (``delete_groups_v3``): each group's result adds a nullable ``error_message``.
* StreamsGroupHeartbeat v1 and StreamsGroupDescribe v1 (``streams_group_heartbeat_v1``,
  ``streams_group_describe_v1``, KIP-1331): the heartbeat answer's recovery lag becomes int64 and
  says whether the broker wants the topology description; the describe request may ask for that
  description and each group's answer carries it, its status and the assignor's name.
* StreamsGroupTopologyDescriptionUpdate v0 (``streams_group_topology_description_update_v0``),
  api key 93, an API kio has no version of at all: its key joins kio's key-to-name map too
  (``NEW_API_KEYS``).
* TxnOffsetCommit v6 (``txn_offset_commit_v6``, KIP-1319): topics named by id.
* UnregisterController v0 (``unregister_controller_v0``): an API kio has no version of at all,
  so its key joins kio's key-to-name map too (``NEW_API_KEYS``).

A module is only registered for a version kio does not already know, so upgrading kio to a
release with these versions makes the module dead code rather than a conflict.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import kio.index
import kio.schema.index
from kio.static.constants import EntityType

# kio API name -> version -> module holding the version's request and response classes
EXTRA_SCHEMAS: dict[str, dict[int, tuple[str, str, str]]] = {
    "api_versions": {
        5: (__name__ + ".api_versions_v5", "ApiVersionsRequest", "ApiVersionsResponse"),
    },
    "delete_groups": {
        3: (__name__ + ".delete_groups_v3", "DeleteGroupsRequest", "DeleteGroupsResponse"),
    },
    "streams_group_heartbeat": {
        1: (
            __name__ + ".streams_group_heartbeat_v1",
            "StreamsGroupHeartbeatRequest",
            "StreamsGroupHeartbeatResponse",
        ),
    },
    "streams_group_describe": {
        1: (
            __name__ + ".streams_group_describe_v1",
            "StreamsGroupDescribeRequest",
            "StreamsGroupDescribeResponse",
        ),
    },
    "streams_group_topology_description_update": {
        0: (
            __name__ + ".streams_group_topology_description_update_v0",
            "StreamsGroupTopologyDescriptionUpdateRequest",
            "StreamsGroupTopologyDescriptionUpdateResponse",
        ),
    },
    "txn_offset_commit": {
        6: (__name__ + ".txn_offset_commit_v6", "TxnOffsetCommitRequest",
            "TxnOffsetCommitResponse"),
    },
    "unregister_controller": {
        0: (__name__ + ".unregister_controller_v0", "UnregisterControllerRequest",
            "UnregisterControllerResponse"),
    },
}
# APIs kio does not know at all: api key -> kio-style API name
NEW_API_KEYS: dict[int, str] = {
    93: "streams_group_topology_description_update",
    94: "unregister_controller",
}

_registered = False


def register() -> None:
    """Add the extra versions to kio's schema index (idempotent)."""
    global _registered
    if _registered:
        return
    current = kio.schema.index.schema_name_map
    merged: dict[str, Any] = dict(current)
    for name, versions in EXTRA_SCHEMAS.items():
        by_version: dict[int, Any] = dict(current.get(name, {}))
        for version, (module, request, response) in versions.items():
            if version in by_version:  # kio knows it already
                continue
            by_version[version] = MappingProxyType(
                {
                    EntityType.request: f"{module}:{request}",
                    EntityType.response: f"{module}:{response}",
                }
            )
        merged[name] = MappingProxyType(by_version)
    proxy = MappingProxyType(merged)
    kio.schema.index.schema_name_map = proxy  # type: ignore[misc]
    kio.index.schema_name_map = proxy  # type: ignore[misc]
    keys = MappingProxyType({**NEW_API_KEYS, **kio.schema.index.api_key_map})
    kio.schema.index.api_key_map = keys  # type: ignore[misc]
    kio.index.api_key_map = keys  # type: ignore[misc]
    _registered = True
