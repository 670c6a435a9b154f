"""`kafkapy reassign-partitions` (kafka-reassign-partitions.sh): move partition replicas between
brokers.

Exactly one action, as Kafka's tool:

* ``--execute --reassignment-json-file F``: start the reassignments of F, Kafka's
  ``{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}``, after printing the
  current assignment (to keep for a rollback). Refused while other reassignments run, unless
  ``--additional``.
* ``--verify --reassignment-json-file F``: per partition of F, completed, still in progress, or
  not moving but on other replicas.
* ``--cancel --reassignment-json-file F``: cancel the ongoing reassignments of F's partitions
  (back to their original replicas).
* ``--list``: every ongoing reassignment with its replicas being added and removed.
* ``--generate --topics-to-move-json-file F --broker-list 1,2``: propose an assignment of F's
  topics (``{"version":1,"topics":[{"topic":"t"}]}``) over the brokers listed, rack-aware unless
  ``--disable-rack-aware``; nothing is changed.

Requests go over kafkapy.cli.wire: Metadata (brokers, controller, current replicas),
ListPartitionReassignments, and AlterPartitionReassignments to the controller (looked up again
on NOT_CONTROLLER). Replication throttles and moves between a broker's log directories
(``log_dirs`` other than "any") are not supported.
"""

from __future__ import annotations

import datetime
import json
import random
import time
import uuid
from typing import Any

from kafkapy.cli.common import CliError, ToolParser, load_properties, load_versioned_json
from kafkapy.cli.wire import Connection, connect_any
from kafkapy.protocol.errors import ErrorCode, error_name

DESCRIPTION = "This tool helps to move topic partitions between replicas."
TIMEOUT = datetime.timedelta(seconds=30)
ANY_LOG_DIR = "any"
EXISTING = (
    "Cannot execute because there is an existing partition assignment.  Use --additional to "
    "override this and create a new partition assignment in addition to the existing one. The "
    "--additional flag can also be used to change the throttle by resubmitting the current "
    "reassignment."
)

Tp = tuple[str, int]


def tp_name(tp: Tp) -> str:
    return f"{tp[0]}-{tp[1]}"


# -- the JSON files -------------------------------------------------------------------------------


def parse_reassignment_json(text: str) -> list[tuple[Tp, list[int]]]:
    """The (partition, replicas) entries of a reassignment file, in file order."""
    out: list[tuple[Tp, list[int]]] = []
    try:
        for e in load_versioned_json(text).get("partitions") or []:
            tp = (str(e["topic"]), int(e["partition"]))
            replicas = [int(r) for r in e["replicas"]]
            dirs = e.get("log_dirs", [ANY_LOG_DIR] * len(replicas))
            if len(dirs) != len(replicas):
                raise CliError(
                    f"Size of replicas list {replicas} is different from size of log dirs list "
                    f"{dirs} for partition {tp_name(tp)}"
                )
            if any(d != ANY_LOG_DIR for d in dirs):
                raise CliError("Moving replicas between log directories is not supported")
            out.append((tp, replicas))
    except (KeyError, TypeError, ValueError) as e:
        raise CliError(f"Invalid partition entry in reassignment JSON: {e}") from None
    return out


def check_execute(entries: list[tuple[Tp, list[int]]]) -> dict[Tp, list[int]]:
    """Kafka's checks of a file to execute; the entries as a dict."""
    if not entries:
        raise CliError("Partition reassignment list cannot be empty")
    if any(not r for _, r in entries):
        raise CliError("Partition replica list cannot be empty")
    seen: dict[Tp, int] = {}
    for tp, _ in entries:
        seen[tp] = seen.get(tp, 0) + 1
    dups = sorted(tp for tp, n in seen.items() if n > 1)
    if dups:
        raise CliError(
            "Partition reassignment contains duplicate topic partitions: "
            + ",".join(tp_name(tp) for tp in dups)
        )
    multi = []
    for tp, replicas in entries:
        twice = sorted({r for r in replicas if replicas.count(r) > 1})
        if twice:
            multi.append(f"{tp_name(tp)} contains multiple entries for {','.join(map(str, twice))}")
    if multi:
        raise CliError(
            "Partition replica lists may not contain duplicate entries: " + ". ".join(multi)
        )
    return dict(entries)


