"""Shared plumbing for the Kafka-named command-line tools (`kafkapy topics`, `kafkapy configs`).

- `ToolParser`: argparse with Kafka's habits — `--flag value` and `--flag=value`, unique prefixes,
  and a usage error is one line on stderr with exit status 1 (never a traceback).
- `CliError`: raise it anywhere in a tool for a one-line failure; `run_tool` prints it and exits 1.
- Java `.properties` files and `key=value` lists, as Kafka's `--command-config`,
  `--producer.config` and `--producer-property` accept them.
- `admin_client`: a confluent-kafka AdminClient that fails fast, with one line, when no broker of
  the cluster can be reached (librdkafka's own log lines are silenced).
- Java-client property names mapped to librdkafka's, so existing client property files work.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import time
from collections.abc import Callable, Iterable
from typing import Any, NoReturn

from kafkapy.cli.client_security import translate
from kafkapy.cli.errors import CliError
from kafkapy.java_properties import PropertiesFormatError, read_properties

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


class ToolParser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exits 1, as Kafka's tools do."""

    def __init__(self, prog: str, description: str, **kwargs: Any) -> None:
        super().__init__(
            prog=prog,
            description=description,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            **kwargs,
        )

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message} (see --help)", file=sys.stderr)
        raise SystemExit(1)


def add_bootstrap(parser: argparse.ArgumentParser, required: bool = True) -> None:
    parser.add_argument(
        "--bootstrap-server",
        metavar="HOST:PORT[,HOST:PORT...]",
        help=("REQUIRED: " if required else "") + "the broker(s) to connect to first",
    )


def add_command_config(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--command-config",
        metavar="FILE",
        help="a properties file of admin client settings (security, timeouts, ...)",
    )


def warn_deprecated(argv: list[str], renamed: Iterable[tuple[str, str]], line: str) -> None:
    """Print, on stdout as Kafka 4.4's tools do, one line per deprecated flag given in argv, in
    the order of `renamed` (old, new) (the tool's own order, not argv's); `line` formats it."""
    for old, new in renamed:
        if old in argv:
            print(line.format(old=old, new=new))


def require(value: object, flag: str) -> None:
    if value is None or value == [] or value == "":
        raise CliError(f'Missing required argument "[{flag.lstrip("-")}]"')


# -- properties ---------------------------------------------------------------------------------


def parse_properties_text(text: str) -> dict[str, str]:
    """A Java .properties file (kafkapy.java_properties: `key=value`, `key: value` or
    `key value`; `#`/`!` comments; `\\` joins lines; escapes), with the white space that ends
    a line dropped (librdkafka, unlike Kafka's Java clients, does not trim values)."""
    try:
        props = read_properties("\n".join(line.rstrip() for line in text.splitlines()))
    except PropertiesFormatError as e:
        raise CliError(str(e)) from None
    return {k: v for k, v in props.items() if k}


def load_versioned_json(text: str) -> dict[str, Any]:
    """A Kafka tool's JSON input file ({"version": 1, ...}), with Kafka's messages for bad input."""
    try:
        doc = json.loads(text)
    except ValueError:
        raise CliError("The input string is not a valid JSON") from None
    if not isinstance(doc, dict):
        raise CliError("The input string is not a valid JSON object")
    version = doc.get("version", 1)
    if version != 1:
        raise CliError(f"Not supported version field value {version}")
    return doc


def load_properties(path: str | None) -> dict[str, str]:
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            return parse_properties_text(f.read())
    except OSError as e:
        raise CliError(f"Cannot read properties file {path}: {e.strerror}") from None


def parse_key_values(items: Iterable[str] | None, what: str = "property") -> dict[str, str]:
    """`key=value` arguments (each flag may also hold several, comma separated? no: one each)."""
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CliError(f"Invalid {what} {item!r}: expected key=value")
        out[key.strip()] = value
    return out


# -- Java client properties -> librdkafka -------------------------------------------------------

# Java client settings with no librdkafka meaning (serializers, Java-only tuning): dropped.
_JAVA_ONLY = frozenset(
    {
        "key.serializer",
        "value.serializer",
        "key.deserializer",
        "value.deserializer",
        "partitioner.class",
        "interceptor.classes",
        "max.block.ms",
        "metric.reporters",
        "metrics.num.samples",
        "metrics.sample.window.ms",
        "metrics.recording.level",
        "default.api.timeout.ms",
        "retry.backoff.max.ms",
        "reconnect.backoff.max.ms",
        "exclude.internal.topics",
        "max.poll.records",
        "check.crcs",
        "connections.max.idle.ms",
        "client.dns.lookup",
        "internal.leave.group.on.close",
        "partitioner.ignore.keys",
        "partitioner.adaptive.partitioning.enable",
        "partitioner.availability.timeout.ms",
        "enable.metrics.push",
    }
)

