"""Bad input to the group APIs, on the wire: each gets Kafka's exact error code and the broker
keeps serving (a fresh connection still gets ApiVersions answered)."""

from __future__ import annotations

import datetime
import uuid

import pytest
from kio.schema.consumer_group_heartbeat.v1 import request as cgh1
from kio.schema.delete_groups.v2.request import DeleteGroupsRequest
from kio.schema.describe_groups.v5.request import DescribeGroupsRequest as DescribeGroups5
from kio.schema.describe_groups.v6.request import DescribeGroupsRequest as DescribeGroups6
from kio.schema.find_coordinator.v3.request import FindCoordinatorRequest as FindCoordinator3
from kio.schema.find_coordinator.v4.request import FindCoordinatorRequest as FindCoordinator4
from kio.schema.heartbeat.v4.request import HeartbeatRequest
from kio.schema.join_group.v9 import request as join9
from kio.schema.offset_commit.v9 import request as commit9
from kio.schema.offset_delete.v0 import request as delete0
from kio.schema.offset_fetch.v7 import request as fetch7
from kio.schema.sync_group.v5 import request as sync5

from kafkapy.protocol.errors import ErrorCode as E

from .rawclient import RawClient
from .test_bad_input import assert_still_serving, batch, metadata, produce

SETTINGS = {
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "500",
    "offsets.topic.num.partitions": "5",
    "offset.metadata.max.bytes": "100",
}
MS = datetime.timedelta(milliseconds=1)


@pytest.fixture
def gbroker(broker_factory):
    broker = broker_factory(SETTINGS)
    with RawClient(broker.bootstrap) as c:
        resp = c.request(FindCoordinator4(key_type=0, coordinator_keys=("g",)))
        assert resp.coordinators[0].error_code == E.none
    return broker


def join(c, group="g", member_id="", session_ms=6000):
    return c.request(
        join9.JoinGroupRequest(
            group_id=group,
            session_timeout=session_ms * MS,
            rebalance_timeout=10_000 * MS,
            member_id=member_id,
            group_instance_id=None,
            protocol_type="consumer",
            protocols=(join9.JoinGroupRequestProtocol(name="range", metadata=b"\x00"),),
            reason=None,
        )
    )


def stable_member(c, group="g"):
    """Join a one-member classic group and sync it: (member id, generation)."""
    first = join(c, group)
    assert first.error_code == E.member_id_required
    joined = join(c, group, first.member_id)
    assert joined.error_code == E.none
    synced = c.request(
        sync5.SyncGroupRequest(
            group_id=group,
            generation_id=joined.generation_id,
            member_id=joined.member_id,
            group_instance_id=None,
            protocol_type="consumer",
            protocol_name="range",
            assignments=(
                sync5.SyncGroupRequestAssignment(member_id=joined.member_id, assignment=b"a"),
            ),
        )
    )
    assert synced.error_code == E.none
    return joined.member_id, joined.generation_id


def commit(c, group, generation, member_id, partitions, topic="t"):
    resp = c.request(
        commit9.OffsetCommitRequest(
            group_id=group,
            generation_id_or_member_epoch=generation,
            member_id=member_id,
            group_instance_id=None,
            topics=(
                commit9.OffsetCommitRequestTopic(
                    name=topic,
                    partitions=tuple(
                        commit9.OffsetCommitRequestPartition(
                            partition_index=p,
                            committed_offset=off,
                            committed_leader_epoch=-1,
                            committed_metadata=meta,
                        )
                        for p, off, meta in partitions
                    ),
                ),
            ),
        )
    )
    return [p.error_code for p in resp.topics[0].partitions]


def heartbeat_848(c, group, member_id, epoch, **kw):
    return c.request(
        cgh1.ConsumerGroupHeartbeatRequest(
            group_id=group,
            member_id=member_id,
            member_epoch=epoch,
            instance_id=None,
            rack_id=None,
            rebalance_timeout=kw.pop("rebalance", 30_000 * MS),
            subscribed_topic_names=kw.pop("names", ("t",)),
            subscribed_topic_regex=None,
            server_assignor=kw.pop("assignor", None),
            topic_partitions=kw.pop("owned", ()),
        )
    )


