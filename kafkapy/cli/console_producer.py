"""`kafkapy console-producer` (kafka-console-producer.sh): each line of stdin becomes one record.

Line parsing is Kafka's LineMessageReader: with `parse.headers=true` a line starts with headers
(`h1:v1,h2:v2` then `headers.delimiter`, default TAB), with `parse.key=true` the key comes next
(ended by `key.separator`, default TAB), and the rest is the value. `null.marker` turns a matching
key, value or header value into null. At end of input everything is flushed before exit.
The producer is idempotent unless a setting conflicts, as Kafka's (the Java producer's default).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field

from kafkapy.cli.common import (
    CliError,
    ToolParser,
    client_config,
    kafka_error_message,
    load_properties,
    parse_key_values,
    warn_deprecated,
)

DESCRIPTION = "Read lines from standard input and publish them to a Kafka topic."


def build_parser() -> ToolParser:
    p = ToolParser("kafka-console-producer", DESCRIPTION)
    p.add_argument("--bootstrap-server", metavar="HOST:PORT", help="REQUIRED: broker(s) to use")
    p.add_argument(
        "--broker-list",
        metavar="HOST:PORT",
        help="old name of --bootstrap-server (ignored if both)",
    )
    p.add_argument("--topic", metavar="TOPIC", help="REQUIRED: the topic to write to")
    p.add_argument(
        "--sync", action="store_true", help="send each record and wait for it before the next"
    )
    p.add_argument(
        "--compression-codec",
        nargs="?",
        const="gzip",
        metavar="CODEC",
        help="none, gzip, snappy, lz4 or zstd (gzip when given without a value)",
    )
    p.add_argument("--batch-size", type=int, metavar="BYTES", help="batch size (batch.size)")
    p.add_argument(
        "--message-send-max-retries", type=int, default=3, metavar="N", help="retries (default 3)"
    )
    p.add_argument(
        "--retry-backoff-ms", type=int, default=100, metavar="MS", help="wait before a retry"
    )
    p.add_argument(
        "--timeout",
        type=int,
        default=1000,
        metavar="MS",
        help="how long a record may wait for its batch to fill (linger.ms, default 1000)",
    )
    p.add_argument(
        "--request-required-acks",
        default="-1",
        metavar="ACKS",
        help="acks the broker must collect: 0, 1 or -1/all (default -1)",
    )
    p.add_argument(
        "--request-timeout-ms", type=int, default=1500, metavar="MS", help="produce request timeout"
    )
    p.add_argument("--metadata-expiry-ms", type=int, metavar="MS", help="metadata.max.age.ms")
    p.add_argument("--max-block-ms", type=int, metavar="MS", help="accepted for compatibility")
    p.add_argument("--max-memory-bytes", type=int, metavar="BYTES", help="producer buffer memory")
    p.add_argument(
        "--max-partition-memory-bytes", type=int, metavar="BYTES", help="batch.size per partition"
    )
    p.add_argument("--socket-buffer-size", type=int, metavar="BYTES", help="TCP send buffer size")
    p.add_argument(
        "--line-reader", metavar="CLASS", help="only Kafka's default LineMessageReader is supported"
    )
    p.add_argument(
        "--property",
        "--reader-property",
        action="append",
        dest="property",
        metavar="KEY=VALUE",
        help="line reader settings: parse.key, key.separator, parse.headers, headers.delimiter, "
        "headers.separator, headers.key.separator, ignore.error, null.marker",
    )
    p.add_argument("--reader-config", metavar="FILE", help="properties file for the line reader")
    p.add_argument(
        "--producer-property",
        "--command-property",
        action="append",
        dest="producer_property",
        metavar="KEY=VALUE",
        help="a producer client setting (wins over --producer.config)",
    )
    p.add_argument(
        "--producer.config",
        "--command-config",
        dest="producer_config",
        metavar="FILE",
        help="a producer client properties file",
    )
    return p


# -- LineMessageReader --------------------------------------------------------------------------


class ParseError(Exception):
    pass


@dataclass
class LineReader:
    parse_key: bool = False
    key_separator: str = "\t"
    parse_headers: bool = False
    headers_delimiter: str = "\t"
    headers_separator: str = ","
    headers_key_separator: str = ":"
    ignore_error: bool = False
    null_marker: str | None = None
    line_number: int = field(default=0)

    @classmethod
    def from_props(cls, props: dict[str, str]) -> LineReader:
        r = cls()

        def flag(name: str) -> bool:
            return props[name].strip().lower() == "true"

        if "parse.key" in props:
            r.parse_key = flag("parse.key")
        if "key.separator" in props:
            r.key_separator = props["key.separator"]
        if "parse.headers" in props:
            r.parse_headers = flag("parse.headers")
        if "headers.delimiter" in props:
            r.headers_delimiter = props["headers.delimiter"]
        if "headers.separator" in props:
            r.headers_separator = props["headers.separator"]
        if "headers.key.separator" in props:
            r.headers_key_separator = props["headers.key.separator"]
        if "ignore.error" in props:
            r.ignore_error = flag("ignore.error")
        if "null.marker" in props:
            r.null_marker = props["null.marker"]
        pairs = [
            ("headers.delimiter", r.headers_delimiter, "headers.separator", r.headers_separator),
            (
                "headers.delimiter",
                r.headers_delimiter,
                "headers.key.separator",
                r.headers_key_separator,
            ),
            (
                "headers.separator",
                r.headers_separator,
                "headers.key.separator",
                r.headers_key_separator,
            ),
        ]
        for n1, v1, n2, v2 in pairs:
            if v1 == v2:
                raise CliError(f"{n1} and {n2} may not be equal")
        if r.null_marker is not None:
            for name, value in (
                ("key.separator", r.key_separator),
                ("headers.separator", r.headers_separator),
                ("headers.delimiter", r.headers_delimiter),
                ("headers.key.separator", r.headers_key_separator),
            ):
                if value == r.null_marker:
                    raise CliError(f"null.marker and {name} may not be equal")
        return r

    def _part(self, enabled: bool, line: str, start: int, sep: str, what: str) -> str | None:
        if not enabled:
            return None
        i = line.find(sep, start)
        if i == -1:
            if self.ignore_error:
                return None
            raise ParseError(f"No {what} found on line number {self.line_number}: '{line}'")
        return line[start:i]

    def _null(self, s: str | None) -> bytes | None:
        if s is None or s == self.null_marker:
            return None
        return s.encode("utf-8")

    def parse(self, line: str) -> tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]]]:
        """(key, value, headers) of one line (without its line terminator)."""
        self.line_number += 1
        headers_text = self._part(
            self.parse_headers, line, 0, self.headers_delimiter, "headers delimiter"
        )
        header_off = 0 if headers_text is None else len(headers_text) + len(self.headers_delimiter)
        key = self._part(self.parse_key, line, header_off, self.key_separator, "key separator")
        key_off = 0 if key is None else len(key) + len(self.key_separator)
        value = line[header_off + key_off :]
        headers: list[tuple[str, bytes | None]] = []
        if headers_text is not None and headers_text != self.null_marker:
            for pair in re.split(self.headers_separator, headers_text):
                i = pair.find(self.headers_key_separator)
                if i == -1:
                    if self.ignore_error:
                        headers.append((pair, None))
                        continue
                    raise ParseError(
                        f"No header key separator found in pair '{pair}' on line number "
                        f"{self.line_number}"
                    )
                hkey = pair[:i]
                if hkey == self.null_marker:
                    raise ParseError(
                        f"Header keys should not be equal to the null marker '{self.null_marker}' "
                        "as they can't be null"
                    )
                hval = pair[i + len(self.headers_key_separator) :]
                headers.append((hkey, None if hval == self.null_marker else hval.encode("utf-8")))
        return (None if key is None else self._null(key)), self._null(value), headers


def read_lines(stream) -> Iterator[str]:
    """Lines of a binary stream as text without terminators (\\n, \\r\\n, \\r), as readLine."""
    for raw in stream:
        text = raw.decode("utf-8", errors="replace")
        if text.endswith("\n"):
            text = text[:-1]
        if text.endswith("\r"):
            text = text[:-1]
        yield text


# -- producer -----------------------------------------------------------------------------------


def producer_config(opts) -> dict:
    props = load_properties(opts.producer_config)
    props.update(parse_key_values(opts.producer_property, "producer property"))
    bootstrap = opts.bootstrap_server or opts.broker_list
    conf = {
        "client.id": "console-producer",
        "partitioner": "murmur2_random",  # the Java client's partitioner: same key, same partition
        "acks": "all"
        if opts.request_required_acks in ("-1", "all")
        else opts.request_required_acks,
        "linger.ms": opts.timeout,
        "retries": opts.message_send_max_retries,
        "retry.backoff.ms": opts.retry_backoff_ms,
        "request.timeout.ms": opts.request_timeout_ms,
    }
    if opts.compression_codec:
        if opts.compression_codec not in ("none", "gzip", "snappy", "lz4", "zstd"):
            raise CliError(
                f"Invalid compression codec {opts.compression_codec!r}: use none, gzip, snappy, "
                "lz4 or zstd"
            )
        conf["compression.type"] = opts.compression_codec
    batch = opts.max_partition_memory_bytes or opts.batch_size
    if batch:
        conf["batch.size"] = batch
    if opts.metadata_expiry_ms:
        conf["metadata.max.age.ms"] = opts.metadata_expiry_ms
    if opts.max_memory_bytes:
        conf["queue.buffering.max.kbytes"] = max(1, opts.max_memory_bytes // 1024)
    if opts.socket_buffer_size:
        conf["socket.send.buffer.bytes"] = opts.socket_buffer_size
    conf = {k: str(v) for k, v in conf.items()}
    conf.update(props)  # explicit client settings win over the tool's defaults
    if idempotent_by_default(conf):
        conf["enable.idempotence"] = "true"
    full = client_config(bootstrap, conf)
    return full


def _setting(conf: dict[str, str], *names: str) -> str | None:
    """The value of the first of ``names`` (Java's name, then librdkafka's alias) that is set."""
    return next((conf[n].strip() for n in names if n in conf), None)


def idempotent_by_default(conf: dict[str, str]) -> bool:
    """Whether Kafka's Java producer would be idempotent with ``conf`` without being asked:
    enable.idempotence defaults to true (Kafka 3.0+) and is turned off when not set explicitly
    and acks is not all, retries is 0 or more than 5 requests may be in flight
    (ProducerConfig.postProcessAndValidateIdempotenceConfigs). Explicit settings are left to
    the client, which refuses the conflicting ones as Java's ConfigException does."""
    if "enable.idempotence" in conf:
        return False
    acks = _setting(conf, "acks", "request.required.acks")
    retries = _setting(conf, "retries", "message.send.max.retries")
    in_flight = _setting(conf, "max.in.flight.requests.per.connection", "max.in.flight")
    try:
        return (
            (acks is None or acks.lower() in ("all", "-1"))
            and (retries is None or int(retries) != 0)
            and (in_flight is None or int(in_flight) <= 5)
        )
    except ValueError:  # the client reports the bad value
        return False


