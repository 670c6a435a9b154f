"""The cluster as kafka-transactions.sh sees it (kafkapy/cli/transactions.py): brokers and
partition leaders from Metadata, one connection per broker asked, and the transaction APIs
(FindCoordinator, DescribeTransactions, ListTransactions, DescribeProducers) with their errors
turned into the one-line failures Kafka's tool prints."""

from __future__ import annotations

import struct
import time
from typing import Any

from kafkapy.cli.common import CliError
from kafkapy.cli.wire import Connection, connect_any
from kafkapy.protocol.errors import ErrorCode, error_name
from kafkapy.protocol.wire import read_uvarint, skip_tagged_fields

DEBUG_HINT = " Enable debug logging for additional detail."
API_TIMEOUT_S = 60.0  # the Admin client's default.api.timeout.ms
RETRY_BACKOFF_S = 0.1  # retry.backoff.ms
# answers after which Kafka's Admin client looks the coordinator up again and retries
RETRIABLE_COORDINATOR_ERRORS = frozenset(
    {
        ErrorCode.coordinator_load_in_progress,
        ErrorCode.not_coordinator,
        ErrorCode.coordinator_not_available,
    }
)

# Kafka's messages for the errors these commands meet (Errors.java)
MESSAGES = {
    ErrorCode.transactional_id_not_found: "The transactionalId could not be found",
    ErrorCode.not_coordinator: "This is not the correct coordinator.",
    ErrorCode.coordinator_not_available: "The coordinator is not available.",
    ErrorCode.coordinator_load_in_progress: (
        "The coordinator is loading and hence can't process requests."
    ),
    ErrorCode.unknown_topic_or_partition: "This server does not host this topic-partition.",
    ErrorCode.not_leader_or_follower: (
        "For requests intended only for the leader, this error indicates that the broker is "
        "not the current leader. For requests intended for any replica, this error indicates "
        "that the broker is not a replica of the topic partition."
    ),
    ErrorCode.invalid_producer_epoch: ("Producer attempted to produce with an old epoch."),
    ErrorCode.transaction_coordinator_fenced: (
        "Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the "
        "current coordinator for a given producer."
    ),
}


class TransactionalIdNotFound(CliError):
    """DescribeTransactions answered TRANSACTIONAL_ID_NOT_FOUND."""


def message(code: int) -> str:
    return MESSAGES.get(ErrorCode(code), error_name(code))


def pretty_table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(v)) for w, v in zip(widths, row, strict=True)]
    return "".join(
        "".join(f"{v:<{w}}\t" for v, w in zip(row, widths, strict=True)) + "\n"
        for row in [headers, *rows]
    )


def fail(what: str, code: int | str) -> CliError:
    text = code if isinstance(code, str) else message(code)
    return CliError(f"{what}: {text}.{DEBUG_HINT}")


