"""Access-log analytics on Spark Structured Streaming, reading from and writing to Kafka.

    python -m kafkapy.pipelines.access_log_job --bootstrap-server 127.0.0.1:9092 \
        --input access-logs --output access-stats --dead-letter access-logs-dlq \
        --parquet out/access-stats --checkpoint ckpt/access-logs [--source python|kafka] \
        [--master local[*]] [--available-now]

Two streaming queries over the input topic, each with its own checkpoint directory under
--checkpoint:

- "windows" parses combined-log-format lines, takes the log timestamp as event time, and
  aggregates per (1-minute window, path, status class) with a watermark (default 2 minutes).
  In append mode a window's rows leave the state store once, all in the same micro-batch, when
  the watermark passes the window's end; foreachBatch then sums them per window -- requests,
  bytes, 2xx/3xx/4xx/5xx counts, error_rate = (4xx + 5xx) / requests, the top paths -- and
  writes each window as one JSON record keyed by its start ("2025-03-12T14:02:00Z") to
  --output, and to Parquet under --parquet/batch_id=<micro-batch id>/ (overwritten when a
  batch is re-run, so Parquet holds each window once).
- "dead-letter" sends each malformed line to --dead-letter: the original key and value bytes,
  headers dlq.reason, dlq.topic, dlq.partition, dlq.offset. Its observed metric
  "malformed" counts them per micro-batch (printed with the progress).

Offsets and aggregation state live in the checkpoints, so a stopped job started again with the
same --checkpoint continues where it stopped: finished micro-batches are not re-read, an
unfinished one is re-run over exactly the same offsets, windows still open stay in the state
store. Kafka outputs are at least once (as Spark's kafka sink): only a crash between a batch's
write and its commit re-sends that batch's records (same keys and values).

--source python (default) reads and writes with kafkapy's Python data source (no JVM
connector); --source kafka uses Spark's built-in format("kafka"), which needs the
spark-sql-kafka-0-10 jars on the classpath (--packages / spark.jars.packages or spark.jars).
Runs unchanged on a cluster: `spark-submit --master spark://host:7077
kafkapy/pipelines/access_log_job.py --bootstrap-server ...` (kafkapy, confluent-kafka and
pyarrow installed in the executors' Python); under spark-submit the master comes from
spark-submit unless --master is given; with `python -m` it defaults to local[*].
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass

# Combined log format; the same expression is used by Spark (Java regex) and in tests (re).
LOG_REGEX = (r'^(\S+) \S+ (\S+) \[([^\]]+)\] "([A-Z]+) (\S+) (HTTP/[0-9.]+)" '
             r'([0-9]{3}) ([0-9]+|-) "([^"]*)" "([^"]*)"$')
TIME_FORMAT = "dd/MMM/yyyy:HH:mm:ss Z"


@dataclass
class JobConfig:
    bootstrap: str
    input: str = "access-logs"
    output: str = "access-stats"
    dead_letter: str = "access-logs-dlq"
    parquet: str = "out/access-stats"
    checkpoint: str = "ckpt/access-logs"
    source: str = "python"  # python | kafka
    window: str = "1 minute"
    watermark: str = "2 minutes"
    top_paths: int = 5
    starting_offsets: str = "earliest"
    max_offsets_per_trigger: int | None = None
    fail_on_data_loss: bool = True
    trigger_interval: str = "10 seconds"
    extra_kafka: dict[str, str] | None = None

    @property
    def fmt(self) -> str:
        return "kafkapy" if self.source == "python" else "kafka"


def _read_options(cfg: JobConfig) -> dict[str, str]:
    opts = {
        "kafka.bootstrap.servers": cfg.bootstrap,
        "subscribe": cfg.input,
        "startingOffsets": cfg.starting_offsets,
        "failOnDataLoss": str(cfg.fail_on_data_loss).lower(),
    }
    if cfg.max_offsets_per_trigger:
        opts["maxOffsetsPerTrigger"] = str(cfg.max_offsets_per_trigger)
    for k, v in (cfg.extra_kafka or {}).items():
        opts[f"kafka.{k}"] = v
    return opts


def parse_lines(raw):
    """Kafka rows -> rows with the parsed fields and `reason` (null when the line is fine)."""
    from pyspark.sql import functions as F

    line = F.col("value").cast("string")
    g = lambda i: F.regexp_extract(line, LOG_REGEX, i)  # noqa: E731
    parsed = raw.select(
        "key", "value", "topic", "partition", "offset",
        line.alias("line"),
        line.rlike(LOG_REGEX).alias("matched"),
    ).select(
        "*",
        g(1).alias("client"),
        g(3).alias("time_local"),
        g(4).alias("method"),
        F.regexp_replace(g(5), r"\?.*$", "").alias("path"),
        g(7).alias("status_s"),
        g(8).alias("bytes_s"),
    ).select(
        "*",
        F.try_to_timestamp(F.col("time_local"), F.lit(TIME_FORMAT)).alias("event_time"),
    )
    reason = (F.when(F.col("value").isNull() | (F.length("value") == 0), F.lit("empty line"))
              .when(~F.coalesce(F.col("matched"), F.lit(False)),
                    F.lit("not in combined log format"))
              .when(F.col("event_time").isNull(), F.lit("unparseable timestamp")))
    return parsed.select(
        "*",
        reason.alias("reason"),
        F.col("status_s").cast("int").alias("status"),
        F.when(F.col("bytes_s") == "-", F.lit(0)).otherwise(F.col("bytes_s").cast("long"))
        .alias("bytes"),
    )


def window_counts(parsed, cfg: JobConfig):
    """Streaming aggregate per (window, path, status class); emitted once per window."""
    from pyspark.sql import functions as F

    good = parsed.where(F.col("reason").isNull())
    return (good.withWatermark("event_time", cfg.watermark)
            .groupBy(F.window("event_time", cfg.window).alias("w"), "path",
                     (F.col("status") / 100).cast("int").alias("class"))
            .agg(F.count(F.lit(1)).alias("n"), F.sum("bytes").alias("bytes")))


def summarize(counts, top_n: int):
    """(window, path, class, n, bytes) rows -> one row per window with the statistics."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    def cls(c):
        return F.sum(F.when(F.col("class") == c, F.col("n")).otherwise(0)).cast("long")

    totals = counts.groupBy("w").agg(
        F.sum("n").cast("long").alias("requests"),
        F.sum("bytes").cast("long").alias("bytes"),
        cls(2).alias("status_2xx"), cls(3).alias("status_3xx"),
        cls(4).alias("status_4xx"), cls(5).alias("status_5xx"),
    )
    per_path = counts.groupBy("w", "path").agg(F.sum("n").cast("long").alias("requests"))
    rank = F.row_number().over(Window.partitionBy("w").orderBy(F.desc("requests"), "path"))
    top = (per_path.select("*", rank.alias("rank")).where(F.col("rank") <= top_n)
           .groupBy("w")
           .agg(F.sort_array(F.collect_list(F.struct("rank", "path", "requests"))).alias("t")))
    return (totals.join(top, "w").select(
        F.col("w.start").alias("window_start"),
        F.col("w.end").alias("window_end"),
        "requests", "bytes", "status_2xx", "status_3xx", "status_4xx", "status_5xx",
        ((F.col("status_4xx") + F.col("status_5xx")) / F.col("requests")).alias("error_rate"),
        F.transform("t", lambda x: F.struct(x["path"].alias("path"),
                                            x["requests"].alias("requests"))).alias("top_paths"),
    ))


