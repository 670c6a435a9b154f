"""`kafkapy topics` (kafka-topics.sh): create, list, describe, alter (partitions) and delete topics.

Output follows Kafka's tool: `--list` prints one name a line (sorted); `--describe` prints a topic
line `Topic: T<TAB>TopicId: ID<TAB>PartitionCount: N<TAB>ReplicationFactor: N<TAB>Configs: k=v,...`
(non-default configs only) and then one line per partition
`<TAB>Topic: T<TAB>Partition: P<TAB>Leader: L<TAB>Replicas: a,b<TAB>Isr: a,b<TAB>Elr: <TAB>
LastKnownElr: `. `--topic` takes a regular expression (commas mean "or") except with --create.

Like Kafka's tool (whose admin client describes topics with DescribeTopicPartitions when the
cluster serves it), `--describe` pages through DescribeTopicPartitions (at most
--partition-size-limit-per-response partitions an answer, default 2000), which reports the
eligible leader replicas (empty lists unless ELR is on); against a cluster without it, or over a
non-PLAINTEXT connection, topics are described with Metadata and Elr/LastKnownElr print `N/A`.
Ongoing reassignments (ListPartitionReassignments) add `Adding Replicas`/`Removing Replicas` to a
partition's line, and the replication factor leaves out the replicas being added.

This module is the command line and the actions; topics_describe gathers what --describe shows,
topics_output prints it.
"""

from __future__ import annotations

import sys

from kafkapy.cli.common import (
    CliError,
    ToolParser,
    add_bootstrap,
    add_command_config,
    admin_client,
    include_list,
    is_internal,
    kafka_error_message,
    load_properties,
    result,
)
from kafkapy.cli.topics_describe import collect_topics
from kafkapy.cli.topics_output import describe_lines

DESCRIPTION = "Create, delete, describe, or change a topic."


def build_parser() -> ToolParser:
    p = ToolParser("kafka-topics", DESCRIPTION)
    add_bootstrap(p)
    add_command_config(p)
    actions = p.add_argument_group("actions (exactly one)")
    actions.add_argument("--create", action="store_true", help="create a new topic")
    actions.add_argument("--list", action="store_true", help="print the names of all topics")
    actions.add_argument("--describe", action="store_true", help="show details of the topics")
    actions.add_argument(
        "--alter",
        action="store_true",
        help="raise the partition count (and place the new partitions); use the configs tool "
        "to change topic configs",
    )
    actions.add_argument("--delete", action="store_true", help="delete the topics")
    p.add_argument(
        "--topic",
        metavar="TOPIC",
        help="the topic to act on; a regular expression except with --create",
    )
    p.add_argument("--topic-id", metavar="ID", help="describe the topic with this id")
    p.add_argument(
        "--partitions",
        type=int,
        metavar="N",
        help="partition count for --create or the new count for --alter (the cluster default "
        "if omitted with --create); adding partitions changes where keyed records land",
    )
    p.add_argument(
        "--replication-factor",
        type=int,
        metavar="N",
        help="copies of each partition for --create (the cluster default if omitted)",
    )
    p.add_argument(
        "--replica-assignment",
        metavar="B1:B2,B3:B4,...",
        help="explicit broker ids per partition: partitions separated by commas, the replicas "
        "of one partition by colons",
    )
    p.add_argument(
        "--config",
        action="append",
        metavar="NAME=VALUE",
        help="a topic config override for --create (repeatable)",
    )
    p.add_argument(
        "--if-not-exists", action="store_true", help="with --create: no error if it exists"
    )
    p.add_argument(
        "--if-exists",
        action="store_true",
        help="with --alter, --delete or --describe: act only if the topic exists",
    )
    p.add_argument(
        "--exclude-internal",
        action="store_true",
        help="leave internal topics out of --list and --describe",
    )
    p.add_argument(
        "--under-replicated-partitions",
        action="store_true",
        help="with --describe: only partitions with fewer in-sync replicas than replicas",
    )
    p.add_argument(
        "--unavailable-partitions",
        action="store_true",
        help="with --describe: only partitions whose leader is missing or not alive",
    )
    p.add_argument(
        "--under-min-isr-partitions",
        action="store_true",
        help="with --describe: only partitions whose ISR is below min.insync.replicas",
    )
    p.add_argument(
        "--at-min-isr-partitions",
        action="store_true",
        help="with --describe: only partitions whose ISR equals min.insync.replicas",
    )
    p.add_argument(
        "--topics-with-overrides",
        action="store_true",
        help="with --describe: only topics that override some config",
    )
    p.add_argument(
        "--partition-size-limit-per-response",
        type=int,
        metavar="N",
        help="accepted for compatibility (partitions per DescribeTopicPartitions response)",
    )
    return p


