"""`kafkapy share-groups` (kafka-share-groups.sh, KIP-932): list, describe (--offsets, the
default, --members, --state, each with --verbose), reset offsets of (--dry-run or --execute, one
required; --to-earliest, --to-latest, --to-offset, --to-datetime, --by-duration), delete offsets
of, and delete share groups, with Apache Kafka 4.4's flags and output: tables whose text
columns are at least 15 wide (wider for longer values), ``-`` for what is not known, and its
error lines ("Share group 'g' is not empty.", "Error: Deletion of some share groups failed:").
The wire calls are in share_groups_client."""

from __future__ import annotations

import sys
from typing import Any

from kafkapy.cli.common import CliError, ToolParser, load_properties
from kafkapy.cli.consumer_groups_input import parse_datetime_ms, parse_duration_ms
from kafkapy.cli.share_groups_client import ShareGroupClient
from kafkapy.clock import now_ms
from kafkapy.protocol.errors import ErrorCode

DESCRIPTION = ("This tool helps to list, describe, reset and delete share groups.")
EXCEPTIONS = {
    ErrorCode.group_id_not_found: "GroupIdNotFoundException",
    ErrorCode.non_empty_group: "GroupNotEmptyException",
    ErrorCode.group_authorization_failed: "GroupAuthorizationException",
    ErrorCode.invalid_group_id: "InvalidGroupIdException",
    ErrorCode.coordinator_not_available: "CoordinatorNotAvailableException",
    ErrorCode.not_coordinator: "NotCoordinatorException",
    ErrorCode.unknown_topic_or_partition: "UnknownTopicOrPartitionException",
    ErrorCode.topic_authorization_failed: "TopicAuthorizationException",
}


def exception(code: int, message: str) -> str:
    name = EXCEPTIONS.get(ErrorCode(code), "KafkaException")
    return f"org.apache.kafka.common.errors.{name}: {message}"


def build_parser() -> ToolParser:
    p = ToolParser("kafka-share-groups", DESCRIPTION)
    p.add_argument("--bootstrap-server", metavar="HOST:PORT", help="REQUIRED: broker(s) to use")
    p.add_argument("--command-config", metavar="FILE", help="admin client properties file")
    p.add_argument("--group", action="append", metavar="GROUP", help="the share group(s)")
    p.add_argument("--all-groups", action="store_true", help="act on every share group")
    p.add_argument("--topic", action="append", metavar="TOPIC[:P,...]", help="topic(s)")
    p.add_argument("--all-topics", action="store_true", help="with --reset-offsets: all topics")
    a = p.add_argument_group("actions (exactly one)")
    a.add_argument("--list", action="store_true", help="list the share groups")
    a.add_argument("--describe", action="store_true", help="describe the group(s)")
    a.add_argument("--delete", action="store_true", help="delete the (empty) group(s)")
    a.add_argument("--reset-offsets", action="store_true", help="plan or apply start offsets")
    a.add_argument("--delete-offsets", action="store_true", help="delete topics' share state")
    p.add_argument("--offsets", action="store_true", help="with --describe: offsets (default)")
    p.add_argument("--members", action="store_true", help="with --describe: the members")
    p.add_argument("--state", nargs="?", const="", default=None, metavar="STATES",
                   help="with --describe: the state; with --list: states to list (comma list)")
    p.add_argument("--verbose", action="store_true", help="more columns")
    p.add_argument("--dry-run", action="store_true", help="show the reset plan only")
    p.add_argument("--execute", action="store_true", help="apply the reset")
    p.add_argument("--to-earliest", action="store_true", help="reset to the earliest offset")
    p.add_argument("--to-latest", action="store_true", help="reset to the latest offset")
    p.add_argument("--to-offset", type=int, metavar="OFFSET", help="reset to an offset")
    p.add_argument("--to-datetime", metavar="YYYY-MM-DDTHH:mm:SS.sss", help="reset by time")
    p.add_argument("--by-duration", metavar="PnDTnHnMnS", help="reset to now minus a duration")
    p.add_argument("--timeout", type=int, default=5000, metavar="MS", help="wait this long")
    return p


def _w(values: list[str], least: int = 15) -> int:
    return max([least, *(len(v) for v in values)])


def _row(widths: list[int], cells: list[Any]) -> str:
    out = [f"{str(c):<{w}}" for w, c in zip(widths, cells[:-1], strict=False)]
    return " ".join([*out, str(cells[-1])])


