"""`kafkapy get-offsets` (kafka-get-offsets.sh): offsets of partitions, one `topic:partition:offset`
line each, sorted as Kafka's tool sorts them (by the text `topic-partition`).

--time: -1/latest (default), -2/earliest, -3/max-timestamp, -4/earliest-local,
-5/latest-tiered, or a timestamp in ms (the first offset whose timestamp is at or after it; a
partition with no such record prints nothing).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

from kafkapy.cli.common import (
    CliError,
    ToolParser,
    admin_client,
    include_list,
    is_internal,
    kafka_error_message,
    load_properties,
)

DESCRIPTION = "An interactive shell for getting topic-partition offsets."

NAMED_TIMES = {
    "latest": -1,
    "earliest": -2,
    "max-timestamp": -3,
    "earliest-local": -4,
    "latest-tiered": -5,
    "earliest-pending-upload": -6,
}
TOPIC_PARTITION_PATTERN = re.compile(r"([^:,]*)(?::(?:([0-9]*)|(?:([0-9]*)-([0-9]*))))?")


def parse_time(text: str) -> int:
    if text in NAMED_TIMES:
        return NAMED_TIMES[text]
    try:
        return int(text)
    except ValueError:
        raise CliError(
            f"Malformed time argument {text}. Please use -1 or latest / -2 or earliest / -3 or "
            "max-timestamp / -4 or earliest-local / -5 or latest-tiered, or a specified long "
            "format timestamp"
        ) from None


PartitionFilter = Callable[[str, int], bool]


def filter_from_patterns(spec: str) -> tuple[Callable[[str], bool], PartitionFilter]:
    """--topic-partitions: `regex:N`, `regex:N-M` (M exclusive), `regex:N-`, `regex:-M`, `regex`."""
    rules: list[tuple[Callable[[str], bool], Callable[[int], bool]]] = []
    for rule in spec.split(","):
        m = TOPIC_PARTITION_PATTERN.fullmatch(rule)
        if not m:
            raise CliError(f"Invalid rule specification: {rule}")
        topic_ok = include_list(m.group(1) or ".*")
        if m.group(2):
            n = int(m.group(2))
            part_ok: Callable[[int], bool] = lambda p, n=n: p == n  # noqa: E731
        else:
            lo = int(m.group(3)) if m.group(3) else 0
            hi = int(m.group(4)) if m.group(4) else 2**31 - 1
            part_ok = lambda p, lo=lo, hi=hi: lo <= p < hi  # noqa: E731
        rules.append((topic_ok, part_ok))
    return (
        lambda t: any(tok(t) for tok, _ in rules),
        lambda t, p: any(tok(t) and pok(p) for tok, pok in rules),
    )


def filter_from_topic(topic: str | None, partitions: str | None):
    topic_ok = include_list(topic or ".*")
    wanted: set[int] = set()
    if partitions:
        try:
            wanted = {int(x) for x in partitions.split(",")}
        except ValueError:
            raise CliError(
                "--partitions expects a comma separated list of numeric partition ids, but "
                f"received: {partitions}"
            ) from None
    return topic_ok, lambda t, p: topic_ok(t) and (not wanted or p in wanted)


def main(argv: list[str]) -> int:
    from confluent_kafka import KafkaException, TopicPartition
    from confluent_kafka.admin import OffsetSpec

    p = ToolParser("kafka-get-offsets", DESCRIPTION)
    p.add_argument(
        "--bootstrap-server",
        "--broker-list",
        dest="bootstrap_server",
        metavar="HOST:PORT",
        help="REQUIRED: broker(s) to use",
    )
    p.add_argument(
        "--topic-partitions",
        metavar="SPEC",
        help="comma separated topic-partition patterns: regex:N, regex:N-M (M exclusive), "
        "regex:N-, regex:-M or regex",
    )
    p.add_argument("--topic", metavar="TOPIC", help="topic (regular expression); all if omitted")
    p.add_argument(
        "--partitions", metavar="IDS", help="comma separated partition ids; all if omitted"
    )
    p.add_argument(
        "--time",
        default="latest",
        metavar="TIME",
        help="timestamp in ms, or -1/latest, -2/earliest, -3/max-timestamp, -4/earliest-local, "
        "-5/latest-tiered (default latest)",
    )
    p.add_argument("--command-config", metavar="FILE", help="admin client properties file")
    p.add_argument(
        "--exclude-internal-topics", action="store_true", help="leave out internal topics"
    )
    opts = p.parse_args(argv)
    if not opts.bootstrap_server:
        raise CliError('Missing required argument "[bootstrap-server]"')
    if opts.topic_partitions and (opts.topic or opts.partitions):
        raise CliError("--topic-partitions cannot be used with --topic or --partitions")
    when = parse_time(opts.time)
    if opts.topic_partitions:
        topic_ok, part_ok = filter_from_patterns(opts.topic_partitions)
    else:
        topic_ok, part_ok = filter_from_topic(opts.topic, opts.partitions)
    admin = admin_client(opts.bootstrap_server, load_properties(opts.command_config))
    md = admin.list_topics(timeout=30)
    tps = [
        TopicPartition(t, pid)
        for t, tmeta in md.topics.items()
        if topic_ok(t) and not (opts.exclude_internal_topics and is_internal(t))
        for pid in tmeta.partitions
        if part_ok(t, pid)
    ]
    if not tps:
        raise CliError("Could not match any topic-partitions with the specified filters")
    spec = {
        -1: OffsetSpec.latest(),
        -2: OffsetSpec.earliest(),
        -3: OffsetSpec.max_timestamp(),
    }.get(when) or OffsetSpec.for_timestamp(when)
    futures = admin.list_offsets({tp: spec for tp in tps}, request_timeout=30)
    results: list[tuple[str, int, int]] = []
    for tp, f in futures.items():
        try:
            info = f.result()
        except KafkaException as e:
            print(
                f"Skip getting offsets for topic-partition {tp.topic}-{tp.partition} due to "
                f"error: {kafka_error_message(e)}",
                file=sys.stderr,
            )
            continue
        if info.offset != -1:
            results.append((tp.topic, tp.partition, info.offset))
    for topic, part, offset in sorted(results, key=lambda r: f"{r[0]}-{r[1]}"):
        print(f"{topic}:{part}:{offset}")
    return 0
