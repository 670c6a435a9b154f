"""The error response of any request, derived from the decoded request (Kafka's getErrorResponse).

When a handler raises unexpectedly, Kafka's request handler does not close the connection: it
answers with the request's own error response (``AbstractRequest.getErrorResponse``), which
repeats what the request named — each topic and partition, resource, group, coordinator key —
with the error code on every one of them and on the response itself. Clients then see
UNKNOWN_SERVER_ERROR and report it, instead of reconnecting and retrying forever.

:func:`error_response` builds that response for any API and version from kio's response schema
and the decoded request:

* every field of Kafka type error_code (``error_code``, AddPartitionsToTxn's
  ``partition_error_code``) is the error, every ``error_message`` Kafka's generic message for it
  (never the exception's text: nothing internal leaks, as Kafka's ``ApiError``);
* a response array mirrors the request array of the same name (or the one ``_SOURCES`` names
  for that API: Fetch ``responses`` <- ``topics``, DeleteGroups ``results`` <- ``groups_names``,
  ...), item for item; an item's identifying fields (topic name and id, partition, group, key,
  resource, quota entity) are copied from the request item (same name, or ``partition_index``
  <- ``partition``/``index``), and an item built from a bare value (a group id, a partition
  index) gets it in its first field that is not an error;
* everything else has the schema's default, -1 for ids and epochs (no node, no producer, no
  generation), else zero, empty or null; arrays the request does not name are empty, as in
  Kafka's error responses (no brokers, no configs, no members).
"""

from __future__ import annotations

import dataclasses
import datetime
import typing
import uuid
from functools import cache
from types import NoneType, UnionType
from typing import Any, Union

from kio.index import load_payload_module, load_response_schema
from kio.schema.errors import ErrorCode
from kio.static.constants import EntityType

UNKNOWN_SERVER_ERROR_MESSAGE = (
    "The server experienced an unexpected error when processing the request."
)

PRODUCE_KEY = 0
ALTER_REPLICA_LOG_DIRS_KEY = 34
ALTER_USER_SCRAM_CREDENTIALS_KEY = 51
CREATE_DELEGATION_TOKEN_KEY = 38

# Response arrays filled from a request array of another name, per API key; None: left empty.
_SOURCES: dict[int, dict[str, str | None]] = {
    0: {"responses": "topic_data", "partition_responses": "partition_data"},  # Produce
    1: {"responses": "topics"},  # Fetch
    9: {"partitions": "partition_indexes"},  # OffsetFetch
    10: {"coordinators": "coordinator_keys"},  # FindCoordinator
    19: {"configs": None},  # CreateTopics: no configs in an error
    # AddPartitionsToTxn v0-3 (v4+ from brokers: only the top-level error, as in Kafka)
    24: {"results_by_topic_v3_and_below": "v3_and_below_topics",
         "results_by_partition": "partitions", "results_by_transaction": None},
    20: {"responses": "topics|topic_names"},  # DeleteTopics (topic_names up to v5)
    27: {"partitions": "partition_indexes"},  # WriteTxnMarkers
    30: {"results": "creations"},  # CreateAcls
    31: {"filter_results": "filters", "matching_acls": None},  # DeleteAcls
    32: {"results": "resources"},  # DescribeConfigs
    33: {"responses": "resources"},  # AlterConfigs
    37: {"results": "topics"},  # CreatePartitions
    42: {"results": "groups_names"},  # DeleteGroups
    43: {"replica_election_results": "topic_partitions", "partition_result": "partitions"},
    44: {"responses": "resources"},  # IncrementalAlterConfigs
    45: {"responses": "topics"},  # AlterPartitionReassignments
    46: {"partitions": "partition_indexes"},  # ListPartitionReassignments
    50: {"results": "users"},  # DescribeUserScramCredentials (results without the user name)
    61: {"partitions": "partition_indexes"},  # DescribeProducers
    65: {"transaction_states": "transactional_ids"},  # DescribeTransactions
    69: {"groups": "group_ids"},  # ConsumerGroupDescribe
    77: {"groups": "group_ids"},  # ShareGroupDescribe
    89: {"groups": "group_ids"},  # StreamsGroupDescribe
    78: {"responses": None, "node_endpoints": None},  # ShareFetch: the top-level error only
    79: {"responses": None, "node_endpoints": None},  # ShareAcknowledge: likewise
    91: {"responses": "topics"},  # AlterShareGroupOffsets
    92: {"responses": "topics"},  # DeleteShareGroupOffsets
}

