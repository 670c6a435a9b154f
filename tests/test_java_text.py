"""kafkapy.cli.java_text against what Java 17 printed for the same values and maps (a small Java
program run once: Double.toString, and the iteration order of HashMaps built as Kafka's admin
client builds its DescribeClientQuotas result)."""

from __future__ import annotations

from kafkapy.cli.java_text import hashmap_order, java_double, java_map_hash, java_string_hash


def test_double_to_string() -> None:
    values = [1024, 1.048576e7, 1e7, 9999999, 0.001, 0.0001, 12.5, 1e9, 123456789012.0, 0.5, 100]
    assert [java_double(v) for v in values] == [
        "1024.0", "1.048576E7", "1.0E7", "9999999.0", "0.001", "1.0E-4", "12.5", "1.0E9",
        "1.23456789012E11", "0.5", "100.0",
    ]
    assert [java_double(v) for v in (-2e7, 0.0, float("inf"))] == ["-2.0E7", "0.0", "Infinity"]


def test_hashmap_iteration_order_of_quota_keys() -> None:
    def order(keys: list[str]) -> list[str]:
        return hashmap_order(keys, java_string_hash)

    assert order(["producer_byte_rate", "consumer_byte_rate"]) == [
        "consumer_byte_rate", "producer_byte_rate"]
    assert order(["producer_byte_rate", "consumer_byte_rate", "request_percentage"]) == [
        "consumer_byte_rate", "producer_byte_rate", "request_percentage"]
    assert order(["request_percentage", "controller_mutation_rate", "consumer_byte_rate",
                  "producer_byte_rate"]) == [
        "producer_byte_rate", "consumer_byte_rate", "controller_mutation_rate",
        "request_percentage"]


def test_hashmap_iteration_order_of_quota_entities() -> None:
    """Keys hashed as ClientQuotaEntity hashes (Objects.hash(entries): 31 + the map's hash)."""
    entities = [{"user": "alice"}, {"user": None}, {"client-id": "c1"}, {"ip": "127.0.0.1"},
                {"ip": None}, {"user": "quinn", "client-id": None},
                {"user": "alice", "client-id": "c9"}, {"client-id": None}]
    order = hashmap_order(range(len(entities)), lambda i: 31 + java_map_hash(entities[i]))
    assert order == [5, 2, 0, 6, 4, 3, 1, 7]
