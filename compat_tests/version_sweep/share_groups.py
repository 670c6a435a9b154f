"""The version sweep's checks of the share group APIs (KIP-932: ShareGroupHeartbeat,
ShareGroupDescribe, ShareFetch, ShareAcknowledge): every served version against a real broker.
Each check uses a topic of its own, so the records it produces change nothing the other checks
read."""

from __future__ import annotations

import datetime
import importlib
import uuid
from typing import Any

from kafkapy.protocol.errors import ErrorCode as E

from .common import create_topic, produce, seed_records
from .env import Env, ok
from .groups import find_group_coordinator

ACCEPT, RELEASE = 1, 2


def _schema(api: str, v: int) -> Any:
    return importlib.import_module(f"kio.schema.{api}.v{v}.request")


def _heartbeat(env: Env, group: str, member: str, epoch: int, topics: tuple[str, ...] | None):
    m = _schema("share_group_heartbeat", 1)
    return env.request(m.ShareGroupHeartbeatRequest(
        group_id=group, member_id=member, member_epoch=epoch, rack_id=None,
        subscribed_topic_names=topics))


def _joined(env: Env, group: str, topic: str) -> str:
    find_group_coordinator(env, group)
    member = str(uuid.uuid4())
    resp = _heartbeat(env, group, member, 0, (topic,))
    assert ok(resp.error_code) and resp.member_epoch == 1, resp
    return member


def _fetch(env: Env, v: int, group: str, member: str, epoch: int, topic_id: Any,
           acks: list[tuple[int, int, int]] | None = None, partitions: bool = True) -> Any:
    m = _schema("share_fetch", v)
    batches = tuple(m.AcknowledgementBatch(first_offset=f, last_offset=la, acknowledge_types=(t,))
                    for f, la, t in acks or ())
    topics = (m.FetchTopic(topic_id=topic_id, partitions=(
        m.FetchPartition(partition_index=0, acknowledgement_batches=batches),)),)
    return env.request(m.ShareFetchRequest(
        group_id=group, member_id=member, share_session_epoch=epoch,
        max_wait=datetime.timedelta(0), min_bytes=1, max_bytes=1 << 20, max_records=100,
        batch_size=100, topics=topics if partitions else (), forgotten_topics_data=()))


def _acknowledge(env: Env, v: int, group: str, member: str, epoch: int, topic_id: Any,
                 acks: list[tuple[int, int, int]]) -> Any:
    m = _schema("share_acknowledge", v)
    batches = tuple(m.AcknowledgementBatch(first_offset=f, last_offset=la, acknowledge_types=(t,))
                    for f, la, t in acks)
    return env.request(m.ShareAcknowledgeRequest(
        group_id=group, member_id=member, share_session_epoch=epoch,
        topics=(m.AcknowledgeTopic(topic_id=topic_id, partitions=(
            m.AcknowledgePartition(partition_index=0, acknowledgement_batches=batches),)),)))


def _acquired(resp: Any) -> list[tuple[int, int, int]]:
    return [(a.first_offset, a.last_offset, a.delivery_count)
            for t in resp.responses for p in t.partitions for a in p.acquired_records]


def _topic_with_records(env: Env, name: str, group: str, member: str, v: int) -> Any:
    """A new topic whose share-partition the member's session holds (started at the end, as
    share.auto.offset.reset=latest does), then three records produced."""
    topic_id = create_topic(env, name)
    first = _fetch(env, v, group, member, 0, topic_id)
    assert ok(first.error_code) and _acquired(first) == [], first
    produce(env, name, 0, seed_records(0, 3))
    return topic_id


