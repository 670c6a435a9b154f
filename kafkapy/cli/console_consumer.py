"""`kafkapy console-consumer` (kafka-console-consumer.sh): print records to stdout.

Records are printed as Kafka's DefaultMessageFormatter does (print.timestamp, print.partition,
print.offset, print.headers, print.key, print.value, key.separator, line.separator,
headers.separator, null.literal). On exit — end of --max-messages, --timeout-ms without records,
Ctrl-C or SIGTERM — the consumer closes cleanly (committing offsets when a group is used) and
"Processed a total of N messages" goes to stderr.

With --group (or group.id in the consumer properties) the consumer joins that group and
subscribes. Without one, Kafka's tool joins a throw-away random group with auto-commit off; this
tool instead assigns itself every partition of the matching topics (re-checked every few seconds
for new partitions and topics), which reads the same records and needs no group coordinator.
"""

from __future__ import annotations

import signal
import sys
import time
from dataclasses import dataclass

from kafkapy.cli.common import (
    CliError,
    ToolParser,
    client_config,
    include_list,
    is_internal,
    kafka_error_message,
    load_properties,
    parse_key_values,
    warn_deprecated,
)

DESCRIPTION = "This tool helps to read data from Kafka topics and outputs it to standard output."

EARLIEST, LATEST = -2, -1


def build_parser() -> ToolParser:
    p = ToolParser("kafka-console-consumer", DESCRIPTION)
    p.add_argument("--bootstrap-server", metavar="HOST:PORT", help="REQUIRED: broker(s) to use")
    p.add_argument("--topic", metavar="TOPIC", help="the topic to read")
    p.add_argument(
        "--include", "--whitelist", dest="include", metavar="REGEX", help="read all topics matching"
    )
    p.add_argument(
        "--partition",
        type=int,
        metavar="P",
        help="read only this partition (from its end unless --offset or --from-beginning)",
    )
    p.add_argument(
        "--offset",
        metavar="OFFSET",
        help="with --partition: a non-negative offset, 'earliest' or 'latest' (default)",
    )
    p.add_argument(
        "--from-beginning",
        action="store_true",
        help="start at the earliest record when there is no committed offset",
    )
    p.add_argument("--group", metavar="GROUP", help="the consumer group to join")
    p.add_argument("--max-messages", type=int, metavar="N", help="exit after printing N records")
    p.add_argument(
        "--timeout-ms", type=int, metavar="MS", help="exit when no record arrives for MS ms"
    )
    p.add_argument(
        "--isolation-level",
        choices=["read_uncommitted", "read_committed"],
        help="read_committed hides records of open or aborted transactions (default "
        "read_uncommitted, unless a consumer property sets isolation.level)",
    )
    p.add_argument(
        "--property",
        "--formatter-property",
        action="append",
        dest="property",
        metavar="KEY=VALUE",
        help="formatter settings: print.timestamp, print.key, print.offset, print.partition, "
        "print.headers, print.value, key.separator, line.separator, headers.separator, "
        "null.literal",
    )
    p.add_argument("--formatter-config", metavar="FILE", help="properties file for the formatter")
    p.add_argument(
        "--formatter", metavar="CLASS", help="only Kafka's DefaultMessageFormatter is supported"
    )
    p.add_argument(
        "--consumer-property",
        "--command-property",
        action="append",
        dest="consumer_property",
        metavar="KEY=VALUE",
        help="a consumer client setting",
    )
    p.add_argument(
        "--consumer.config",
        "--command-config",
        dest="consumer_config",
        metavar="FILE",
        help="a consumer client properties file (--consumer-property wins)",
    )
    p.add_argument("--key-deserializer", metavar="CLASS", help="accepted; keys print as text")
    p.add_argument("--value-deserializer", metavar="CLASS", help="accepted; values print as text")
    p.add_argument(
        "--skip-message-on-error", action="store_true", help="accepted for compatibility"
    )
    return p


# -- DefaultMessageFormatter --------------------------------------------------------------------


