"""`kafkapy consumer-groups` (kafka-consumer-groups.sh): list, describe, reset offsets of, delete
consumer groups, and delete a group's committed offsets.

Output is Kafka's: `--describe` prints a blank line then the columns GROUP TOPIC PARTITION
CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID (widths grow with the longest value,
at least 15), members with the most partitions first, committed partitions with no owner last
with `-`; `--members` and `--state` print their own tables; `--reset-offsets` prints GROUP TOPIC
PARTITION NEW-OFFSET and only writes with --execute (--dry-run is the default).
"""

from __future__ import annotations

import csv
import io
import re
import sys
import time
from dataclasses import dataclass
from datetime import datetime

from kafkapy.cli.common import (
    CliError,
    ToolParser,
    admin_client,
    kafka_error_message,
    load_properties,
    result,
)

DESCRIPTION = (
    "This tool helps to list all consumer groups, describe a consumer group, delete consumer "
    "group info, or reset consumer group offsets."
)
MISSING = "-"

# confluent-kafka ConsumerGroupState names -> Kafka's GroupState names
STATE_NAMES = {
    "UNKNOWN": "Unknown",
    "PREPARING_REBALANCING": "PreparingRebalance",
    "COMPLETING_REBALANCING": "CompletingRebalance",
    "STABLE": "Stable",
    "DEAD": "Dead",
    "EMPTY": "Empty",
    "ASSIGNING": "Assigning",
    "RECONCILING": "Reconciling",
}
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


# -- data -----------------------------------------------------------------------------------------


@dataclass
class Row:
    group: str
    topic: str | None
    partition: int | None
    offset: int | None
    log_end: int | None
    consumer_id: str | None
    host: str | None
    client_id: str | None
    leader_epoch: int | None = None

    @property
    def lag(self) -> int | None:
        if self.offset is None or self.offset == -1 or self.log_end is None:
            return None
        return self.log_end - self.offset


@dataclass
class Member:
    group: str
    consumer_id: str
    group_instance_id: str
    host: str
    client_id: str
    assignment: list[tuple[str, int]]


def _s(v: object) -> str:
    return MISSING if v is None else str(v)


def offsets_table(rows: list[Row], verbose: bool = False) -> str:
    """Kafka's --describe --offsets table (starts with a blank line, ends with a newline)."""
    g = max([15] + [len(r.group) for r in rows])
    t = max([15] + [len(_s(r.topic)) for r in rows])
    c = max([15] + [len(_s(r.consumer_id)) for r in rows])
    h = max([15] + [len(_s(r.host)) for r in rows])

    def line(cols: list[str]) -> str:
        if verbose:
            widths = [g, t, 10, 15, 15, 15, 15, c, h]
        else:
            widths = [g, t, 10, 15, 15, 15, c, h]
        return " ".join(f"{v:<{w}}" for v, w in zip(cols, widths, strict=False)) + " " + cols[-1]

    head = ["GROUP", "TOPIC", "PARTITION"]
    head += ["LEADER-EPOCH"] if verbose else []
    head += ["CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"]
    out = ["\n" + line(head)]
    for r in rows:
        cols = [r.group, _s(r.topic), _s(r.partition)]
        cols += [_s(r.leader_epoch)] if verbose else []
        cols += [
            _s(r.offset),
            _s(r.log_end),
            _s(r.lag),
            _s(r.consumer_id),
            _s(r.host),
            _s(r.client_id),
        ]
        out.append("\n" + line(cols))
    return "".join(out) + "\n"


def assignment_text(assignment: list[tuple[str, int]]) -> str:
    by_topic: dict[str, list[int]] = {}
    for topic, part in assignment:
        by_topic.setdefault(topic, []).append(part)
    texts = [f"{t}:" + ",".join(str(p) for p in sorted(ps)) for t, ps in by_topic.items()]
    return ";".join(sorted(texts))


