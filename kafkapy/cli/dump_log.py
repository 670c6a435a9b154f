"""`kafkapy dump-log` (scripts/kafka-dump-log.sh): print segment files as Kafka's DumpLogSegments
does, from a stopped or a running broker's log directory (files are only read).

* ``.log``: one line per batch (baseOffset, lastOffset, count, sequences, producer, leader epoch,
  flags, delete horizon, position, CreateTime/LogAppendTime, size, magic, compresscodec, crc,
  isvalid); with ``--deep-iteration`` one ``| offset: ...`` line per record, and with
  ``--print-data-log`` (implies deep iteration) the key and payload as text. Control records
  (transaction markers) print ``endTxnMarker: COMMIT coordinatorEpoch: N`` instead of data.
* ``.index``: ``offset: O position: P`` per entry, checked against the .log beside it
  (mismatches reported as Kafka does); ``.timeindex``: ``timestamp: T offset: O``.
* ``.txnindex``: one line per aborted transaction (version, producerId, firstOffset,
  lastOffset, lastStableOffset); ``.snapshot`` (producer state): one line per producer, as
  Kafka's tool prints them (a corrupt snapshot is reported on stderr).
* ``--index-sanity-check``: only check that index files are well formed;
  ``--verify-index-only``: check entries against the log without printing them.

A torn tail (a batch cut short, as in a running broker's active segment mid-write) ends the
dump with a note, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
from pathlib import Path

from crc32c import crc32c

from kafkapy.protocol.compression import CODEC_NAMES
from kafkapy.protocol.control_batch import ABORT, COMMIT, control_type_of, parse_end_txn_marker
from kafkapy.protocol.record_batch import (
    BATCH_HEADER_SIZE,
    CRC_START,
    LOG_APPEND_TIME,
    LOG_OVERHEAD,
    NO_SEQUENCE,
    BatchHeader,
    Record,
    RecordBatchError,
    decode_records,
    parse_batch_header,
)
from kafkapy.storage.producer_snapshot import CorruptSnapshotError, read_snapshot
from kafkapy.storage.txn_index import decode_entries

OFFSET_ENTRY = struct.Struct(">ii")
TIME_ENTRY = struct.Struct(">qi")
# Kafka's ControlRecordType names (DumpLogSegments prints the others as controlType: NAME(id))
CONTROL_TYPE_NAMES = {
    2: "LEADER_CHANGE",
    3: "SNAPSHOT_HEADER",
    4: "SNAPSHOT_FOOTER",
    5: "KRAFT_VERSION",
    6: "KRAFT_VOTERS",
}


def _text(b: bytes | None) -> str:
    return "null" if b is None else b.decode("utf-8", "replace")


def _file_base(path: Path) -> int:
    stem = path.name.split(".")[0]
    return int(stem) if stem.isdigit() else 0


def _read_batches(path: Path, out):
    """(position, header, bytes) of each whole batch; notes a torn tail on ``out``."""
    data = path.read_bytes()
    pos = 0
    while pos < len(data):
        if len(data) - pos < BATCH_HEADER_SIZE:
            out.write(f"Found {len(data) - pos} invalid bytes at the end of {path.name}\n")
            return
        h = parse_batch_header(data, pos)
        if h.batch_length < BATCH_HEADER_SIZE - LOG_OVERHEAD or pos + h.size > len(data):
            out.write(f"Found {len(data) - pos} invalid bytes at the end of {path.name}\n")
            return
        yield pos, h, data[pos : pos + h.size]
        pos += h.size


def _batch_line(pos: int, h: BatchHeader, raw: bytes) -> str:
    valid = crc32c(raw[CRC_START:]) == h.crc
    last_seq = h.last_sequence if h.base_sequence != NO_SEQUENCE else NO_SEQUENCE
    horizon = h.delete_horizon_ms
    horizon_s = "OptionalLong.empty" if horizon is None else f"OptionalLong[{horizon}]"
    ts_name = "LogAppendTime" if h.timestamp_type == LOG_APPEND_TIME else "CreateTime"
    return (
        f"baseOffset: {h.base_offset} lastOffset: {h.last_offset} count: {h.records_count} "
        f"baseSequence: {h.base_sequence} lastSequence: {last_seq} "
        f"producerId: {h.producer_id} producerEpoch: {h.producer_epoch} "
        f"partitionLeaderEpoch: {h.partition_leader_epoch} "
        f"isTransactional: {str(h.is_transactional).lower()} "
        f"isControl: {str(h.is_control).lower()} deleteHorizonMs: {horizon_s} "
        f"position: {pos} {ts_name}: {h.max_timestamp} size: {h.size} magic: {h.magic} "
        f"compresscodec: {CODEC_NAMES.get(h.codec, h.codec)} crc: {h.crc} "
        f"isvalid: {str(valid).lower()}"
    )


def dump_log(path: Path, out, *, deep: bool, print_data: bool) -> None:
    out.write(f"Log starting offset: {_file_base(path)}\n")
    for pos, h, raw in _read_batches(path, out):
        out.write(_batch_line(pos, h, raw) + "\n")
        if not (deep or print_data) or h.records_count == 0:
            continue
        try:
            records = decode_records(raw)
        except RecordBatchError as e:
            out.write(f"| cannot decode records: {e}\n")
            continue
        ts_name = "LogAppendTime" if h.timestamp_type == LOG_APPEND_TIME else "CreateTime"
        for r in records:
            seq = (
                NO_SEQUENCE
                if h.base_sequence == NO_SEQUENCE
                else (h.base_sequence + r.offset - h.base_offset) % 2147483648
            )
            line = (
                f"| offset: {r.offset} {ts_name}: {r.timestamp} "
                f"keySize: {-1 if r.key is None else len(r.key)} "
                f"valueSize: {-1 if r.value is None else len(r.value)} sequence: {seq} "
                f"headerKeys: [{','.join(k for k, _ in r.headers)}]"
            )
            if h.is_control:
                line += _control_text(r)
            elif print_data:
                if r.key is not None:
                    line += f" key: {_text(r.key)}"
                line += f" payload: {_text(r.value)}"
            out.write(line + "\n")


def _control_text(r: Record) -> str:
    try:
        ctype = control_type_of(r.key)
        if ctype in (ABORT, COMMIT):
            marker = parse_end_txn_marker(r)
            return f" endTxnMarker: {marker.type_name} coordinatorEpoch: {marker.coordinator_epoch}"
    except RecordBatchError as e:
        return f" invalid control record: {e}"
    return f" controlType: {CONTROL_TYPE_NAMES.get(ctype, 'UNKNOWN')}({ctype})"


def dump_txn_index(path: Path, out) -> None:
    for t in decode_entries(path.read_bytes(), str(path)):
        out.write(
            f"version: 0 producerId: {t.producer_id} firstOffset: {t.first_offset} "
            f"lastOffset: {t.last_offset} lastStableOffset: {t.last_stable_offset}\n"
        )


def _optional_long(value: int) -> str:
    return "OptionalLong.empty" if value < 0 else f"OptionalLong[{value}]"


def dump_producer_snapshot(path: Path, out) -> None:
    try:
        entries = read_snapshot(path)
    except CorruptSnapshotError as e:
        print(e, file=sys.stderr)
        return
    for e in entries:
        line = (
            f"producerId: {e.producer_id} producerEpoch: {e.epoch} "
            f"coordinatorEpoch: {e.coordinator_epoch} "
            f"currentTxnFirstOffset: {_optional_long(e.current_txn_first_offset)} "
            f"lastTimestamp: {e.last_timestamp} "
        )
        if e.batches:
            b = e.batches[0]
            line += (
                f"firstSequence: {b.first_seq} lastSequence: {b.last_seq} "
                f"lastOffset: {b.last_offset} offsetDelta: {b.last_offset - b.first_offset} "
                f"timestamp: {e.last_timestamp}"
            )
        out.write(line + "\n")


def _log_batches(index_path: Path) -> dict[int, BatchHeader] | None:
    """Batches of the .log beside an index, by position (None if there is no .log)."""
    log_path = index_path.with_name(index_path.name.split(".")[0] + ".log")
    if not log_path.exists():
        return None
    sink = open(os.devnull, "w")
    try:
        return {pos: h for pos, h, _ in _read_batches(log_path, sink)}
    finally:
        sink.close()


def dump_index(path: Path, out, *, verify_only: bool, sanity_only: bool) -> None:
    data = path.read_bytes()
    base = _file_base(path)
    if len(data) % OFFSET_ENTRY.size:
        out.write(f"{path} is corrupt: size {len(data)} is not a multiple of 8\n")
        return
    entries = [(base + rel, pos) for rel, pos in OFFSET_ENTRY.iter_unpack(data)]
    ordered = all(entries[i][0] > entries[i - 1][0] for i in range(1, len(entries)))
    if sanity_only:
        if ordered and all(p >= 0 for _, p in entries):
            out.write(f"{path} passed sanity check.\n")
        else:
            out.write(f"{path} failed sanity check: entries are not in increasing order.\n")
        return
    batches = _log_batches(path)
    mismatches = []
    for offset, position in entries:
        if batches is not None:
            h = batches.get(position)
            if h is None or h.last_offset != offset:
                mismatches.append((offset, -1 if h is None else h.last_offset))
        if not verify_only:
            out.write(f"offset: {offset} position: {position}\n")
    if mismatches:
        out.write(f"Mismatches in :{path}\n")
        for idx_off, log_off in mismatches:
            out.write(f"  Index offset: {idx_off}, log offset: {log_off}\n")


def dump_time_index(path: Path, out, *, verify_only: bool, sanity_only: bool) -> None:
    data = path.read_bytes()
    base = _file_base(path)
    if len(data) % TIME_ENTRY.size:
        out.write(f"{path} is corrupt: size {len(data)} is not a multiple of 12\n")
        return
    entries = [(ts, base + rel) for ts, rel in TIME_ENTRY.iter_unpack(data)]
    if sanity_only:
        ok = all(
            entries[i][0] > entries[i - 1][0] and entries[i][1] >= entries[i - 1][1]
            for i in range(1, len(entries))
        )
        out.write(f"{path} {'passed' if ok else 'failed'} sanity check.\n")
        return
    batches = _log_batches(path)
    by_last = {h.last_offset: h for h in (batches or {}).values()}
    prev_ts = -1
    problems = []
    for ts, offset in entries:
        if batches is not None:
            h = by_last.get(offset)
            if h is None:
                problems.append(f"  Index offset: {offset} is not the last offset of a batch")
            if ts <= prev_ts:
                problems.append(
                    f"  Indexed timestamp {ts} is not larger than the previous {prev_ts}"
                )
        prev_ts = max(prev_ts, ts)
        if not verify_only:
            out.write(f"timestamp: {ts} offset: {offset}\n")
    if problems:
        out.write(f"Found timestamp mismatch in :{path}\n" + "\n".join(problems) + "\n")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kafka-dump-log.sh",
        description="Print log segments, indexes and producer snapshots as Kafka does.",
    )
    p.add_argument(
        "--files",
        required=True,
        help="comma-separated .log/.index/.timeindex/.txnindex/.snapshot files",
    )
    p.add_argument("--print-data-log", action="store_true", help="print keys and payloads")
    p.add_argument("--deep-iteration", action="store_true", help="print every record")
    p.add_argument("--index-sanity-check", action="store_true", help="only check index files")
    p.add_argument("--verify-index-only", action="store_true", help="check indexes, no entries")
    p.add_argument("--max-message-size", type=int, default=5242880, help="accepted, unused")
    return p


def main(argv: list[str] | None = None, out=None) -> int:
    args = parser().parse_args(argv)
    out = out or sys.stdout
    status = 0
    for name in (f.strip() for f in args.files.split(",")):
        if not name:
            continue
        path = Path(name)
        out.write(f"Dumping {path}\n")
        try:
            if path.name.endswith(".log"):
                dump_log(path, out, deep=args.deep_iteration, print_data=args.print_data_log)
            elif path.name.endswith(".index"):
                dump_index(
                    path,
                    out,
                    verify_only=args.verify_index_only,
                    sanity_only=args.index_sanity_check,
                )
            elif path.name.endswith(".txnindex"):
                dump_txn_index(path, out)
            elif path.name.endswith(".snapshot"):
                dump_producer_snapshot(path, out)
            elif path.name.endswith(".timeindex"):
                dump_time_index(
                    path,
                    out,
                    verify_only=args.verify_index_only,
                    sanity_only=args.index_sanity_check,
                )
            else:
                out.write(f"Ignoring unknown file {path}\n")
        except OSError as e:
            print(f"kafka-dump-log: error: {e}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