@dataclass
class Formatter:
    print_timestamp: bool = False
    print_key: bool = False
    print_value: bool = True
    print_partition: bool = False
    print_offset: bool = False
    print_headers: bool = False
    key_separator: bytes = b"\t"
    line_separator: bytes = b"\n"
    headers_separator: bytes = b","
    null_literal: bytes = b"null"

    @classmethod
    def from_props(cls, props: dict[str, str]) -> Formatter:
        f = cls()
        for name in (
            "print.timestamp",
            "print.key",
            "print.value",
            "print.partition",
            "print.offset",
            "print.headers",
        ):
            if name in props:
                setattr(f, name.replace(".", "_"), props[name].strip().lower() == "true")
        for name in ("key.separator", "line.separator", "headers.separator", "null.literal"):
            if name in props:
                setattr(f, name.replace(".", "_"), unescape(props[name]).encode("utf-8"))
        return f

    def format(
        self,
        *,
        partition: int,
        offset: int,
        timestamp: tuple[int, int],
        key: bytes | None,
        value: bytes | None,
        headers: list[tuple[str, bytes | None]] | None,
    ) -> bytes:
        out: list[bytes] = []
        ksep, lsep = self.key_separator, self.line_separator

        def sep(more: bool) -> None:
            out.append(ksep if more else lsep)

        if self.print_timestamp:
            ts_type, ts = timestamp
            if ts_type == 1:
                out.append(f"CreateTime:{ts}".encode())
            elif ts_type == 2:
                out.append(f"LogAppendTime:{ts}".encode())
            else:
                out.append(b"NO_TIMESTAMP")
            sep(
                self.print_partition
                or self.print_offset
                or self.print_headers
                or self.print_key
                or self.print_value
            )
        if self.print_partition:
            out.append(f"Partition:{partition}".encode())
            sep(self.print_offset or self.print_headers or self.print_key or self.print_value)
        if self.print_offset:
            out.append(f"Offset:{offset}".encode())
            sep(self.print_headers or self.print_key or self.print_value)
        if self.print_headers:
            if not headers:
                out.append(b"NO_HEADERS")
            else:
                out.append(
                    self.headers_separator.join(
                        k.encode("utf-8") + b":" + (self.null_literal if v is None else v)
                        for k, v in headers
                    )
                )
            sep(self.print_key or self.print_value)
        if self.print_key:
            out.append(self.null_literal if key is None else key)
            sep(self.print_value)
        if self.print_value:
            out.append(self.null_literal if value is None else value)
            out.append(lsep)
        return b"".join(out)


def unescape(s: str) -> str:
    """Separators given on the command line as \\t, \\n, \\r mean the control characters."""
    return s.replace("\\t", "\t").replace("\\n", "\n").replace("\\r", "\r")


def parse_offset(text: str | None) -> int:
    if text is None:
        return LATEST
    low = text.lower()
    if low == "earliest":
        return EARLIEST
    if low == "latest":
        return LATEST
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise CliError(
            f"The provided offset value '{text}' is incorrect. Valid values are 'earliest', "
            "'latest', or a non-negative long."
        )
    return value


def check_args(opts, consumer_props: dict[str, str]) -> str | None:
    """Validate like Kafka's ConsoleConsumerOptions; returns the group id in use, if any."""
    if bool(opts.topic) == bool(opts.include):
        raise CliError("Exactly one of --topic or --include must be specified")
    if opts.partition is not None:
        if not opts.topic:
            raise CliError("The topic is required when partition is specified.")
        if opts.from_beginning and opts.offset is not None:
            raise CliError("Options from-beginning and offset cannot be specified together.")
    elif opts.offset is not None:
        raise CliError("The partition is required when offset is specified.")
    if not opts.bootstrap_server:
        raise CliError('Missing required argument "[bootstrap-server]"')
    groups = {g for g in (opts.group, consumer_props.get("group.id")) if g}
    if len(groups) > 1:
        detected = ", ".join(f"'{g}'" for g in sorted(groups))
        raise CliError(
            "The group ids provided in different places (directly using '--group', via "
            f"'--consumer-property', or via '--consumer.config') do not match. Detected group "
            f"ids: {detected}"
        )
    if groups and opts.partition is not None:
        raise CliError("Options group and partition cannot be specified together.")
    reset = consumer_props.get("auto.offset.reset")
    if reset is not None and opts.from_beginning and reset != "earliest":
        raise CliError(
            f"Can't simultaneously specify --from-beginning and 'auto.offset.reset={reset}', "
            "please remove one option"
        )
    if opts.formatter and not opts.formatter.endswith("DefaultMessageFormatter"):
        raise CliError(f"Unsupported formatter {opts.formatter}")
    return next(iter(groups), None)


def _down_codes() -> tuple[int, ...]:
    from confluent_kafka import KafkaError

    return (KafkaError._ALL_BROKERS_DOWN, KafkaError._RESOLVE)


# errors Java's consumer raises from poll(), ending the console consumer: authorization
# (topic, group, cluster) and authentication failures
TERMINATING_CODES = frozenset({29, 30, 31, 58})


class Stop:
    """Set by SIGINT/SIGTERM; the poll loop checks it between short polls."""

    def __init__(self) -> None:
        self.requested = False

    def __call__(self, signum, frame) -> None:
        self.requested = True


