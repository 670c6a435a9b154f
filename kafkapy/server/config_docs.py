"""Documentation strings of topic-level configs, returned by DescribeConfigs v3+ when the client
asks for documentation (include_documentation). Written for kafkapy; meanings follow Kafka's."""

from __future__ import annotations

TOPIC_CONFIG_DOCS: dict[str, str] = {
    "cleanup.policy": "How old log segments are handled: 'delete' removes them after the "
    "retention time or size is exceeded, 'compact' keeps the latest record per key; both may "
    "be listed.",
    "compression.type": "The codec batches are stored with: uncompressed, gzip, snappy, lz4, "
    "zstd, or 'producer' to keep the producer's codec.",
    "delete.retention.ms": "How long tombstones are kept in a compacted topic before they are "
    "removed, so consumers reading from the start see the deletion.",
    "file.delete.delay.ms": "How long a deleted segment's files remain on disk before removal.",
    "flush.messages": "Force an fsync of the log after this many records.",
    "flush.ms": "Force an fsync of the log after this many milliseconds.",
    "index.interval.bytes": "How many bytes of records lie between offset index entries.",
    "max.compaction.lag.ms": "The longest time a record may remain uncompacted.",
    "max.message.bytes": "The largest record batch size the topic accepts, in bytes.",
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
