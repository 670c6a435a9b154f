"""The Kafka-named tools behind `kafkapy <tool>`: name -> (module, one-line summary).

Each module has `main(argv) -> int` with its own Kafka-compatible flags; `dispatch` runs it with
one-line errors (kafkapy.cli.common.run_tool). Modules are imported only when their tool runs.
"""

from __future__ import annotations

import importlib

TOOLS: dict[str, tuple[str, str]] = {
    "topics": ("kafkapy.cli.topics", "create, list, describe, alter and delete topics"),
    "console-producer": ("kafkapy.cli.console_producer", "send lines of stdin as records"),
    "console-consumer": ("kafkapy.cli.console_consumer", "print records to stdout"),
    "consumer-groups": ("kafkapy.cli.consumer_groups", "list, describe, reset and delete groups"),
    "share-groups": (
        "kafkapy.cli.share_groups",
        "list, describe, reset and delete share groups (KIP-932)",
    ),
    "streams-groups": ("kafkapy.cli.streams_groups", "list and describe streams groups"),
    "configs": ("kafkapy.cli.configs", "describe and alter topic and broker configs"),
    "acls": ("kafkapy.cli.acls", "add, remove and list ACLs"),
    "get-offsets": ("kafkapy.cli.get_offsets", "print partition offsets (earliest/latest/time)"),
    "delete-records": ("kafkapy.cli.delete_records", "delete records below given offsets"),
    "broker-api-versions": ("kafkapy.cli.broker_api_versions", "list each broker's API versions"),
    "producer-perf-test": ("kafkapy.cli.producer_perf", "measure producer throughput and latency"),
    "consumer-perf-test": ("kafkapy.cli.consumer_perf", "measure consumer throughput"),
    "zookeeper-shell": ("kafkapy.cli.zookeeper_shell", "ls, get and stat znodes in ZooKeeper"),
    "transactions": (
        "kafkapy.cli.transactions",
        "list, describe, find hanging and abort transactions",
    ),
    "delegation-tokens": (
        "kafkapy.cli.delegation_tokens",
        "create, renew, expire and describe delegation tokens",
    ),
    "reassign-partitions": (
        "kafkapy.cli.reassign_partitions",
        "move partition replicas between brokers (execute, verify, cancel, list)",
    ),
}


def dispatch(tool: str, argv: list[str]) -> int:
    from kafkapy.cli.common import run_tool

    module = importlib.import_module(TOOLS[tool][0])
    entry = getattr(module, "main_" + tool.replace("-", "_"), None) or module.main
    return run_tool(entry, argv)


def find_tool(argv: list[str]) -> tuple[str, list[str]] | None:
    """(tool, its arguments) if argv names a tool, after an optional --log-level setting."""
    i = 0
    while i < len(argv) and argv[i].startswith("--log-level"):
        i += 1 if "=" in argv[i] else 2
    if i < len(argv) and argv[i] in TOOLS:
        return argv[i], argv[i + 1 :]
    return None