def main(argv: list[str]) -> int:
    from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, Consumer, KafkaException

    opts = build_parser().parse_args(argv)
    warn_deprecated(argv, (("--consumer-property", "--command-property"),
                           ("--consumer.config", "--command-config"),
                           ("--property", "--formatter-property")),
                    "Option {old} is deprecated and will be removed in a future version. "
                    "Use {new} instead.")
    consumer_props = load_properties(opts.consumer_config)
    consumer_props.update(parse_key_values(opts.consumer_property, "consumer property"))
    group = check_args(opts, consumer_props)
    fmt_props = load_properties(opts.formatter_config)
    fmt_props.update(parse_key_values(opts.property, "property"))
    formatter = Formatter.from_props(fmt_props)
    start = parse_offset(opts.offset)
    if opts.offset is None and opts.from_beginning:
        start = EARLIEST

    conf = dict(consumer_props)
    conf.setdefault("auto.offset.reset", "earliest" if opts.from_beginning else "latest")
    conf.setdefault("client.id", "console-consumer")
    # Kafka's maybeMergeOptions: the flag when given, else a consumer property, else the default
    if opts.isolation_level is not None or "isolation.level" not in conf:
        conf["isolation.level"] = opts.isolation_level or "read_uncommitted"
    conf.setdefault("enable.partition.eof", "false")
    if group:
        conf["group.id"] = group
    else:
        conf["group.id"] = f"console-consumer-{int(time.time() * 1000) % 100000}"
        conf.setdefault("enable.auto.commit", "false")
    full = client_config(opts.bootstrap_server, conf)
    down: list[str] = []
    _DOWN = _down_codes()
    full["error_cb"] = lambda err: down.append(err.str()) if err.code() in _DOWN else None
    try:
        consumer = Consumer(full)
    except KafkaException as e:
        raise CliError(kafka_error_message(e)) from None

    stop = Stop()
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    out = sys.stdout.buffer
    count = 0
    exit_code = 0
    assigned: set[tuple[str, int]] = set()

    def offset_for(spec: int) -> int:
        return OFFSET_BEGINNING if spec == EARLIEST else OFFSET_END if spec == LATEST else spec

    def refresh_assignment(first: bool) -> None:
        from confluent_kafka import TopicPartition

        deadline = time.monotonic() + (30 if first else 5)
        while True:
            try:
                md = consumer.list_topics(timeout=0.5)
                break
            except KafkaException:
                consumer.poll(0)
                if not first:
                    return
                if down or time.monotonic() > deadline:
                    raise CliError(
                        f"Cannot connect to the cluster at {opts.bootstrap_server}: no broker "
                        "reachable"
                    ) from None
        if opts.include:
            allowed = include_list(opts.include)
            topics = [t for t in md.topics if allowed(t) and not is_internal(t)]
        else:
            if first and opts.topic not in md.topics:  # hidden from Metadata when unauthorized
                asked = consumer.list_topics(opts.topic, timeout=10).topics.get(opts.topic)
                if asked is not None and asked.error is not None \
                        and asked.error.code() in TERMINATING_CODES:
                    raise KafkaException(asked.error)
            topics = [opts.topic] if opts.topic in md.topics else []
        new = []
        for t in sorted(topics):
            parts = md.topics[t].partitions
            for p in sorted(parts):
                if opts.partition is not None and p != opts.partition:
                    continue
                if (t, p) not in assigned:
                    # partitions that appear later are read from their start, as a new
                    # subscription with auto.offset.reset would for data produced since
                    initial = start if first or opts.partition is not None else EARLIEST
                    if first and opts.partition is None and start == LATEST:
                        initial = LATEST
                    new.append(TopicPartition(t, p, offset_for(initial)))
                    assigned.add((t, p))
        if first and opts.partition is not None and not new:
            raise CliError(f"Partition {opts.partition} of topic {opts.topic} does not exist")
        if new:
            consumer.incremental_assign(new)

    try:
        if group:
            if opts.include:
                consumer.subscribe(["^" + opts.include.strip().replace(",", "|")])
            else:
                consumer.subscribe([opts.topic])
        else:
            refresh_assignment(first=True)
        last_record = time.monotonic()
        last_refresh = time.monotonic()
        while not stop.requested:
            if opts.max_messages is not None and count >= opts.max_messages:
                break
            want = 500
            if opts.max_messages is not None:
                want = max(1, min(want, opts.max_messages - count))
            msgs = consumer.consume(num_messages=want, timeout=0.2)
            now = time.monotonic()
            if not group and now - last_refresh > 3:
                refresh_assignment(first=False)
                last_refresh = now
            if not msgs:
                if opts.timeout_ms is not None and (now - last_record) * 1000 >= opts.timeout_ms:
                    break
                continue
            chunk: list[bytes] = []
            for m in msgs:
                err = m.error()
                if err is not None:
                    if err.fatal():
                        raise CliError(err.str())
                    if err.code() in TERMINATING_CODES:
                        raise KafkaException(err)
                    continue
                last_record = now
                chunk.append(
                    formatter.format(
                        partition=m.partition(),
                        offset=m.offset(),
                        timestamp=m.timestamp(),
                        key=m.key(),
                        value=m.value(),
                        headers=m.headers(),
                    )
                )
                count += 1
            out.write(b"".join(chunk))
            out.flush()
    except BrokenPipeError:
        exit_code = 0
    except CliError:
        raise
    except KafkaException as e:
        print(
            f"Error processing message, terminating consumer process: {kafka_error_message(e)}",
            file=sys.stderr,
        )
        exit_code = 1
    finally:
        try:
            consumer.close()
        except (KafkaException, RuntimeError):
            pass
        print(f"Processed a total of {count} messages", file=sys.stderr)
    return exit_code
