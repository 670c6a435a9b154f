"""Kafka for PySpark without the JVM connector: the "kafkapy" Python data source.

    from kafkapy.spark import register
    register(spark)            # adds format("kafkapy") to this SparkSession
    spark.read.format("kafkapy").option("kafka.bootstrap.servers", "127.0.0.1:9092") \
        .option("subscribe", "t").load()

Option names, defaults and the output schema are those of Spark's built-in kafka source
(spark-sql-kafka-0-10); see kafkapy.spark.options. Requires pyspark >= 4.2 (the
DataSourceStreamReader with read limits and Trigger.AvailableNow), pyarrow and confluent-kafka.
"""

from __future__ import annotations

FORMAT = "kafkapy"


def register(spark) -> None:
    """Register format("kafkapy") with a SparkSession (idempotent)."""
    from kafkapy.spark.source import KafkaPyDataSource

    spark.dataSource.register(KafkaPyDataSource)


__all__ = ["FORMAT", "register"]
