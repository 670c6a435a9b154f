"""Documentation strings of topic-level and group configs, returned by DescribeConfigs v3+ when the
client asks for documentation (include_documentation) and shown in the docs' configuration
reference. Written for kafkapy; meanings follow Kafka's."""

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
    "errors.deadletterqueue.group.enable": "Whether share groups may write records they give "
    "up on to their dead-letter topic. Accepted, not applied: kafkapy has no share groups.",
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
    "max.decompressed.message.bytes": "The largest size a batch may decompress to. Accepted, "
    "not applied: kafkapy does not bound batches by their decompressed size.",
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
    "remote.copy.lag.bytes": "With tiered storage, how many bytes a partition may lag behind "
    "in copying to remote storage. kafkapy has no tiered storage.",
    "remote.copy.lag.ms": "With tiered storage, how long a segment may wait to be copied to "
    "remote storage. kafkapy has no tiered storage.",
    "remote.log.copy.disable": "With tiered storage, stop copying segments to remote "
    "storage. Stored, not applied: kafkapy has no tiered storage.",
    "remote.log.delete.on.disable": "With tiered storage, delete remote data when it is "
    "disabled. Stored, not applied: kafkapy has no tiered storage.",
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

_NO_SHARE = " Stored, not applied: kafkapy computes share assignments at once."
_NO_STREAMS = " Stored, not applied: kafkapy has no streams groups."
GROUP_CONFIG_DOCS: dict[str, str] = {
    "consumer.session.timeout.ms": "How long a consumer group member may go without a "
    "heartbeat before it is removed from the group; within the broker's "
    "group.consumer.min/max.session.timeout.ms.",
    "consumer.heartbeat.interval.ms": "How often the group's members are told to heartbeat; "
    "within the broker's group.consumer.min/max.heartbeat.interval.ms.",
    "consumer.assignment.interval.ms": "The least time between two assignment computations of "
    "the group. Stored, not applied: kafkapy computes assignments at once.",
    "errors.deadletterqueue.copy.record.enable": "Whether records sent to the dead-letter topic "
    "carry the original record. Stored, not applied: kafkapy has no dead-letter queue.",
    "errors.deadletterqueue.topic.name": "The group's dead-letter topic (not starting with "
    "'__'). Stored, not applied: kafkapy has no dead-letter queue.",
    "share.assignment.interval.ms": "The least time between two assignments of a share group."
    + _NO_SHARE,
    "share.auto.offset.reset": "Where a share group starts reading a partition without a "
    "position: latest, earliest, or by_duration:<ISO-8601 duration>.",
    "share.delivery.count.limit": "How often a record is delivered before it is given up on.",
    "share.heartbeat.interval.ms": "How often share group members heartbeat.",
    "share.isolation.level": "Whether share consumers read uncommitted transactional records.",
    "share.partition.max.record.locks": "How many records of a partition may be acquired at "
    "once.",
    "share.record.lock.duration.ms": "How long a share consumer holds an acquired record.",
    "share.renew.acknowledge.enable": "Whether share consumers may renew a record's lock. "
    "Stored, not applied: kafkapy always accepts RENEW acknowledgements.",
    "share.session.timeout.ms": "How long a share group member may go without a heartbeat.",
    "streams.assignment.interval.ms": "The least time between two task assignments of a "
    "streams group." + _NO_STREAMS,
    "streams.assignor.name": "The task assignor of the streams group (one the broker "
    "registers in group.streams.assignors)." + _NO_STREAMS,
    "streams.heartbeat.interval.ms": "How often streams group members heartbeat." + _NO_STREAMS,
    "streams.initial.rebalance.delay.ms": "How long a new streams group waits for members "
    "before its first assignment." + _NO_STREAMS,
    "streams.num.standby.replicas": "How many standby replicas of each task are assigned."
    + _NO_STREAMS,
    "streams.rack.aware.assignment.tags": "The client tags rack-aware task assignment spreads "
    "standbys across." + _NO_STREAMS,
    "streams.session.timeout.ms": "How long a streams group member may go without a heartbeat."
    + _NO_STREAMS,
}
