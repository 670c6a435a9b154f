"""`kafkapy consumer-groups` (kafka-consumer-groups.sh): list, describe, reset offsets of, delete
consumer groups, and delete a group's committed offsets.

Output is Kafka's: `--describe` prints a blank line then the columns GROUP TOPIC PARTITION
CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID (widths grow with the longest value,
at least 15), members with the most partitions first, committed partitions with no owner last
with `-`; `--members` and `--state` print their own tables; `--reset-offsets` prints GROUP TOPIC
PARTITION NEW-OFFSET and only writes with --execute (--dry-run is the default).

This module is the command line (flags, their checks, the action chosen); the work is in
consumer_groups_service (admin client calls), consumer_groups_output (tables),
consumer_groups_input (reset plan inputs) and offset_delete (OffsetDelete on the wire).
"""

from __future__ import annotations

import sys

from kafkapy.cli.common import CliError, ToolParser
from kafkapy.cli.consumer_groups_output import list_table
from kafkapy.cli.consumer_groups_service import ConsumerGroupService

DESCRIPTION = (
    "This tool helps to list all consumer groups, describe a consumer group, delete consumer "
    "group info, or reset consumer group offsets."
)

CONSUMER_STATES = (
    "PreparingRebalance",
    "CompletingRebalance",
    "Stable",
    "Dead",
    "Empty",
    "Assigning",
    "Reconciling",
)


def build_parser() -> ToolParser:
    p = ToolParser("kafka-consumer-groups", DESCRIPTION)
    p.add_argument("--bootstrap-server", metavar="HOST:PORT", help="REQUIRED: broker(s) to use")
    p.add_argument("--command-config", metavar="FILE", help="admin client properties file")
    p.add_argument("--group", action="append", metavar="GROUP", help="the group(s) to act on")
    p.add_argument("--all-groups", action="store_true", help="act on every consumer group")
    p.add_argument(
        "--topic",
        action="append",
        metavar="TOPIC[:P,...]",
        help="topic (optionally with partitions) for --reset-offsets and --delete-offsets",
    )
    p.add_argument("--all-topics", action="store_true", help="with --reset-offsets: all topics")
    a = p.add_argument_group("actions (exactly one)")
    a.add_argument("--list", action="store_true", help="list the consumer groups")
    a.add_argument("--describe", action="store_true", help="describe the group(s)")
    a.add_argument("--delete", action="store_true", help="delete the (empty) group(s)")
    a.add_argument("--reset-offsets", action="store_true", help="plan or apply new offsets")
    a.add_argument("--delete-offsets", action="store_true", help="delete committed offsets")
    p.add_argument("--offsets", action="store_true", help="with --describe: offsets (default)")
    p.add_argument("--members", action="store_true", help="with --describe: the members")
    p.add_argument(
        "--state",
        nargs="?",
        const="",
        metavar="STATES",
        help="with --describe: the group state; with --list: show states, optionally only "
        "these (comma separated)",
    )
    p.add_argument("--type", nargs="?", const="", metavar="TYPES", help="with --list: types")
    p.add_argument("--verbose", action="store_true", help="more detail with --members/--offsets")
    p.add_argument("--dry-run", action="store_true", help="show the reset plan only (default)")
    p.add_argument("--execute", action="store_true", help="apply the reset")
    p.add_argument("--export", action="store_true", help="print the reset plan as CSV")
    p.add_argument("--to-offset", type=int, metavar="OFFSET", help="reset to this offset")
    p.add_argument("--to-earliest", action="store_true", help="reset to the earliest offset")
    p.add_argument("--to-latest", action="store_true", help="reset to the latest offset")
    p.add_argument("--to-current", action="store_true", help="reset to the committed offset")
    p.add_argument("--shift-by", type=int, metavar="N", help="move the committed offset by N")
    p.add_argument(
        "--to-datetime",
        metavar="YYYY-MM-DDTHH:mm:SS.sss",
        help="reset to the first offset at "
        "or after this time (timezone suffix optional, local time otherwise)",
    )
    p.add_argument(
        "--by-duration", metavar="PnDTnHnMnS", help="reset to the offset this long before now"
    )
    p.add_argument("--from-file", metavar="CSV", help="reset to the offsets in this CSV file")
    p.add_argument(
        "--timeout", type=int, default=5000, metavar="MS", help="admin request timeout (5000)"
    )
    return p



def check_args(o) -> str:
    actions = [
        n
        for n in ("list", "describe", "delete", "reset_offsets", "delete_offsets")
        if getattr(o, n)
    ]
    if len(actions) != 1:
        raise CliError(
            "Command must include exactly one action: --list, --describe, --delete, "
            "--reset-offsets, --delete-offsets"
        )
    if not o.bootstrap_server:
        raise CliError('Missing required argument "[bootstrap-server]"')
    action = actions[0]
    if action in ("describe", "delete", "reset_offsets") and not (o.group or o.all_groups):
        raise CliError(
            "Option [" + action.replace("_", "-") + "] takes one of these options: "
            "[all-groups], [group]"
        )
    if o.group and o.all_groups:
        raise CliError("Option [group] cannot be used with [all-groups]")
    if action == "delete_offsets":
        if not o.group or len(o.group) != 1 or not o.topic:
            raise CliError("Option [delete-offsets] takes the [group] and [topic] options")
    if action == "reset_offsets":
        scenarios = [
            o.to_offset is not None,
            o.to_earliest,
            o.to_latest,
            o.to_current,
            o.shift_by is not None,
            bool(o.to_datetime),
            bool(o.by_duration),
            bool(o.from_file),
        ]
        if sum(scenarios) > 1:
            raise CliError("Option [reset-offsets] takes only one reset scenario")
        if o.all_topics and o.topic:
            raise CliError("Option [all-topics] cannot be used with [topic]")
        if o.dry_run and o.execute:
            raise CliError("Option [reset-offsets] only accepts one of [execute], [dry-run]")
    elif o.execute or o.dry_run or o.export:
        raise CliError("--execute, --dry-run and --export can only be used with --reset-offsets")
    if action == "describe" and sum([o.members, o.offsets, o.state is not None]) > 1:
        raise CliError(
            "Option [describe] takes at most one of these options: [members], [offsets], [state]"
        )
    if o.state not in (None, "") and action != "list":
        raise CliError("Option [state] with a value can only be used with [list]")
    return action


def parse_states(text: str) -> set[str]:
    wanted = set()
    for s in text.split(","):
        s = s.strip()
        match = [x for x in CONSUMER_STATES if x.lower() == s.lower()]
        if not match:
            raise CliError(
                f"Invalid state list '{text}'. Valid states are: " + ", ".join(CONSUMER_STATES)
            )
        wanted.add(match[0])
    return wanted


def main(argv: list[str]) -> int:
    o = build_parser().parse_args(argv)
    action = check_args(o)
    svc = ConsumerGroupService(o)
    svc.failed = False
    if action == "list":
        groups = svc.list_groups()
        if o.state is not None or o.type is not None:
            if o.state:
                wanted = parse_states(o.state)
                groups = [(g, s) for g, s in groups if s in wanted]
            sys.stdout.write(list_table(groups))
        else:
            for g, _ in groups:
                print(g)
    elif action == "describe":
        for group in sorted(svc.group_ids()):
            if o.members:
                svc.describe_members(group)
            elif o.state is not None:
                svc.describe_state(group)
            else:
                svc.describe_offsets(group)
    elif action == "delete":
        svc.delete_groups()
    elif action == "reset_offsets":
        svc.reset()
    else:
        svc.delete_offsets()
    return 1 if svc.failed else 0
