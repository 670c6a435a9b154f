"""What `kafkapy topics --describe` learns from the cluster: partitions through
DescribeTopicPartitions when the cluster serves it (following its cursor), else the admin
client's describe_topics (Metadata); ongoing reassignments (ListPartitionReassignments); each
topic's configs."""

from __future__ import annotations

from kafkapy.cli.common import CliError, load_properties, result, topic_id_string
from kafkapy.cli.java_text import hashmap_order, java_string_hash
from kafkapy.cli.topics_output import PartitionInfo, TopicInfo
from kafkapy.metadata.uuids import uuid_to_base64

DESCRIBE_TOPIC_PARTITIONS, LIST_PARTITION_REASSIGNMENTS = 75, 46


def _wire_apis(conn) -> set[int]:
    from kio.schema.api_versions.v3.request import ApiVersionsRequest

    resp = conn.request(
        ApiVersionsRequest(client_software_name="kafkapy-cli", client_software_version="1")
    )
    return {int(a.api_key) for a in resp.api_keys} if resp.error_code == 0 else set()


def _describe_partitions(conn, names: list[str], limit: int) -> dict[str, tuple[str, list]]:
    """topic -> (topic id, partitions) through DescribeTopicPartitions, following the cursor."""
    from kio.schema.describe_topic_partitions.v0 import request as q

    from kafkapy.protocol.errors import error_name

    out: dict[str, tuple[str, list[PartitionInfo]]] = {}
    cursor = None
    while True:
        resp = conn.request(
            q.DescribeTopicPartitionsRequest(
                topics=tuple(q.TopicRequest(name=n) for n in names),
                response_partition_limit=limit,
                cursor=cursor,
            )
        )
        for t in resp.topics:
            if t.error_code != 0:
                raise CliError(f"Topic '{t.name}': {error_name(int(t.error_code))}")
            topic_id = "" if t.topic_id is None else uuid_to_base64(t.topic_id)
            _, parts = out.setdefault(t.name, (topic_id, []))
            for p in t.partitions:
                elr, lke = p.eligible_leader_replicas, p.last_known_elr
                parts.append(
                    PartitionInfo(
                        partition=p.partition_index,
                        leader=p.leader_id if p.leader_id >= 0 else None,
                        replicas=list(p.replica_nodes),
                        isr=list(p.isr_nodes),
                        elr=None if elr is None else list(elr),
                        last_known_elr=None if lke is None else list(lke),
                    )
                )
        nxt = resp.next_cursor
        if nxt is None:
            return out
        cursor = q.Cursor(topic_name=nxt.topic_name, partition_index=nxt.partition_index)


def _reassignments(conn, names: list[str]) -> dict[tuple[str, int], tuple[list, list]]:
    """(topic, partition) -> (adding, removing) of the ongoing reassignments among ``names``."""
    import datetime

    from kio.schema.list_partition_reassignments.v0 import request as q

    resp = conn.request(
        q.ListPartitionReassignmentsRequest(
            timeout=datetime.timedelta(seconds=30),
            topics=None,
        )
    )
    if resp.error_code != 0:
        return {}
    wanted = set(names)
    return {
        (t.name, p.partition_index): (list(p.adding_replicas), list(p.removing_replicas))
        for t in resp.topics
        if t.name in wanted
        for p in t.partitions
    }


def collect_topics(admin, names: list[str], opts=None) -> list[TopicInfo]:
    from confluent_kafka import TopicCollection
    from confluent_kafka.admin import ConfigResource

    from kafkapy.cli.wire import connect_any

    if not names:
        return []
    props = load_properties(getattr(opts, "command_config", None))
    wire_described: dict[str, tuple[str, list[PartitionInfo]]] | None = None
    moving: dict[tuple[str, int], tuple[list, list]] = {}
    if opts is not None:
        try:
            with connect_any(opts.bootstrap_server, props=props) as conn:
                apis = _wire_apis(conn)
                if DESCRIBE_TOPIC_PARTITIONS in apis:
                    limit = opts.partition_size_limit_per_response or 2000
                    wire_described = _describe_partitions(conn, names, limit)
                if LIST_PARTITION_REASSIGNMENTS in apis:
                    moving = _reassignments(conn, names)
        except (ConnectionError, OSError):
            wire_described = None
    described = (
        None
        if wire_described is not None
        else admin.describe_topics(TopicCollection(names), request_timeout=30)
    )
    resources = [ConfigResource("topic", n) for n in names]
    configs = admin.describe_configs(resources, request_timeout=30)
    by_name = {r.name: f for r, f in configs.items()}
    out: list[TopicInfo] = []
    for name in names:
        if wire_described is not None:
            if name not in wire_described:
                continue
            topic_id, parts = wire_described[name]
        else:
            d = result(described[name])
            topic_id = topic_id_string(d.topic_id)
            parts = [
                PartitionInfo(
                    partition=p.id,
                    leader=p.leader.id if p.leader is not None else None,
                    replicas=[n.id for n in p.replicas],
                    isr=[n.id for n in p.isr],
                )
                for p in d.partitions
            ]
        for p in parts:
            if (name, p.partition) in moving:
                p.adding, p.removing = moving[(name, p.partition)]
        entries = result(by_name[name]) if name in by_name else {}
        # in the order Kafka's TopicCommand prints them: its admin client's Config keeps the
        # entries in a new HashMap<>()
        cfg = hashmap_order(
            [(e.name, e.value, bool(e.is_default)) for e in entries.values()],
            lambda entry: java_string_hash(entry[0]),
            initial_capacity=16,
        )
        out.append(TopicInfo(name, topic_id, parts, cfg))
    return out
