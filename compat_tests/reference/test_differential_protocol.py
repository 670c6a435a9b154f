"""Differential sessions on the wire with the raw protocol client (exact error fields): the
ApiVersions ranges per API, Fetch at an out-of-range offset, ListOffsets by time, Metadata of an
unknown topic with auto-creation on, and Produce requests a broker must refuse. Each runs against
Apache Kafka 4.4 and kafkapy; differences not in known_differences.py fail the test.
"""

from __future__ import annotations

import datetime
import struct
import time
import uuid
from typing import Any

from kio.schema.errors import ErrorCode

from compat_tests.reference.differential import Differential, Target
from compat_tests.reference.observe import (
    create_topic,
    entity_obs,
    produce_batch,
    produce_ok,
    raw,
)


def api_versions(target: Target) -> dict[str, Any]:
    from kio.index import api_key_map
    from kio.schema.api_versions.v3.request import ApiVersionsRequest

    with raw(target) as client:
        resp = client.request(ApiVersionsRequest(client_software_name="differential",
                                                 client_software_version="1"))
    return {
        "error_code": resp.error_code.name,
        "api_keys": {f"{int(k.api_key)}:{api_key_map.get(int(k.api_key), 'unknown')}":
                     f"{k.min_version}..{k.max_version}" for k in resp.api_keys},
        "supported_features": {f.name: f"{f.min_version}..{f.max_version}"
                               for f in resp.supported_features},
        "finalized_features": {f.name: f"{f.min_version_level}..{f.max_version_level}"
                               for f in resp.finalized_features},
    }


def test_api_versions(differential: Differential) -> None:
    outcome = differential.check("api_versions", api_versions)
    assert outcome.observations > 50  # every API key is compared, not an empty answer


def fetch_out_of_range(target: Target) -> dict[str, Any]:
    from kio.schema.fetch.v12.request import FetchPartition, FetchRequest, FetchTopic

    topic = "diff-fetch-out-of-range"
    create_topic(target, topic)
    produced = produce_ok(target, topic, [(int(time.time() * 1000), b"v%d" % i)
                                             for i in range(3)])
    out: dict[str, Any] = {"produce": entity_obs(produced, drop={"log_append_time"})}
    with raw(target) as client:
        for name, offset in (("above_end", 100), ("negative", -7), ("at_end", 3)):
            resp = client.request(FetchRequest(
                replica_id=-1, max_wait=datetime.timedelta(milliseconds=0), min_bytes=1,
                max_bytes=1 << 20, isolation_level=0, session_id=0, session_epoch=-1,
                topics=(FetchTopic(topic=topic, partitions=(FetchPartition(
                    partition=0, current_leader_epoch=-1, fetch_offset=offset,
                    last_fetched_epoch=-1, log_start_offset=-1,
                    partition_max_bytes=1 << 20),)),),
                forgotten_topics_data=(), rack_id=""))
            out[name] = entity_obs(resp)
    return out


def test_fetch_out_of_range(differential: Differential) -> None:
    outcome = differential.check("fetch_out_of_range", fetch_out_of_range)
    assert outcome.observations > 20


def list_offsets_by_time(target: Target) -> dict[str, Any]:
    from kio.schema.list_offsets.v7.request import (
        ListOffsetsPartition,
        ListOffsetsRequest,
        ListOffsetsTopic,
    )

    topic = "diff-list-offsets"
    create_topic(target, topic)
    base = (int(time.time()) - 600) * 1000  # ten minutes ago, well inside retention
    # offsets 0..2 in one batch (its largest timestamp at offset 1), offset 3 in another
    produce_ok(target, topic, [(base + 1000, b"a"), (base + 3000, b"b"), (base + 2000, b"c")])
    produce_ok(target, topic, [(base + 1500, b"d")])
    queries = {"earliest": -2, "latest": -1, "max_timestamp": -3, "at_1500": base + 1500,
               "at_2500": base + 2500, "after_all": base + 60_000, "before_all": base}
    out: dict[str, Any] = {}
    with raw(target) as client:
        for name, ts in queries.items():
            resp = client.request(ListOffsetsRequest(
                replica_id=-1, isolation_level=0, topics=(ListOffsetsTopic(
                    name=topic, partitions=(ListOffsetsPartition(
                        partition_index=0, current_leader_epoch=-1, timestamp=ts),)),)))
            part = entity_obs(resp)["topics"][0]["partitions"][0]
            if part["timestamp"] >= base:
                part["timestamp"] = f"base+{part['timestamp'] - base}"
            out[name] = part
    return out


def test_list_offsets_by_time(differential: Differential) -> None:
    outcome = differential.check("list_offsets_by_time", list_offsets_by_time)
    assert outcome.observations >= 7 * 5