class Cluster:
    """The brokers and partitions of a cluster, with one connection per broker asked."""

    def __init__(self, bootstrap: str, props: dict[str, str] | None = None) -> None:
        self._props = props or {}  # --command-config: security.protocol, ssl.*, sasl.*
        self._bootstrap = connect_any(bootstrap, props=self._props)
        self._conns: dict[int, Connection] = {}
        md = self.metadata(None)
        self.brokers = {b.node_id: (b.host, b.port) for b in md.brokers}

    def close(self) -> None:
        self._bootstrap.close()
        for c in self._conns.values():
            c.close()

    def metadata(self, topics: list[str] | None) -> Any:
        from kio.schema.metadata.v12 import request as mq

        return self._bootstrap.request(
            mq.MetadataRequest(
                topics=None
                if topics is None
                else tuple(mq.MetadataRequestTopic(topic_id=None, name=t) for t in topics),
                allow_auto_topic_creation=False,
                include_topic_authorized_operations=False,
            )
        )

    def conn(self, broker_id: int) -> Connection:
        c = self._conns.get(broker_id)
        if c is None:
            if broker_id not in self.brokers:
                raise CliError(f"Broker {broker_id} is not in the cluster")
            host, port = self.brokers[broker_id]
            c = self._conns[broker_id] = Connection(host, port, props=self._props)
        return c

    def partitions(
        self, topics: list[str] | None, failure: str | None = None
    ) -> dict[tuple[str, int], tuple[int, list[int]]]:
        """(topic, partition) -> (leader, replicas); topics None: every topic, internal ones too.
        ``failure`` begins the message of an error (Kafka's "Failed to describe N topics")."""
        out = {}
        found = self.metadata(topics).topics
        for t in found:
            if t.error_code:
                raise fail(failure or f"Failed to describe {len(found)} topics", t.error_code)
            for p in t.partitions:
                out[(t.name, p.partition_index)] = (p.leader_id, list(p.replica_nodes))
        return out

    def coordinator(self, transactional_id: str) -> tuple[int, int]:
        """(error code, broker id) of the id's transaction coordinator."""
        from kio.schema.find_coordinator.v4 import request as fq

        resp = self._bootstrap.request(
            fq.FindCoordinatorRequest(key_type=1, coordinator_keys=(transactional_id,))
        )
        (c,) = resp.coordinators
        if not c.error_code:
            self.brokers.setdefault(c.node_id, (c.host, c.port))
        return c.error_code, c.node_id

    def describe_producers(
        self, tps: list[tuple[str, int]], broker_id: int | None, failure: str | None = None
    ) -> dict[tuple[str, int], list[Any]]:
        """Active producers per partition, asked of each partition's leader (or ``broker_id``).
        ``failure`` begins the message of an error (by default Kafka's describe-producers one:
        "Failed to describe producers for partition T-P on leader")."""
        from kio.schema.describe_producers.v0 import request as dq

        where = "leader" if broker_id is None else f"broker {broker_id}"

        def failed(topic: str, partition: int) -> str:
            return (
                failure
                or f"Failed to describe producers for partition {topic}-{partition} on {where}"
            )

        by_broker: dict[int, dict[str, list[int]]] = {}
        tp0 = tps[0] if tps else ("", 0)
        leaders = self.partitions(sorted({t for t, _ in tps}), failed(*tp0))
        for tp in tps:
            if tp not in leaders:
                raise fail(failed(*tp), ErrorCode.unknown_topic_or_partition)
            node = leaders[tp][0] if broker_id is None else broker_id
            by_broker.setdefault(node, {}).setdefault(tp[0], []).append(tp[1])
        out: dict[tuple[str, int], list[Any]] = {}
        for node, topics in by_broker.items():
            resp = self.conn(node).request(
                dq.DescribeProducersRequest(
                    topics=tuple(
                        dq.TopicRequest(name=t, partition_indexes=tuple(ps))
                        for t, ps in topics.items()
                    )
                )
            )
            for t in resp.topics:
                for p in t.partitions:
                    if p.error_code:
                        raise fail(failed(t.name, p.partition_index), p.error_code)
                    out[(t.name, p.partition_index)] = list(p.active_producers)
        return out

    def list_transactions(
        self, producer_ids: set[int] | None = None, duration_ms: int = -1
    ) -> dict[int, list[Any]]:
        """ListTransactions of every broker, by broker id."""
        from kio.schema.list_transactions.v1 import request as lq

        request = lq.ListTransactionsRequest(
            state_filters=(),
            producer_id_filters=tuple(sorted(producer_ids or ())),
            duration_filter=duration_ms,
        )
        out = {}
        deadline = time.monotonic() + API_TIMEOUT_S
        for node in sorted(self.brokers):
            resp = self.conn(node).request(request)
            # a coordinator still loading is asked again, as Kafka's Admin client does
            while resp.error_code == ErrorCode.coordinator_load_in_progress:
                if time.monotonic() >= deadline:
                    break
                time.sleep(RETRY_BACKOFF_S)
                resp = self.conn(node).request(request)
            if resp.error_code:
                raise fail("Failed to list transactions", resp.error_code)
            out[node] = list(resp.transaction_states)
        return out

    def describe_transaction(
        self, transactional_id: str, timeout_s: float = API_TIMEOUT_S
    ) -> tuple[int, dict[str, Any]]:
        """(coordinator id, description). While the coordinator is loading, moving or not yet
        there, asks again until ``timeout_s`` (as Kafka's Admin client does); raises
        TransactionalIdNotFound, or a CliError naming another error."""
        deadline = time.monotonic() + timeout_s
        while True:
            code, node = self.coordinator(transactional_id)
            if not code:
                state = describe_transactions(self.conn(node), [transactional_id])[0]
                code = state["error_code"]
                if not code:
                    return node, state
            if code == ErrorCode.transactional_id_not_found:
                raise TransactionalIdNotFound(
                    f"Failed to describe transaction state of transactional-id "
                    f"`{transactional_id}`: DescribeTransactions request for transactionalId "
                    f"`{transactional_id}` failed because the ID could not be found.{DEBUG_HINT}"
                )
            if code not in RETRIABLE_COORDINATOR_ERRORS or time.monotonic() >= deadline:
                raise fail(
                    f"Failed to describe transaction state of transactional-id "
                    f"`{transactional_id}`",
                    code,
                )
            time.sleep(RETRY_BACKOFF_S)


def describe_transactions(conn: Connection, ids: list[str]) -> list[dict[str, Any]]:
    """DescribeTransactions v0 of ``ids`` on one broker."""
    from kio.schema.describe_transactions.v0 import request as dq

    frame, pos = conn.request_raw(dq.DescribeTransactionsRequest(transactional_ids=tuple(ids)))
    return decode_describe_transactions(frame, pos)


def decode_describe_transactions(frame: bytes, pos: int) -> list[dict[str, Any]]:
    """A DescribeTransactions v0 response body, decoded by hand: kio cannot read the -1 start
    time an id without a transaction reports."""
    buf = memoryview(frame)

    def compact_string(pos: int) -> tuple[str, int]:
        n, pos = read_uvarint(buf, pos)
        return bytes(buf[pos : pos + n - 1]).decode(), pos + n - 1

    pos += 4  # throttle time
    count, pos = read_uvarint(buf, pos)
    out = []
    for _ in range(count - 1):
        (error,) = struct.unpack_from(">h", buf, pos)
        txn_id, pos = compact_string(pos + 2)
        state, pos = compact_string(pos)
        timeout, start, pid, epoch = struct.unpack_from(">iqqh", buf, pos)
        pos += 22
        topics, pos = read_uvarint(buf, pos)
        partitions = []
        for _ in range(topics - 1):
            topic, pos = compact_string(pos)
            n, pos = read_uvarint(buf, pos)
            partitions += [(topic, i) for i in struct.unpack_from(f">{n - 1}i", buf, pos)]
            pos = skip_tagged_fields(buf, pos + 4 * (n - 1))
        pos = skip_tagged_fields(buf, pos)
        out.append(
            {
                "error_code": error,
                "transactional_id": txn_id,
                "state": state,
                "timeout_ms": timeout,
                "start_ms": start,
                "producer_id": pid,
                "producer_epoch": epoch,
                "partitions": partitions,
            }
        )
    return out
