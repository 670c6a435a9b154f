"""The follower's side of a fetch session (replication/fetch_session_handler.py), and the
replica fetch codec's session fields, against Kafka's rules and kio."""

from __future__ import annotations

import datetime
import io

from kio.schema.fetch.v12 import request as fetch_req
from kio.serial import entity_writer

from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.replica_fetch import FetchPartitionRequest, encode_replica_fetch
from kafkapy.replication.fetch_session_handler import FollowerFetchSession


def test_full_then_incremental_then_only_what_changed():
    s = FollowerFetchSession()
    wanted = {("t", 0): (0, 10), ("t", 1): (0, 20)}
    r = s.next_round(wanted)
    assert (r.session_id, r.epoch, r.full, sorted(r.send), r.forget) == (
        0, 0, True, [("t", 0), ("t", 1)], []
    )
    assert s.on_response(r, 0, 77)
    r = s.next_round(wanted)  # nothing changed: an incremental request naming nothing
    assert (r.session_id, r.epoch, r.send, r.forget) == (77, 1, [], [])
    assert s.on_response(r, 0, 77)
    wanted = {("t", 0): (0, 15), ("u", 3): (2, 0)}  # t-0 moved on, u-3 added, t-1 dropped
    r = s.next_round(wanted)
    assert (r.epoch, sorted(r.send), r.forget) == (2, [("t", 0), ("u", 3)], [("t", 1)])


def test_session_errors_and_reconnects_go_back_to_a_full_fetch():
    s = FollowerFetchSession()
    wanted = {("t", 0): (0, 1)}
    r = s.next_round(wanted)
    s.on_response(r, 0, 5)
    r = s.next_round(wanted)
    assert not s.on_response(r, ErrorCode.invalid_fetch_session_epoch, 0)
    r = s.next_round(wanted)  # closes session 5, opens another
    assert (r.session_id, r.epoch, r.send) == (5, 0, [("t", 0)])
    s.on_response(r, 0, 6)
    r = s.next_round(wanted)
    assert not s.on_response(r, ErrorCode.fetch_session_id_not_found, 0)
    r = s.next_round(wanted)
    assert (r.session_id, r.epoch) == (0, 0)
    s = FollowerFetchSession()
    s.on_response(s.next_round(wanted), 0, 9)
    s.reset()  # a new connection
    r = s.next_round(wanted)
    assert (r.session_id, r.epoch, r.send) == (9, 0, [("t", 0)])
    # a leader that keeps no session: full requests every time
    assert s.on_response(r, 0, 0) and s.next_round(wanted).full


def test_session_fields_and_forgotten_topics_encode_as_kio_does():
    ours = encode_replica_fetch(
        2, 500, 1, 1 << 20, [("orders", [FetchPartitionRequest(0, 3, 1234, 17, 1 << 20)])],
        session_id=31337, session_epoch=9, forgotten=[("old", [4, 7])],
    )
    entity = fetch_req.FetchRequest(
        cluster_id=None, replica_id=2, max_wait=datetime.timedelta(milliseconds=500),
        min_bytes=1, max_bytes=1 << 20, isolation_level=0, session_id=31337, session_epoch=9,
        topics=(fetch_req.FetchTopic(topic="orders", partitions=(fetch_req.FetchPartition(
            partition=0, current_leader_epoch=3, fetch_offset=1234, last_fetched_epoch=-1,
            log_start_offset=17, partition_max_bytes=1 << 20),)),),
        forgotten_topics_data=(fetch_req.ForgottenTopic(topic="old", partitions=(4, 7)),),
        rack_id="",
    )
    buf = io.BytesIO()
    entity_writer(type(entity))(buf, entity)
    assert ours == buf.getvalue()
