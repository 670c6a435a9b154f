"""Produce (key 0), versions 3-12 served (0-12 advertised, as Kafka 4.0 does).

Each partition's records are validated and appended by the partition log: magic 2, CRC32C,
lengths, record count, message.max.bytes (CORRUPT_MESSAGE, MESSAGE_TOO_LARGE, INVALID_RECORD),
idempotent-producer sequences (a retried duplicate gets its original offset; gaps
OUT_OF_ORDER_SEQUENCE_NUMBER; stale epochs INVALID_PRODUCER_EPOCH). Offsets are assigned by
rewriting the batch header in place. A partition's data must be exactly one batch (else
INVALID_RECORD). acks must be -1, 0 or 1 (else INVALID_REQUIRED_ACKS for every partition).
A missing topic is UNKNOWN_TOPIC_OR_PARTITION: Produce never creates topics. acks=0
sends no response; if such a request fails, the connection is closed so the client notices, as
Kafka does. With one replica per partition, acks=all is satisfied on append.
"""

from __future__ import annotations

import datetime
import logging

from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.record_batch import RecordBatchError
from kafkapy.protocol.wire import INT32
from kafkapy.storage.errors import StorageError

from ..connection import CloseConnection
from ..registry import api
from ..responses import NO_RESPONSE, THROTTLE_NONE, build

log = logging.getLogger("kafkapy.produce")

VALID_ACKS = (-1, 0, 1)
ONE_BATCH_ONLY = "Produce requests with version 3 and above must contain exactly one record batch"


def _append(broker, topic: str, partition: int, records, now_ms: int):
    """Append one partition's records; return (error, base_offset, append_time, log_start, msg)."""
    info = broker.topics.get(topic)
    if info is None or partition not in info.partitions:
        return ErrorCode.unknown_topic_or_partition, -1, -1, -1, None
    plog = broker.topics.log(topic, partition)
    if plog is None:
        return ErrorCode.not_leader_or_follower, -1, -1, -1, None
    if not records:
        return ErrorCode.corrupt_message, -1, -1, -1, "produce request without records"
    if len(records) >= 12 and INT32.unpack_from(records, 8)[0] + 12 < len(records):
        return ErrorCode.invalid_record, -1, -1, -1, ONE_BATCH_ONLY
    state = info.states.get(partition)
    epoch = state.leader_epoch if state else 0
    try:
        res = plog.append_as_leader(records, leader_epoch=epoch, now_ms=now_ms)
    except (RecordBatchError, StorageError) as e:
        return ErrorCode(e.error_code), -1, -1, plog.log_start_offset, str(e) or None
    return ErrorCode.none, res.base_offset, res.log_append_time_ms, res.log_start_offset, None


@api("Produce")
async def handle(ctx, request):
    from ..broker import now_ms

    broker = ctx.broker
    R = ctx.R
    acks = request.acks
    now = now_ms()
    failed = False
    appended = False
    topics = []
    for td in request.topic_data:
        parts = []
        for pd in td.partition_data:
            if acks not in VALID_ACKS:
                err, base, append_time, start, msg = (
                    ErrorCode.invalid_required_acks,
                    -1,
                    -1,
                    -1,
                    None,
                )
            else:
                err, base, append_time, start, msg = _append(
                    broker, td.name, pd.index, pd.records, now
                )
            if err != ErrorCode.none:
                failed = True
            else:
                appended = True
            parts.append(
                build(
                    R.PartitionProduceResponse,
                    index=pd.index,
                    error_code=err,
                    base_offset=base,
                    log_append_time=(
                        None
                        if append_time < 0
                        else datetime.datetime.fromtimestamp(append_time / 1000, datetime.UTC)
                    ),
                    log_start_offset=start,
                    record_errors=(),
                    error_message=msg,
                )
            )
        topics.append(build(R.TopicProduceResponse, name=td.name, partition_responses=tuple(parts)))
    if appended:
        broker.appended.notify()
    if acks == 0:
        if failed:
            raise CloseConnection("acks=0 produce request failed")
        return NO_RESPONSE
    return build(R.ProduceResponse, responses=tuple(topics), throttle_time=THROTTLE_NONE)