def test_join_group_invalid_session_timeout(gbroker):
    with RawClient(gbroker.bootstrap) as c:
        assert join(c, session_ms=10).error_code == E.invalid_session_timeout
        assert join(c, session_ms=1_800_001).error_code == E.invalid_session_timeout
    assert_still_serving(gbroker)


def test_empty_group_id(gbroker):
    """Kafka 3.9 in ZooKeeper mode (GroupCoordinator.isValidGroupId) serves the empty group id in
    OffsetCommit, OffsetFetch, DescribeGroups and DeleteGroups "for backwards compatibility";
    the group-membership APIs and OffsetDelete refuse it with INVALID_GROUP_ID."""
    with RawClient(gbroker.bootstrap) as c:
        metadata(c, ["t"])
        assert join(c, group="").error_code == E.invalid_group_id
        hb = HeartbeatRequest(group_id="", generation_id=1, member_id="m", group_instance_id=None)
        assert c.request(hb).error_code == E.invalid_group_id
        delete = delete0.OffsetDeleteRequest(
            group_id="",
            topics=(
                delete0.OffsetDeleteRequestTopic(
                    name="t", partitions=(delete0.OffsetDeleteRequestPartition(partition_index=0),)
                ),
            ),
        )
        assert c.request(delete).error_code == E.invalid_group_id

        assert commit(c, "", -1, "", [(0, 7, "m")]) == [E.none]
        fetched = c.request(
            fetch7.OffsetFetchRequest(
                group_id="",
                topics=(fetch7.OffsetFetchRequestTopic(name="t", partition_indexes=(0,)),),
            )
        )
        assert fetched.error_code == E.none
        p = fetched.topics[0].partitions[0]
        assert (p.error_code, p.committed_offset, p.metadata) == (E.none, 7, "m")
        described = c.request(DescribeGroups5(groups=("",), include_authorized_operations=False))
        g = described.groups[0]
        assert (g.error_code, g.group_id, g.group_state) == (E.none, "", "Empty")
        deleted = c.request(DeleteGroupsRequest(groups_names=("",)))
        assert [(r.group_id, r.error_code) for r in deleted.results] == [("", E.none)]
        again = c.request(DeleteGroupsRequest(groups_names=("",)))
        assert [r.error_code for r in again.results] == [E.group_id_not_found]
    assert_still_serving(gbroker)


def test_heartbeat_from_unknown_member(gbroker):
    with RawClient(gbroker.bootstrap) as c:
        member, gen = stable_member(c)
        for group, mid in (("g", "someone-else"), ("no-such-group", "x")):
            resp = c.request(
                HeartbeatRequest(
                    group_id=group, generation_id=gen, member_id=mid, group_instance_id=None
                )
            )
            assert resp.error_code == E.unknown_member_id
        ok = c.request(
            HeartbeatRequest(
                group_id="g", generation_id=gen, member_id=member, group_instance_id=None
            )
        )
        assert ok.error_code == E.none
    assert_still_serving(gbroker)


def test_commit_with_illegal_generation(gbroker):
    with RawClient(gbroker.bootstrap) as c:
        metadata(c, ["t"])  # auto-creates t
        member, gen = stable_member(c)
        assert commit(c, "g", gen + 5, member, [(0, 1, "")]) == [E.illegal_generation]
        assert commit(c, "g", gen, member, [(0, 1, "")]) == [E.none]
        assert commit(c, "nope", 3, "m", [(0, 1, "")]) == [E.group_id_not_found]  # v9
    assert_still_serving(gbroker)


def test_commit_metadata_over_offset_metadata_max_bytes(gbroker):
    with RawClient(gbroker.bootstrap) as c:
        metadata(c, ["t"])
        errors = commit(c, "simple", -1, "", [(0, 1, "m" * 101)])
        assert errors == [E.offset_metadata_too_large]
        assert commit(c, "simple", -1, "", [(0, 1, "m" * 100)]) == [E.none]
    assert_still_serving(gbroker)


