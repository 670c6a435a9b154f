"""`kafkapy streams-groups` (kafka-streams-groups.sh of Kafka 4.4): list and describe streams
groups (KIP-1071).

Output is Kafka 4.4's StreamsGroupCommand's: ``--list`` prints the group ids, with ``--state``
a GROUP STATE table; ``--describe --group G`` prints the offsets of the input partitions of the
members' active tasks (GROUP TOPIC PARTITION OFFSET-LAG, in the order of Kafka's hash map of
topic partitions), ``--state`` the coordinator, assignor, state and member count, ``--members``
each member's process, client id and active/standby/warm-up tasks. Columns are at least 15 wide
and grow with the longest value. A group that does not exist is Kafka's one-line error.

It talks to the cluster on the wire (kafkapy.cli.wire): ListGroups v5 with the "streams" type,
FindCoordinator, StreamsGroupDescribe, OffsetFetch and ListOffsets. Resetting and deleting
offsets and deleting groups are not provided.
"""

from __future__ import annotations

from typing import Any

from kio.schema.types import BrokerId, GroupId, TopicName
from kio.static.primitive import i8, i32, i64

from kafkapy.cli.common import CliError, ToolParser, load_properties
from kafkapy.cli.transactions_client import Cluster
from kafkapy.coordinator.group.partitioning import java_string_hash

DESCRIPTION = "This tool helps to list, or describe streams groups."


def build_parser() -> ToolParser:
    p = ToolParser("kafka-streams-groups", DESCRIPTION)
    p.add_argument("--bootstrap-server", metavar="HOST:PORT", help="REQUIRED: broker(s) to use")
    p.add_argument("--command-config", metavar="FILE", help="admin client properties file")
    p.add_argument("--group", action="append", metavar="GROUP", help="the group(s) to describe")
    p.add_argument("--all-groups", action="store_true", help="describe every streams group")
    p.add_argument("--list", action="store_true", help="list the streams groups")
    p.add_argument("--describe", action="store_true", help="describe the group(s)")
    p.add_argument(
        "--state",
        nargs="?",
        const="",
        default=None,
        help="with --list: the states to show; with --describe: the group's state",
    )
    p.add_argument("--members", action="store_true", help="with --describe: the members")
    p.add_argument("--offsets", action="store_true", help="with --describe: offsets (default)")
    return p


def _i32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >= 1 << 31 else x