def parse_replica_assignment(text: str) -> list[list[int]]:
    out: list[list[int]] = []
    for i, part in enumerate(text.split(",")):
        try:
            brokers = [int(b.strip()) for b in part.split(":")]
        except ValueError:
            raise CliError(
                f"Invalid replica assignment {text!r}: broker ids are integers"
            ) from None
        dups = sorted({b for b in brokers if brokers.count(b) > 1})
        if dups:
            raise CliError(
                "Partition replica lists may not contain duplicate entries: "
                + ",".join(map(str, dups))
            )
        if out and len(brokers) != len(out[0]):
            raise CliError(f"Partition {i} has different replication factor: {brokers}")
        out.append(brokers)
    return out


def parse_configs(items: list[str] | None) -> dict[str, str]:
    configs: dict[str, str] = {}
    for item in items or []:
        parts = [s.strip() for s in item.split("=")]
        if len(parts) != 2 or not parts[0]:
            raise CliError(
                'Invalid topic config: all configs to be added must be in the format "key=val".'
            )
        configs[parts[0]] = parts[1]
    return configs


def check_args(a) -> None:
    chosen = [n for n in ("create", "list", "alter", "describe", "delete") if getattr(a, n)]
    if len(chosen) != 1:
        raise CliError(
            "Command must include exactly one action: --list, --describe, --create, --alter or "
            "--delete"
        )
    if not a.bootstrap_server:
        raise CliError("--bootstrap-server must be specified")
    action = chosen[0]
    if action in ("create", "alter", "delete") and not a.topic:
        raise CliError('Missing required argument "[topic]"')
    if a.config and action != "create":
        raise CliError('Option "[config]" can\'t be used with option "[' + action + ']"')
    if a.partitions is not None and action not in ("create", "alter"):
        raise CliError('Option "[partitions]" can\'t be used with option "[' + action + ']"')
    if a.replication_factor is not None and action != "create":
        raise CliError(
            'Option "[replication-factor]" can\'t be used with option "[' + action + ']"'
        )
    if a.replica_assignment and action not in ("create", "alter"):
        raise CliError(
            'Option "[replica-assignment]" can\'t be used with option "[' + action + ']"'
        )
    if (
        action == "create"
        and a.replica_assignment
        and (a.partitions is not None or a.replication_factor is not None)
    ):
        raise CliError(
            'Option "[replica-assignment]" can\'t be used with option "[partitions]" or '
            '"[replication-factor]"'
        )
    if action == "alter" and a.partitions is None:
        raise CliError('Missing required argument "[partitions]"')
    reports = (
        a.under_replicated_partitions
        or a.unavailable_partitions
        or a.under_min_isr_partitions
        or a.at_min_isr_partitions
    )
    if (reports or a.topics_with_overrides) and action != "describe":
        raise CliError("The partition report options can only be used with --describe")
    if reports and a.topics_with_overrides:
        raise CliError(
            'Option "[topics-with-overrides]" can\'t be used with the partition report options'
        )
    if a.if_not_exists and action != "create":
        raise CliError('Option "[if-not-exists]" can only be used with --create')
    if a.if_exists and action not in ("alter", "delete", "describe"):
        raise CliError('Option "[if-exists]" can only be used with --alter, --delete or --describe')
    if a.exclude_internal and action not in ("list", "describe"):
        raise CliError('Option "[exclude-internal]" can only be used with --list or --describe')


# -- actions ------------------------------------------------------------------------------------