def to_kafka_records(summary):
    from pyspark.sql import functions as F

    iso = "yyyy-MM-dd'T'HH:mm:ss'Z'"
    doc = F.struct(
        F.date_format("window_start", iso).alias("window_start"),
        F.date_format("window_end", iso).alias("window_end"),
        "requests", "bytes", "status_2xx", "status_3xx", "status_4xx", "status_5xx",
        "error_rate", "top_paths")
    return summary.select(F.date_format("window_start", iso).alias("key"),
                          F.to_json(doc).alias("value"))


def dead_letters(parsed):
    from pyspark.sql import functions as F

    def h(name, col):
        return F.struct(F.lit(name).alias("key"), col.cast("binary").alias("value"))

    bad = parsed.where(F.col("reason").isNotNull())
    return bad.select(
        "key", "value",
        F.array(h("dlq.reason", F.col("reason")), h("dlq.topic", F.col("topic")),
                h("dlq.partition", F.col("partition").cast("string")),
                h("dlq.offset", F.col("offset").cast("string"))).alias("headers"),
    ).observe("malformed", F.count(F.lit(1)).alias("malformed"))


def start(spark, cfg: JobConfig, *, available_now: bool = False):
    """Start both queries; returns (windows query, dead-letter query)."""
    if cfg.source not in ("python", "kafka"):
        raise ValueError(f"--source must be python or kafka, not {cfg.source!r}")
    if cfg.source == "python":
        from kafkapy.spark import register

        register(spark)
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    raw = spark.readStream.format(cfg.fmt).options(**_read_options(cfg)).load()
    parsed = parse_lines(raw)
    write_opts = {"kafka.bootstrap.servers": cfg.bootstrap}
    for k, v in (cfg.extra_kafka or {}).items():
        if k != "isolation.level":
            write_opts[f"kafka.{k}"] = v
    parquet_dir = cfg.parquet.rstrip("/")

    def emit(batch_df, batch_id: int) -> None:
        if batch_df.isEmpty():
            return
        summary = summarize(batch_df, cfg.top_paths).persist()
        try:
            summary.write.mode("overwrite").parquet(f"{parquet_dir}/batch_id={batch_id}")
            (to_kafka_records(summary).write.format(cfg.fmt).options(**write_opts)
             .option("topic", cfg.output).mode("append").save())
        finally:
            summary.unpersist()

    def trig(writer):
        return (writer.trigger(availableNow=True) if available_now
                else writer.trigger(processingTime=cfg.trigger_interval))

    ckpt = cfg.checkpoint.rstrip("/")
    windows = trig(window_counts(parsed, cfg).writeStream.queryName("access-log-windows")
                   .outputMode("append").foreachBatch(emit)
                   .option("checkpointLocation", f"{ckpt}/windows")).start()
    dlq = trig(dead_letters(parsed).writeStream.queryName("access-log-dead-letter")
               .format(cfg.fmt).options(**write_opts).option("topic", cfg.dead_letter)
               .option("checkpointLocation", f"{ckpt}/dead-letter")).start()
    return windows, dlq


