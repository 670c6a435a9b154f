"""The inputs of `kafkapy consumer-groups --reset-offsets` (sans-io): a reset plan CSV file
(--from-file), a date-time (--to-datetime), an ISO-8601 duration (--by-duration) and
``topic:partition,...`` arguments (--topic), parsed as Kafka's tool parses them; bad input is a
one-line CliError."""

from __future__ import annotations

import csv
import io
import re
from datetime import datetime

from kafkapy.cli.common import CliError


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


def split_topic_args(args: list[str] | None) -> tuple[list[tuple[str, int]], list[str]]:
    """--topic arguments: (the partitions named as ``topic:p,...``, the bare topic names)."""
    partitions: list[tuple[str, int]] = []
    topics: list[str] = []
    for arg in args or []:
        if ":" in arg:
            partitions.extend(parse_topic_partitions(arg))
        else:
            topics.append(arg)
    return partitions, topics
