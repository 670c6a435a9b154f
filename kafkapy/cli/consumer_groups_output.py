"""The tables `kafkapy consumer-groups` prints, as Kafka's tool prints them (sans-io): the
--describe offsets, members and state tables, the --list table with states, and the
--reset-offsets plan as a table or as CSV (--export)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

MISSING = "-"


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