def check_share_group_heartbeat(env: Env, v: int) -> None:
    group, topic = f"sweep-sgh-{v}", f"sweep-sgh-topic-{v}"
    topic_id = create_topic(env, topic, 2)
    member = _joined(env, group, topic)
    again = _heartbeat(env, group, member, 1, None)
    assert ok(again.error_code) and again.member_epoch == 1 and again.assignment is None, again
    fenced = _heartbeat(env, group, member, 7, None)
    assert fenced.error_code == E.fenced_member_epoch, fenced
    assert _heartbeat(env, group, "", 0, (topic,)).error_code == E.invalid_request
    assert _heartbeat(env, group, str(uuid.uuid4()), 0, ()).error_code == E.invalid_request
    other = _heartbeat(env, group, str(uuid.uuid4()), 0, (topic,))
    (tp,) = other.assignment.topic_partitions
    assert other.member_epoch == 2 and tp.topic_id == topic_id and tp.partitions, other
    left = _heartbeat(env, group, member, -1, None)
    assert ok(left.error_code) and left.member_epoch == -1, left


def check_share_group_describe(env: Env, v: int) -> None:
    group, topic = f"sweep-sgd-{v}", f"sweep-sgd-topic-{v}"
    topic_id = create_topic(env, topic)
    member = _joined(env, group, topic)
    m = _schema("share_group_describe", v)
    resp = env.request(m.ShareGroupDescribeRequest(
        group_ids=(group, "sweep-no-such-group"), include_authorized_operations=False))
    g, missing = resp.groups
    assert ok(g.error_code) and g.group_state == "Stable" and g.assignor_name == "simple", g
    assert g.group_epoch == g.assignment_epoch == 1
    (mem,) = g.members
    assert mem.member_id == member and mem.subscribed_topic_names == (topic,)
    (tp,) = mem.assignment.topic_partitions
    assert (tp.topic_id, tp.topic_name, tp.partitions) == (topic_id, topic, (0,))
    assert missing.error_code == E.group_id_not_found


def check_share_fetch(env: Env, v: int) -> None:
    group = f"sweep-sf-{v}"
    member = _joined(env, group, f"sweep-sf-topic-{v}")
    topic_id = _topic_with_records(env, f"sweep-sf-topic-{v}", group, member, v)
    got = _fetch(env, v, group, member, 1, topic_id)
    assert ok(got.error_code) and _acquired(got) == [(0, 2, 1)], got
    assert got.acquisition_lock_timeout.total_seconds() > 0
    assert got.responses[0].partitions[0].records
    acked = _fetch(env, v, group, member, 2, topic_id, [(0, 1, ACCEPT), (2, 2, RELEASE)])
    (p,) = acked.responses[0].partitions
    assert p.acknowledge_error_code == 0 and _acquired(acked) == [], acked
    # the released record goes to the next fetch (acquired before acknowledged, as Kafka does)
    assert _acquired(_fetch(env, v, group, member, 3, topic_id)) == [(2, 2, 2)]
    assert _fetch(env, v, group, member, 9, topic_id).error_code == E.invalid_share_session_epoch
    closed = _fetch(env, v, group, member, -1, topic_id, partitions=False)
    assert ok(closed.error_code), closed
    assert _fetch(env, v, group, member, 4, topic_id).error_code == E.share_session_not_found


def check_share_acknowledge(env: Env, v: int) -> None:
    group = f"sweep-sa-{v}"
    member = _joined(env, group, f"sweep-sa-topic-{v}")
    topic_id = _topic_with_records(env, f"sweep-sa-topic-{v}", group, member, v)
    assert _acquired(_fetch(env, v, group, member, 1, topic_id)) == [(0, 2, 1)]
    resp = _acknowledge(env, v, group, member, 2, topic_id, [(0, 2, ACCEPT)])
    assert ok(resp.error_code) and resp.responses[0].partitions[0].error_code == 0, resp
    twice = _acknowledge(env, v, group, member, 3, topic_id, [(0, 0, ACCEPT)])
    assert twice.responses[0].partitions[0].error_code == E.none, twice  # done: ignored
    never = _acknowledge(env, v, group, member, 4, topic_id, [(7, 7, ACCEPT)])
    assert never.responses[0].partitions[0].error_code == E.invalid_record_state, never
    opening = _acknowledge(env, v, group, member, 0, topic_id, [(0, 0, ACCEPT)])
    assert opening.error_code == E.invalid_share_session_epoch, opening
    closed = _acknowledge(env, v, group, member, -1, topic_id, [])
    assert ok(closed.error_code), closed


