"""Small text files Kafka keeps beside the logs, written atomically (tmp + fsync + rename).

* offset checkpoints (recovery-point-offset-checkpoint, log-start-offset-checkpoint,
  replication-offset-checkpoint): ``0`` / count / ``topic partition offset`` lines.
* leader-epoch-checkpoint: ``0`` / count / ``epoch startOffset`` lines.
* partition.metadata: ``version: 0`` / ``topic_id: <base64url uuid, no padding>``.
* meta.properties: Java properties (version, broker.id or node.id, cluster.id).
"""

from __future__ import annotations

import base64
import os
import uuid
from pathlib import Path

from kafkapy.storage import faults
from kafkapy.storage.errors import KafkaStorageError

RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
PARTITION_METADATA = "partition.metadata"
META_PROPERTIES = "meta.properties"
CLEAN_SHUTDOWN_MARKER = ".kafka_cleanshutdown"


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    if faults.ACTIVE:
        faults.check_create(tmp)
        faults.check_write(tmp, len(text))
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _read_lines(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    if len(lines) < 2 or lines[0].strip() != "0":
        raise KafkaStorageError(f"{path}: unsupported checkpoint version or truncated file")
    count = int(lines[1])
    entries = [ln for ln in lines[2:] if ln.strip()]
    if len(entries) != count:
        raise KafkaStorageError(f"{path}: expected {count} entries, found {len(entries)}")
    return entries


def write_offset_checkpoint(path: Path, offsets: dict[tuple[str, int], int]) -> None:
    lines = ["0", str(len(offsets))]
    lines += [f"{t} {p} {o}" for (t, p), o in sorted(offsets.items())]
    write_atomic(path, "\n".join(lines) + "\n")


def read_offset_checkpoint(path: Path) -> dict[tuple[str, int], int]:
    if not path.exists():
        return {}
    out: dict[tuple[str, int], int] = {}
    for ln in _read_lines(path):
        topic, part, off = ln.split()
        out[(topic, int(part))] = int(off)
    return out


def write_epoch_checkpoint(path: Path, entries: list[tuple[int, int]]) -> None:
    lines = ["0", str(len(entries))] + [f"{e} {o}" for e, o in entries]
    write_atomic(path, "\n".join(lines) + "\n")


def read_epoch_checkpoint(path: Path) -> list[tuple[int, int]]:
    if not path.exists():
        return []
    out = []
    for ln in _read_lines(path):
        epoch, off = ln.split()
        out.append((int(epoch), int(off)))
    return out


def topic_id_to_str(topic_id: uuid.UUID) -> str:
    """Kafka's Uuid.toString: url-safe base64 of the 16 bytes, no padding."""
    return base64.urlsafe_b64encode(topic_id.bytes).decode("ascii").rstrip("=")


def topic_id_from_str(text: str) -> uuid.UUID:
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))


def write_partition_metadata(path: Path, topic_id: uuid.UUID) -> None:
    write_atomic(path, f"version: 0\ntopic_id: {topic_id_to_str(topic_id)}\n")


def read_partition_metadata(path: Path) -> uuid.UUID | None:
    if not path.exists():
        return None
    fields: dict[str, str] = {}
    for ln in path.read_text(encoding="utf-8").splitlines():
        if ":" in ln:
            k, v = ln.split(":", 1)
            fields[k.strip()] = v.strip()
    if fields.get("version") != "0" or "topic_id" not in fields:
        raise KafkaStorageError(f"{path}: malformed partition metadata")
    return topic_id_from_str(fields["topic_id"])


def read_properties(path: Path) -> dict[str, str]:
    props: dict[str, str] = {}
    for ln in path.read_text(encoding="utf-8").splitlines():
        ln = ln.strip()
        if not ln or ln[0] in "#!":
            continue
        k, _, v = ln.partition("=")
        props[k.strip()] = v.strip()
    return props


def write_properties(path: Path, props: dict[str, str]) -> None:
    body = "".join(f"{k}={v}\n" for k, v in props.items())
    write_atomic(path, "#\n#Written by kafkapy\n" + body)
