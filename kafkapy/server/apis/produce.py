"""Produce (key 0), versions 3-13 served (0-13 advertised, as Kafka 4.4 does).

Each partition's records are validated and appended by the partition log: magic 2, CRC32C,
lengths, record count, message.max.bytes (CORRUPT_MESSAGE, MESSAGE_TOO_LARGE, INVALID_RECORD),
idempotent-producer sequences (a retried duplicate gets its original offset; gaps
OUT_OF_ORDER_SEQUENCE_NUMBER; stale epochs INVALID_PRODUCER_EPOCH). Offsets are assigned by
rewriting the batch header in place. A partition's data must be exactly one batch (else
INVALID_RECORD). acks must be -1, 0 or 1 (else INVALID_REQUIRED_ACKS for every partition).
A missing topic is UNKNOWN_TOPIC_OR_PARTITION: Produce never creates topics. From v13 topics are
named by id (KIP-516), resolved once per request; an unknown id is UNKNOWN_TOPIC_ID for each of its
partitions (before authorization, as Kafka's handler), and the response names topics by id. acks=0
sends no response; if such a request fails, the connection is closed so the client notices, as
Kafka does. Embedded (one broker): acks=all is satisfied on append.

The request is read by hand (protocol/produce_codec.py), not by kio: each partition's records
are a writable slice of the received frame, which the log validates, stamps and appends in
place (no copy of the record bytes in the broker); the response is written by hand too.
Each partition is written through the one leader write path (server/replication/partition.py: looked
up once, checked, appended, high watermark and waiters, flush when due, the wait for acks=all).

ZooKeeper mode (replicated): only the leader appends (else NOT_LEADER_OR_FOLLOWER). acks=all
is refused with NOT_ENOUGH_REPLICAS when the ISR is smaller than min.insync.replicas; after the
append it waits (on events) until the high watermark covers the batch — the whole ISR has it —
then answers, NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR shrank below min.insync.replicas
meanwhile, NOT_LEADER_OR_FOLLOWER if leadership moved, REQUEST_TIMED_OUT after the request's
timeout. acks=1 answers after the local append. flush.messages / flush.ms fsyncs run before the
answer, in a worker thread (server/log_manager/log_flusher.py); a storage error (full disk, failed
device) is KAFKA_STORAGE_ERROR for the partition, whose log directory goes offline.

Transactions: batches with the transactional bit need the request's transactional_id (else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition, as Kafka without an authorizer) and
one producer id (else INVALID_PRODUCER_ID_MAPPING). Before a producer's first transactional
write to a partition the coordinator is asked whether the partition is in the transaction
(KIP-890, server/coordinator/txn_verification.py; from v12, transactions version 2, it adds the
partition instead); a refused partition gets the mapped error and
nothing is appended to it. The log refuses a transactional write without that verification, and a
plain write while the producer's transaction is open, with INVALID_TXN_STATE.

Authorization (with an authorizer), as Kafka checks it first: a request with transactional
batches needs WRITE on its transactional id (else every partition gets
TRANSACTIONAL_ID_AUTHORIZATION_FAILED), and each topic WRITE (else TOPIC_AUTHORIZATION_FAILED,
whether or not the topic exists; its partitions are not verified with the coordinator).

Quotas (server/quota_enforcement.py): the request's size counts against the producer byte rate
and, unless acks=0, its handler time against the request quota; the response carries the throttle
time and the connection is muted for it (acks=0: muted only).
"""

from __future__ import annotations

import logging
from typing import Any

from kafkapy import clock
from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.produce_codec import (
    TOPIC_IDS_FROM,
    PartitionResponse,
    encode_produce_response,
    parse_produce_request,
)
from kafkapy.protocol.record_batch import (
    TRANSACTIONAL_BIT,
    CorruptRecordError,
    RecordBatchError,
    RecordTooLargeError,
)
from kafkapy.protocol.wire import INT32, DecodeError
from kafkapy.storage.errors import OutOfOrderSequenceError, StorageError

