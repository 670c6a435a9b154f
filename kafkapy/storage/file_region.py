"""A byte range of an open segment file, sent to a socket with os.sendfile.

The read path (storage/log_read.py) answers a fetch with FileRegions instead of bytes, and the
network layer (server/network/sendfile.py) sends them without copying them through Python — what
Kafka does with FileRecords and its zero-copy transferTo (Kafka's FileRecords / DefaultFileRegion).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FileRegion:
    """Bytes to send with os.sendfile; ``fileno`` stays open while the segment is open."""

    fileno: int
    position: int
    length: int