def malformed_count(query) -> int:
    total = 0
    for p in query.recentProgress:
        m = (p.get("observedMetrics") or {}).get("malformed")
        if m:
            total += int(m["malformed"])
    return total


def session(master: str | None, app: str = "kafkapy-access-logs", extra: dict | None = None):
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    b = SparkSession.builder.appName(app)
    if master:
        b = b.master(master)
    b = (b
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.sql.shuffle.partitions", os.environ.get("SPARK_SHUFFLE_PARTITIONS", "8")))
    jars = os.environ.get("KAFKAPY_SPARK_KAFKA_JARS")
    if jars:
        b = b.config("spark.jars", jars)
    for k, v in (extra or {}).items():
        b = b.config(k, v)
    return b.getOrCreate()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m kafkapy.pipelines.access_log_job",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--bootstrap-server", required=True)
    p.add_argument("--input", default="access-logs")
    p.add_argument("--output", default="access-stats")
    p.add_argument("--dead-letter", default="access-logs-dlq")
    p.add_argument("--parquet", default="out/access-stats")
    p.add_argument("--checkpoint", default="ckpt/access-logs")
    p.add_argument("--source", choices=["python", "kafka"], default="python")
    p.add_argument("--master", default=None,
                   help="Spark master (default: local[*], or what spark-submit set)")
    p.add_argument("--window", default="1 minute")
    p.add_argument("--watermark", default="2 minutes")
    p.add_argument("--top-paths", type=int, default=5)
    p.add_argument("--starting-offsets", default="earliest")
    p.add_argument("--max-offsets-per-trigger", type=int, default=None)
    p.add_argument("--no-fail-on-data-loss", action="store_true")
    p.add_argument("--trigger-interval", default="10 seconds")
    p.add_argument("--isolation-level", choices=["read_uncommitted", "read_committed"],
                   default=None,
                   help="read_committed: only records of committed transactions (and plain "
                        "ones) are counted; the default is read_uncommitted, as Spark's")
    p.add_argument("--available-now", action="store_true",
                   help="process what is in the topic now, then stop")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="extra Spark configuration")
    return p.parse_args(argv)


def job_config(a: argparse.Namespace) -> JobConfig:
    return JobConfig(bootstrap=a.bootstrap_server, input=a.input, output=a.output,
                     dead_letter=a.dead_letter, parquet=a.parquet, checkpoint=a.checkpoint,
                     source=a.source, window=a.window, watermark=a.watermark,
                     top_paths=a.top_paths, starting_offsets=a.starting_offsets,
                     max_offsets_per_trigger=a.max_offsets_per_trigger,
                     fail_on_data_loss=not a.no_fail_on_data_loss,
                     trigger_interval=a.trigger_interval,
                     extra_kafka={"isolation.level": a.isolation_level}
                     if a.isolation_level else None)


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    cfg = job_config(a)
    extra = dict(kv.split("=", 1) for kv in a.conf)
    # under spark-submit (which sets PYSPARK_GATEWAY_PORT) the master is spark-submit's
    master = a.master or (None if os.environ.get("PYSPARK_GATEWAY_PORT") else "local[*]")
    spark = session(master, extra=extra)
    spark.sparkContext.setLogLevel("WARN")
    queries = start(spark, cfg, available_now=a.available_now)
    print(f"access_log_job: reading {cfg.input} from {cfg.bootstrap} with format({cfg.fmt!r}); "
          f"windows -> {cfg.output} and {cfg.parquet}; malformed -> {cfg.dead_letter}",
          file=sys.stderr, flush=True)
    try:
        while any(q.isActive for q in queries):
            time.sleep(5)
            w, d = queries
            wp, dp = w.lastProgress or {}, d.lastProgress or {}
            print(f"access_log_job: windows batch {wp.get('batchId', '-')} "
                  f"({wp.get('numInputRows', 0)} rows, "
                  f"{wp.get('processedRowsPerSecond', 0.0):.0f} rows/s), "
                  f"malformed so far {malformed_count(d)}, dead-letter batch "
                  f"{dp.get('batchId', '-')}", file=sys.stderr, flush=True)
            for q in queries:
                if q.exception() is not None:
                    raise RuntimeError(f"query {q.name} failed: {q.exception()}")
    except KeyboardInterrupt:
        print("access_log_job: stopping (the checkpoint keeps the position)", file=sys.stderr)
    finally:
        for q in queries:
            q.stop()
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
