"""`kafkapy transactions` (kafka-transactions.sh): inspect transactions, find hanging ones and
abort them, with Kafka's TransactionsCommand's commands, flags and output.

- ``list [--duration-filter MS]``: every transactional id of every broker (ListTransactions), as
  ``TransactionalId Coordinator ProducerId TransactionState``;
- ``describe --transactional-id ID``: its coordinator's view (DescribeTransactions);
- ``describe-producers --topic T --partition P [--broker-id N]``: the producers of a partition
  (DescribeProducers, on its leader or the replica on broker N);
- ``abort --topic T --partition P (--start-offset O | --producer-id --producer-epoch
  --coordinator-epoch)``: write an abort marker for one open transaction on one partition
  (WriteTxnMarkers to the partition's leader), as an administrator recovering a hanging
  transaction does;
- ``find-hanging (--topic T [--partition P] | --broker-id N) [--max-transaction-timeout MIN]``:
  open transactions older than the maximum timeout that their coordinator does not know about
  (no transactional id has their producer id, or its transaction does not include the
  partition).

Tables are printed as Kafka's ToolsUtils.prettyPrintTable prints them: each column padded to its
widest value and followed by a tab. A failure prints one line to stderr, with no prefix
(``Failed to ...: message. Enable debug logging for additional detail.``), and exits 1.
"""

from __future__ import annotations

import argparse
import sys
import time

from kafkapy.cli.common import CliError, ToolParser, load_properties
from kafkapy.cli.transactions_client import (
    Cluster,
    TransactionalIdNotFound,
    fail,
    pretty_table,
)
from kafkapy.protocol.errors import ErrorCode

DESCRIPTION = (
    "This tool is used to analyze the transactional state of producers in the cluster. "
    "It can be used to detect and recover from hanging transactions."
)
# -- the commands --------------------------------------------------------------------------------


def cmd_list(cluster: Cluster, opts: argparse.Namespace) -> str:
    duration = -1 if opts.duration_filter is None else opts.duration_filter
    rows = [
        [t.transactional_id, str(node), str(t.producer_id), t.transaction_state]
        for node, listings in cluster.list_transactions(duration_ms=duration).items()
        for t in listings
    ]
    return pretty_table(["TransactionalId", "Coordinator", "ProducerId", "TransactionState"], rows)


def cmd_describe(cluster: Cluster, opts: argparse.Namespace) -> str:
    node, d = cluster.describe_transaction(opts.transactional_id)
    start = d["start_ms"]
    now = int(time.time() * 1000)
    row = [
        str(node),
        opts.transactional_id,
        str(d["producer_id"]),
        str(d["producer_epoch"]),
        d["state"],
        str(d["timeout_ms"]),
        str(start) if start >= 0 else "None",
        str(now - start) if start >= 0 else "None",
        ",".join(f"{t}-{p}" for t, p in sorted(d["partitions"])),
    ]
    headers = [
        "CoordinatorId",
        "TransactionalId",
        "ProducerId",
        "ProducerEpoch",
        "TransactionState",
        "TransactionTimeoutMs",
        "CurrentTransactionStartTimeMs",
        "TransactionDurationMs",
        "TopicPartitions",
    ]
    return pretty_table(headers, [row])


def cmd_describe_producers(cluster: Cluster, opts: argparse.Namespace) -> str:
    tp = (opts.topic, opts.partition)
    producers = cluster.describe_producers([tp], opts.broker_id)[tp]
    rows = [
        [
            str(s.producer_id),
            str(s.producer_epoch),
            str(s.coordinator_epoch if s.coordinator_epoch >= 0 else -1),
            str(s.last_sequence),
            str(s.last_timestamp),
            str(s.current_txn_start_offset) if s.current_txn_start_offset >= 0 else "None",
        ]
        for s in producers
    ]
    headers = [
        "ProducerId",
        "ProducerEpoch",
        "LatestCoordinatorEpoch",
        "LastSequence",
        "LastTimestamp",
        "CurrentTransactionStartOffset",
    ]
    return pretty_table(headers, rows)


