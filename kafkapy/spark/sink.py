"""Writing to Kafka from Spark with the "kafkapy" data source (batch and streaming).

    df.write.format("kafkapy").option("kafka.bootstrap.servers", "...").option("topic", "t")
      .save()
    df.writeStream.format("kafkapy")...start()

Rows are those Spark's kafka sink takes: `value` (string or binary, required), optional `key`
(string or binary), `topic` (string; else the `topic` option), `partition` (int; else the
producer's partitioner: murmur2 of the key, as the Java client), `headers`
(array<struct<key:string,value:binary>>). Each Spark task produces its rows with an idempotent
confluent-kafka producer (enable.idempotence=true, acks=all) and fails if any record is not
acknowledged. Delivery is at least once, like Spark's kafka sink: a task retried by Spark, or a
micro-batch re-run after a crash, produces its rows again.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import ArrayType, BinaryType, IntegerType, StringType, StructType

from kafkapy.spark.kafka_io import KafkaSourceError
from kafkapy.spark.options import kafka_conf


@dataclass
class Written(WriterCommitMessage):
    records: int


def _check_schema(options: dict, schema: StructType) -> tuple[str, str | None]:
    names = {f.name.lower(): f for f in schema.fields}
    bootstrap = next((v for k, v in options.items() if k.lower() == "kafka.bootstrap.servers"),
                     None)
    if not bootstrap:
        raise ValueError("option 'kafka.bootstrap.servers' must be specified")
    topic = next((v for k, v in options.items() if k.lower() == "topic"), None)
    if "value" not in names:
        raise ValueError("kafkapy sink: the data has no 'value' column (required)")
    for col, types in (("value", (StringType, BinaryType)), ("key", (StringType, BinaryType)),
                       ("topic", (StringType,)), ("partition", (IntegerType,))):
        if col in names and not isinstance(names[col].dataType, types):
            raise ValueError(f"kafkapy sink: column '{col}' must be "
                             f"{' or '.join(t.typeName() for t in types)}, "
                             f"not {names[col].dataType.simpleString()}")
    if "headers" in names:
        h = names["headers"].dataType
        ok = (isinstance(h, ArrayType) and isinstance(h.elementType, StructType)
              and [f.name for f in h.elementType.fields] == ["key", "value"])
        if not ok:
            raise ValueError("kafkapy sink: column 'headers' must be "
                             "array<struct<key:string,value:binary>>")
    if topic is None and "topic" not in names:
        raise ValueError("kafkapy sink: no topic: set the 'topic' option or add a 'topic' column")
    return bootstrap, topic


class _Producing:
    def __init__(self, options: dict, schema: StructType) -> None:
        self.bootstrap, self.topic = _check_schema(options, schema)
        self.conf = kafka_conf(options, role="producer")
        self.conf.pop("isolation.level", None)

    def _producer(self):
        from confluent_kafka import KafkaException, Producer

        conf = {"bootstrap.servers": self.bootstrap, "enable.idempotence": True, "acks": "all",
                "linger.ms": 5, "log_level": 3,
                "partitioner": "murmur2_random", **self.conf}
        try:
            return Producer(conf)
        except KafkaException as e:
            raise ValueError(f"kafkapy sink: a kafka.* option is not accepted: {e}") from None

    def _write(self, batches: Iterator) -> Written:
        producer = self._producer()
        errors: list[str] = []

        def on_delivery(err, _msg) -> None:
            if err is not None and len(errors) < 10:
                errors.append(str(err))

        n = 0
        for batch in batches:
            cols = {name.lower(): batch.column(i).to_pylist()
                    for i, name in enumerate(batch.schema.names)}
            rows = batch.num_rows
            values = cols["value"]
            keys = cols.get("key")
            topics = cols.get("topic")
            parts = cols.get("partition")
            headers = cols.get("headers")
            for i in range(rows):
                topic = (topics[i] if topics is not None else None) or self.topic
                if topic is None:
                    raise KafkaSourceError("kafkapy sink: a row has a null topic and no 'topic' "
                                           "option is set")
                kwargs = {}
                if keys is not None and keys[i] is not None:
                    kwargs["key"] = keys[i]
                if parts is not None and parts[i] is not None:
                    kwargs["partition"] = parts[i]
                if headers is not None and headers[i]:
                    kwargs["headers"] = [(h["key"], h["value"]) for h in headers[i]]
                while True:
                    try:
                        producer.produce(topic, value=values[i], on_delivery=on_delivery,
                                         **kwargs)
                        break
                    except BufferError:
                        producer.poll(0.05)
                n += 1
            producer.poll(0)
            if errors:
                break
        left = producer.flush(60)
        if errors or left:
            raise KafkaSourceError(f"kafkapy sink: {len(errors)} record(s) failed, {left} not "
                                   f"acknowledged within 60s; first error: "
                                   f"{errors[0] if errors else 'timeout'}")
        return Written(n)


class KafkaBatchWriter(_Producing, DataSourceArrowWriter):
    def write(self, iterator: Iterator) -> WriterCommitMessage:
        return self._write(iterator)


class KafkaStreamWriter(_Producing, DataSourceStreamArrowWriter):
    def write(self, iterator: Iterator) -> WriterCommitMessage:
        return self._write(iterator)

    def commit(self, messages, batchId: int) -> None:
        pass

    def abort(self, messages, batchId: int) -> None:
        pass
