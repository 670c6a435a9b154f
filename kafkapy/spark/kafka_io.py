"""Kafka I/O for the Spark data source, with confluent-kafka (librdkafka): no JVM connector.

Driver side, `OffsetReader` finds the partitions a query covers and resolves offsets (earliest,
latest, by timestamp) with ListOffsets; it never joins a group. Executor side, `read_range`
assigns one partition at an explicit offset and returns records [start, end) as Arrow record
batches in Spark's kafka schema. Offsets are `{topic: {partition: offset}}` everywhere.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator

import pyarrow as pa

from kafkapy.spark.options import EARLIEST, LATEST, Bound, SourceOptions
from kafkapy.spark.schema import arrow_schema

TP = tuple[str, int]
Offsets = dict[TP, int]

# Spark's timestampType: 0 CreateTime, 1 LogAppendTime (librdkafka: 1 and 2; 0 = none -> -1)
_TS_TYPE = {1: 0, 2: 1, 0: -1}


class KafkaSourceError(RuntimeError):
    """A failure talking to Kafka, with a message that says what to do about it."""


def to_json_offsets(offsets: Offsets) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (t, p), o in sorted(offsets.items()):
        out.setdefault(t, {})[str(p)] = o
    return out


def from_json_offsets(doc: dict) -> Offsets:
    return {(t, int(p)): int(o) for t, ps in doc.items() for p, o in ps.items()}


def consumer_conf(opts: SourceOptions) -> dict:
    conf = {
        "bootstrap.servers": opts.bootstrap,
        # librdkafka's Python binding insists on a group id; this one is never joined or
        # committed to: partitions are assigned explicitly and offsets live in Spark.
        "group.id": f"spark-kafkapy-{uuid.uuid4().hex[:12]}",
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "allow.auto.create.topics": False,
        # Spark's kafka source reads read_uncommitted unless told otherwise
        "isolation.level": "read_uncommitted",
        "socket.timeout.ms": min(opts.api_timeout_ms, 60_000),
        "log_level": 3,
    }
    conf.update(opts.kafka_conf)
    return conf


def new_consumer(opts: SourceOptions, **extra):
    from confluent_kafka import Consumer, KafkaException

    conf = consumer_conf(opts)
    conf.update(extra)
    try:
        return Consumer(conf)
    except (KafkaException, ValueError, TypeError) as e:
        bad = re.search(r'property:? "?([\w.]+)"?', str(e))
        name = f"'kafka.{bad.group(1)}'" if bad else "a kafka.* option"
        raise ValueError(f"kafkapy source: {name} is not accepted by the Kafka client: {e}") \
            from None


class OffsetReader:
    """Driver-side metadata and offsets. Not picklable state: create where it is used."""

    def __init__(self, opts: SourceOptions) -> None:
        self.opts = opts
        self._consumer = None

    @property
    def consumer(self):
        if self._consumer is None:
            self._consumer = new_consumer(self.opts)
        return self._consumer

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None

    def __getstate__(self):
        return {"opts": self.opts, "_consumer": None}

    @property
    def timeout(self) -> float:
        return self.opts.api_timeout_ms / 1000.0

    def _fail(self, what: str, err: object) -> KafkaSourceError:
        return KafkaSourceError(
            f"kafkapy source: {what} failed against kafka.bootstrap.servers="
            f"{self.opts.bootstrap} within kafka.default.api.timeout.ms="
            f"{self.opts.api_timeout_ms}: {err}")

    def _metadata(self, topic: str | None):
        from confluent_kafka import KafkaException

        try:
            return self.consumer.list_topics(topic, timeout=self.timeout)
        except KafkaException as e:
            raise self._fail("fetching metadata", e.args[0] if e.args else e) from None

    def partitions(self, *, missing_ok: bool) -> list[TP]:
        """The partitions the query covers now, sorted. Missing topics: [] or an error."""
        o = self.opts
        out: list[TP] = []
        if o.pattern is not None:
            md = self._metadata(None)
            rx = re.compile(o.pattern)
            for name, t in md.topics.items():
                if rx.fullmatch(name) and not name.startswith("__") and t.error is None:
                    out += [(name, p) for p in t.partitions]
            return sorted(out)
        wanted = list(o.subscribe) if o.subscribe else list(o.assign or {})
        for topic in wanted:
            t = self._metadata(topic).topics.get(topic)
            if t is None or t.error is not None or not t.partitions:
                if missing_ok and o.subscribe:
                    continue
                raise KafkaSourceError(f"kafkapy source: topic {topic!r} does not exist "
                                       f"({o.topics_filter()}); "
                                       f"{t.error if t is not None and t.error else ''}".rstrip())
            if o.assign is not None:
                for p in o.assign[topic]:
                    if p not in t.partitions:
                        raise KafkaSourceError(f"kafkapy source: partition {topic}-{p} of "
                                               "option 'assign' does not exist")
                    out.append((topic, p))
            else:
                out += [(topic, p) for p in t.partitions]
        return sorted(out)

    def watermarks(self, tps: list[TP]) -> dict[TP, tuple[int, int]]:
        """(log start offset, end offset) per partition; the end is the last stable offset
        under kafka.isolation.level=read_committed, the high watermark otherwise."""
        from confluent_kafka import KafkaException, TopicPartition

        out = {}
        for t, p in tps:
            try:
                lo, hi = self.consumer.get_watermark_offsets(
                    TopicPartition(t, p), timeout=self.timeout, cached=False)
            except KafkaException as e:
                raise self._fail(f"listing offsets of {t}-{p}", e.args[0]) from None
            out[(t, p)] = (lo, hi)
        return out

    def for_times(self, stamps: dict[TP, int]) -> dict[TP, int | None]:
        """Earliest offset whose timestamp is >= the given one, None where there is none."""
        from confluent_kafka import KafkaException, TopicPartition

        if not stamps:
            return {}
        try:
            res = self.consumer.offsets_for_times(
                [TopicPartition(t, p, ts) for (t, p), ts in stamps.items()],
                timeout=self.timeout)
        except KafkaException as e:
            raise self._fail("listing offsets by timestamp", e.args[0]) from None
        out: dict[TP, int | None] = {}
        for tp in res:
            if tp.error is not None:
                raise self._fail(f"listing offsets by timestamp of {tp.topic}-{tp.partition}",
                                 tp.error)
            out[(tp.topic, tp.partition)] = tp.offset if tp.offset >= 0 else None
        return out

    def resolve(self, bound: Bound, tps: list[TP], *, starting: bool,
                marks: dict[TP, tuple[int, int]] | None = None) -> Offsets:
        """Concrete offsets for `bound` on partitions `tps`."""
        name = "startingOffsets" if starting else "endingOffsets"
        marks = marks if marks is not None else self.watermarks(tps)
        if bound.kind == "earliest":
            return {tp: marks[tp][0] for tp in tps}
        if bound.kind == "latest":
            return {tp: marks[tp][1] for tp in tps}
        if bound.kind == "offsets":
            given = {(t, p): o for t, ps in bound.offsets.items() for p, o in ps.items()}
            if set(given) != set(tps):
                raise ValueError(
                    f"option '{name}' must give an offset for exactly the partitions the query "
                    f"reads: {sorted(tps)}; it gives {sorted(given)}")
            return {tp: (marks[tp][0] if o == EARLIEST else marks[tp][1] if o == LATEST else o)
                    for tp, o in given.items()}
        # timestamps
        prefix = "starting" if starting else "ending"
        if bound.kind == "timestamp":
            stamps = {tp: int(bound.timestamp or 0) for tp in tps}
            opt = f"{prefix}Timestamp"
        else:
            stamps = {(t, p): ts for t, ps in bound.offsets.items() for p, ts in ps.items()}
            opt = f"{prefix}OffsetsByTimestamp"
            if set(stamps) != set(tps):
                raise ValueError(
                    f"option '{opt}' must give a timestamp for exactly the partitions the query "
                    f"reads: {sorted(tps)}; it gives {sorted(stamps)}")
        found = self.for_times(stamps)
        out: Offsets = {}
        for tp in tps:
            off = found.get(tp)
            if off is None:
                if starting and self.opts.by_timestamp_strategy == "error":
                    raise KafkaSourceError(
                        f"kafkapy source: no offset in {tp[0]}-{tp[1]} has a timestamp >= "
                        f"{stamps[tp]} (option '{opt}'); set "
                        "startingOffsetsByTimestampStrategy=latest to start at the end instead")
                off = marks[tp][1]
            out[tp] = off
        return out

    def check_data_loss(self, start: Offsets, marks: dict[TP, tuple[int, int]],
                        what: str) -> Offsets:
        """Move starts that fall before the log start (deleted records) to the log start, or
        fail when failOnDataLoss is true. Also catches ends that went backwards."""
        fixed = dict(start)
        for tp, off in start.items():
            lo, hi = marks[tp]
            if off < lo or off > hi:
                msg = (f"kafkapy source: {what}: offsets [{off}, ...) of {tp[0]}-{tp[1]} are no "
                       f"longer available (the log now holds [{lo}, {hi})): records were deleted "
                       "or the topic was recreated, so data may have been lost. Set the source "
                       "option failOnDataLoss=false to skip ahead instead of failing.")
                if self.opts.fail_on_data_loss:
                    raise KafkaSourceError(msg)
                fixed[tp] = lo if off < lo else hi
        return fixed


def read_range(opts: SourceOptions, topic: str, partition: int, start: int, end: int,
               batch_size: int = 8192) -> Iterator[pa.RecordBatch]:
    """Records of topic-partition with start <= offset < end, as Arrow record batches."""
    from confluent_kafka import KafkaError, TopicPartition

    if end <= start:
        return
    schema = arrow_schema(opts.include_headers)
    consumer = new_consumer(
        opts,
        **{"enable.partition.eof": True,
           # out of range -> an error event (fail) or a reset to the log start (skip ahead)
           "auto.offset.reset": "error" if opts.fail_on_data_loss else "earliest",
           "fetch.wait.max.ms": 100})
    try:
        consumer.assign([TopicPartition(topic, partition, start)])
        cols: list[list] = [[] for _ in range(8 if opts.include_headers else 7)]
        pos = start
        last_progress = time.monotonic()
        timeout_s = opts.poll_timeout_ms / 1000.0
        done = False
        while not done:
            msgs = consumer.consume(num_messages=min(batch_size, max(end - pos, 1)), timeout=0.5)
            if not msgs:
                if time.monotonic() - last_progress > timeout_s:
                    raise KafkaSourceError(
                        f"kafkapy source: no records from {topic}-{partition} at offset {pos} "
                        f"(reading up to {end}) within kafkaConsumer.pollTimeoutMs="
                        f"{opts.poll_timeout_ms}")
                continue
            last_progress = time.monotonic()
            for m in msgs:
                err = m.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        if m.offset() >= end:
                            done = True
                            break
                        if _end_gone(consumer, topic, partition, end):
                            # the log ends before `end`: records vanished after planning
                            if opts.fail_on_data_loss:
                                raise KafkaSourceError(
                                    f"kafkapy source: {topic}-{partition} now ends at "
                                    f"{m.offset()}, before the planned end {end}: data may "
                                    "have been lost (failOnDataLoss=false skips ahead)")
                            done = True
                            break
                        continue
                    if err.code() in (KafkaError._AUTO_OFFSET_RESET,
                                      KafkaError.OFFSET_OUT_OF_RANGE):
                        raise KafkaSourceError(
                            f"kafkapy source: offset {pos} of {topic}-{partition} is out of "
                            f"range ({err.str()}): records were deleted, data may have been lost. "
                            "Set failOnDataLoss=false to skip ahead instead of failing.")
                    if err.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
                        raise KafkaSourceError(
                            f"kafkapy source: {topic}-{partition} disappeared while reading")
                    if not err.retriable() and err.fatal():
                        raise KafkaSourceError(f"kafkapy source: reading {topic}-{partition}: "
                                               f"{err.str()}")
                    continue
                off = m.offset()
                if off >= end:
                    done = True
                    break
                if off < pos:
                    continue
                pos = off + 1
                ts_type, ts = m.timestamp()
                cols[0].append(m.key())
                cols[1].append(m.value())
                cols[2].append(topic)
                cols[3].append(partition)
                cols[4].append(off)
                cols[5].append(ts * 1000 if ts_type else None)
                cols[6].append(_TS_TYPE.get(ts_type, -1))
                if opts.include_headers:
                    hs = m.headers()
                    cols[7].append([{"key": k, "value": v} for k, v in hs] if hs else [])
                if pos >= end:
                    done = True
                    break
            if len(cols[0]) >= batch_size or (done and cols[0]):
                yield _batch(schema, cols)
                cols = [[] for _ in cols]
        if cols[0]:
            yield _batch(schema, cols)
    finally:
        consumer.close()


def _end_gone(consumer, topic: str, partition: int, end: int) -> bool:
    from confluent_kafka import TopicPartition

    try:
        _lo, hi = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10,
                                                 cached=False)
    except Exception:
        return False
    return hi < end


def _batch(schema: pa.Schema, cols: list[list]) -> pa.RecordBatch:
    arrays = [pa.array(c, type=f.type) for c, f in zip(cols, schema, strict=True)]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
