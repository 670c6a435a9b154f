"""The "kafkapy" PySpark Python data source: Kafka topics without Spark's JVM kafka connector.

    from kafkapy.spark import register
    register(spark)
    df = (spark.readStream.format("kafkapy")
          .option("kafka.bootstrap.servers", "127.0.0.1:9092")
          .option("subscribe", "access-logs")
          .option("startingOffsets", "earliest")
          .load())

Same option names and output schema as Spark's kafka source (see options.py). Batch reads plan
one Spark input partition per Kafka partition's [start, end) range. Streaming reads use a
DataSourceStreamReader whose offsets are Spark's kafka offset JSON ({"topic":{"0":42}}): Spark
writes them to the checkpoint's offset log before a micro-batch runs, so a restarted query
re-reads exactly the ranges of unfinished batches and continues after finished ones. Records
are read on executors by assigning the partition at an explicit offset with confluent-kafka
(no consumer group, nothing committed to Kafka).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows
from pyspark.sql.types import StructType

try:  # Spark 4.2+
    from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow
except ImportError:  # pragma: no cover
    SupportsTriggerAvailableNow = object  # type: ignore[misc,assignment]

from kafkapy.spark.kafka_io import (
    KafkaSourceError,
    OffsetReader,
    Offsets,
    from_json_offsets,
    read_range,
    to_json_offsets,
)
from kafkapy.spark.options import SourceOptions, source_options
from kafkapy.spark.schema import kafka_schema

log = logging.getLogger("kafkapy.spark")


class KafkaRange(InputPartition):
    """One Spark input partition: records [start, end) of one Kafka partition."""

    def __init__(self, topic: str, partition: int, start: int, end: int) -> None:
        super().__init__((topic, partition, start, end))
        self.topic, self.partition, self.start, self.end = topic, partition, start, end

    def __repr__(self) -> str:
        return f"KafkaRange({self.topic}-{self.partition} [{self.start}, {self.end}))"


def _ranges(start: Offsets, end: Offsets) -> list[KafkaRange]:
    return [KafkaRange(t, p, start.get((t, p), 0), e)
            for (t, p), e in sorted(end.items()) if e > start.get((t, p), 0)]


class KafkaPyDataSource(DataSource):
    """format("kafkapy"): read (batch and streaming) and write Kafka topics."""

    @classmethod
    def name(cls) -> str:
        return "kafkapy"

    def schema(self) -> StructType:
        include = str(self.options.get("includeHeaders", "false")).strip().lower() == "true"
        return kafka_schema(include)

    def reader(self, schema: StructType) -> DataSourceReader:
        return KafkaBatchReader(source_options(self.options, streaming=False))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return KafkaStreamReader(source_options(self.options, streaming=True))

    def writer(self, schema: StructType, overwrite: bool):
        from kafkapy.spark.sink import KafkaBatchWriter

        return KafkaBatchWriter(dict(self.options), schema)

    def streamWriter(self, schema: StructType, overwrite: bool):
        from kafkapy.spark.sink import KafkaStreamWriter

        return KafkaStreamWriter(dict(self.options), schema)


class KafkaBatchReader(DataSourceReader):
    def __init__(self, opts: SourceOptions) -> None:
        self.opts = opts
        # Plan now (on the driver), so bad options and missing topics fail at load().
        meta = OffsetReader(opts)
        try:
            tps = meta.partitions(missing_ok=False)
            marks = meta.watermarks(tps)
            start = meta.resolve(opts.starting, tps, starting=True, marks=marks)
            end = meta.resolve(opts.ending, tps, starting=False, marks=marks)
            start = meta.check_data_loss(start, marks, "batch read")
        finally:
            meta.close()
        for tp in tps:
            if end[tp] < start[tp]:
                raise ValueError(f"kafkapy source: endingOffsets {end[tp]} is before "
                                 f"startingOffsets {start[tp]} for {tp[0]}-{tp[1]}")
        self.ranges = _ranges(start, end)

    def partitions(self) -> Sequence[InputPartition]:
        return self.ranges

    def read(self, partition: InputPartition) -> Iterator:
        if not isinstance(partition, KafkaRange):  # Spark's placeholder when there are none
            return
        yield from read_range(self.opts, partition.topic, partition.partition,
                              partition.start, partition.end)


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets: {"topic": {"partition": next offset to read}} (Spark's kafka offset JSON)."""

    def __init__(self, opts: SourceOptions) -> None:
        self.opts = opts
        self._meta: OffsetReader | None = None
        self._target: Offsets | None = None  # Trigger.AvailableNow: stop here

    def __getstate__(self):
        return {"opts": self.opts, "_meta": None, "_target": None}

    @property
    def meta(self) -> OffsetReader:
        if self._meta is None:
            self._meta = OffsetReader(self.opts)
        return self._meta

    # -- offsets -------------------------------------------------------------------------------
    def initialOffset(self) -> dict:
        tps = self.meta.partitions(missing_ok=True)
        start = self.meta.resolve(self.opts.starting, tps, starting=True)
        return to_json_offsets(start)

    def _available(self, start: Offsets) -> tuple[Offsets, Offsets]:
        """(start for every current partition, latest offsets). New partitions start at their
        log start, as in Spark's kafka source; vanished ones are data loss."""
        tps = self.meta.partitions(missing_ok=True)
        marks = self.meta.watermarks(tps)
        full = dict(start)
        for tp in tps:
            if tp not in full:
                full[tp] = marks[tp][0]
        gone = [tp for tp in full if tp not in marks]
        if gone:
            msg = (f"kafkapy source: partitions {sorted(gone)} disappeared (topic deleted?); "
                   "data may have been lost. Set failOnDataLoss=false to continue without them.")
            if self.opts.fail_on_data_loss:
                raise KafkaSourceError(msg)
            log.warning(msg)
            for tp in gone:
                del full[tp]
        latest = {tp: hi for tp, (_lo, hi) in marks.items()}
        if self._target is not None:
            latest = {tp: min(hi, self._target.get(tp, full[tp])) for tp, hi in latest.items()}
        for tp, hi in list(latest.items()):
            if hi < full[tp]:  # the log ends before where we are: recreated or truncated
                msg = (f"kafkapy source: {tp[0]}-{tp[1]} now ends at offset {hi}, before the "
                       f"query's position {full[tp]}: data may have been lost. Set "
                       "failOnDataLoss=false to continue.")
                if self.opts.fail_on_data_loss:
                    raise KafkaSourceError(msg)
                log.warning(msg)
                latest[tp] = full[tp]
        return full, latest

    def prepareForTriggerAvailableNow(self) -> None:
        tps = self.meta.partitions(missing_ok=True)
        self._target = {tp: hi for tp, (_lo, hi) in self.meta.watermarks(tps).items()}

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.opts.max_offsets_per_trigger:
            return ReadMaxRows(self.opts.max_offsets_per_trigger)
        return ReadAllAvailable()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        begin, latest = self._available(from_json_offsets(start))
        end = dict(latest)
        if isinstance(limit, ReadMaxRows):
            end = rate_limit(begin, latest, limit.max_rows)
        # never move an offset backwards in the offset log
        end = {tp: max(o, begin.get(tp, o)) for tp, o in end.items()}
        return to_json_offsets(end)

    def reportLatestOffset(self) -> dict | None:
        try:
            tps = self.meta.partitions(missing_ok=True)
            return to_json_offsets({tp: hi for tp, (_lo, hi) in
                                    self.meta.watermarks(tps).items()})
        except KafkaSourceError:
            return None

    # -- planning and reading ------------------------------------------------------------------
    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        s, e = from_json_offsets(start), from_json_offsets(end)
        if not any(e[tp] > s.get(tp, 0) for tp in e):
            return []
        tps = sorted(e)
        marks = self.meta.watermarks(tps)
        s = self.meta.check_data_loss({tp: s.get(tp, marks[tp][0]) for tp in tps}, marks,
                                      "micro-batch")
        return _ranges(s, e)

    def read(self, partition: InputPartition) -> Iterator:
        if not isinstance(partition, KafkaRange):  # Spark's placeholder when there are none
            return
        yield from read_range(self.opts, partition.topic, partition.partition,
                              partition.start, partition.end)

    def commit(self, end: dict) -> None:
        pass  # offsets live in Spark's checkpoint

    def stop(self) -> None:
        if self._meta is not None:
            self._meta.close()
            self._meta = None


def rate_limit(begin: Offsets, latest: Offsets, limit: int) -> Offsets:
    """Spark's split of maxOffsetsPerTrigger over partitions: proportional to what each has
    available, at least one record for a partition with any."""
    sizes = {tp: max(latest[tp] - begin.get(tp, latest[tp]), 0) for tp in latest}
    total = sum(sizes.values())
    if total <= limit:
        return dict(latest)
    end = {}
    for tp, hi in latest.items():
        b = begin.get(tp, hi)
        size = sizes[tp]
        if size <= 0:
            end[tp] = hi
            continue
        prorate = limit * (size / total)
        take = int(prorate) if prorate >= 1 else (1 if prorate > 0 else 0)
        end[tp] = min(b + take, hi)
    return end