def metadata_auto_create(target: Target) -> dict[str, Any]:
    from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic

    def ask(client: Any, name: str, create: bool) -> Any:
        resp = client.request(MetadataRequest(
            topics=(MetadataRequestTopic(topic_id=uuid.UUID(int=0), name=name),),
            allow_auto_topic_creation=create, include_topic_authorized_operations=False))
        return resp.topics[0]

    out: dict[str, Any] = {}
    with raw(target) as client:
        first = ask(client, "diff-auto-created", True)
        out["first"] = {"error_code": first.error_code.name,
                        "partitions": len(first.partitions)}
        deadline = time.monotonic() + 20
        topic = first
        while time.monotonic() < deadline:
            topic = ask(client, "diff-auto-created", True)
            if topic.error_code == ErrorCode.none and topic.partitions and all(
                    p.leader_id >= 0 for p in topic.partitions):
                break
            time.sleep(0.1)
        out["settled"] = entity_obs(topic, drop={"leader_epoch"})
        no_create = ask(client, "diff-not-auto-created", False)
        out["no_create"] = entity_obs(no_create)
        out["invalid_name"] = entity_obs(ask(client, "diff bad name!", True))
    return out


def test_metadata_auto_create(differential: Differential) -> None:
    outcome = differential.check("metadata_auto_create", metadata_auto_create)
    assert outcome.observations > 10


def produce_errors(target: Target) -> dict[str, Any]:
    topic = "diff-produce-errors"
    create_topic(target, topic, configs={"max.message.bytes": "1000"})
    now = int(time.time() * 1000)
    produce_ok(target, topic, [(now, b"warm-up")])  # the leader takes writes: cases are exact
    cases = {
        "unknown_topic": ("diff-produce-nowhere", 0, [(now, b"x")]),
        "unknown_partition": (topic, 5, [(now, b"x")]),
        "oversized_record": (topic, 0, [(now, b"x" * 3000)]),
        "timestamp_far_future": (topic, 0, [(now + 3 * 86_400_000, b"x")]),
        "fits": (topic, 0, [(now, b"x" * 100)]),
    }
    out: dict[str, Any] = {}
    for name, (where, partition, records) in cases.items():
        resp = produce_batch(target, where, records, partition=partition)
        assert [t.name for t in resp.responses] == [where]
        out[name] = entity_obs(resp.responses[0].partition_responses[0],
                               drop={"log_append_time"})
    return out


def test_produce_errors(differential: Differential) -> None:
    outcome = differential.check("produce_errors", produce_errors)
    assert outcome.observations > 20


def _frame(api_key: int, version: int, flexible: bool = False) -> bytes:
    """A request frame of any version: header v1, or v2 (an empty tagged-field section after the
    client id) as a client of a newer, flexible version sends it; no body."""
    client_id = b"differential"
    head = struct.pack(">hhih", api_key, version, 1, len(client_id)) + client_id
    return head + (b"\x00" if flexible else b"")


def unsupported_versions(target: Target) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with raw(target) as client:  # ApiVersions of a version the broker does not know
        client.send_frame(_frame(18, 99, flexible=True))
        try:
            frame = client.recv_frame()
        except ConnectionError:
            frame = b""
    if not frame:
        out["api_versions_v99"] = "connection closed"
    else:
        (error,) = struct.unpack_from(">h", frame, 4)
        (count,) = struct.unpack_from(">i", frame, 6)
        keys = [struct.unpack_from(">hhh", frame, 10 + 6 * i) for i in range(count)]
        out["api_versions_v99"] = {
            "correlation_id": struct.unpack_from(">i", frame)[0], "error_code": error,
            "answered_as_v0": len(frame) == 10 + 6 * count,
            "api_versions_range": [list(k[1:]) for k in keys if k[0] == 18]}
    for name, api_key, version in (("metadata_v99", 3, 99), ("unknown_api_key", 999, 0),
                                   ("produce_v2_removed", 0, 2)):
        with raw(target, timeout=10) as client:
            client.send_frame(_frame(api_key, version))
            out[name] = {"closed": client.is_closed_by_peer(timeout=5)}
    return out


def test_unsupported_versions(differential: Differential) -> None:
    outcome = differential.check("unsupported_versions", unsupported_versions)
    assert outcome.observations >= 8


def list_offsets_special(target: Target) -> dict[str, Any]:
    """ListOffsets v9's special timestamps: earliest local (-4) and latest tiered (-5), beside
    earliest and latest, on a topic with records and on an empty one."""
    from kio.schema.list_offsets.v9.request import (
        ListOffsetsPartition,
        ListOffsetsRequest,
        ListOffsetsTopic,
    )

    create_topic(target, "diff-list-offsets-special")
    create_topic(target, "diff-list-offsets-empty")
    now = int(time.time() * 1000)
    produce_ok(target, "diff-list-offsets-special", [(now, b"a"), (now, b"b")])
    out: dict[str, Any] = {}
    with raw(target) as client:
        for topic in ("diff-list-offsets-special", "diff-list-offsets-empty"):
            for name, ts in {"earliest": -2, "latest": -1, "max_timestamp": -3,
                             "earliest_local": -4, "latest_tiered": -5}.items():
                resp = client.request(ListOffsetsRequest(
                    replica_id=-1, isolation_level=0, topics=(ListOffsetsTopic(
                        name=topic, partitions=(ListOffsetsPartition(
                            partition_index=0, current_leader_epoch=-1, timestamp=ts),)),)))
                part = entity_obs(resp)["topics"][0]["partitions"][0]
                if isinstance(part.get("timestamp"), int) and part["timestamp"] >= now:
                    part["timestamp"] = "now"
                out[f"{topic.rsplit('-', 1)[1]}.{name}"] = part
    return out


def test_list_offsets_special(differential: Differential) -> None:
    outcome = differential.check("list_offsets_special", list_offsets_special)
    assert outcome.observations >= 40
