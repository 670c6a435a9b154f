"""`kafkapy producer-perf-test` (kafka-producer-perf-test.sh, Kafka's ProducerPerformance), with
Kafka's flags and summary format so numbers compare (consumer-perf-test: cli/consumer_perf.py).

Every 5 s `N records sent, X records/sec (Y MB/sec), Z ms avg latency, W ms max
latency.` and at the end `N records sent, X records/sec (Y MB/sec), Z ms avg latency, W ms max
latency, A ms 50th, B ms 95th, C ms 99th, D ms 99.9th.` Latency is librdkafka's per-record time
from produce() to acknowledgement. With `--transaction-duration-ms` above 0 the producer is
transactional (`--transactional-id`, Kafka's default id otherwise), as in Kafka's tool: a
transaction begins with the next record and is committed after the first record sent once it has
lasted that long, and at the end.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable

from kafkapy import clock
from kafkapy.cli.common import (
    CliError,
    ToolParser,
    client_config,
    kafka_error_message,
    load_properties,
    parse_key_values,
    warn_deprecated,
)

REPORT_INTERVAL_MS = 5000
DEFAULT_TRANSACTIONAL_ID = "performance-producer-default-transactional-id"


class Stats:
    """Kafka's ProducerPerformance.Stats: windows every 5 s, sampled latencies for percentiles."""

    def __init__(self, num_records: int, out=None) -> None:
        self.out = out or sys.stdout
        self.start = clock.now_ms()
        self.window_start = self.start
        self.sampling = max(1, num_records // min(num_records, 500000))
        self.latencies: list[int] = []
        self.iteration = 0
        self.count = self.bytes = self.total_latency = self.max_latency = 0
        self.w_count = self.w_bytes = self.w_total = self.w_max = 0

    def record(self, latency: int, nbytes: int, at_ms: int) -> None:
        self.count += 1
        self.bytes += nbytes
        self.total_latency += latency
        self.max_latency = max(self.max_latency, latency)
        self.w_count += 1
        self.w_bytes += nbytes
        self.w_total += latency
        self.w_max = max(self.w_max, latency)
        if self.iteration % self.sampling == 0:
            self.latencies.append(latency)
        self.iteration += 1
        if at_ms - self.window_start >= REPORT_INTERVAL_MS:
            self.print_window(at_ms)
            self.window_start = clock.now_ms()
            self.w_count = self.w_bytes = self.w_total = self.w_max = 0

    def print_window(self, at_ms: int) -> None:
        elapsed = max(1, at_ms - self.window_start)
        print(
            window_line(self.w_count, self.w_bytes, elapsed, self.w_total, self.w_max),
            file=self.out,
            flush=True,
        )

    def total_line(self, end_ms: int | None = None) -> str:
        elapsed = max(1, (end_ms or clock.now_ms()) - self.start)
        return total_line(
            self.count, self.bytes, elapsed, self.total_latency, self.max_latency, self.latencies
        )


def window_line(count: int, nbytes: int, elapsed_ms: int, total_lat: int, max_lat: int) -> str:
    rps = 1000.0 * count / elapsed_ms
    mbps = 1000.0 * nbytes / elapsed_ms / (1024.0 * 1024.0)
    avg = total_lat / count if count else float("nan")
    return (
        f"{count} records sent, {rps:.1f} records/sec ({mbps:.2f} MB/sec), {avg:.1f} ms avg "
        f"latency, {float(max_lat):.1f} ms max latency."
    )


def percentiles(latencies: list[int], *ps: float) -> list[int]:
    s = sorted(latencies)
    if not s:
        return [0 for _ in ps]
    return [s[min(len(s) - 1, int(p * len(s)))] for p in ps]


def total_line(
    count: int, nbytes: int, elapsed_ms: int, total_lat: int, max_lat: int, latencies: list[int]
) -> str:
    rps = 1000.0 * count / elapsed_ms
    mbps = 1000.0 * nbytes / elapsed_ms / (1024.0 * 1024.0)
    avg = total_lat / count if count else float("nan")
    p50, p95, p99, p999 = percentiles(latencies, 0.5, 0.95, 0.99, 0.999)
    return (
        f"{count} records sent, {rps:f} records/sec ({mbps:.2f} MB/sec), {avg:.2f} ms avg "
        f"latency, {float(max_lat):.2f} ms max latency, {p50} ms 50th, {p95} ms 95th, "
        f"{p99} ms 99th, {p999} ms 99.9th."
    )


class Throttler:
    """Kafka's ThroughputThrottler: keep the send rate at about `per_sec` (<= 0: unlimited)."""

    def __init__(self, per_sec: float, start_ms: int) -> None:
        self.per_sec = per_sec
        self.start_ms = start_ms

    def wait(self, sent: int, now: int, sleep: Callable[[float], object] = time.sleep) -> None:
        """Wait until ``sent`` records are due; ``sleep(seconds)`` may return early (a
        producer's poll, which serves delivery reports meanwhile)."""
        if self.per_sec <= 0:
            return
        due_ms = self.start_ms + sent * 1000.0 / self.per_sec
        while due_ms > now:
            sleep((due_ms - now) / 1000.0)
            now = clock.now_ms()


def producer_parser() -> ToolParser:
    p = ToolParser("producer-performance", "This tool is used to verify the producer performance.")
    p.add_argument("--topic", required=True, metavar="TOPIC", help="produce messages to this topic")
    p.add_argument(
        "--num-records", type=int, required=True, metavar="N", help="number of messages to produce"
    )
    payload = p.add_mutually_exclusive_group(required=True)
    payload.add_argument("--record-size", type=int, metavar="BYTES", help="message size in bytes")
    payload.add_argument(
        "--payload-file", metavar="FILE", help="UTF-8 file of payloads, picked at random"
    )
    payload.add_argument(
        "--payload-monotonic", action="store_true", help="payload is an increasing integer"
    )
    p.add_argument(
        "--payload-delimiter", default="\\n", metavar="DELIM", help="payload file delimiter"
    )
    p.add_argument(
        "--throughput",
        type=float,
        required=True,
        metavar="N",
        help="approximate messages/sec to send; -1 for no limit",
    )
    p.add_argument(
        "--command-property",
        "--producer-props",
        dest="producer_props",
        nargs="+",
        metavar="NAME=VALUE",
        help="producer settings such as bootstrap.servers (win over --command-config); "
        "--producer-props is deprecated",
    )
    p.add_argument("--command-config", "--producer.config", dest="producer_config",
                   metavar="FILE", help="producer properties; --producer.config is deprecated")
    p.add_argument("--bootstrap-server", metavar="HOST:PORT", help="brokers (bootstrap.servers)")
    p.add_argument("--print-metrics", action="store_true", help="accepted; no metrics are printed")
    p.add_argument(
        "--transactional-id",
        default=DEFAULT_TRANSACTIONAL_ID,
        metavar="TRANSACTIONAL-ID",
        help="The transactionalId to use if transaction-duration-ms is > 0. Useful when testing "
        "the performance of concurrent transactions.",
    )
    p.add_argument(
        "--transaction-duration-ms",
        type=int,
        default=0,
        metavar="TRANSACTION-DURATION",
        help="The max age of each transaction. The commitTransaction will be called after this "
        "time has elapsed. Transactions are only enabled if this value is positive.",
    )
    p.add_argument(
        "--warmup-records", type=int, default=0, metavar="N", help="records not in steady stats"
    )
    return p


def main_producer_perf_test(argv: list[str]) -> int:
    from confluent_kafka import KafkaException, Producer

    o = producer_parser().parse_args(argv)
    warn_deprecated(argv, (("--producer-props", "--command-property"),
                           ("--producer.config", "--command-config")),
                    "Option {old} has been deprecated and will be removed in a future version. "
                    "Use {new} instead.")
    if o.num_records <= 0:
        raise CliError("--num-records should be greater than zero")
    if o.record_size is not None and o.record_size <= 0:
        raise CliError("--record-size should be greater than zero")
    if o.warmup_records >= o.num_records:
        raise CliError(
            "The value for --warmup-records must be strictly fewer than the number of records "
            "in the test, --num-records."
        )
    if not o.producer_props and not o.producer_config and not o.bootstrap_server:
        raise CliError("At least one of --bootstrap-server, --command-property, "
                       "--producer-props, --producer.config or --command-config must be "
                       "specified.")
    props = load_properties(o.producer_config)
    props.update(parse_key_values(o.producer_props, "producer property"))
    if o.bootstrap_server:
        props["bootstrap.servers"] = o.bootstrap_server
    bootstrap = props.pop("bootstrap.servers", None)
    if not bootstrap:
        raise CliError("bootstrap.servers must be given in --command-property or "
                       "--command-config")
    props.setdefault("client.id", "perf-producer-client")
    props.setdefault("partitioner", "murmur2_random")
    transactions = o.transaction_duration_ms > 0
    if transactions:
        props["transactional.id"] = o.transactional_id
    payloads = _payloads(o)
    conf = client_config(bootstrap, props)
    try:
        producer = Producer(conf)
        if transactions:
            producer.init_transactions()
    except KafkaException as e:
        raise CliError(kafka_error_message(e)) from None

    stats = Stats(o.num_records)
    errors: list[str] = []

    def on_delivery(err, msg) -> None:
        if err is not None:
            if len(errors) < 5:
                print(f"Error: {err.str()}", file=sys.stderr)
            errors.append(err.str())
            return
        lat = msg.latency()
        stats.record(int((lat or 0.0) * 1000), len(msg), clock.now_ms())

    throttler = Throttler(o.throughput, stats.start)
    topic = o.topic
    n_payloads = len(payloads)
    rng = random.Random(0)
    in_txn, txn_start = 0, 0  # records in the open transaction, when it began
    try:
        for i in range(o.num_records):
            if transactions and in_txn == 0:
                producer.begin_transaction()
                txn_start = clock.now_ms()
            if o.payload_monotonic:
                value = str(i).encode()
            elif n_payloads == 1:
                value = payloads[0]
            else:
                value = payloads[rng.randrange(n_payloads)]
            sent_ms = clock.now_ms()
            while True:
                try:
                    producer.produce(topic, value, on_delivery=on_delivery)
                    break
                except BufferError:
                    producer.poll(0.05)
            in_txn += 1
            if transactions and sent_ms - txn_start >= o.transaction_duration_ms:
                producer.commit_transaction()
                in_txn = 0
            if i % 1000 == 0:
                producer.poll(0)
            if o.throughput > 0:
                # polling while throttled: a record's latency is measured when its delivery
                # report is served, so reports must not wait for the next 1,000 records
                throttler.wait(i, sent_ms, producer.poll)
        if transactions and in_txn:
            producer.commit_transaction()
        producer.flush()
    except KeyboardInterrupt:
        if transactions and in_txn:  # rather than holding read_committed consumers until
            try:  # the transaction times out
                producer.abort_transaction(5)
            except KafkaException:
                pass
        producer.flush(5)
    except KafkaException as e:
        raise CliError(kafka_error_message(e)) from None
    print(stats.total_line(), flush=True)
    return 1 if errors and not stats.count else 0


def _payloads(o) -> list[bytes]:
    if o.payload_file:
        delim = "\n" if o.payload_delimiter == "\\n" else o.payload_delimiter
        print(f"Reading payloads from: {o.payload_file}")
        try:
            with open(o.payload_file, encoding="utf-8") as f:
                items = [s.encode() for s in f.read().split(delim) if s]
        except OSError as e:
            raise CliError(f"Cannot read {o.payload_file}: {e.strerror}") from None
        if not items:
            raise CliError("File does not exist or empty file provided.")
        print(f"Number of messages read: {len(items)}")
        return items
    if o.payload_monotonic:
        return []
    # random uppercase letters as Kafka's tool sends; a pool of distinct payloads keeps the
    # per-record cost low while the data stays as (in)compressible as Kafka's
    rng = random.Random(0)
    pool = min(1000, max(1, o.num_records))
    return [bytes(rng.choices(range(65, 91), k=o.record_size)) for _ in range(pool)]