# Fields of a request item that identify it, copied into the response item (under the same
# name, or from the names listed).
_IDENTIFYING = frozenset(
    {
        "name",
        "topic",
        "topic_id",
        "topic_name",
        "partition",
        "partition_id",
        "group_id",
        "key",
        "member_id",
        "group_instance_id",
        "resource_type",
        "resource_name",
        "entity_type",
        "entity_name",
        "producer_id",  # WriteTxnMarkers: each marker's result names its producer
    }
)
_SCALAR_SOURCES = {"partition_index": ("partition_index", "partition", "index")}

# Integer fields that mean "none" at -1 when there is nothing to say (Kafka's Node.noNode(),
# NO_PRODUCER_ID, UNKNOWN_GENERATION_ID, ...).
_NONE_IS_MINUS_ONE = frozenset(
    {
        "node_id",
        "leader_id",
        "controller_id",
        "port",
        "producer_id",
        "producer_epoch",
        "generation_id",
        "member_epoch",
        "leader_epoch",
        "coordinator_epoch",
        "high_watermark",
        "last_stable_offset",
        "log_start_offset",
        "offset",
        "committed_offset",
        "timestamp",
    }
)

_ERROR_FIELDS = ("error_code", "error_message")


class RequestError(Exception):
    """Raised by a handler to answer the whole request with one error (Kafka's handlers throw
    InvalidRequestException and the like): the dispatcher answers with :func:`error_response`
    for ``error_code`` and the message, and logs nothing."""

    def __init__(self, error_code: ErrorCode, message: str | None = None) -> None:
        super().__init__(message or error_code.name)
        self.error_code = error_code
        self.message = message


def _split_optional(tp: Any) -> tuple[Any, bool]:
    if typing.get_origin(tp) in (UnionType, Union):
        return next(a for a in typing.get_args(tp) if a is not NoneType), True
    return tp, False


@cache
def _fields(cls: type) -> list[tuple[dataclasses.Field[Any], Any, bool]]:
    """(field, type without None, nullable) of a kio entity class."""
    hints = typing.get_type_hints(cls)
    return [(f, *_split_optional(hints[f.name])) for f in dataclasses.fields(cls)]


def _zero(f: dataclasses.Field[Any], nullable: bool) -> Any:
    """The value of a field the error response has nothing to say about."""
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    if nullable:
        return None
    kafka_type = f.metadata.get("kafka_type", "")
    if kafka_type.startswith(("int", "uint")):
        return -1 if f.name in _NONE_IS_MINUS_ONE else 0
    if kafka_type == "string":
        return ""
    if kafka_type in ("bytes", "records"):
        return b""
    if kafka_type == "bool":
        return False
    if kafka_type == "uuid":
        return uuid.UUID(int=0)
    if kafka_type.startswith("timedelta"):
        return datetime.timedelta(0)
    if kafka_type == "float64":
        return 0.0
    if kafka_type == "datetime_i64":
        return datetime.datetime.fromtimestamp(0, datetime.UTC)
    raise TypeError(f"no zero value for field {f.name} of kafka type {kafka_type!r}")


class _Builder:
    def __init__(self, api_key: int, error: ErrorCode, message: str | None) -> None:
        self.sources = _SOURCES.get(api_key, {})
        self.error = error
        self.message = message

    def entity(self, cls: type, source: Any, top: bool = False) -> Any:
        """An instance of ``cls`` mirroring ``source`` (a request entity, a bare value, None);
        the response itself (``top``) takes only arrays from the request."""
        values: dict[str, Any] = {}
        fields = _fields(cls)
        bare_target = None
        if source is not None and not dataclasses.is_dataclass(source):
            bare_target = next(f.name for f, _, _ in fields if f.name not in _ERROR_FIELDS)
        for f, tp, nullable in fields:
            if f.name == "error_code" or f.metadata.get("kafka_type") == "error_code":
                values[f.name] = self.error  # (AddPartitionsToTxn's partition_error_code too)
            elif f.name == "error_message":
                values[f.name] = self.message
            elif typing.get_origin(tp) is tuple:
                values[f.name] = self.array(f.name, typing.get_args(tp)[0], source)
            elif dataclasses.is_dataclass(tp):
                values[f.name] = None if nullable else self.entity(tp, None)
            elif f.name == bare_target:
                values[f.name] = source
            else:
                values[f.name] = self.scalar(f, nullable, None if top else source)
        return cls(**values)

    def array(self, name: str, item_type: Any, source: Any) -> tuple[Any, ...]:
        items = self.request_items(name, source)
        item_cls, _ = _split_optional(item_type)
        if not dataclasses.is_dataclass(item_cls):
            return ()
        return tuple(self.entity(item_cls, item) for item in items)

    def request_items(self, name: str, source: Any) -> tuple[Any, ...]:
        if source is None or not dataclasses.is_dataclass(source):
            return ()
        names = self.sources.get(name, name)
        if names is None:
            return ()
        for candidate in names.split("|"):
            items = getattr(source, candidate, None)
            if items:
                return tuple(items)
        return ()

    def scalar(self, f: dataclasses.Field[Any], nullable: bool, source: Any) -> Any:
        if source is not None and dataclasses.is_dataclass(source):
            candidates = _SCALAR_SOURCES.get(f.name, (f.name,) if f.name in _IDENTIFYING else ())
            for candidate in candidates:
                if hasattr(source, candidate):
                    value = getattr(source, candidate)
                    if value is not None or nullable:
                        return value
        return _zero(f, nullable)