def hash_map_order(keys: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Topic partitions in the order Java's HashMap iterates them (TopicPartition.hashCode,
    HashMap's spread and table size), as Kafka's tool prints its offsets map."""
    capacity = 16
    while len(keys) > capacity * 3 // 4:
        capacity *= 2

    def bucket(tp: tuple[str, int]) -> int:
        h = _i32(31 * _i32(31 + tp[1]) + java_string_hash(tp[0])) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(keys, key=bucket)  # stable: equal buckets keep their order


def _width(values: list[str]) -> int:
    return max([15, *(len(v) for v in values)])


class StreamsGroups:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster

    def list_groups(self, states: set[str] | None = None) -> list[tuple[str, str]]:
        from kio.schema.list_groups.v5.request import ListGroupsRequest

        out: list[tuple[str, str]] = []
        for broker in sorted(self.cluster.brokers):
            resp = self.cluster.conn(broker).request(
                ListGroupsRequest(
                    states_filter=tuple(sorted(states or ())), types_filter=("streams",)
                )
            )
            out += [(g.group_id, g.group_state) for g in resp.groups]
        return out

    def coordinator(self, group: str) -> tuple[int, str]:
        from kio.schema.find_coordinator.v4 import request as fq

        resp = self.cluster._bootstrap.request(
            fq.FindCoordinatorRequest(key_type=i8(0), coordinator_keys=(group,))
        )
        (c,) = resp.coordinators
        if c.error_code:
            raise CliError(f"Executing streams group command failed due to {c.error_message}")
        self.cluster.brokers.setdefault(c.node_id, (c.host, c.port))
        return c.node_id, f"{c.host}:{c.port} ({c.node_id})"

    def describe(self, group: str) -> tuple[Any, str, int]:
        from kafkapy.protocol.kio_schemas import streams_group_describe_v1 as d1

        node, label = self.coordinator(group)
        resp = self.cluster.conn(node).request(
            d1.StreamsGroupDescribeRequest(
                group_ids=(GroupId(group),),
                include_authorized_operations=False,
                include_topology_description=False,
            )
        )
        (g,) = resp.groups
        if g.error_code:
            raise GroupError(
                "Executing streams group command failed due to "
                f"{_exception(g.error_code)}: {g.error_message or ''}".rstrip(": ")
            )
        return g, label, node

    def offsets(self, g: Any, node: int) -> list[tuple[str, int, str]]:
        """(topic, partition, lag) of the input partitions of the members' active tasks."""
        from kio.schema.list_offsets.v7 import request as lo
        from kio.schema.offset_fetch.v8 import request as of

        inputs: dict[str, list[str]] = {}
        for s in (g.topology.subtopologies or ()) if g.topology else ():
            inputs[s.subtopology_id] = [
                *s.source_topics,
                *(t.name for t in s.repartition_source_topics),
            ]
        existing = self.cluster.partitions(None)
        wanted: list[tuple[str, int]] = []
        for m in g.members:
            for task in m.assignment.active_tasks:
                for topic in inputs.get(task.subtopology_id, []):
                    for p in task.partitions:
                        if (topic, p) in existing and (topic, p) not in wanted:
                            wanted.append((topic, p))
        fetched = self.cluster.conn(node).request(
            of.OffsetFetchRequest(
                groups=(of.OffsetFetchRequestGroup(group_id=g.group_id, topics=None),),
                require_stable=False,
            )
        )
        committed = {
            (t.name, p.partition_index): p.committed_offset
            for t in fetched.groups[0].topics
            for p in t.partitions
        }
        leaders = self.cluster.partitions(sorted({t for t, _ in wanted}))
        end: dict[tuple[str, int], int] = {}
        for tp in wanted:
            leader = leaders[tp][0]
            resp = self.cluster.conn(leader).request(
                lo.ListOffsetsRequest(
                    replica_id=BrokerId(-1),
                    isolation_level=i8(0),
                    topics=(
                        lo.ListOffsetsTopic(
                            name=TopicName(tp[0]),
                            partitions=(
                                lo.ListOffsetsPartition(
                                    partition_index=i32(tp[1]),
                                    current_leader_epoch=i32(-1),
                                    timestamp=i64(-1),
                                ),
                            ),
                        ),
                    ),
                )
            )
            end[tp] = resp.topics[0].partitions[0].offset
        rows = []
        for tp in hash_map_order(wanted):
            c = committed.get(tp, -1)
            lag = end[tp] - c if c >= 0 else end[tp]
            rows.append((tp[0], tp[1], str(lag)))
        return rows


class GroupError(Exception):
    """A group the tool cannot describe (Kafka's message)."""


def _exception(code: Any) -> str:
    name = "".join(w.capitalize() for w in code.name.split("_"))
    if name.endswith("NotFound"):
        name += "Exception"
    return "org.apache.kafka.common.errors." + name


def _tasks(label: str, rows: Any) -> str:
    if not rows:
        return ""
    return f"{label}: " + "".join(
        f"{t.subtopology_id}:[{','.join(str(p) for p in t.partitions)}]; " for t in rows
    )


def print_list(groups: list[tuple[str, str]], with_state: bool) -> None:
    if not with_state:
        for gid, _ in groups:
            print(gid)
        return
    w = _width([g for g, _ in groups])
    print(f"{'GROUP':<{w}} STATE")
    for gid, state in groups:
        print(f"{gid:<{w}} {state}")


def print_state(g: Any, coordinator: str) -> None:
    w = _width([g.group_id])
    print(f"{'GROUP':<{w}} {'COORDINATOR (ID)':<25} {'ASSIGNOR':<15} {'STATE':<25} #MEMBERS")
    print(
        f"{g.group_id:<{w}} {coordinator:<25} {g.assignor_name or '':<15} "
        f"{g.group_state:<25} {len(g.members)}"
    )


def print_members(g: Any) -> None:
    members = list(g.members)
    wg = _width([g.group_id])
    wm = _width([m.member_id for m in members])
    wp = _width([m.process_id for m in members])
    wc = _width([m.client_id for m in members])
    print(f"{'GROUP':<{wg}} {'MEMBER':<{wm}} {'PROCESS':<{wp}} {'CLIENT-ID':<{wc}} ASSIGNMENTS")
    for m in members:
        a = m.assignment
        text = (
            _tasks("ACTIVE", a.active_tasks)
            + _tasks("STANDBY", a.standby_tasks)
            + _tasks("WARMUP", a.warmup_tasks)
        )
        print(
            f"{g.group_id:<{wg}} {m.member_id:<{wm}} {m.process_id:<{wp}} "
            f"{m.client_id:<{wc}} {text}"
        )


def print_offsets(g: Any, rows: list[tuple[str, int, str]]) -> None:
    wg = _width([g.group_id])
    wt = _width([t for t, _, _ in rows])
    print(f"{'GROUP':<{wg}} {'TOPIC':<{wt}} {'PARTITION':<10} OFFSET-LAG")
    for topic, partition, lag in rows:
        print(f"{g.group_id:<{wg}} {topic:<{wt}} {partition:<10} {lag}")


def main(argv: list[str] | None = None) -> int:
    opts = build_parser().parse_args(argv)
    if not opts.bootstrap_server:
        raise CliError('Missing required argument "[bootstrap-server]"')
    if opts.list == opts.describe:
        raise CliError(
            "Command must include exactly one action: --list, --describe, --delete, "
            "--reset-offsets, or --delete-offsets."
        )
    cluster = Cluster(opts.bootstrap_server, load_properties(opts.command_config))
    try:
        tool = StreamsGroups(cluster)
        if opts.list:
            states = None
            if opts.state:
                states = {s.strip() for s in opts.state.split(",") if s.strip()}
            print_list(tool.list_groups(states), opts.state is not None)
            return 0
        groups = opts.group or []
        if opts.all_groups:
            groups = [gid for gid, _ in tool.list_groups()]
        for group in groups:
            try:
                g, coordinator, node = tool.describe(group)
            except GroupError as e:  # Kafka's tool prints it on stdout after a blank line
                print(f"\nError: {e}")
                return 1
            if opts.state is not None:
                print_state(g, coordinator)
            elif opts.members:
                print_members(g)
            else:
                print_offsets(g, tool.offsets(g, node))
        return 0
    finally:
        cluster.close()