def members_table(members: list[Member], verbose: bool = False) -> str:
    g = max([15] + [len(m.group) for m in members])
    c = max([15] + [len(m.consumer_id) for m in members])
    gi = max([17] + [len(m.group_instance_id) for m in members])
    h = max([15] + [len(m.host) for m in members])
    cl = max([15] + [len(m.client_id) for m in members])
    with_instance = any(m.group_instance_id for m in members)
    cur = max([20] + [len(assignment_text(m.assignment) or MISSING) for m in members])
    tgt = 20

    def base(cols: list[str]) -> str:
        widths = [g, c, gi, h, cl, 15] if with_instance else [g, c, h, cl, 15]
        return "".join(f"{v:<{w}} " for v, w in zip(cols, widths, strict=True))

    def extra(cols: list[str]) -> str:
        widths = [15, cur, 15, tgt]
        return " ".join(f"{v:<{w}}" for v, w in zip(cols, widths, strict=True))

    head = ["GROUP", "CONSUMER-ID"] + (["GROUP-INSTANCE-ID"] if with_instance else [])
    head += ["HOST", "CLIENT-ID", "#PARTITIONS"]
    out = "\n" + base(head)
    if verbose:
        out += extra(["CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT"])
    out += "\n"
    for m in members:
        cols = [m.group, m.consumer_id] + ([m.group_instance_id] if with_instance else [])
        cols += [m.host, m.client_id, str(len(m.assignment))]
        out += base(cols)
        if verbose:
            out += extra([MISSING, assignment_text(m.assignment) or MISSING, MISSING, MISSING])
        out += "\n"
    return out


def state_table(group: str, coordinator: str, strategy: str, state: str, members: int) -> str:
    cw = max(25, len(coordinator))
    gw = max(15, len(group))

    def line(cols: list[str]) -> str:
        return "\n" + f"{cols[0]:<{gw}} {cols[1]:<{cw}} {cols[2]:<20} {cols[3]:<20} {cols[4]}"

    return (
        line(["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"])
        + line([group, coordinator, strategy or MISSING, state, str(members)])
        + "\n"
    )


def list_table(groups: list[tuple[str, str]]) -> str:
    width = max([15] + [len(g) for g, _ in groups]) + 10
    lines = [f"{'GROUP':<{width}} {'STATE':<20}"]
    lines += [f"{g:<{width}} {s:<20}" for g, s in groups]
    return "\n".join(lines) + "\n"


def reset_table(plan: dict[str, dict[tuple[str, int], int]]) -> str:
    g = max([15] + [len(x) for x in plan])
    t = max([15] + [len(tp[0]) for offs in plan.values() for tp in offs])
    out = ""
    if plan:
        out += "\n" + f"{'GROUP':<{g}} {'TOPIC':<{t}} {'PARTITION':<10} NEW-OFFSET"
    for group, offs in plan.items():
        for (topic, part), off in sorted(offs.items()):
            out += "\n" + f"{group:<{g}} {topic:<{t}} {part!s:<10} {off}"
    return out + "\n"


def export_csv(plan: dict[str, dict[tuple[str, int], int]], single_group: bool) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for group, offs in plan.items():
        for (topic, part), off in sorted(offs.items()):
            w.writerow([topic, part, off] if single_group else [group, topic, part, off])
    return buf.getvalue()


def parse_reset_csv(text: str, groups: list[str]) -> dict[str, dict[tuple[str, int], int]]:
    rows = [r for r in csv.reader(io.StringIO(text)) if r and any(x.strip() for x in r)]
    plan: dict[str, dict[tuple[str, int], int]] = {}
    try:
        if rows and len(rows[0]) == 3 and len(groups) == 1:
            for topic, part, off in rows:
                plan.setdefault(groups[0], {})[(topic, int(part))] = int(off)
        else:
            for group, topic, part, off in rows:
                plan.setdefault(group, {})[(topic, int(part))] = int(off)
    except ValueError as e:
        raise CliError(f"Invalid reset plan file: {e}") from None
    return plan


def parse_datetime_ms(text: str) -> int:
    """Kafka's Utils.getDateTime: yyyy-MM-ddTHH:mm:ss[.SSS] with an optional zone (Z, +hh:mm)."""
    s = text.strip()
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    m = re.fullmatch(r"(.*[T ]\d\d:\d\d:\d\d(?:\.\d+)?)([+-]\d\d):?(\d\d)?", s)
    if m:
        s = f"{m.group(1)}{m.group(2)}:{m.group(3) or '00'}"
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        raise CliError(
            f"Error parsing date {text}: use the format yyyy-MM-ddTHH:mm:ss.SSS, optionally with "
            "a timezone such as Z or +01:00"
        ) from None
    if dt.tzinfo is None:
        dt = dt.astimezone()  # local time, as Kafka does
    return int(dt.timestamp() * 1000)