def cmd_abort(cluster: Cluster, opts: argparse.Namespace) -> str:
    from kio.schema.write_txn_markers.v1 import request as wq

    tp = (opts.topic, opts.partition)
    if opts.start_offset is None and opts.producer_id is None:
        raise CliError(
            "The transaction to abort must be identified either with --start-offset (for "
            "brokers on 3.0 or above) or with --producer-id, --producer-epoch, and "
            "--coordinator-epoch (for older brokers)"
        )
    if opts.start_offset is None:
        if opts.producer_epoch is None:
            raise CliError("Missing required argument --producer-epoch")
        if opts.coordinator_epoch is None:
            raise CliError("Missing required argument --coordinator-epoch")
        pid, epoch, coordinator_epoch = (
            opts.producer_id,
            opts.producer_epoch,
            max(opts.coordinator_epoch, 0),
        )
    else:
        producers = cluster.describe_producers(
            [tp], None, f"Failed to validate producer state for partition {tp[0]}-{tp[1]}"
        )[tp]
        found = [s for s in producers if s.current_txn_start_offset == opts.start_offset]
        if not found:
            raise CliError(
                f"Could not find any open transactions starting at offset {opts.start_offset} "
                f"on partition {tp[0]}-{tp[1]}"
            )
        s = found[0]
        pid, epoch, coordinator_epoch = (
            s.producer_id,
            s.producer_epoch,
            max(s.coordinator_epoch, 0),
        )
    spec = (
        f"AbortTransactionSpec(topicPartition={tp[0]}-{tp[1]}, producerId={pid}, "
        f"producerEpoch={epoch}, coordinatorEpoch={coordinator_epoch})"
    )
    failure = f"Failed to abort transaction {spec}"
    found = cluster.partitions([tp[0]], failure)
    if tp not in found:
        raise fail(failure, ErrorCode.unknown_topic_or_partition)
    leader = found[tp][0]
    if leader < 0:
        raise fail(failure, ErrorCode.not_leader_or_follower)
    resp = cluster.conn(leader).request(
        wq.WriteTxnMarkersRequest(
            markers=(
                wq.WritableTxnMarker(
                    producer_id=pid,
                    producer_epoch=epoch,
                    transaction_result=False,
                    topics=(wq.WritableTxnMarkerTopic(name=tp[0], partition_indexes=(tp[1],)),),
                    coordinator_epoch=coordinator_epoch,
                ),
            )
        )
    )
    for m in resp.markers:
        for t in m.topics:
            for p in t.partitions:
                if p.error_code:
                    raise fail(failure, p.error_code)
    return ""