def _offsets_topic(env: Env, name: str) -> Any:
    topic_id = create_topic(env, name)
    produce(env, name, 0, seed_records(0, 5))
    return topic_id


def _describe_offsets(env: Env, v: int, group: str, topic: str | None) -> Any:
    m = _schema("describe_share_group_offsets", v)
    topics = None if topic is None else (
        m.DescribeShareGroupOffsetsRequestTopic(topic_name=topic, partitions=(0,)),)
    resp = env.request(m.DescribeShareGroupOffsetsRequest(groups=(
        m.DescribeShareGroupOffsetsRequestGroup(group_id=group, topics=topics),)))
    (g,) = resp.groups
    return g


def _alter_offsets(env: Env, group: str, topic: str, offset: int) -> Any:
    m = _schema("alter_share_group_offsets", 0)
    return env.request(m.AlterShareGroupOffsetsRequest(group_id=group, topics=(
        m.AlterShareGroupOffsetsRequestTopic(topic_name=topic, partitions=(
            m.AlterShareGroupOffsetsRequestPartition(partition_index=0, start_offset=offset),)),)))


def _delete_offsets(env: Env, group: str, topic: str) -> Any:
    m = _schema("delete_share_group_offsets", 0)
    return env.request(m.DeleteShareGroupOffsetsRequest(group_id=group, topics=(
        m.DeleteShareGroupOffsetsRequestTopic(topic_name=topic),)))


def check_describe_share_group_offsets(env: Env, v: int) -> None:
    group, topic = f"sweep-dsgo-{v}", f"sweep-dsgo-topic-{v}"
    find_group_coordinator(env, group)
    topic_id = _offsets_topic(env, topic)
    g = _describe_offsets(env, v, group, topic)
    (t,) = g.topics
    assert ok(g.error_code) and t.topic_id == topic_id and t.partitions[0].start_offset == -1, g
    assert ok(_alter_offsets(env, group, topic, 2).error_code)
    for wanted in (topic, None):
        (t,) = _describe_offsets(env, v, group, wanted).topics
        (p,) = t.partitions
        assert (t.topic_name, p.partition_index, p.start_offset) == (topic, 0, 2), t
        if v >= 1:
            assert p.lag == 3, p


def check_alter_share_group_offsets(env: Env, v: int) -> None:
    group, topic = f"sweep-asgo-{v}", f"sweep-asgo-topic-{v}"
    find_group_coordinator(env, group)
    _offsets_topic(env, topic)
    resp = _alter_offsets(env, group, topic, 3)
    assert ok(resp.error_code) and resp.responses[0].partitions[0].error_code == 0, resp
    missing = _alter_offsets(env, group, "sweep-no-such-topic", 0)
    assert missing.responses[0].partitions[0].error_code == E.unknown_topic_or_partition
    member = _joined(env, group, topic)
    busy = _alter_offsets(env, group, topic, 0)
    assert busy.error_code == E.non_empty_group, busy
    assert ok(_heartbeat(env, group, member, -1, None).error_code)


def check_delete_share_group_offsets(env: Env, v: int) -> None:
    group, topic = f"sweep-dlsgo-{v}", f"sweep-dlsgo-topic-{v}"
    find_group_coordinator(env, group)
    _offsets_topic(env, topic)
    assert _delete_offsets(env, group, topic).error_code == E.group_id_not_found
    assert ok(_alter_offsets(env, group, topic, 1).error_code)
    resp = _delete_offsets(env, group, topic)
    assert ok(resp.error_code) and resp.responses[0].error_code == 0, resp
    (t,) = _describe_offsets(env, 1, group, topic).topics
    assert t.partitions[0].start_offset == -1, t