def parse_topics_json(text: str) -> list[str]:
    try:
        return [str(e["topic"]) for e in load_versioned_json(text).get("topics") or []]
    except (KeyError, TypeError) as e:
        raise CliError(f"Invalid topic entry in topics JSON: {e}") from None


def format_json(assignment: dict[Tp, list[int]]) -> str:
    """Kafka's reassignment JSON (compact, sorted by topic and partition)."""
    parts = [
        {
            "topic": tp[0],
            "partition": tp[1],
            "replicas": list(r),
            "log_dirs": [ANY_LOG_DIR] * len(r),
        }
        for tp, r in sorted(assignment.items())
    ]
    return json.dumps({"version": 1, "partitions": parts}, separators=(",", ":"))


# -- talking to the cluster -----------------------------------------------------------------------


class Cluster:
    """The cluster as the tool sees it, over wire connections."""

    def __init__(self, bootstrap: str, props: dict[str, str] | None = None) -> None:
        self.bootstrap = bootstrap
        self.props = props or {}  # --command-config: how to connect (security)
        self.brokers: dict[int, tuple[str, int, str | None]] = {}
        self.controller_id = -1

    def metadata(self, topics: list[str] | None) -> dict[str, dict[int, list[int]] | None]:
        """Topic -> partition -> replicas (None for a topic that does not exist); refreshes the
        brokers and the controller id."""
        from kio.schema.metadata.v12 import request as q

        with connect_any(self.bootstrap, props=self.props) as conn:
            resp = conn.request(
                q.MetadataRequest(
                    topics=None
                    if topics is None
                    else tuple(
                        q.MetadataRequestTopic(topic_id=uuid.UUID(int=0), name=t) for t in topics
                    ),
                    allow_auto_topic_creation=False,
                    include_topic_authorized_operations=False,
                )
            )
        self.brokers = {b.node_id: (b.host, b.port, b.rack) for b in resp.brokers}
        self.controller_id = resp.controller_id
        out: dict[str, dict[int, list[int]] | None] = {}
        for t in resp.topics:
            out[t.name] = (
                None
                if t.error_code == ErrorCode.unknown_topic_or_partition
                else {p.partition_index: list(p.replica_nodes) for p in t.partitions}
            )
        return out

    def current(self, tps: list[Tp]) -> dict[Tp, list[int]]:
        """The replicas of ``tps``; CliError naming the partitions that do not exist."""
        md = self.metadata(sorted({t for t, _ in tps}))
        out = {}
        for tp in tps:
            parts = md.get(tp[0])
            if parts is not None and tp[1] in parts:
                out[tp] = parts[tp[1]]
        missing = [tp_name(tp) for tp in tps if tp not in out]
        if missing:
            raise CliError("Unable to find partition: " + ", ".join(missing))
        return out

    def reassignments(self) -> dict[Tp, tuple[list[int], list[int], list[int]]]:
        """Ongoing reassignments: partition -> (replicas, adding, removing)."""
        from kio.schema.list_partition_reassignments.v0 import request as q

        with connect_any(self.bootstrap, props=self.props) as conn:
            resp = conn.request(q.ListPartitionReassignmentsRequest(timeout=TIMEOUT, topics=None))
        if resp.error_code != 0:
            raise CliError(resp.error_message or error_name(resp.error_code))
        return {
            (t.name, p.partition_index): (
                list(p.replicas),
                list(p.adding_replicas),
                list(p.removing_replicas),
            )
            for t in resp.topics
            for p in t.partitions
        }

    def alter(self, wanted: dict[Tp, list[int] | None]) -> dict[Tp, tuple[int, str | None]]:
        """AlterPartitionReassignments at the controller: partition -> (error code, message)."""
        from kio.schema.alter_partition_reassignments.v0 import request as q

        topics: dict[str, list[Any]] = {}
        for (t, p), reps in sorted(wanted.items()):
            topics.setdefault(t, []).append(
                q.ReassignablePartition(
                    partition_index=p, replicas=None if reps is None else tuple(reps)
                )
            )
        req = q.AlterPartitionReassignmentsRequest(
            timeout=TIMEOUT,
            topics=tuple(
                q.ReassignableTopic(name=t, partitions=tuple(ps)) for t, ps in topics.items()
            ),
        )
        for attempt in range(10):
            self.metadata([])
            where = self.brokers.get(self.controller_id)
            if where is not None:
                try:
                    with Connection(where[0], where[1], props=self.props) as conn:
                        resp = conn.request(req)
                except ConnectionError:
                    resp = None
                if resp is not None and resp.error_code != ErrorCode.not_controller:
                    if resp.error_code != 0:
                        raise CliError(resp.error_message or error_name(resp.error_code))
                    return {
                        (t.name, p.partition_index): (int(p.error_code), p.error_message)
                        for t in resp.responses
                        for p in t.partitions
                    }
            time.sleep(min(0.2 * (attempt + 1), 1.0))
        raise CliError("Timed out waiting for the controller to answer")


