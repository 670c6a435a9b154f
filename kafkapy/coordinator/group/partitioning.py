"""Which partition of __consumer_offsets owns a group: ``Utils.abs(groupId.hashCode()) % n``.

Java's String.hashCode is ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units in 32-bit
two's-complement arithmetic. Kafka's Utils.abs maps Integer.MIN_VALUE (whose Math.abs is still
negative) to 0 and is otherwise Math.abs.
"""

from __future__ import annotations

from functools import lru_cache

INT_MIN = -(2**31)


def java_string_hash(s: str) -> int:
    """Java's String.hashCode(), as a signed 32-bit int."""
    data = s.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def kafka_abs(n: int) -> int:
    """org.apache.kafka.common.utils.Utils.abs: Integer.MIN_VALUE -> 0, else |n|."""
    return 0 if n == INT_MIN else abs(n)


@lru_cache(maxsize=65536)
def partition_for(group_id: str, num_partitions: int) -> int:
    """The __consumer_offsets (or __transaction_state) partition of a group (transactional) id;
    cached: every group request asks it again for the same few ids."""
    return kafka_abs(java_string_hash(group_id)) % num_partitions