_RENAMED = {
    "send.buffer.bytes": "socket.send.buffer.bytes",
    "receive.buffer.bytes": "socket.receive.buffer.bytes",
    "max.partition.fetch.bytes": "max.partition.fetch.bytes",
    "fetch.max.wait.ms": "fetch.wait.max.ms",
}


def java_to_librdkafka(props: dict[str, str]) -> dict[str, str]:
    """Translate Java client property names to librdkafka's; drop Java-only ones."""
    out: dict[str, str] = {}
    for key, value in translate(props).items():
        if key in _JAVA_ONLY:
            continue
        if key == "buffer.memory":
            try:
                out["queue.buffering.max.kbytes"] = str(max(1, int(value) // 1024))
            except ValueError:
                raise CliError(f"Invalid value {value} for configuration buffer.memory") from None
            continue
        if key == "compression.type" and value == "none":
            out[key] = "none"
            continue
        out[_RENAMED.get(key, key)] = value
    return out


def quiet_logger() -> logging.Logger:
    """A logger that swallows librdkafka's log lines (errors are reported by the tools)."""
    logger = logging.getLogger("kafkapy.cli.librdkafka")
    logger.propagate = False
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
    return logger


def client_config(bootstrap: str, extra: dict[str, str] | None = None) -> dict[str, Any]:
    conf: dict[str, Any] = java_to_librdkafka(dict(extra or {}))
    conf["bootstrap.servers"] = bootstrap
    conf["logger"] = quiet_logger()
    return conf


# -- connecting ---------------------------------------------------------------------------------


def kafka_error_message(e: BaseException) -> str:
    """One line for a confluent-kafka exception (KafkaException wraps a KafkaError)."""
    from confluent_kafka import KafkaError, KafkaException

    if isinstance(e, KafkaException) and e.args and isinstance(e.args[0], KafkaError):
        err: KafkaError = e.args[0]
        return err.str() or err.name()
    if isinstance(e, KafkaError):
        return e.str() or e.name()
    return str(e) or type(e).__name__


def admin_client(bootstrap: str, props: dict[str, str] | None = None, timeout: float = 30.0) -> Any:
    """An AdminClient whose cluster answered a metadata request; CliError if none can be reached."""
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import AdminClient

    down: list[str] = []

    def on_error(err: KafkaError) -> None:
        if err.code() in (KafkaError._ALL_BROKERS_DOWN, KafkaError._RESOLVE):
            down.append(err.str())

    conf = client_config(bootstrap, props)
    conf.setdefault("socket.connection.setup.timeout.ms", "10000")
    conf["error_cb"] = on_error
    try:
        admin = AdminClient(conf)
    except KafkaException as e:
        raise CliError(kafka_error_message(e)) from None
    deadline = time.monotonic() + timeout
    while True:
        try:
            admin.list_topics(timeout=0.5)
            return admin
        except KafkaException:
            pass
        admin.poll(0)
        if down or time.monotonic() >= deadline:
            raise CliError(f"Cannot connect to the cluster at {bootstrap}: no broker reachable")


def result(future: Any, timeout: float | None = None) -> Any:
    """future.result() with confluent errors turned into CliError."""
    from confluent_kafka import KafkaException

    try:
        return future.result(timeout=timeout) if timeout is not None else future.result()
    except KafkaException as e:
        raise CliError(kafka_error_message(e)) from None


def topic_id_string(uuid: Any) -> str:
    """Kafka's Uuid text form: URL-safe base64 of the 16 bytes, no padding."""
    if uuid is None:
        return ""
    try:
        msb = uuid.get_most_significant_bits() & 0xFFFFFFFFFFFFFFFF
        lsb = uuid.get_least_significant_bits() & 0xFFFFFFFFFFFFFFFF
    except AttributeError:
        return str(uuid).replace("+", "-").replace("/", "_").rstrip("=")
    import base64

    raw = msb.to_bytes(8, "big") + lsb.to_bytes(8, "big")
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def include_list(pattern: str) -> Callable[[str], bool]:
    """Kafka's IncludeList: a Java regex (commas mean 'or') matched against the whole name."""
    cleaned = pattern.strip().replace(",", "|").replace(" ", "")
    cleaned = re.sub(r"^[\"']+", "", cleaned)
    cleaned = re.sub(r"[\"']+$", "", cleaned)
    try:
        rx = re.compile(cleaned)
    except re.error as e:
        raise CliError(f"{pattern} is an invalid regex: {e}") from None
    return lambda name: rx.fullmatch(name) is not None


def is_internal(topic: str) -> bool:
    return topic in INTERNAL_TOPICS


def run_tool(main: Callable[[list[str]], int], argv: list[str]) -> int:
    """Run a tool's main with one-line errors for user mistakes and unreachable clusters."""
    try:
        return main(argv)
    except CliError as e:
        print(f"Error: {e}", file=sys.stderr)
        return e.code
    except SystemExit as e:  # --help (0) and usage errors (1) from argparse
        return e.code if isinstance(e.code, int) else 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        try:
            sys.stdout = open("/dev/null", "w")
        except OSError:
            pass
        return 0