def parse_duration_ms(text: str) -> int:
    """ISO-8601 duration PnDTnHnMnS (as java.time.Duration.parse)."""
    m = re.fullmatch(
        r"([-+]?)P(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+(?:[.,]\d+)?)S)?)?",
        text.strip().upper(),
    )
    if not m or text.strip().upper() in ("P", "PT") or text.strip().upper().endswith("T"):
        raise CliError(f"Text cannot be parsed to a Duration: {text}")
    days, hours, mins = (int(x or 0) for x in m.group(2, 3, 4))
    secs = float((m.group(5) or "0").replace(",", "."))
    total = ((days * 24 + hours) * 60 + mins) * 60 + secs
    return int(total * 1000) * (-1 if m.group(1) == "-" else 1)


def parse_topic_partitions(arg: str) -> list[tuple[str, int]]:
    parts = arg.split(":")
    if len(parts) != 2:
        raise CliError(f"Invalid topic arg '{arg}', expected topic name and partitions")
    out = []
    for p in parts[1].split(","):
        try:
            out.append((parts[0], int(p)))
        except ValueError:
            raise CliError(f"Invalid partition '{p}' specified in topic arg '{arg}''") from None
    return out


# -- service --------------------------------------------------------------------------------


class Service:
    def __init__(self, opts) -> None:  # noqa: ANN001
        self.opts = opts
        self.timeout = opts.timeout / 1000.0
        self.admin = admin_client(opts.bootstrap_server, load_properties(opts.command_config))

    # --- lookups
    def list_groups(self) -> list[tuple[str, str]]:
        res = result(self.admin.list_consumer_groups(request_timeout=self.timeout))
        if res.errors and not res.valid:
            raise CliError(kafka_error_message(res.errors[0]))
        out = []
        for g in res.valid:
            state = STATE_NAMES.get(getattr(g.state, "name", ""), "Unknown")
            out.append((g.group_id, state))
        return out

    def group_ids(self) -> list[str]:
        if self.opts.all_groups:
            return sorted(g for g, _ in self.list_groups())
        return list(self.opts.group or [])

    def describe(self, group: str):  # noqa: ANN201
        from confluent_kafka import KafkaError, KafkaException

        fut = self.admin.describe_consumer_groups([group], request_timeout=self.timeout)[group]
        try:
            return fut.result()
        except KafkaException as e:
            err = e.args[0] if e.args else None
            if isinstance(err, KafkaError) and err.code() == KafkaError.GROUP_ID_NOT_FOUND:
                return None
            raise CliError(kafka_error_message(e)) from None

    def state_of(self, desc) -> str:  # noqa: ANN001
        if desc is None:
            return "Dead"
        return STATE_NAMES.get(getattr(desc.state, "name", ""), "Unknown")

    def committed(self, group: str) -> dict[tuple[str, int], int]:
        from confluent_kafka import ConsumerGroupTopicPartitions

        futs = self.admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group)], request_timeout=self.timeout
        )
        res = result(futs[group])
        return {
            (tp.topic, tp.partition): tp.offset for tp in res.topic_partitions if tp.offset >= 0
        }

    def partitions_of(self, topics: list[str]) -> dict[str, list[int]]:
        md = self.admin.list_topics(timeout=self.timeout + 10)
        out = {}
        for t in topics:
            tm = md.topics.get(t)
            if tm is None or tm.error is not None:
                raise CliError(f"Topic {t} does not exist")
            out[t] = sorted(tm.partitions)
        return out

    def log_offsets(self, tps: list[tuple[str, int]], spec) -> dict[tuple[str, int], int]:  # noqa: ANN001
        from confluent_kafka import KafkaException, TopicPartition

        if not tps:
            return {}
        futs = self.admin.list_offsets(
            {TopicPartition(t, p): spec for t, p in tps}, request_timeout=self.timeout
        )
        out = {}
        for tp, f in futs.items():
            try:
                out[(tp.topic, tp.partition)] = f.result().offset
            except KafkaException:
                pass
        return out

    def log_end(self, tps: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        from confluent_kafka.admin import OffsetSpec

        return self.log_offsets(tps, OffsetSpec.latest())

    def log_start(self, tps: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        from confluent_kafka.admin import OffsetSpec

        return self.log_offsets(tps, OffsetSpec.earliest())

    # --- actions
    def print_state_message(self, group: str, state: str, rows: int) -> bool:
        """Kafka's shouldPrintMemberState: a note for odd states; True if a table follows."""
        if state == "Dead":
            print(f"\nError: Consumer group '{group}' does not exist.", file=sys.stderr)
            self.failed = True
            return False
        if state == "Empty":
            print(f"\nConsumer group '{group}' has no active members.", file=sys.stderr)
        elif state in ("PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling"):
            print(f"\nWarning: Consumer group '{group}' is rebalancing.", file=sys.stderr)
        return rows > 0

    def describe_offsets(self, group: str) -> None:
        desc = self.describe(group)
        state = self.state_of(desc)
        committed = self.committed(group) if desc is not None else {}
        rows: list[Row] = []
        assigned: set[tuple[str, int]] = set()
        members = [m for m in (desc.members if desc else []) if m.assignment.topic_partitions]
        members.sort(key=lambda m: -len(m.assignment.topic_partitions))
        needed = [(tp.topic, tp.partition) for m in members for tp in m.assignment.topic_partitions]
        unassigned = sorted(k for k in committed if k not in set(needed))
        ends = self.log_end(needed + unassigned)
        for m in members:
            tps = sorted((tp.topic, tp.partition) for tp in m.assignment.topic_partitions)
            assigned.update(tps)
            for t, p in tps:
                rows.append(
                    Row(
                        group,
                        t,
                        p,
                        committed.get((t, p)),
                        ends.get((t, p)),
                        m.member_id,
                        m.host,
                        m.client_id,
                    )
                )
        for t, p in unassigned:
            rows.append(
                Row(group, t, p, committed[(t, p)], ends.get((t, p)), MISSING, MISSING, MISSING)
            )
        if self.print_state_message(group, state, len(rows)):
            sys.stdout.write(offsets_table(rows, self.opts.verbose))

    def describe_members(self, group: str) -> None:
        desc = self.describe(group)
        state = self.state_of(desc)
        members = [
            Member(
                group,
                m.member_id,
                m.group_instance_id or "",
                m.host,
                m.client_id,
                [(tp.topic, tp.partition) for tp in m.assignment.topic_partitions],
            )
            for m in (desc.members if desc else [])
        ]
        if self.print_state_message(group, state, len(members)) or state != "Dead":
            sys.stdout.write(members_table(members, self.opts.verbose))

    def describe_state(self, group: str) -> None:
        desc = self.describe(group)
        state = self.state_of(desc)
        if not self.print_state_message(group, state, 1):
            return
        c = desc.coordinator
        coordinator = f"{c.host}:{c.port}  ({c.id})"
        sys.stdout.write(
            state_table(group, coordinator, desc.partition_assignor, state, len(desc.members))
        )

    def partitions_to_reset(self, group: str) -> list[tuple[str, int]]:
        if self.opts.all_topics:
            return sorted(self.committed(group))
        out: list[tuple[str, int]] = []
        plain = []
        for arg in self.opts.topic or []:
            if ":" in arg:
                out.extend(parse_topic_partitions(arg))
            else:
                plain.append(arg)
        for t, parts in self.partitions_of(plain).items():
            out.extend((t, p) for p in parts)
        return out

    def clamp(self, requested: dict[tuple[str, int], int]) -> dict[tuple[str, int], int]:
        tps = list(requested)
        starts, ends = self.log_start(tps), self.log_end(tps)
        out = {}
        for tp, off in requested.items():
            if tp in ends and off > ends[tp]:
                off = ends[tp]
            elif tp in starts and off < starts[tp]:
                off = starts[tp]
            out[tp] = off
        return out

    def by_timestamp(self, tps: list[tuple[str, int]], ts: int) -> dict[tuple[str, int], int]:
        from confluent_kafka.admin import OffsetSpec

        found = self.log_offsets(tps, OffsetSpec.for_timestamp(ts))
        missing = [tp for tp in tps if found.get(tp, -1) == -1]
        for t, p in missing:
            print(
                f"\nWarn: Partition {p} from topic {t} is empty. Falling back to latest known "
                "offset."
            )
        found.update(self.log_end(missing))
        return found

    def plan(self, group: str, file_plan) -> dict[tuple[str, int], int]:  # noqa: ANN001
        o = self.opts
        tps = self.partitions_to_reset(group) if not o.from_file else []
        existing = {t for t, _ in tps}
        if existing:
            known = self.partitions_of(sorted(existing))
            bad = [f"{t}-{p}" for t, p in tps if p not in known.get(t, [])]
            if bad:
                raise CliError(f'The partitions "{",".join(bad)}" do not exist')
        if o.to_offset is not None:
            return self.clamp({tp: o.to_offset for tp in tps})
        if o.to_earliest:
            return self.log_start(tps)
        if o.to_latest:
            return self.log_end(tps)
        if o.shift_by is not None:
            current = self.committed(group)
            requested = {}
            for t, p in tps:
                if (t, p) not in current:
                    raise CliError(
                        f"Cannot shift offset for partition {t}-{p} since there is no current "
                        "committed offset"
                    )
                requested[(t, p)] = current[(t, p)] + o.shift_by
            return self.clamp(requested)
        if o.to_datetime:
            return self.by_timestamp(tps, parse_datetime_ms(o.to_datetime))
        if o.by_duration:
            return self.by_timestamp(
                tps, int(time.time() * 1000) - parse_duration_ms(o.by_duration)
            )
        if o.from_file:
            if group not in file_plan:
                print(f"\nError: No reset plan for group {group} found.")
                return {}
            return self.clamp(file_plan[group])
        if o.to_current:
            current = self.committed(group)
            have = {tp: current[tp] for tp in tps if tp in current}
            have.update(self.log_end([tp for tp in tps if tp not in current]))
            return have
        raise CliError(
            "Option '[reset-offsets]' requires one of the following scenarios: --to-offset, "
            "--to-earliest, --to-latest, --shift-by, --from-file, --to-datetime, --by-duration, "
            "--to-current"
        )

    def reset(self) -> None:
        from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

        o = self.opts
        if not (o.all_topics or o.topic or o.from_file):
            raise CliError("One of the reset scopes should be defined: --all-topics, --topic.")
        file_plan = {}
        if o.from_file:
            try:
                with open(o.from_file, encoding="utf-8") as f:
                    file_plan = parse_reset_csv(f.read(), self.group_ids())
            except OSError as e:
                raise CliError(f"Cannot read {o.from_file}: {e.strerror}") from None
        plan: dict[str, dict[tuple[str, int], int]] = {}
        for group in self.group_ids():
            state = self.state_of(self.describe(group))
            if state not in ("Empty", "Dead"):
                print(
                    f"\nError: Assignments can only be reset if the group '{group}' is inactive, "
                    f"but the current state is {state}.",
                    file=sys.stderr,
                )
                self.failed = True
                plan[group] = {}
                continue
            offsets = self.plan(group, file_plan)
            if o.execute and offsets:
                tps = [TopicPartition(t, p, off) for (t, p), off in sorted(offsets.items())]
                futs = self.admin.alter_consumer_group_offsets(
                    [ConsumerGroupTopicPartitions(group, tps)], request_timeout=self.timeout
                )
                for f in futs.values():
                    result(f)
            plan[group] = offsets
        if o.export:
            sys.stdout.write(export_csv(plan, len(self.group_ids()) == 1) + "\n")
        else:
            sys.stdout.write(reset_table(plan))

    def delete_groups(self) -> None:
        groups = self.group_ids()
        futs = self.admin.delete_consumer_groups(groups, request_timeout=self.timeout)
        ok, failed = [], []
        for g, f in futs.items():
            try:
                f.result()
                ok.append(g)
            except Exception as e:  # noqa: BLE001 - reported per group
                failed.append((g, kafka_error_message(e)))
        if not failed:
            names = ", ".join(f"'{g}'" for g in ok)
            print(f"Deletion of requested consumer groups ({names}) was successful.")
            return
        self.failed = True
        print("\nError: Deletion of some consumer groups failed:")
        for g, err in failed:
            print(f"* Group '{g}' could not be deleted due to: {err}")
        if ok:
            names = ", ".join(f"'{g}'" for g in ok)
            print(f"\nThese consumer groups were deleted successfully: {names}")

    def delete_offsets(self) -> None:
        group = self.group_ids()[0]
        tps: list[tuple[str, int]] = []
        plain = []
        for arg in self.opts.topic or []:
            if ":" in arg:
                tps.extend(parse_topic_partitions(arg))
            else:
                plain.append(arg)
        results: dict[tuple[str, int], str | None] = {}
        md = self.admin.list_topics(timeout=self.timeout + 10)
        for t in plain:
            tm = md.topics.get(t)
            if tm is None or tm.error is not None:
                results[(t, -1)] = "Error: This server does not host this topic-partition."
                continue
            tps.extend((t, p) for p in sorted(tm.partitions))
        top, per_partition = offset_delete(
            self.opts.bootstrap_server, group, tps, self.timeout,
            load_properties(self.opts.command_config),
        )
        results.update(per_partition)
        if top == 0:
            print(f"Request succeeded for deleting offsets from group {group}.")
        else:
            self.failed = True
            from kafkapy.protocol.errors import ErrorCode

            name = ErrorCode(top).name.upper() if top in ErrorCode._value2member_map_ else top
            if name in (
                "GROUP_SUBSCRIBED_TO_TOPIC",
                "TOPIC_AUTHORIZATION_FAILED",
                "UNKNOWN_TOPIC_OR_PARTITION",
            ):
                print("\nError: Encountered some partition-level error, see the follow-up details.")
            else:
                print(f"\nError: {error_message(top)}")
        tw = max([15] + [len(t) for t, _ in results])
        out = f"\n{'TOPIC':<{tw}} {'PARTITION':<10} {'STATUS':<15}"
        for (t, p), err in sorted(results.items(), key=lambda kv: kv[0][0] + str(kv[0][1])):
            status = "Successful" if err is None else err
            out += f"\n{t:<{tw}} {(str(p) if p >= 0 else MISSING):<10} {status:<15}"
        print(out)


def error_message(code: int) -> str:
    from kafkapy.protocol.errors import error_name

    messages = {
        15: "The coordinator is not available.",
        16: "This is not the correct coordinator.",
        24: "The configured groupId is invalid.",
        68: "The group is not empty.",
        69: "The group id does not exist.",
        30: "Not authorized to access group: Group authorization failed.",
        3: "This server does not host this topic-partition.",
        93: "The consumer group is actively subscribed to the topic",
        35: "The version of API is not supported.",
    }
    return messages.get(code, error_name(code))


def offset_delete(
    bootstrap: str,
    group: str,
    tps: list[tuple[str, int]],
    timeout: float,
    props: dict[str, str] | None = None,
) -> tuple[int, dict[tuple[str, int], str | None]]:
    """OffsetDelete at the group's coordinator (confluent-kafka has no API for it)."""
    from kio.schema.find_coordinator.v4.request import FindCoordinatorRequest
    from kio.schema.offset_delete.v0.request import (
        OffsetDeleteRequest,
        OffsetDeleteRequestPartition,
        OffsetDeleteRequestTopic,
    )

    from kafkapy.cli.wire import Connection, connect_any

    try:
        with connect_any(bootstrap, timeout, props) as conn:
            fc = conn.request(FindCoordinatorRequest(key_type=0, coordinator_keys=(group,)))
    except ConnectionError:
        raise CliError("The cluster does not serve FindCoordinator (no consumer groups)") from None
    (coord,) = fc.coordinators
    if coord.error_code != 0:
        raise CliError(error_message(int(coord.error_code)))
    topics: dict[str, list[int]] = {}
    for t, p in tps:
        topics.setdefault(t, []).append(p)
    req = OffsetDeleteRequest(
        group_id=group,
        topics=tuple(
            OffsetDeleteRequestTopic(
                name=t,
                partitions=tuple(OffsetDeleteRequestPartition(partition_index=p) for p in ps),
            )
            for t, ps in topics.items()
        ),
    )
    try:
        with Connection(coord.host, coord.port, timeout, props=props) as c:
            resp = c.request(req)
    except ConnectionError as e:
        raise CliError(str(e)) from None
    results: dict[tuple[str, int], str | None] = {}
    for t in resp.topics:
        for p in t.partitions:
            code = int(p.error_code)
            results[(t.name, int(p.partition_index))] = (
                None if code == 0 else "Error: " + error_message(code)
            )
    return int(resp.error_code), results


def check_args(o) -> str:  # noqa: ANN001
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
    svc = Service(o)
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