def cmd_find_hanging(cluster: Cluster, opts: argparse.Namespace) -> str:
    if opts.topic is None and opts.broker_id is None:
        raise CliError(
            "The `find-hanging` command requires either --topic or --broker-id to limit the "
            "scope of the search"
        )
    if opts.partition is not None and opts.topic is None:
        raise CliError("The --partition argument requires --topic to be provided")
    max_timeout_ms = opts.max_transaction_timeout * 60_000
    if opts.topic is not None and opts.partition is not None:
        tps = [(opts.topic, opts.partition)]
    else:
        found = cluster.partitions(None if opts.topic is None else [opts.topic])
        tps = [
            tp
            for tp, (_, replicas) in sorted(found.items())
            if opts.broker_id is None or opts.broker_id in replicas
        ]
    now = int(time.time() * 1000)
    candidates = [
        (tp, s)
        for tp, producers in cluster.describe_producers(tps, opts.broker_id).items()
        for s in producers
        if s.current_txn_start_offset >= 0 and now - s.last_timestamp > max_timeout_ms
    ]
    hanging = []
    if candidates:
        pids = {s.producer_id for _, s in candidates}
        ids = {
            t.producer_id: t.transactional_id
            for listings in cluster.list_transactions(pids).values()
            for t in listings
            if t.producer_id in pids
        }
        described: dict[str, set[tuple[str, int]] | None] = {}
        txn_ids = sorted(set(ids.values()))
        for txn_id in txn_ids:
            try:
                _, d = cluster.describe_transaction(txn_id)
            except TransactionalIdNotFound:
                described[txn_id] = None  # nothing will end the transaction
                continue
            except CliError as e:
                # any other answer says nothing about the transaction: calling it hanging
                # would invite an abort of a transaction its coordinator may still commit
                reason = str(e).split(": ", 1)[-1]
                raise CliError(
                    f"Failed to describe {len(txn_ids)} transactions: {reason}"
                ) from None
            described[txn_id] = set(d["partitions"])
        for tp, s in candidates:
            partitions = described.get(ids.get(s.producer_id, ""))
            if partitions is None or tp not in partitions:
                hanging.append((tp, s))
    rows = [
        [
            tp[0],
            str(tp[1]),
            str(s.producer_id),
            str(s.producer_epoch),
            str(s.coordinator_epoch if s.coordinator_epoch >= 0 else -1),
            str(s.current_txn_start_offset),
            str(s.last_timestamp),
            str((now - s.last_timestamp) // 60_000),
        ]
        for tp, s in hanging
    ]
    headers = [
        "Topic",
        "Partition",
        "ProducerId",
        "ProducerEpoch",
        "CoordinatorEpoch",
        "StartOffset",
        "LastTimestamp",
        "Duration(min)",
    ]
    return pretty_table(headers, rows)


COMMANDS = {
    "list": cmd_list,
    "describe": cmd_describe,
    "describe-producers": cmd_describe_producers,
    "abort": cmd_abort,
    "find-hanging": cmd_find_hanging,
}


def parser() -> ToolParser:
    p = ToolParser("kafka-transactions.sh", DESCRIPTION)
    p.add_argument(
        "--command-config",
        metavar="FILE",
        help="property file containing configs to be passed to admin client",
    )
    p.add_argument(
        "--bootstrap-server",
        metavar="host:port",
        required=True,
        help="hostname and port for the broker to connect to, in the form `host:port`  "
        "(multiple comma-separated entries can be given)",
    )
    sub = p.add_subparsers(dest="command", title="commands", metavar="COMMAND")
    sub.required = True
    s = sub.add_parser("list", help="list transactions", description="List transactions.")
    s.add_argument(
        "--duration-filter",
        type=int,
        help="Duration (in millis) to filter by: if < 0, all transactions will be returned; "
        "otherwise, only transactions running longer than this duration will be returned",
    )
    s = sub.add_parser(
        "describe",
        help="describe the state of an active transactional-id",
        description="Describe the state of an active transactional-id.",
    )
    s.add_argument("--transactional-id", required=True, help="transactional id")
    s = sub.add_parser(
        "describe-producers",
        help="describe the states of active producers for a topic partition",
        description="Describe the states of active producers for a topic partition.",
    )
    s.add_argument(
        "--broker-id",
        type=int,
        help="optional broker id to describe the producer state on a specific replica",
    )
    s.add_argument("--topic", required=True, help="topic name")
    s.add_argument("--partition", type=int, required=True, help="partition number")
    s = sub.add_parser(
        "abort",
        help="abort a hanging transaction (requires administrative privileges)",
        description="Abort a hanging transaction (requires administrative privileges).",
    )
    s.add_argument("--topic", required=True, help="topic name")
    s.add_argument("--partition", type=int, required=True, help="partition number")
    s.add_argument("--start-offset", type=int, help="start offset of the transaction to abort")
    s.add_argument("--producer-id", type=int, help="producer id")
    s.add_argument("--producer-epoch", type=int, help="producer epoch")
    s.add_argument("--coordinator-epoch", type=int, help="coordinator epoch")
    s = sub.add_parser(
        "find-hanging", help="find hanging transactions", description="Find hanging transactions."
    )
    s.add_argument("--broker-id", type=int, help="broker id to search for hanging transactions")
    s.add_argument(
        "--max-transaction-timeout",
        type=int,
        default=15,
        help="maximum transaction timeout in minutes to limit the scope of the search "
        "(15 minutes by default)",
    )
    s.add_argument(
        "--topic", help="topic name to limit search to (required if --partition is specified)"
    )
    s.add_argument("--partition", type=int, help="partition number")
    return p


def main(argv: list[str]) -> int:
    opts = parser().parse_args(argv)
    try:
        cluster = Cluster(opts.bootstrap_server, load_properties(opts.command_config))
        try:
            sys.stdout.write(COMMANDS[opts.command](cluster, opts))
        finally:
            cluster.close()
    except CliError as e:  # printed bare, as Kafka's tool prints its failures
        print(e, file=sys.stderr)
        return e.code
    return 0