def _list_topic_names(admin, opts) -> list[str]:
    md = admin.list_topics(timeout=30)
    names = sorted(md.topics)
    if opts.topic:
        allowed = include_list(opts.topic)
        return [n for n in names if allowed(n) and not (opts.exclude_internal and is_internal(n))]
    return [n for n in names if not (opts.exclude_internal and is_internal(n))]


def _ensure_exists(found: list[str], opts) -> None:
    if opts.topic and not found and not opts.if_exists:
        raise CliError(f"Topic '{opts.topic}' does not exist as expected")


def create(admin, opts) -> None:
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import NewTopic

    name = opts.topic
    if opts.replication_factor is not None and not 1 <= opts.replication_factor <= 32767:
        raise CliError("The replication factor must be between 1 and 32767 inclusive")
    if opts.partitions is not None and opts.partitions < 1:
        raise CliError("The partitions must be greater than 0")
    configs = parse_configs(opts.config)
    if "." in name or "_" in name:
        print(
            "WARNING: Due to limitations in metric names, topics with a period ('.') or "
            "underscore ('_') could collide. To avoid issues it is best to use either, but not "
            "both."
        )
    if opts.replica_assignment:
        new = NewTopic(
            name,
            replica_assignment=parse_replica_assignment(opts.replica_assignment),
            config=configs,
        )
    else:
        new = NewTopic(
            name,
            num_partitions=opts.partitions if opts.partitions is not None else -1,
            replication_factor=opts.replication_factor
            if opts.replication_factor is not None
            else -1,
            config=configs,
        )
    future = admin.create_topics([new], request_timeout=30)[name]
    try:
        future.result()
    except KafkaException as e:
        err = e.args[0] if e.args else None
        if (
            isinstance(err, KafkaError)
            and err.code() == KafkaError.TOPIC_ALREADY_EXISTS
            and opts.if_not_exists
        ):
            return
        raise CliError(kafka_error_message(e)) from None
    print(f"Created topic {name}.")


def list_topics(admin, opts) -> None:
    print("\n".join(_list_topic_names(admin, opts)))


def alter(admin, opts) -> None:
    from confluent_kafka.admin import NewPartitions

    topics = _list_topic_names(admin, opts)
    _ensure_exists(topics, opts)
    if not topics:
        return
    md = admin.list_topics(timeout=30)
    assignment = (
        parse_replica_assignment(opts.replica_assignment) if opts.replica_assignment else None
    )
    requests = []
    for t in topics:
        if assignment is not None:
            start = len(md.topics[t].partitions)
            requests.append(NewPartitions(t, opts.partitions, assignment[start:]))
        else:
            requests.append(NewPartitions(t, opts.partitions))
    futures = admin.create_partitions(requests, request_timeout=30)
    for f in futures.values():
        result(f)


def delete(admin, opts) -> None:
    topics = _list_topic_names(admin, opts)
    _ensure_exists(topics, opts)
    if not topics:
        return
    futures = admin.delete_topics(topics, request_timeout=30)
    for f in futures.values():
        result(f)


def describe(admin, opts) -> None:
    if opts.topic_id:
        md_names = sorted(admin.list_topics(timeout=30).topics)
        infos = [t for t in collect_topics(admin, md_names, opts) if t.topic_id == opts.topic_id]
        if not infos and not opts.if_exists:
            raise CliError(f"TopicId '{opts.topic_id}' does not exist as expected")
    else:
        names = _list_topic_names(admin, opts)
        _ensure_exists(names, opts)
        infos = collect_topics(admin, names, opts)
    cluster = result(admin.describe_cluster(request_timeout=30))
    live = {n.id for n in cluster.nodes}
    for line in describe_lines(infos, opts, live):
        print(line)


def main(argv: list[str]) -> int:
    opts = build_parser().parse_args(argv)
    check_args(opts)
    props = load_properties(opts.command_config)
    admin = admin_client(opts.bootstrap_server, props)
    action = next(n for n in ("create", "list", "alter", "describe", "delete") if getattr(opts, n))
    {"create": create, "list": list_topics, "alter": alter, "describe": describe, "delete": delete}[
        action
    ](admin, opts)
    sys.stdout.flush()
    return 0
