"""The state every part of the group coordinator shares, and the one way it is written.

``CoordinatorState`` holds the groups of the __consumer_offsets partitions this broker leads
(classic, consumer-protocol and streams groups in one table), which partitions are owned or still
loading, the timer table, the topics view and the log. Each part of the coordinator
(``classic_join``, ``modern``, ``offsets``, ``admin``, ...) is an object over this state; none of
them imports the coordinator.

Durable changes go through ``append``: records for one __consumer_offsets partition, all or
nothing, written *before* the in-memory state changes. A failed write comes back as the group API
error to answer (``append_error_to_response_error``), never as an exception.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from typing import Any, Protocol

from kafkapy.protocol.errors import ErrorCode as E

from .classic import ClassicGroup
from .config import CoordinatorConfig
from .consumer import ConsumerGroup, ConsumerMember, member_topics
from .partitioning import partition_for
from .streams.model import StreamsGroup
from .timers import Timers
from .topics import NoTopics, TopicsView, topics_matching
from .txn_store import TxnOffsetStore

log = logging.getLogger("kafkapy.coordinator.group")

MAX_GROUP_ID_BYTES = 32767  # the record key holds it as an int16-length string

Records = list[tuple[bytes, bytes | None]]
Group = ClassicGroup | ConsumerGroup | StreamsGroup


class OffsetsLog(Protocol):
    """Where the coordinator's records go: one __consumer_offsets partition per call, all or
    nothing; with ``txn`` (a ``txn_offsets.TxnAppend``) as a transactional batch of that
    producer. Raises on failure: an exception with an ``error_code`` (a produce error) is
    answered as ``append_error_to_response_error`` says, any other with
    COORDINATOR_NOT_AVAILABLE."""

    def append(
        self,
        partition: int,
        records: list[tuple[bytes, bytes | None]],
        now_ms: int,
        *,
        txn: Any = None,
    ) -> None: ...


def append_error_to_response_error(error: int) -> int:
    """The group API error for a failed __consumer_offsets write (Kafka's
    appendGroupMetadataErrorToResponseError, plus NOT_ENOUGH_REPLICAS_AFTER_APPEND as the
    ZooKeeper-era coordinator mapped it: writes there are acks=all)."""
    if error in (
        E.unknown_topic_or_partition,
        E.not_enough_replicas,
        E.not_enough_replicas_after_append,
        E.request_timed_out,
    ):
        return E.coordinator_not_available
    if error in (E.not_leader_or_follower, E.kafka_storage_error):
        return E.not_coordinator
    if error in (E.message_too_large, E.record_list_too_large, E.invalid_fetch_size):
        return E.unknown_server_error
    return error


def valid_group_id(group_id: str | None, *, allow_empty: bool = False) -> bool:
    """Kafka's GroupCoordinator.isValidGroupId: never null; empty only where ``allow_empty`` (the
    offset and admin APIs, served for the empty group "for backwards compatibility")."""
    if group_id is None or (not group_id and not allow_empty):
        return False
    return len(group_id.encode("utf-8")) <= MAX_GROUP_ID_BYTES


class CoordinatorState:
    def __init__(
        self, config: CoordinatorConfig, log_: OffsetsLog, topics: TopicsView | None = None
    ) -> None:
        self.config = config
        self.log = log_
        self.topics: TopicsView = topics if topics is not None else NoTopics()
        self.groups: dict[str, Group] = {}
        self.timers = Timers()
        self.owned: set[int] = set()
        self.loading: set[int] = set()
        self.txn_offsets = TxnOffsetStore()

    # -- ownership -----------------------------------------------------------------------------
    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.config.num_partitions)

    def partition_error(self, group_id: str) -> int:
        p = self.partition_for(group_id)
        if p in self.loading:
            return E.coordinator_load_in_progress
        if p not in self.owned:
            return E.not_coordinator
        return E.none

    def group_error(self, group_id: str, *, allow_empty: bool = False) -> int:
        """INVALID_GROUP_ID, or the group's partition error (loading, not owned), or NONE.
        ``allow_empty``: OffsetCommit, OffsetFetch, DescribeGroups and DeleteGroups, which Kafka
        3.9's ZooKeeper-mode coordinator serves for the empty group id."""
        if not valid_group_id(group_id, allow_empty=allow_empty):
            return E.invalid_group_id
        return self.partition_error(group_id)

    def owns(self, group_id: str) -> bool:
        return self.partition_for(group_id) in self.owned

    # -- the log -------------------------------------------------------------------------------
    def append(self, group_id: str, records: Records, now_ms: int, *, txn: Any = None) -> int:
        """Write ``records`` to the group's partition (a transactional batch with ``txn``); the
        error to answer, or NONE."""
        if not records:
            return E.none
        try:
            if txn is None:
                self.log.append(self.partition_for(group_id), records, now_ms)
            else:
                self.log.append(self.partition_for(group_id), records, now_ms, txn=txn)
        except Exception as e:  # storage or replication failure: the client retries
            log.warning("cannot append to __consumer_offsets group=%s error=%r", group_id, e)
            code = getattr(e, "error_code", None)
            if isinstance(code, int) and code:
                return append_error_to_response_error(code)
            return E.coordinator_not_available
        return E.none

    # -- topics --------------------------------------------------------------------------------
    def regex_topics(self, pattern: str) -> set[str]:
        return topics_matching(self.topics, pattern)

    def subscription_metadata(
        self, members: Iterable[ConsumerMember]
    ) -> dict[str, tuple[uuid.UUID, int]]:
        """(topic id, partition count) of every existing topic the members subscribe to."""
        names: set[str] = set()
        for m in members:
            names |= member_topics(m, self.regex_topics)
        out = {}
        for n in sorted(names):
            found = self.topics.lookup(n)
            if found is not None:
                out[n] = found
        return out