def test_delete_non_empty_group(gbroker):
    with RawClient(gbroker.bootstrap) as c:
        stable_member(c)
        resp = c.request(DeleteGroupsRequest(groups_names=("g", "missing")))
        codes = {r.group_id: r.error_code for r in resp.results}
        assert codes == {"g": E.non_empty_group, "missing": E.group_id_not_found}
    assert_still_serving(gbroker)


def test_find_coordinator_transaction_and_unknown_key_types(gbroker):
    port = int(gbroker.bootstrap.rsplit(":", 1)[1])
    with RawClient(gbroker.bootstrap) as c:
        old = c.request(FindCoordinator3(key="txn", key_type=1))  # the transaction coordinator
        assert old.error_code == E.none and old.port == port
        new = c.request(FindCoordinator4(key_type=1, coordinator_keys=("a", "b")))
        assert [(k.error_code, k.port) for k in new.coordinators] == [(E.none, port)] * 2
        bad = c.request(FindCoordinator4(key_type=5, coordinator_keys=("a",)))
        assert [k.error_code for k in bad.coordinators] == [E.invalid_request]
    assert_still_serving(gbroker)


def test_produce_to_internal_topic_is_refused(gbroker):
    with RawClient(gbroker.bootstrap) as c:
        resp = produce(c, "__consumer_offsets", batch([b"forged"]))
        assert resp.error_code == E.invalid_topic_exception
        assert resp.error_message == "Cannot append to internal topic __consumer_offsets"
        # the group coordinator's own records still go there: a commit works
        metadata(c, ["t"])
        assert commit(c, "simple", -1, "", [(0, 1, "")]) == [E.none]
    assert_still_serving(gbroker)


# -- the consumer protocol (KIP-848) ---------------------------------------------------------------


def test_consumer_protocol_errors(gbroker):
    with RawClient(gbroker.bootstrap) as c:
        metadata(c, ["t"])
        m = str(uuid.uuid4())
        assert heartbeat_848(c, "cg", m, 0, assignor="sticky").error_code == E.unsupported_assignor
        assert heartbeat_848(c, "cg", "", 0).error_code == E.invalid_request
        assert heartbeat_848(c, "cg", m, 3).error_code == E.group_id_not_found
        joined = heartbeat_848(c, "cg", m, 0)
        assert joined.error_code == E.none and joined.member_epoch == 1
        assert heartbeat_848(c, "cg", m, 9, owned=None).error_code == E.fenced_member_epoch
        assert heartbeat_848(c, "cg", "stranger", 1).error_code == E.unknown_member_id
        # offsets of a consumer-protocol member are checked against its member epoch
        assert commit(c, "cg", 0, m, [(0, 1, "")]) == [E.stale_member_epoch]
        assert commit(c, "cg", 1, m, [(0, 1, "")]) == [E.none]
        # classic APIs against the consumer group: JoinGroup is served by it (online migration)
        # and needs the 'consumer' embedded protocol; its consumer-protocol members are unknown
        first = join(c, group="cg")
        assert first.error_code == E.member_id_required
        bad = join(c, group="cg", member_id=first.member_id)  # metadata b"\x00"
        assert bad.error_code == E.unknown_server_error  # Kafka's answer (IllegalStateException)
        hb = c.request(
            HeartbeatRequest(group_id="cg", generation_id=1, member_id=m, group_instance_id=None)
        )
        assert hb.error_code == E.unknown_member_id
        d6 = c.request(DescribeGroups6(groups=("cg",), include_authorized_operations=False))
        assert d6.groups[0].error_code == E.group_id_not_found
        d5 = c.request(DescribeGroups5(groups=("cg",), include_authorized_operations=False))
        assert (d5.groups[0].error_code, d5.groups[0].group_state) == (E.none, "Dead")
        # the consumer protocol against a classic group with members: not upgraded, its members'
        # metadata is not the 'consumer' embedded protocol
        stable_member(c, "classic")
        other = heartbeat_848(c, "classic", str(uuid.uuid4()), 0)
        assert other.error_code == E.group_id_not_found
        left = heartbeat_848(c, "cg", m, -1, owned=None, names=None)
        assert (left.error_code, left.member_epoch) == (E.none, -1)
    assert_still_serving(gbroker)
