"""The `kafkapy` command: `kafkapy server [server.properties] [--override key=value ...]`.

Configuration errors are reported as one line on stderr with exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys

import trio

from kafkapy.logs import setup_logging
from kafkapy.metadata.errors import MetadataError
from kafkapy.storage.errors import StorageError


def _server(args: argparse.Namespace) -> int:
    from kafkapy.server.broker import run_broker
    from kafkapy.server.config.broker_config import BrokerConfig, ConfigError

    overrides: dict[str, str] = {}
    for item in args.override or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            print(f"kafkapy: error: --override expects key=value, got {item!r}", file=sys.stderr)
            return 2
        overrides[key.strip()] = value.strip()
    try:
        if args.config:
            config = BrokerConfig.from_file(args.config, overrides)
        else:
            config = BrokerConfig.from_properties(overrides)
    except (ConfigError, OSError) as e:
        print(f"kafkapy: error: {e}", file=sys.stderr)
        return 2
    code = 0
    try:
        code = trio.run(run_broker, config)
    except KeyboardInterrupt:
        pass
    except (OSError, MetadataError, StorageError, BaseExceptionGroup) as e:
        # cannot bind the listener, data dir of another cluster, broker id taken, store locked
        cause = _startup_cause(e)
        if cause is None:
            raise
        logging.getLogger("kafkapy").debug("startup failed", exc_info=True)
        print(f"kafkapy: error: {cause}", file=sys.stderr)
        return 1
    return code


STARTUP_ERRORS = (OSError, MetadataError, StorageError)


def _startup_cause(e: BaseException) -> BaseException | None:
    """The startup error inside `e` (trio wraps task errors in exception groups), if any."""
    if isinstance(e, BaseExceptionGroup):
        for inner in e.exceptions:
            found = _startup_cause(inner)
            if found is not None:
                return found
        return None
    return e if isinstance(e, STARTUP_ERRORS) else None


def main(argv: list[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else argv
    if given[:1] == ["dump-log"]:  # segment dump tool (kafka-dump-log.sh)
        from kafkapy.cli.dump_log import main as dump_log_main

        return dump_log_main(given[1:])
    from kafkapy.cli.tools import TOOLS, dispatch, find_tool

    tool = find_tool(sys.argv[1:] if argv is None else argv)
    if tool is not None:  # Kafka-named client tools (topics, console-producer, ...)
        return dispatch(*tool)
    parser = argparse.ArgumentParser(prog="kafkapy", description="A Kafka broker in Python.")
    parser.add_argument("--log-level", default=None, help="DEBUG, INFO (default), WARNING, ERROR")
    sub = parser.add_subparsers(dest="command", required=True)
    server = sub.add_parser("server", help="run a broker")
    server.add_argument("config", nargs="?", help="a Kafka server.properties file")
    server.add_argument(
        "--override", action="append", metavar="KEY=VALUE", help="override a config property"
    )
    for name, (_module, summary) in TOOLS.items():
        sub.add_parser(name, help=summary, add_help=False)
    sub.add_parser("dump-log", help="print log segments and indexes", add_help=False)
    args = parser.parse_args(argv)
    setup_logging(args.log_level)
    if args.command == "server":
        return _server(args)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