from ..coordinator.txn_verification import transactional_batch, verify_produce
from ..registry import api
from ..replication.partition import Partition, complete_writes
from ..request_context import CloseConnection, RequestContext
from ..responses import NO_RESPONSE, RawResponse
from ..security.authorization import TOPIC, WRITE, authorized_names, transactional_id_error

log = logging.getLogger("kafkapy.produce")

VALID_ACKS = (-1, 0, 1)
ONE_BATCH_ONLY = "Produce requests with version 3 and above must contain exactly one record batch"


INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
INTERNAL_APPEND = "Cannot append to internal topic "


def _append(broker, topic: str, partition: int, records, now_ms: int, acks: int = 1, guard=None):
    """Append one partition's records through the partition's write path
    (server/replication/partition.py); return (error, base_offset, append_time, log_start, msg,
    write mark or None)."""
    part = Partition.for_write(broker, topic, partition)
    if part is ErrorCode.unknown_topic_or_partition:
        return part, -1, -1, -1, None, None
    if topic in INTERNAL_TOPICS:  # as Kafka's ReplicaManager: clients never append to these
        return ErrorCode.invalid_topic_exception, -1, -1, -1, INTERNAL_APPEND + topic, None
    if isinstance(part, ErrorCode):
        return part, -1, -1, -1, None, None
    if acks == -1:
        refusal = part.min_isr_refusal()
        if refusal is not None:
            return ErrorCode.not_enough_replicas, -1, -1, -1, refusal, None
    if not records:
        return ErrorCode.corrupt_message, -1, -1, -1, "produce request without records", None
    if len(records) >= 12 and INT32.unpack_from(records, 8)[0] + 12 < len(records):
        return ErrorCode.invalid_record, -1, -1, -1, ONE_BATCH_ONLY, None
    try:
        res = part.append_records(records, now_ms, verification_guard=guard)
    except (RecordTooLargeError, CorruptRecordError) as e:
        # as Kafka's ReplicaManager: a batch over the size limit or corrupt (CRC) leaves no
        # append info (log start offset -1) and no custom error message
        return ErrorCode(e.error_code), -1, -1, -1, None, None
    except OutOfOrderSequenceError as e:  # Kafka sends no message with this error
        return ErrorCode(e.error_code), -1, -1, part.log.log_start_offset, None, None
    except RecordBatchError as e:  # Kafka sends a message only with record errors (KIP-467)
        return ErrorCode(e.error_code), -1, -1, part.log.log_start_offset, e.record_errors, None
    except StorageError as e:
        return ErrorCode(e.error_code), -1, -1, part.log.log_start_offset, str(e) or None, None
    return (
        ErrorCode.none,
        res.base_offset,
        res.log_append_time_ms,
        res.log_start_offset,
        None,
        part.mark(res.last_offset),
    )


def _resolve_topic_ids(broker, request) -> None:
    """v13+: name each request topic after its id; an unknown id leaves the name empty."""
    topics = broker.topics
    for td in request.topics:
        info = topics.get_by_id(td.topic_id)
        td.name = info.name if info is not None else ""