# -- the actions ----------------------------------------------------------------------------------


def _errors(results: dict[Tp, tuple[int, str | None]]) -> list[str]:
    return [
        f"{tp_name(tp)}: {msg or error_name(code)}"
        for tp, (code, msg) in sorted(results.items())
        if code != 0
    ]


def execute(cluster: Cluster, text: str, additional: bool) -> int:
    proposed = check_execute(parse_reassignment_json(text))
    if not additional and cluster.reassignments():
        print(EXISTING)
        return 1
    cluster.metadata([])
    for b in sorted({b for reps in proposed.values() for b in reps}):
        if b not in cluster.brokers:
            raise CliError(f"Unknown broker id {b}")
    current = cluster.current(list(proposed))
    print("Current partition replica assignment\n")
    print(format_json(current))
    print("\nSave this to use as the --reassignment-json-file option during rollback")
    errors = _errors(cluster.alter(dict(proposed)))
    if errors:
        print("Error reassigning partition(s):\n" + "\n".join(errors))
        return 1
    s = "" if len(proposed) == 1 else "s"
    names = ",".join(tp_name(tp) for tp in sorted(proposed))
    print(f"Successfully started partition reassignment{s} for {names}")
    return 0


def verify(cluster: Cluster, text: str) -> int:
    targets = parse_reassignment_json(text)
    ongoing = cluster.reassignments()
    lines = ["Status of partition reassignment:"]
    described = cluster.metadata(sorted({tp[0] for tp, _ in targets if tp not in ongoing}))
    for tp, target in sorted(targets):
        if tp in ongoing:
            lines.append(f"Reassignment of partition {tp_name(tp)} is still in progress.")
            continue
        current = (described.get(tp[0]) or {}).get(tp[1], [])
        if current == target:
            lines.append(f"Reassignment of partition {tp_name(tp)} is completed.")
        else:
            lines.append(
                f"There is no active reassignment of partition {tp_name(tp)}, but replica set is "
                f"{','.join(map(str, current))} rather than {','.join(map(str, target))}."
            )
    print("\n".join(lines))
    return 0


def cancel(cluster: Cluster, text: str) -> int:
    targets = {tp for tp, _ in parse_reassignment_json(text)}
    moving = sorted(tp for tp in cluster.reassignments() if tp in targets)
    if not moving:
        print("None of the specified partition reassignments are active.")
        return 0
    errors = _errors(cluster.alter(dict.fromkeys(moving)))
    if errors:
        s = "" if len(errors) == 1 else "s"
        print(f"Error cancelling partition reassignment{s} for:\n" + "\n".join(errors))
        return 1
    s = "" if len(moving) == 1 else "s"
    names = ",".join(tp_name(tp) for tp in moving)
    print(f"Successfully cancelled partition reassignment{s} for: {names}")
    return 0


def list_ongoing(cluster: Cluster) -> int:
    ongoing = cluster.reassignments()
    if not ongoing:
        print("No partition reassignments found.")
        return 0
    print("Current partition reassignments:")
    for tp, (replicas, adding, removing) in sorted(ongoing.items()):
        line = f"{tp_name(tp)}: replicas: {','.join(map(str, replicas))}."
        if adding:
            line += f" adding: {','.join(map(str, adding))}."
        if removing:
            line += f" removing: {','.join(map(str, removing))}."
        print(line)
    return 0


