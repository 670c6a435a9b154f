"""AlterReplicaLogDirs (key 34), versions 1-2: move partitions' replicas on this broker to
another of its log directories (KIP-113), as Apache Kafka 4.4's ReplicaManager.alterReplicaLogDirs
answers.

For each directory named (made absolute, as Kafka does) and each partition under it, in request
order:

* a path that is not one of ``log.dirs``: LOG_DIR_NOT_FOUND (checked first, as in Kafka);
  an offline one: KAFKA_STORAGE_ERROR;
* an unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION; a partition of which this broker
  holds no replica: REPLICA_NOT_AVAILABLE; a replica whose directory failed: KAFKA_STORAGE_ERROR;
* otherwise the log is moved (storage/log_move.py) and the partition answers NONE; already in
  that directory, nothing happens (NONE). As in Kafka, the log is copied into a "future" log in
  a worker thread while the partition keeps taking appends and serving fetches; then, on the
  event loop where appends happen (so no acknowledged record can be missed), what was written
  meanwhile is copied too and the future log swapped in. Kafka answers before the copy; kafkapy
  answers once the move is done, so DescribeLogDirs shows the partition in its new directory as
  soon as the answer is sent. A log the cleaner is compacting is swapped once the pass ends; a
  second move of a partition waits for the first.

Authorization: ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED on every partition).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import trio

from kafkapy.protocol.errors import ErrorCode
from kafkapy.storage.errors import KafkaStorageError
from kafkapy.storage.log import PartitionLog

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import ALTER, authorize_cluster

CLEANING_WAIT_S = 0.05


async def _move(ctx: RequestContext, topic: str, partition: int, dest: Path | None) -> ErrorCode:
    broker = ctx.broker
    logs = broker.logs
    if dest is None:
        return ErrorCode.log_dir_not_found
    if not logs.is_online(dest):
        return ErrorCode.kafka_storage_error
    info = broker.topics.get(topic)
    if info is None or partition not in info.partitions:
        return ErrorCode.unknown_topic_or_partition
    plog = logs.get_log(topic, partition)
    if plog is None:
        return ErrorCode.replica_not_available
    tp = (topic, partition)
    while tp in logs.moving:  # one move of a partition at a time
        await trio.sleep(CLEANING_WAIT_S)
    logs.moving.add(tp)
    try:
        return await _copy_and_swap(ctx, topic, partition, dest, plog)
    finally:
        logs.moving.discard(tp)


async def _copy_and_swap(
    ctx: RequestContext, topic: str, partition: int, dest: Path, plog: PartitionLog
) -> ErrorCode:
    logs = ctx.broker.logs
    if plog.offline:
        return ErrorCode.kafka_storage_error
    try:
        future = await trio.to_thread.run_sync(logs.copy_to_future, topic, partition, dest)
    except KafkaStorageError:
        return ErrorCode.kafka_storage_error
    if future is None:
        return ErrorCode.none  # there already
    while plog.cleaning:  # the cleaner holds this log's segments: swap after its pass
        await trio.sleep(CLEANING_WAIT_S)
    if plog.offline:  # its directory failed meanwhile
        shutil.rmtree(future.directory, ignore_errors=True)
        return ErrorCode.kafka_storage_error
    if logs.get_log(topic, partition) is not plog:  # deleted meanwhile
        shutil.rmtree(future.directory, ignore_errors=True)
        return ErrorCode.replica_not_available
    try:
        logs.finish_move(topic, partition, future)
    except KafkaStorageError:
        return ErrorCode.kafka_storage_error
    return ErrorCode.none


@api("AlterReplicaLogDirs")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    allowed = authorize_cluster(ctx, ALTER)
    log_dirs = {os.path.abspath(d): d for d in ctx.broker.logs.log_dirs}
    results: dict[str, list[Any]] = {}
    for entry in request.dirs:
        dest = log_dirs.get(os.path.abspath(entry.path))
        for t in entry.topics:
            for p in t.partitions:
                if allowed:
                    error = await _move(ctx, t.name, p, dest)
                else:
                    error = ErrorCode.cluster_authorization_failed
                results.setdefault(t.name, []).append(
                    build(R.AlterReplicaLogDirPartitionResult, partition_index=p, error_code=error)
                )
    return build(
        R.AlterReplicaLogDirsResponse,
        throttle_time=THROTTLE_NONE,
        results=tuple(
            build(R.AlterReplicaLogDirTopicResult, topic_name=name, partitions=tuple(parts))
            for name, parts in results.items()
        ),
    )