@api("Produce", raw=True)
async def handle(ctx: RequestContext, _request: Any) -> Any:
    try:
        request = parse_produce_request(ctx.frame, ctx.header.body_offset, ctx.version)
    except DecodeError as e:
        raise CloseConnection(f"produce request does not decode: {e}") from None
    broker = ctx.broker
    by_id = ctx.version >= TOPIC_IDS_FROM
    if by_id:
        _resolve_topic_ids(broker, request)
    acks = request.acks
    txn_batches = []
    for td in request.topics:
        for pd in td.partitions:
            r = pd.records
            if r is not None and len(r) > 22 and r[22] & TRANSACTIONAL_BIT and td.name:
                b = transactional_batch(td.name, pd.index, r)
                if b is not None:  # too short for a header: the append refuses it
                    txn_batches.append(b)
    guards: dict = {}
    refused: dict = {}
    if txn_batches:
        tid = request.transactional_id
        if tid is None or transactional_id_error(ctx, tid) is not None:
            return _error_response(ctx, request, ErrorCode.transactional_id_authorization_failed)
    allowed = None  # with an authorizer: the topics the request may write
    if broker.authorizer is not None:
        allowed = authorized_names(ctx, WRITE, TOPIC, (td.name for td in request.topics if td.name))
        txn_batches = [b for b in txn_batches if b.topic in allowed]
    if txn_batches:
        if len({(b.producer_id, b.producer_epoch) for b in txn_batches}) > 1:
            return _error_response(ctx, request, ErrorCode.invalid_producer_id_mapping)
        if acks in VALID_ACKS:
            guards, refused = await verify_produce(
                broker, request.transactional_id, txn_batches, ctx.version
            )
    now = clock.now_ms()
    failed = False
    results = []
    writes: list[Any] = []  # the write marks of the successful appends, in order
    for td in request.topics:
        for pd in td.partitions:
            if by_id and not td.name:
                res = (ErrorCode.unknown_topic_id, -1, -1, -1, None, None)
            elif allowed is not None and td.name not in allowed:
                res = (ErrorCode.topic_authorization_failed, -1, -1, -1, None, None)
            elif acks not in VALID_ACKS:
                res = (ErrorCode.invalid_required_acks, -1, -1, -1, None, None)
            elif refused and (td.name, pd.index) in refused:
                err, msg = refused[(td.name, pd.index)]
                res = (err, -1, -1, -1, msg, None)
            else:
                guard = guards.get((td.name, pd.index)) if guards else None
                res = _append(broker, td.name, pd.index, pd.records, now, acks, guard)
            if res[0] != ErrorCode.none:
                failed = True
            else:
                writes.append(res[5])
            results.append(res)
    # the records are in the log: the frame's request memory is free (Kafka releases a produce
    # request's buffer before it waits in purgatory), so acks=all waits hold none of it
    broker.request_memory.release(ctx.frame)
    late = {}
    if writes:  # flush when due; acks=all: one wait for the ISR over all the partitions
        done = await complete_writes(
            broker, writes, request.timeout_ms / 1000, acks_all=acks == -1, now=now
        )
        late = {
            (w.topic, w.partition): err
            for w, err in zip(writes, done, strict=True)
            if err != ErrorCode.none
        }
    it = iter(results)
    topics = []
    for td in request.topics:
        parts = []
        for pd in td.partitions:
            err, base, append_time, start, msg, _mark = next(it)
            if (td.name, pd.index) in late:
                err, msg = late[(td.name, pd.index)], None
                failed = True
            parts.append(PartitionResponse(pd.index, err, base, append_time, start, msg))
        topics.append((td.topic_id if by_id else td.name, parts))
    throttle = 0
    if broker.client_quotas.enabled:
        throttle = broker.client_quotas.produce_throttle(ctx, len(ctx.frame), acks)
    if acks == 0:
        if failed:
            raise CloseConnection("acks=0 produce request failed")
        return NO_RESPONSE
    return RawResponse([encode_produce_response(ctx.version, topics, throttle_ms=throttle)])


def _error_response(ctx, request, code: ErrorCode):
    """The same error for every partition (Kafka's getErrorResponse)."""
    by_id = ctx.version >= TOPIC_IDS_FROM
    topics = [
        (
            td.topic_id if by_id else td.name,
            [PartitionResponse(pd.index, code) for pd in td.partitions],
        )
        for td in request.topics
    ]
    if request.acks == 0:
        raise CloseConnection(f"acks=0 produce request failed: {code.name}")
    return RawResponse([encode_produce_response(ctx.version, topics)])