def _na(v: int) -> str:
    return "-" if v < 0 else str(v)


class ShareGroupCommand:
    def __init__(self, opts: Any) -> None:
        self.opts = opts
        self.client = ShareGroupClient(opts.bootstrap_server, load_properties(opts.command_config),
                                       opts.timeout / 1000.0)
        self.exit = 0

    def groups(self) -> list[str]:
        if self.opts.all_groups:
            return [g for g, _ in self.client.list_groups()]
        return list(self.opts.group or [])

    # -- list ----------------------------------------------------------------------------------
    def list_all(self) -> None:
        listed = self.client.list_groups()
        if self.opts.state is None:
            for g, _ in listed:
                print(g)
            return
        wanted = {s.strip().lower() for s in self.opts.state.split(",") if s.strip()}
        rows = [(g, s) for g, s in listed if not wanted or s.lower() in wanted]
        w = _w([g for g, _ in rows])
        print(_row([w], ["GROUP", "STATE"]))
        for g, s in rows:
            print(_row([w], [g, s]))

    # -- describe ------------------------------------------------------------------------------
    def describe(self) -> None:
        for group in self.groups():
            d = self.client.describe(group)
            if d.error_code != ErrorCode.none:
                message = d.error_message or f"Group {group} not found."
                print("\nError: Executing share group command failed due to "
                      + exception(d.error_code, message))
                continue
            if self.opts.members:
                self._members(d)
            elif self.opts.state is not None:
                self._state(group, d)
            else:
                self._offsets(group)

    def _members(self, d: Any) -> None:
        if not d.members:
            print(f"\nShare group '{d.group_id}' has no active members.", file=sys.stderr)
            return
        rows = []
        for m in d.members:
            parts = ";".join(f"{t.topic_name}:{','.join(str(p) for p in t.partitions)}"
                             for t in m.assignment.topic_partitions)
            count = sum(len(t.partitions) for t in m.assignment.topic_partitions)
            rows.append([d.group_id, m.member_id, m.client_host, m.client_id, count,
                         m.member_epoch, parts])
        widths = [_w([r[i] for r in rows]) for i in range(4)] + [12]
        head = ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]
        if self.opts.verbose:
            widths.append(13)
            head.append("MEMBER-EPOCH")
        print()
        print(_row(widths, [*head, "ASSIGNMENT"]))
        for r in rows:
            cells = r if self.opts.verbose else r[:5] + r[6:]
            print(_row(widths, cells))

    def _state(self, group: str, d: Any) -> None:
        _, coordinator = self.client.coordinator(group)
        widths = [_w([group]), _w([coordinator], 25), 15]
        head = ["GROUP", "COORDINATOR (ID)", "STATE"]
        row = [group, coordinator, d.group_state]
        if self.opts.verbose:
            widths += [12, 17]
            head += ["GROUP-EPOCH", "ASSIGNMENT-EPOCH"]
            row += [d.group_epoch, d.assignment_epoch]
        print()
        print(_row(widths, [*head, "#MEMBERS"]))
        print(_row(widths, [*row, len(d.members)]))
        if not d.members:
            print(f"\nShare group '{group}' has no active members.", file=sys.stderr)

    def _offsets(self, group: str) -> None:
        g = self.client.start_offsets(group)
        rows = sorted(
            (t.topic_name, p.partition_index, p.leader_epoch, p.start_offset, p.lag)
            for t in g.topics for p in t.partitions)
        gw, tw = _w([group]), _w([r[0] for r in rows])
        widths = [gw, tw, 10] + ([13, 13] if self.opts.verbose else [13])
        head = ["GROUP", "TOPIC", "PARTITION"] + (["LEADER-EPOCH"] if self.opts.verbose else [])
        print()
        print(_row(widths, [*head, "START-OFFSET", "LAG"]))
        for topic, p, epoch, start, lag in rows:
            extra = [_na(epoch)] if self.opts.verbose else []
            print(_row(widths, [group, topic, p, *extra, _na(start), _na(lag)]))

    # -- reset, delete offsets, delete ---------------------------------------------------------
    def _empty(self, group: str) -> bool:
        d = self.client.describe(group)
        return d.error_code != ErrorCode.none or not d.members

    def _partitions(self, group: str) -> list[tuple[str, int]]:
        if self.opts.all_topics:
            g = self.client.start_offsets(group)
            return sorted((t.topic_name, p.partition_index) for t in g.topics
                          for p in t.partitions)
        out: list[tuple[str, int]] = []
        for spec in self.opts.topic or []:
            name, _, parts = spec.partition(":")
            if parts:
                out += [(name, int(p)) for p in parts.split(",") if p.strip()]
                continue
            md = self.client.metadata([name])
            for t in md.topics:
                if t.error_code != ErrorCode.none:
                    raise CliError(f"Topic {name} does not exist.")
                out += [(name, p.partition_index) for p in t.partitions]
        return sorted(out)

    def _targets(self, tps: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        o = self.opts
        if o.to_offset is not None:
            return dict.fromkeys(tps, o.to_offset)
        if o.to_latest:
            return self.client.log_offsets(tps, -1)
        if o.to_datetime:
            return self.client.log_offsets(tps, parse_datetime_ms(o.to_datetime))
        if o.by_duration:
            return self.client.log_offsets(tps, now_ms() - parse_duration_ms(o.by_duration))
        return self.client.log_offsets(tps, -2)

    def reset_offsets(self) -> None:
        for group in self.groups():
            if not self._empty(group):
                print(f"Share group '{group}' is not empty.", file=sys.stderr)
                self.exit = 1
                continue
            plan = self._targets(self._partitions(group))
            if self.opts.execute:
                resp = self.client.alter_offsets(group, plan)
                if resp.error_code != ErrorCode.none:
                    raise CliError(exception(resp.error_code, resp.error_message or ""))
            gw, tw = _w([group]), _w([t for t, _ in plan])
            print()
            print(_row([gw, tw, 10], ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"]))
            for (topic, p), off in sorted(plan.items()):
                print(_row([gw, tw, 10], [group, topic, p, off]))

    def delete_offsets(self) -> None:
        for group in self.groups():
            topics = [t.partition(":")[0] for t in self.opts.topic or []]
            resp = self.client.delete_offsets(group, topics)
            if resp.error_code != ErrorCode.none:
                print("\nError: Encountered some issues while deleting offsets: "
                      + exception(resp.error_code, resp.error_message or ""))
                self.exit = 1
                continue
            tw = _w([t.topic_name for t in resp.responses])
            print()
            print(_row([tw], ["TOPIC", "STATUS"]))
            for t in resp.responses:
                status = ("Successful" if t.error_code == ErrorCode.none
                          else "Error: " + (t.error_message or t.error_code.name))
                print(_row([tw], [t.topic_name, status]))

    def delete(self) -> None:
        failed: dict[str, str] = {}
        groups = self.groups()
        for group in groups:
            d = self.client.describe(group)
            if d.error_code != ErrorCode.none:
                failed[group] = exception(ErrorCode.group_id_not_found,
                                          f"Group '{group}' is not a share group.")
            elif d.members:
                failed[group] = exception(ErrorCode.non_empty_group,
                                          f"Share group '{group}' is not EMPTY.")
            else:
                err = self.client.delete_group(group)
                if err:
                    failed[group] = exception(err, ErrorCode(err).name)
        if not failed:
            names = ", ".join(f"'{g}'" for g in groups)
            print(f"Deletion of requested share groups ({names}) was successful.")
            return
        print("\nError: Deletion of some share groups failed:")
        for g, why in failed.items():
            print(f"* Group '{g}' could not be deleted due to: {why}")


def main(argv: list[str]) -> int:
    opts = build_parser().parse_args(argv)
    if not opts.bootstrap_server:
        raise CliError("Missing required argument \"[bootstrap-server]\"")
    actions = [a for a in ("list", "describe", "delete", "reset_offsets", "delete_offsets")
               if getattr(opts, a)]
    if len(actions) != 1:
        raise CliError("Command must include exactly one action: --list, --describe, --delete, "
                       "--reset-offsets, --delete-offsets")
    if actions[0] == "reset_offsets" and not (opts.dry_run or opts.execute):
        print("Option [reset-offsets] takes the option: [execute] or [dry-run]", file=sys.stderr)
        return 1
    if actions[0] != "list" and not (opts.group or opts.all_groups):
        raise CliError("Option [group] must be specified (or --all-groups).")
    cmd = ShareGroupCommand(opts)
    try:
        getattr(cmd, "list_all" if actions[0] == "list" else actions[0])()
    finally:
        cmd.client.close()
    return cmd.exit