def error_response(
    api_key: int,
    version: int,
    request: Any,
    error: ErrorCode = ErrorCode.unknown_server_error,
    message: str | None = UNKNOWN_SERVER_ERROR_MESSAGE,
) -> Any:
    """The kio response entity answering ``request`` (a decoded kio request entity) with
    ``error`` on everything it names; None for Produce with acks=0, which has no response (Kafka
    closes the connection instead)."""
    if api_key == PRODUCE_KEY and request.acks == 0:
        return None
    cls = load_response_schema(api_key, version)
    if api_key == ALTER_USER_SCRAM_CREDENTIALS_KEY:
        return _alter_user_scram_credentials(cls, request, error, message)
    if api_key == ALTER_REPLICA_LOG_DIRS_KEY:
        return _alter_replica_log_dirs(cls, version, request, error)
    if api_key == CREATE_DELEGATION_TOKEN_KEY:
        return _create_delegation_token(cls, error)
    return _Builder(api_key, error, message).entity(cls, request, top=True)


def _alter_user_scram_credentials(cls: type, request: Any, error: ErrorCode, message: Any) -> Any:
    """One result per user the deletions and upsertions name, once each, sorted (as Kafka's
    AlterUserScramCredentialsRequest.getErrorResponse); version 0 is the only one."""
    from kio.schema.alter_user_scram_credentials.v0.response import (
        AlterUserScramCredentialsResult,
    )

    users = sorted({x.name for x in (*request.deletions, *request.upsertions)})
    results = tuple(
        AlterUserScramCredentialsResult(user=u, error_code=error, error_message=message)
        for u in users
    )
    return cls(throttle_time=datetime.timedelta(0), results=results)


def _create_delegation_token(cls: type, error: ErrorCode) -> Any:
    """Owner and requester User:ANONYMOUS, timestamps -1 (Kafka's
    CreateDelegationTokenRequest.getErrorResponse)."""
    none = datetime.datetime.fromtimestamp(-0.001, datetime.UTC)  # written as -1
    values = dict(
        error_code=error, principal_type="User", principal_name="ANONYMOUS",
        token_requester_principal_type="User", token_requester_principal_name="ANONYMOUS",
        issue_timestamp=none, expiry_timestamp=none, max_timestamp=none, token_id="", hmac=b"",
        throttle_time=datetime.timedelta(0),
    )
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in values.items() if k in names})


def _alter_replica_log_dirs(cls: type, version: int, request: Any, error: ErrorCode) -> Any:
    """One result per topic the directories name, each partition with the error (as Kafka's
    AlterReplicaLogDirsRequest.getErrorResponse: the partitions of every directory, by topic)."""
    module = load_payload_module(ALTER_REPLICA_LOG_DIRS_KEY, version, EntityType.response)
    by_topic: dict[str, list[int]] = {}
    for log_dir in request.dirs:
        for topic in log_dir.topics:
            by_topic.setdefault(topic.name, []).extend(topic.partitions)
    results = tuple(
        module.AlterReplicaLogDirTopicResult(
            topic_name=name,
            partitions=tuple(
                module.AlterReplicaLogDirPartitionResult(partition_index=p, error_code=error)
                for p in partitions
            ),
        )
        for name, partitions in by_topic.items()
    )
    return cls(throttle_time=datetime.timedelta(0), results=results)