def generate(cluster: Cluster, text: str, broker_list: str, rack_aware: bool) -> int:
    from kafkapy.replication.assignment import AssignmentError, assign_replicas

    try:
        brokers = [int(b) for b in broker_list.split(",")]
    except ValueError:
        raise CliError(f"Invalid broker list: {broker_list}") from None
    twice = sorted({b for b in brokers if brokers.count(b) > 1})
    if twice:
        raise CliError(f"Broker list contains duplicate entries: {twice}")
    topics = parse_topics_json(text)
    twice_t = sorted({t for t in topics if topics.count(t) > 1})
    if twice_t:
        raise CliError(f"List of topics to reassign contains duplicate entries: {twice_t}")
    md = cluster.metadata(sorted(set(topics)))
    current: dict[Tp, list[int]] = {}
    for t in topics:
        parts = md.get(t)
        if parts is None:
            raise CliError(f"Topic {t} not found.")
        current.update({(t, p): r for p, r in parts.items()})
    racks = {
        b: (info[2] if rack_aware else None) for b, info in cluster.brokers.items() if b in brokers
    }
    if rack_aware and 0 < sum(r is None for r in racks.values()) < len(racks):
        raise CliError(
            "Not all brokers have rack information. Add --disable-rack-aware in command line to "
            "make replica assignment without rack information."
        )
    proposed: dict[Tp, list[int]] = {}
    for t in dict.fromkeys(topics):
        parts = {p: r for (tt, p), r in current.items() if tt == t}
        try:
            got = assign_replicas(
                racks, len(parts), len(next(iter(parts.values()))), rng=random.Random()
            )
        except (AssignmentError, StopIteration) as e:
            raise CliError(str(e) or f"Topic {t} has no partitions") from None
        proposed.update({(t, p): r for p, r in got.items()})
    print(f"Current partition replica assignment\n{format_json(current)}\n")
    print(f"Proposed partition reassignment configuration\n{format_json(proposed)}")
    return 0


# -- the command ----------------------------------------------------------------------------------


def _read(path: str | None, flag: str) -> str:
    if not path:
        raise CliError(f'Missing required argument "[{flag}]"')
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise CliError(f"Cannot read {path}: {e.strerror}") from None


def main(argv: list[str]) -> int:
    p = ToolParser("kafka-reassign-partitions", DESCRIPTION)
    p.add_argument("--bootstrap-server", metavar="HOST:PORT", help="REQUIRED: broker(s) to use")
    p.add_argument("--command-config", metavar="FILE", help="admin client properties (security)")
    actions = ("generate", "execute", "verify", "cancel", "list")
    for a in actions:
        p.add_argument(f"--{a}", action="store_true", help=f"the {a} action")
    p.add_argument(
        "--reassignment-json-file",
        metavar="FILE",
        help="the partition reassignment JSON (execute, verify, cancel)",
    )
    p.add_argument(
        "--topics-to-move-json-file",
        metavar="FILE",
        help='topics for --generate: {"topics": [{"topic": "foo"}], "version": 1}',
    )
    p.add_argument("--broker-list", metavar="IDS", help='brokers for --generate: "0,1,2"')
    p.add_argument("--disable-rack-aware", action="store_true", help="ignore racks (--generate)")
    p.add_argument(
        "--additional", action="store_true", help="execute even while other reassignments run"
    )
    p.add_argument("--preserve-throttles", action="store_true", help="accepted; no throttles")
    p.add_argument("--timeout", type=int, default=10000, metavar="MS", help="accepted")
    opts = p.parse_args(argv)
    chosen = [a for a in actions if getattr(opts, a)]
    if len(chosen) != 1:
        raise CliError(
            "Command must include exactly one action: --generate, --execute, --verify, "
            "--cancel, --list"
        )
    if not opts.bootstrap_server:
        raise CliError("Please specify --bootstrap-server")
    cluster = Cluster(opts.bootstrap_server, load_properties(opts.command_config))
    action = chosen[0]
    if action == "list":
        return list_ongoing(cluster)
    if action == "generate":
        text = _read(opts.topics_to_move_json_file, "topics-to-move-json-file")
        if not opts.broker_list:
            raise CliError('Missing required argument "[broker-list]"')
        return generate(cluster, text, opts.broker_list, not opts.disable_rack_aware)
    text = _read(opts.reassignment_json_file, "reassignment-json-file")
    if action == "execute":
        return execute(cluster, text, opts.additional)
    if action == "verify":
        return verify(cluster, text)
    return cancel(cluster, text)
