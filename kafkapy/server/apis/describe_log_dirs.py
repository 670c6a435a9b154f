"""DescribeLogDirs (key 35), versions 1-5.

One result per log directory of this broker (in log.dirs order), named by its absolute path. A
null topic list asks for every local partition; otherwise only the listed partitions are reported.
As Kafka does, a topic with a log in a directory appears there even when none of its partitions
was asked for (its partition list is then empty). Each partition reports the size of its
segments, its offset lag (the high watermark minus the log end offset, floored at 0: always 0
for a current log) and is_future_key false (there is no AlterReplicaLogDirs, so no future logs).
v3+ adds the top-level error code (NONE); v4+ the total and usable bytes of the directory's
volume (os.statvfs: blocks and blocks available to unprivileged users, times the fragment
size); v5+ is_cordoned, always false (kafkapy has no cordoned log directories, KIP-1066). A
directory that cannot be read gets KAFKA_STORAGE_ERROR and no topics.

Authorization: DESCRIBE on the cluster (else no log dirs, and CLUSTER_AUTHORIZATION_FAILED from
v3).
"""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Any

from kafkapy.protocol.errors import ErrorCode

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import DESCRIBE, authorize_cluster


def volume_bytes(path: str) -> tuple[int, int]:
    """(total, usable) bytes of the file system holding ``path``."""
    st = os.statvfs(path)
    return st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize


def _wanted(request) -> set[tuple[str, int]] | None:
    if request.topics is None:
        return None
    return {(t.topic, p) for t in request.topics for p in t.partitions}


@api("DescribeLogDirs")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    if not authorize_cluster(ctx, DESCRIBE):  # v1-2 have no field for it: no log dirs at all
        return build(R.DescribeLogDirsResponse, throttle_time=THROTTLE_NONE,
                     error_code=ErrorCode.cluster_authorization_failed, results=())
    logs = ctx.broker.logs
    wanted = _wanted(request)
    by_dir: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for plog in logs.all_logs():
        d = os.path.abspath(plog.directory.parent)
        by_dir[d][plog.topic].append(plog)
    results = []
    for log_dir in logs.log_dirs:
        path = os.path.abspath(log_dir)
        try:
            total, usable = volume_bytes(path)
        except OSError:
            results.append(
                build(
                    R.DescribeLogDirsResult,
                    error_code=ErrorCode.kafka_storage_error,
                    log_dir=path,
                    topics=(),
                )
            )
            continue
        topics = []
        for name, plogs in sorted(by_dir.get(path, {}).items()):
            parts = tuple(
                build(
                    R.DescribeLogDirsPartition,
                    partition_index=plog.partition,
                    partition_size=plog.size_in_bytes(),
                    offset_lag=max(plog.high_watermark - plog.log_end_offset, 0),
                    is_future_key=False,
                )
                for plog in sorted(plogs, key=lambda pl: pl.partition)
                if wanted is None or (name, plog.partition) in wanted
            )
            topics.append(build(R.DescribeLogDirsTopic, name=name, partitions=parts))
        results.append(
            build(
                R.DescribeLogDirsResult,
                error_code=ErrorCode.none,
                log_dir=path,
                topics=tuple(topics),
                total_bytes=total,
                usable_bytes=usable,
            )
        )
    return build(
        R.DescribeLogDirsResponse,
        throttle_time=THROTTLE_NONE,
        error_code=ErrorCode.none,
        results=tuple(results),
    )
