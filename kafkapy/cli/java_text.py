"""How Kafka's Java tools print values, for the tools that must print the same: a double as Java's
``Double.toString`` writes it, and the iteration order of a ``java.util.HashMap`` built the way
Kafka's admin client builds its result maps (``new HashMap<>(n)``, then n puts).

HashMap iterates its buckets in index order, ``(h ^ (h >>> 16)) & (capacity - 1)`` with ``h``
the key's hashCode, and the keys of one bucket in insertion order (resizing keeps that order).
The capacity starts at the power of two at or above the requested one and doubles whenever the
size passes three quarters of it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import TypeVar

T = TypeVar("T")


def java_double(value: float) -> str:
    """``Double.toString``: plain decimals in [1e-3, 1e7), else ``d.dddE<exp>``."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if str(value).startswith("-") else "0.0"
    sign, magnitude = ("-" if value < 0 else ""), abs(float(value))
    if 1e-3 <= magnitude < 1e7:
        return sign + repr(magnitude)
    digits_tuple = Decimal(repr(magnitude)).as_tuple()
    digits = "".join(map(str, digits_tuple.digits))
    exponent = len(digits) + int(digits_tuple.exponent) - 1
    digits = digits.rstrip("0") or "0"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"


def java_string_hash(text: str) -> int:
    """``String.hashCode`` (signed 32 bits)."""
    from kafkapy.coordinator.group.partitioning import java_string_hash as string_hash

    return string_hash(text)


def java_map_hash(entries: dict[str, str | None]) -> int:
    """``Map.hashCode`` of a map of strings: the sum of ``key.hashCode() ^ value.hashCode()``
    (0 for null), in 32 bits."""
    total = 0
    for k, v in entries.items():
        total += java_string_hash(k) ^ (java_string_hash(v) if v is not None else 0)
    total &= 0xFFFFFFFF
    return total - (1 << 32) if total & 0x80000000 else total


def _capacity(requested: int, puts: int) -> int:
    capacity = 1
    while capacity < requested:
        capacity <<= 1
    for size in range(1, puts + 1):
        if size > int(capacity * 0.75):
            capacity <<= 1
    return capacity


def hashmap_order(
    items: Sequence[T], hash_of: Callable[[T], int], initial_capacity: int | None = None
) -> list[T]:
    """``items`` (distinct keys, in insertion order) in the order a ``new HashMap<>(len(items))``
    (``new HashMap<>()`` with ``initial_capacity=16``) filled with them iterates."""
    requested = len(items) if initial_capacity is None else initial_capacity
    mask = _capacity(requested, len(items)) - 1

    def bucket(item: T) -> int:
        h = hash_of(item) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & mask

    return sorted(items, key=bucket)  # stable: insertion order within a bucket
