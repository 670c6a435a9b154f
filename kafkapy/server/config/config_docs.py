"""Documentation strings of topic-level configs, returned by DescribeConfigs v3+ when the client
asks for documentation (include_documentation). Written for kafkapy; meanings follow Kafka's."""

from __future__ import annotations

TOPIC_CONFIG_DOCS: dict[str, str] = {
    "cleanup.policy": "How old log segments are handled: 'delete' removes them after the "
    "retention time or size is exceeded, 'compact' keeps the latest record per key; both may "
    "be listed.",
    "compression.type": "The codec batches are stored with: uncompressed, gzip, snappy, lz4, "
    "zstd, or 'producer' to keep the producer's codec.",
    "compression.gzip.level": "The gzip level for batches the broker compresses (1-9, or -1 "
    "for the codec's default). Accepted, not applied: kafkapy uses the default level.",
    "compression.lz4.level": "The LZ4 level for batches the broker compresses (1-17). "
    "Accepted, not applied: kafkapy uses the default level.",
    "compression.zstd.level": "The zstd level for batches the broker compresses. Accepted, "
    "not applied: kafkapy uses the default level.",
    "delete.retention.ms": "How long tombstones are kept in a compacted topic before they are "
    "removed, so consumers reading from the start see the deletion.",
    "file.delete.delay.ms": "How long a deleted segment's files remain on disk before removal.",
    "flush.messages": "Force an fsync of the log after this many records.",
    "flush.ms": "Force an fsync of the log after this many milliseconds.",
    "follower.replication.throttled.replicas": "Replicas (partition:broker, or '*') whose "
    "follower fetches are throttled. Accepted, not applied: kafkapy does not throttle "
    "replication.",
    "index.interval.bytes": "How many bytes of records lie between offset index entries.",
    "leader.replication.throttled.replicas": "Replicas (partition:broker, or '*') whose "
    "leader-side replication is throttled. Accepted, not applied: kafkapy does not throttle "
    "replication.",
    "local.retention.bytes": "With tiered storage, the local share of retention.bytes (-2: "
    "the same). Without tiered storage it has no effect.",
    "local.retention.ms": "With tiered storage, the local share of retention.ms (-2: the "
    "same). Without tiered storage it has no effect.",
    "max.compaction.lag.ms": "The longest time a record may remain uncompacted.",
    "max.message.bytes": "The largest record batch size the topic accepts, in bytes.",
    "message.downconversion.enable": "Whether old consumers may get records converted to an "
    "older message format. kafkapy serves Fetch v4 and later only, so nothing is converted.",
    "message.format.version": "Deprecated: the message format the broker writes. Ignored, as "
    "by Kafka 3.x brokers: batches are always written in format v2.",
    "message.timestamp.difference.max.ms": "Deprecated: the largest difference between a "
    "record's timestamp and the broker's clock; applies on the side whose "
    "message.timestamp.before.max.ms or message.timestamp.after.max.ms is left at its maximum.",
    "message.timestamp.after.max.ms": "How far in the future a record's timestamp may be "
    "relative to the broker's clock, for CreateTime topics.",
    "message.timestamp.before.max.ms": "How far in the past a record's timestamp may be "
    "relative to the broker's clock, for CreateTime topics.",
    "message.timestamp.type": "Whether record timestamps are the producer's (CreateTime) or "
    "the broker's append time (LogAppendTime).",
    "min.cleanable.dirty.ratio": "The ratio of uncompacted log to total log above which the "
    "cleaner compacts a partition.",
    "min.compaction.lag.ms": "The shortest time a record stays uncompacted.",
    "min.insync.replicas": "The fewest in-sync replicas that must acknowledge a write with "
    "acks=all for it to succeed.",
    "preallocate": "Whether segment files are preallocated on disk when created.",
    "remote.log.copy.disable": "With tiered storage, stop copying segments to remote "
    "storage. Only false is accepted (no tiered storage in ZooKeeper mode).",
    "remote.log.delete.on.disable": "With tiered storage, delete remote data when it is "
    "disabled. Only false is accepted (no tiered storage in ZooKeeper mode).",
    "remote.storage.enable": "Whether the topic uses tiered storage. Only false is accepted: "
    "tiered storage is not enabled on the broker.",
    "retention.bytes": "The largest size a partition may grow to before old segments are "
    "deleted; -1 for no limit.",
    "retention.ms": "How long records are kept before old segments are deleted; -1 for no "
    "limit.",
    "segment.bytes": "The size at which the active segment is closed and a new one started.",
    "segment.index.bytes": "The size of the offset index of a segment.",
    "segment.jitter.ms": "A random offset subtracted from segment.ms to spread segment rolls.",
    "segment.ms": "The time after which the active segment is rolled even if not full.",
    "unclean.leader.election.enable": "Whether a replica outside the ISR may become leader, at "
    "the risk of losing data.",
}
