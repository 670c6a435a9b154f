"""`kafkapy producer-perf-test` and `kafkapy consumer-perf-test` (kafka-producer-perf-test.sh,
kafka-consumer-perf-test.sh), with Kafka's flags and summary formats so numbers compare.

Producer: every 5 s `N records sent, X records/sec (Y MB/sec), Z ms avg latency, W ms max
latency.` and at the end `N records sent, X records/sec (Y MB/sec), Z ms avg latency, W ms max
latency, A ms 50th, B ms 95th, C ms 99th, D ms 99.9th.` Latency is librdkafka's per-record time
from produce() to acknowledgement. With `--transaction-duration-ms` above 0 the producer is
transactional (`--transactional-id`, Kafka's default id otherwise), as in Kafka's tool: a
transaction begins with the next record and is committed after the first record sent once it has
lasted that long, and at the end. Consumer: the CSV-like header and one summary line
(`start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec,
rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec`).
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from datetime import datetime

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


# -- consumer --------------------------------------------------------------------------------


def java_date_format(fmt: str, ms: int) -> str:
    """The subset of SimpleDateFormat the tool uses: yyyy MM dd HH mm ss SSS."""
    dt = datetime.fromtimestamp(ms / 1000.0)
    out = fmt
    for token, value in (
        ("yyyy", f"{dt.year:04d}"),
        ("SSS", f"{ms % 1000:03d}"),
        ("MM", f"{dt.month:02d}"),
        ("dd", f"{dt.day:02d}"),
        ("HH", f"{dt.hour:02d}"),
        ("mm", f"{dt.minute:02d}"),
        ("ss", f"{dt.second:02d}"),
    ):
        out = out.replace(token, value)
    return out


HEADER = (
    "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, "
    "rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
)
DETAILED_HEADER = (
    "time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, "
    "rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
)


def consumer_summary(
    start_ms: int, end_ms: int, nbytes: int, nmsgs: int, join_ms: int, date_fmt: str
) -> str:
    elapsed = max(1, end_ms - start_ms) / 1000.0
    mb = nbytes / (1024 * 1024)
    fetch_ms = (end_ms - start_ms) - join_ms
    fetch_s = fetch_ms / 1000.0 if fetch_ms > 0 else float("nan")
    return (
        f"{java_date_format(date_fmt, start_ms)}, {java_date_format(date_fmt, end_ms)}, "
        f"{mb:.4f}, {mb / elapsed:.4f}, {nmsgs}, {nmsgs / elapsed:.4f}, {join_ms}, {fetch_ms}, "
        f"{mb / fetch_s:.4f}, {nmsgs / fetch_s:.4f}"
    )


def consumer_parser() -> ToolParser:
    p = ToolParser(
        "kafka-consumer-perf-test", "This tool is used to verify the consumer performance."
    )
    p.add_argument("--bootstrap-server", metavar="HOST:PORT", help="REQUIRED: broker(s) to use")
    p.add_argument("--topic", metavar="TOPIC", help="the topic to consume from")
    p.add_argument("--include", metavar="REGEX", help="consume from all topics matching this")
    p.add_argument(
        "--group",
        default=f"perf-consumer-{random.randrange(100000)}",
        metavar="GROUP",
        help="the group id to consume in",
    )
    p.add_argument(
        "--fetch-size", type=int, default=1024 * 1024, metavar="BYTES", help="fetch size"
    )
    p.add_argument(
        "--from-latest",
        action="store_true",
        help="start at the latest offset when the group has none (default: earliest)",
    )
    p.add_argument(
        "--socket-buffer-size",
        type=int,
        default=2 * 1024 * 1024,
        metavar="BYTES",
        help="TCP receive buffer size",
    )
    p.add_argument("--consumer.config", dest="consumer_config", metavar="FILE",
                   help="deprecated: --command-config")
    p.add_argument("--command-config", metavar="FILE", help="consumer properties file")
    p.add_argument("--print-metrics", action="store_true", help="accepted; no metrics printed")
    p.add_argument(
        "--show-detailed-stats", action="store_true", help="print stats every reporting interval"
    )
    p.add_argument(
        "--timeout",
        type=int,
        default=10000,
        metavar="MS",
        help="longest wait between returned records (10000)",
    )
    p.add_argument("--num-records", type=int, metavar="N", help="REQUIRED: records to consume")
    p.add_argument("--messages", type=int, metavar="N", help="deprecated: --num-records")
    p.add_argument(
        "--reporting-interval", type=int, default=5000, metavar="MS", help="progress interval"
    )
    p.add_argument(
        "--date-format", default="yyyy-MM-dd HH:mm:ss:SSS", metavar="FMT", help="time format"
    )
    p.add_argument("--hide-header", action="store_true", help="do not print the header line")
    return p


def main_consumer_perf_test(argv: list[str]) -> int:
    from confluent_kafka import Consumer, KafkaException

    o = consumer_parser().parse_args(argv)
    if not o.bootstrap_server:
        raise CliError('Missing required argument "[bootstrap-server]"')
    if bool(o.topic) == bool(o.include):
        raise CliError("Exactly one of the following arguments is required: [topic, include]")
    if (o.messages is None) == (o.num_records is None):
        raise CliError("Exactly one of the following arguments is required: "
                       "[messages, num-records]")
    if o.consumer_config and o.command_config:
        raise CliError("Option \"[consumer.config]\" can't be used with option "
                       "\"[command-config]\"")
    warn_deprecated(argv, (("--messages", "--num-records"),
                           ("--consumer.config", "--command-config")),
                    "Warning: {old} is deprecated. Use {new} instead.")
    o.messages = o.num_records if o.num_records is not None else o.messages
    props = load_properties(o.consumer_config or o.command_config)
    props["group.id"] = o.group
    props["socket.receive.buffer.bytes"] = str(o.socket_buffer_size)
    props["max.partition.fetch.bytes"] = str(o.fetch_size)
    props["auto.offset.reset"] = "latest" if o.from_latest else "earliest"
    props.setdefault("enable.auto.commit", "true")
    props.setdefault("client.id", "perf-consumer-client")
    # the Java consumer's default (librdkafka's is read_committed, which would stop at the
    # first open transaction and skip aborted records where Kafka's tool counts them)
    props.setdefault("isolation.level", "read_uncommitted")
    join_ms = [0]
    join_start = [clock.now_ms()]
    assigned: set = set()

    def on_assign(consumer, partitions) -> None:
        if not assigned:
            join_ms[0] += clock.now_ms() - join_start[0]
        assigned.update((p.topic, p.partition) for p in partitions)

    def on_revoke(consumer, partitions) -> None:
        for p in partitions:
            assigned.discard((p.topic, p.partition))
        if not assigned:
            join_start[0] = clock.now_ms()

    if not o.hide_header:
        print(DETAILED_HEADER if o.show_detailed_stats else HEADER)
    try:
        consumer = Consumer(client_config(o.bootstrap_server, props))
        topics = [o.topic] if o.topic else ["^" + o.include]
        consumer.subscribe(topics, on_assign=on_assign, on_revoke=on_revoke)
    except KafkaException as e:
        raise CliError(kafka_error_message(e)) from None
    start = clock.now_ms()
    last_consumed = last_report = start
    nmsgs = nbytes = last_msgs = last_bytes = 0
    try:
        while nmsgs < o.messages and clock.now_ms() - last_consumed <= o.timeout:
            batch = consumer.consume(num_messages=min(10000, o.messages - nmsgs), timeout=0.1)
            now = clock.now_ms()
            if batch:
                last_consumed = now
            for m in batch:
                if m.error() is not None:
                    continue
                nmsgs += 1
                nbytes += len(m.key() or b"") + len(m.value() or b"")
            if o.show_detailed_stats and now - last_report >= o.reporting_interval:
                el = max(1, now - last_report)
                mb = nbytes / (1024 * 1024)
                imb = (nbytes - last_bytes) / (1024 * 1024)
                print(
                    f"{java_date_format(o.date_format, now)}, 0, {mb:.4f}, {1000 * imb / el:.4f}, "
                    f"{nmsgs}, {1000 * (nmsgs - last_msgs) / el:.4f}, 0, {el}, "
                    f"{1000 * imb / el:.4f}, {1000 * (nmsgs - last_msgs) / el:.4f}",
                    flush=True,
                )
                last_report, last_msgs, last_bytes = now, nmsgs, nbytes
    except KeyboardInterrupt:
        pass
    end = clock.now_ms()
    if nmsgs < o.messages:
        print(
            f"WARNING: Exiting before consuming the expected number of messages: timeout "
            f"({o.timeout} ms) exceeded. You can use the --timeout option to increase the timeout."
        )
    try:
        consumer.close()
    except KafkaException:
        pass
    if not o.show_detailed_stats:
        print(consumer_summary(start, end, nbytes, nmsgs, join_ms[0], o.date_format))
    return 0
