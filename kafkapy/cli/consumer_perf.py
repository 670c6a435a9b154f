"""`kafkapy consumer-perf-test` (kafka-consumer-perf-test.sh, Kafka's ConsumerPerformance), with
Kafka's flags and summary format so numbers compare: the CSV-like header and one summary line
(`start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec,
rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec`).
"""

from __future__ import annotations

import random
from datetime import datetime

from kafkapy import clock
from kafkapy.cli.common import (
    CliError,
    ToolParser,
    client_config,
    kafka_error_message,
    load_properties,
    warn_deprecated,
)


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
