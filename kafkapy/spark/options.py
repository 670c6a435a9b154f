"""Options of the "kafkapy" Spark data source, named and interpreted as Spark's kafka source.

Reader options (same names and defaults as spark-sql-kafka-0-10):

- kafka.bootstrap.servers: required.
- subscribe / subscribePattern / assign: exactly one: "t1,t2" / a regex / {"t1":[0,1]}.
- startingOffsets: "earliest", "latest" (streaming only) or {"t":{"0":23,"1":-2}} (-2 earliest,
  -1 latest); default "earliest" for batch, "latest" for streaming.
- endingOffsets: batch only: "latest" (default) or JSON (-1 latest).
- startingTimestamp / startingOffsetsByTimestamp: ms since the epoch for every partition, or
  {"t":{"0":1700000000000}}; they take precedence over startingOffsets.
- endingTimestamp / endingOffsetsByTimestamp: the same for the end of a batch read.
- startingOffsetsByTimestampStrategy: "error" (default: fail when no offset has such a
  timestamp) or "latest".
- maxOffsetsPerTrigger: streaming: at most this many records per micro-batch.
- failOnDataLoss: "true" (default) fails when offsets to read were deleted; "false" skips ahead.
- includeHeaders: "false" (default); "true" adds the headers column.
- kafkaConsumer.pollTimeoutMs: an executor gives up on a range after this long without
  progress (default 120000).
- kafka.*: passed to the librdkafka consumer (kafka.isolation.level, kafka.client.id, ...).

The driver's metadata calls (partitions, offsets) wait at most kafka.default.api.timeout.ms
(60000, the Java consumer's name for that bound).

Writer options: kafka.bootstrap.servers, topic (when the rows have no topic column), kafka.*
for the idempotent librdkafka producer.

Errors are ValueError naming the option at fault.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

EARLIEST = -2
LATEST = -1

# Options Spark's kafka source knows, which this source does not implement (refused, named).
UNSUPPORTED = ("minOffsetsPerTrigger", "maxTriggerDelay", "minPartitions",
               "maxRecordsPerPartition", "fetchOffset.numRetries", "fetchOffset.retryIntervalMs",
               "endingOffsetsByTimestampStrategy")
# kafka.* settings Spark refuses because the source manages them itself.
REFUSED_KAFKA = {
    "auto.offset.reset": "set the source option 'startingOffsets' instead",
    "key.deserializer": "keys are always read as bytes",
    "value.deserializer": "values are always read as bytes",
    "key.serializer": "keys are always written as bytes",
    "value.serializer": "values are always written as bytes",
    "enable.auto.commit": "offsets are kept in Spark's checkpoint, not committed to Kafka",
    "interceptor.classes": "interceptors are not supported",
}
# Java client settings that have no librdkafka counterpart and no effect on this source.
JAVA_ONLY = {"default.api.timeout.ms", "max.poll.records", "key.deserializer.encoding",
             "value.deserializer.encoding", "retry.backoff.max.ms", "connections.max.idle.ms"}

OffsetSpec = dict[str, dict[int, int]]  # topic -> partition -> offset (or EARLIEST/LATEST)


def _bool(opts: Mapping[str, str], name: str, default: bool) -> bool:
    raw = opts.get(name)
    if raw is None:
        return default
    v = str(raw).strip().lower()
    if v in ("true", "false"):
        return v == "true"
    raise ValueError(f"option '{name}' must be 'true' or 'false', got {raw!r}")


def _int(opts: Mapping[str, str], name: str, default: int | None, minimum: int = 0) -> int | None:
    raw = opts.get(name)
    if raw is None:
        return default
    try:
        v = int(str(raw).strip())
    except ValueError:
        raise ValueError(f"option '{name}' must be an integer, got {raw!r}") from None
    if v < minimum:
        raise ValueError(f"option '{name}' must be >= {minimum}, got {v}")
    return v


def parse_partition_json(name: str, raw: str, *, allow: tuple[int, ...] = ()) -> OffsetSpec:
    """{"topic":{"0":23,"1":-1}} -> {"topic": {0: 23, 1: -1}}; negative values only from allow."""
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ValueError(f"option '{name}' is not valid JSON ({e.msg}): {raw!r}") from None
    if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
        raise ValueError(f"option '{name}' must look like {{\"topic\":{{\"0\":23}}}}, got {raw!r}")
    out: OffsetSpec = {}
    for topic, parts in doc.items():
        out[topic] = {}
        for p, off in parts.items():
            try:
                pi = int(p)
            except ValueError:
                raise ValueError(f"option '{name}': partition {p!r} of topic {topic!r} is not "
                                 "a number") from None
            if not isinstance(off, int) or isinstance(off, bool) or (off < 0 and off not in allow):
                raise ValueError(f"option '{name}': bad offset {off!r} for {topic}-{pi}")
            out[topic][pi] = off
    return out


def parse_assign(raw: str) -> dict[str, list[int]]:
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ValueError(f"option 'assign' is not valid JSON ({e.msg}): {raw!r}") from None
    if (not isinstance(doc, dict) or not doc
            or not all(isinstance(v, list) and all(isinstance(p, int) and p >= 0 for p in v)
                       for v in doc.values())):
        raise ValueError("option 'assign' must look like {\"topicA\":[0,1],\"topicB\":[2,4]}, "
                         f"got {raw!r}")
    return {t: sorted(set(ps)) for t, ps in doc.items()}


@dataclass(frozen=True)
class Bound:
    """Where to start or end: 'earliest', 'latest', per-partition offsets, or timestamps."""

    kind: str  # "earliest" | "latest" | "offsets" | "timestamp" | "timestamps"
    offsets: OffsetSpec = field(default_factory=dict)
    timestamp: int | None = None


def _bound(opts: Mapping[str, str], prefix: str, default: str, *, streaming: bool) -> Bound:
    ts_name, by_ts_name, off_name = (f"{prefix}Timestamp", f"{prefix}OffsetsByTimestamp",
                                     f"{prefix}Offsets")
    if opts.get(ts_name) is not None:  # precedence as in Spark: timestamp, by-timestamp, offsets
        return Bound("timestamp", timestamp=_int(opts, ts_name, None))
    if opts.get(by_ts_name) is not None:
        return Bound("timestamps", offsets=parse_partition_json(by_ts_name, opts[by_ts_name]))
    raw = str(opts.get(off_name, default)).strip()
    low = raw.lower()
    if low in ("earliest", "latest"):
        if prefix == "starting" and low == "latest" and not streaming:
            raise ValueError("option 'startingOffsets' cannot be 'latest' for a batch query")
        if prefix == "ending" and low == "earliest":
            raise ValueError("option 'endingOffsets' cannot be 'earliest'")
        return Bound(low)
    allow = (EARLIEST, LATEST) if prefix == "starting" else (LATEST,)
    spec = parse_partition_json(off_name, raw, allow=allow)
    if prefix == "starting" and not streaming and any(
            o == LATEST for ps in spec.values() for o in ps.values()):
        raise ValueError("option 'startingOffsets' cannot use -1 (latest) for a batch query")
    return Bound("offsets", offsets=spec)


@dataclass(frozen=True)
class SourceOptions:
    bootstrap: str
    subscribe: tuple[str, ...] = ()
    pattern: str | None = None
    assign: dict[str, list[int]] | None = None
    starting: Bound = Bound("latest")
    ending: Bound = Bound("latest")
    by_timestamp_strategy: str = "error"
    max_offsets_per_trigger: int | None = None
    fail_on_data_loss: bool = True
    include_headers: bool = False
    poll_timeout_ms: int = 120_000
    api_timeout_ms: int = 60_000
    kafka_conf: dict[str, str] = field(default_factory=dict)

    def topics_filter(self) -> str:
        if self.subscribe:
            return f"subscribe={','.join(self.subscribe)}"
        if self.pattern is not None:
            return f"subscribePattern={self.pattern}"
        return f"assign={json.dumps(self.assign)}"


def kafka_conf(opts: Mapping[str, str], *, role: str) -> dict[str, str]:
    """The kafka.* options minus the prefix, for librdkafka; refused ones raise ValueError."""
    conf: dict[str, str] = {}
    for k, v in opts.items():
        if not k.lower().startswith("kafka."):
            continue
        key = k[len("kafka."):]
        if key in REFUSED_KAFKA:
            raise ValueError(f"option '{k}' is not supported: {REFUSED_KAFKA[key]}")
        if key in JAVA_ONLY or key == "bootstrap.servers":
            continue
        if role == "producer" and key == "group.id":
            continue
        conf[key] = str(v)
    return conf


def source_options(opts: Mapping[str, Any], *, streaming: bool) -> SourceOptions:
    opts = {str(k): str(v) for k, v in opts.items() if v is not None}
    # option names are case-insensitive in Spark; find them under their canonical spelling
    canon = ["subscribe", "subscribePattern", "assign", "startingOffsets", "endingOffsets",
             "startingTimestamp", "endingTimestamp", "startingOffsetsByTimestamp",
             "endingOffsetsByTimestamp", "startingOffsetsByTimestampStrategy",
             "maxOffsetsPerTrigger", "failOnDataLoss", "includeHeaders",
             "kafkaConsumer.pollTimeoutMs", *UNSUPPORTED]
    lower = {c.lower(): c for c in canon}
    norm: dict[str, str] = {}
    for k, v in opts.items():
        norm[lower.get(k.lower(), k)] = v
    for name in UNSUPPORTED:
        if name in norm:
            raise ValueError(f"option '{name}' is not supported by the kafkapy source")
    bootstrap = next((v for k, v in norm.items() if k.lower() == "kafka.bootstrap.servers"), None)
    if not bootstrap:
        raise ValueError("option 'kafka.bootstrap.servers' must be specified")
    chosen = [n for n in ("subscribe", "subscribePattern", "assign") if n in norm]
    if len(chosen) != 1:
        raise ValueError("exactly one of the options 'subscribe', 'subscribePattern', 'assign' "
                         f"must be specified, got {chosen or 'none'}")
    subscribe: tuple[str, ...] = ()
    pattern = assign = None
    if chosen[0] == "subscribe":
        subscribe = tuple(t.strip() for t in norm["subscribe"].split(",") if t.strip())
        if not subscribe:
            raise ValueError("option 'subscribe' must name at least one topic")
    elif chosen[0] == "subscribePattern":
        pattern = norm["subscribePattern"]
        try:
            re.compile(pattern)
        except re.error as e:
            raise ValueError(f"option 'subscribePattern' is not a valid regex: {e}") from None
    else:
        assign = parse_assign(norm["assign"])
    if streaming:
        for name in ("endingOffsets", "endingTimestamp", "endingOffsetsByTimestamp"):
            if name in norm:
                raise ValueError(f"option '{name}' is for batch queries only")
    strategy = norm.get("startingOffsetsByTimestampStrategy", "error").strip().lower()
    if strategy not in ("error", "latest"):
        raise ValueError("option 'startingOffsetsByTimestampStrategy' must be 'error' or "
                         f"'latest', got {strategy!r}")
    conf = kafka_conf(norm, role="consumer")
    api_timeout = _int({k.lower(): v for k, v in norm.items()},
                       "kafka.default.api.timeout.ms", 60_000, minimum=1)
    return SourceOptions(
        bootstrap=bootstrap,
        subscribe=subscribe,
        pattern=pattern,
        assign=assign,
        starting=_bound(norm, "starting", "latest" if streaming else "earliest",
                        streaming=streaming),
        ending=Bound("latest") if streaming else _bound(norm, "ending", "latest",
                                                         streaming=False),
        by_timestamp_strategy=strategy,
        max_offsets_per_trigger=_int(norm, "maxOffsetsPerTrigger", None, minimum=1),
        fail_on_data_loss=_bool(norm, "failOnDataLoss", True),
        include_headers=_bool(norm, "includeHeaders", False),
        poll_timeout_ms=_int(norm, "kafkaConsumer.pollTimeoutMs", 120_000, minimum=1) or 120_000,
        api_timeout_ms=api_timeout or 60_000,
        kafka_conf=conf,
    )