def main(argv: list[str]) -> int:
    from confluent_kafka import KafkaException, Producer

    opts = build_parser().parse_args(argv)
    warn_deprecated(argv, (("--producer-property", "--command-property"),
                           ("--producer.config", "--command-config"),
                           ("--property", "--reader-property")),
                    "Warning: {old} is deprecated and will be removed in a future version. "
                    "Use {new} instead.")
    if not (opts.bootstrap_server or opts.broker_list):
        raise CliError('Missing required argument "[bootstrap-server]"')
    if not opts.topic:
        raise CliError('Missing required argument "[topic]"')
    if opts.line_reader and not opts.line_reader.endswith("LineMessageReader"):
        raise CliError(f"Unsupported line reader {opts.line_reader}")
    reader_props = load_properties(opts.reader_config)
    reader_props.update(parse_key_values(opts.property, "property"))
    reader = LineReader.from_props(reader_props)
    conf = producer_config(opts)
    failures: list[str] = []

    def on_delivery(err, msg) -> None:
        if err is not None:
            failures.append(err.str())
            if len(failures) <= 5:
                print(
                    f"Error when sending message to topic {opts.topic}: {err.str()}",
                    file=sys.stderr,
                )

    try:
        producer = Producer(conf)
    except KafkaException as e:
        raise CliError(kafka_error_message(e)) from None
    topic = opts.topic
    prompt = sys.stdin.isatty()
    try:
        for line in _lines_with_prompt(prompt):
            try:
                key, value, headers = reader.parse(line)
            except ParseError as e:
                raise CliError(str(e)) from None
            while True:
                try:
                    producer.produce(
                        topic,
                        value=value,
                        key=key,
                        headers=headers or None,
                        on_delivery=on_delivery,
                    )
                    break
                except BufferError:
                    producer.poll(0.1)
                except KafkaException as e:
                    raise CliError(kafka_error_message(e)) from None
            if opts.sync:
                producer.flush()
            else:
                producer.poll(0)
    except KeyboardInterrupt:
        pass
    finally:
        remaining = producer.flush(30)
        if remaining:
            failures.append(f"{remaining} records not delivered")
            print(f"Error: {remaining} records could not be delivered", file=sys.stderr)
    return 1 if failures else 0


def _lines_with_prompt(prompt: bool) -> Iterator[str]:
    if not prompt:
        yield from read_lines(sys.stdin.buffer)
        return
    while True:
        sys.stdout.write(">")
        sys.stdout.flush()
        raw = sys.stdin.buffer.readline()
        if not raw:
            return
        yield from read_lines([raw])
