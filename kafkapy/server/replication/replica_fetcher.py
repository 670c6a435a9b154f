"""Follower side of replication: one task per leader broker fetching every partition this broker
follows there (Kafka's ReplicaFetcherThread), over one connection speaking the Fetch API as a
replica (Fetch v12, replica_id = this broker), in an incremental fetch session (KIP-227,
replication/fetch_session_handler.py: after a full fetch, each request names only the
partitions whose fetch offset, log start or epoch changed, and the leader answers with only the
partitions that have something new). Fetch requests and responses are encoded and read by
hand (kafkapy.protocol.replica_fetch): the records of a response are a view into the received
frame and are appended from there, so a fetched batch is copied once in user space.

Each partition is in one of three states: truncating, fetching or out of range.

* Truncating (after every leadership change): the follower asks the leader with
  OffsetForLeaderEpoch (v3, as a replica) for the end offset of its own latest epoch and truncates
  its divergent tail to the smaller of that and its own end offset for the epoch the leader
  answered (KIP-101 / KIP-279; more rounds while the leader answers an epoch it does not know).
  The decisions are sans-io, in kafkapy.replication.truncation.
* Fetching: batches are appended as they are (offsets and epochs kept); the follower's high
  watermark is min(leader's, own log end offset), and its log start offset follows the leader's
  (segments wholly below it are deleted), never past its own high watermark.
* Out of range (the leader answered OFFSET_OUT_OF_RANGE): the follower asks the leader's latest
  and earliest offsets with ListOffsets (v7, as a replica) and, as Kafka's fetchOffsetAndTruncate,
  truncates to the leader's log end offset if it is below its own (an unclean election), or
  truncates fully and restarts its log at the leader's log start offset if that passed its own
  log end offset (retention or DeleteRecords while it was away). A restarted log whose first
  fetched batch begins before the leader's log start offset restarts at that batch's base.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import trio
from kio.schema.list_offsets.v7 import request as lo_req
from kio.schema.offset_for_leader_epoch.v3 import request as ofle_req

from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.record_batch import parse_batch_header
from kafkapy.protocol.replica_fetch import (
    FETCH_KEY,
    FETCH_VERSION,
    FetchPartitionRequest,
    decode_replica_fetch_response,
    encode_replica_fetch,
)
from kafkapy.replication.fetch_session_handler import FollowerFetchSession
from kafkapy.replication.truncation import (
    OutOfRange,
    epoch_truncation,
    follower_log_start,
    out_of_range,
    restart_for_first_batch,
)
from kafkapy.storage.errors import StorageError

from ..log_manager.log_flusher import flush_if_due
from ..network.peer_connection import PeerAuthenticationError, PeerConnection

if TYPE_CHECKING:
    from .replica_manager import ReplicaManager

log = logging.getLogger("kafkapy.replica_fetcher")

RETRY_BACKOFF = 0.2
REQUEST_TIMEOUT = 10.0
LATEST, EARLIEST = -1, -2

TRUNCATING, FETCHING, OUT_OF_RANGE = "truncating", "fetching", "out_of_range"
SESSION_ERRORS = (
    ErrorCode.fetch_session_id_not_found,
    ErrorCode.invalid_fetch_session_epoch,
    ErrorCode.fetch_session_topic_id_error,
)


class LeaderFetcher:
    """Fetches the partitions this broker follows from one leader."""

    def __init__(self, manager: ReplicaManager, leader_id: int) -> None:
        self.manager = manager
        self.leader_id = leader_id
        # (topic, partition) -> TRUNCATING, FETCHING or OUT_OF_RANGE
        self.partitions: dict[tuple[str, int], str] = {}
        self.changed = trio.Event()
        self.cancel_scope = trio.CancelScope()
        self.session = FollowerFetchSession()  # KIP-227, kept across reconnections

    def add(self, tp: tuple[str, int]) -> None:
        self.partitions[tp] = TRUNCATING
        self.changed.set()

    def remove(self, tp: tuple[str, int]) -> None:
        if self.partitions.pop(tp, None) is not None:
            self.changed.set()

    async def run(self) -> None:
        with self.cancel_scope:
            while True:
                if not self.partitions:
                    self.changed = trio.Event()
                    await self.changed.wait()
                    continue
                info = self.manager.live.get(self.leader_id)
                config = self.manager.broker.config
                endpoint = info.endpoint(config.inter_broker_listener) if info else None
                if endpoint is None:
                    self.changed = trio.Event()
                    with trio.move_on_after(RETRY_BACKOFF):
                        await self.changed.wait()
                    continue
                conn = None
                try:
                    with trio.fail_after(10):
                        conn = await PeerConnection.open(
                            endpoint.host,
                            endpoint.port,
                            f"replica-fetcher-{self.manager.me}",
                            config.inter_broker_security,
                        )
                    await self._fetch_loop(conn)
                except PeerAuthenticationError as e:
                    log.warning("fetcher from broker %d cannot authenticate: %s", self.leader_id, e)
                except (
                    OSError,
                    ConnectionError,
                    trio.TooSlowError,
                    trio.BrokenResourceError,
                    trio.ClosedResourceError,
                ) as e:
                    log.debug("fetcher from broker %d: %r", self.leader_id, e)
                except Exception:
                    log.exception("fetcher from broker %d failed", self.leader_id)
                finally:
                    if conn is not None:
                        with trio.CancelScope(shield=True):
                            await conn.aclose()
                await trio.sleep(RETRY_BACKOFF)

    async def _fetch_loop(self, conn: PeerConnection) -> None:
        m = self.manager
        cfg = m.broker.config
        self.session.reset()  # a new connection: a full fetch first (closing any old session)
        while self.partitions:
            self.changed = trio.Event()
            todo = [tp for tp, st in self.partitions.items() if st == TRUNCATING]
            if todo:
                await self._truncate(conn, todo)
            todo = [tp for tp, st in self.partitions.items() if st == OUT_OF_RANGE]
            if todo:
                await self._reset_out_of_range(conn, todo)
            fetchable = []
            for tp, st in list(self.partitions.items()):
                if st != FETCHING:
                    continue
                rp = m.partitions.get(tp)
                plog = m.broker.logs.get_log(*tp) if m.broker.logs else None
                if rp is None or plog is None or rp.leader != self.leader_id or plog.offline:
                    continue
                fetchable.append((tp, rp, plog))
            if not fetchable:
                with trio.move_on_after(RETRY_BACKOFF):
                    await self.changed.wait()
                continue
            wanted = {
                tp: FetchPartitionRequest(
                    partition=tp[1],
                    current_leader_epoch=rp.leader_epoch,
                    fetch_offset=plog.log_end_offset,
                    log_start_offset=plog.log_start_offset,
                    partition_max_bytes=cfg.replica_fetch_max_bytes,
                )
                for tp, rp, plog in fetchable
            }
            # an incremental fetch session (KIP-227): only what changed is named
            round_ = self.session.next_round(wanted)
            by_topic: dict[str, list[FetchPartitionRequest]] = {}
            for tp in round_.send:
                by_topic.setdefault(tp[0], []).append(wanted[tp])
            gone: dict[str, list[int]] = {}
            for topic, p in round_.forget:
                gone.setdefault(topic, []).append(p)
            body = encode_replica_fetch(
                m.me,
                cfg.replica_fetch_wait_max_ms,
                cfg.replica_fetch_min_bytes,
                cfg.replica_fetch_response_max_bytes,
                list(by_topic.items()),
                session_id=round_.session_id,
                session_epoch=round_.epoch,
                forgotten=list(gone.items()),
            )
            timeout = cfg.replica_fetch_wait_max_ms / 1000 + cfg.replica_socket_timeout_ms / 1000
            try:
                with trio.fail_after(timeout):
                    frame = await conn.request_raw(FETCH_KEY, FETCH_VERSION, body)
            except BaseException:
                self.session.reset()  # the leader's view of the session is in doubt
                raise
            error, session_id, topics = decode_replica_fetch_response(frame)
            if not self.session.on_response(round_, error, session_id):
                # a session error: the next request is a full one, at once; another error:
                # wait a little first
                if error not in SESSION_ERRORS:
                    with trio.move_on_after(RETRY_BACKOFF):
                        await self.changed.wait()
                continue
            backoff = False
            for topic, partitions in topics:
                for pd in partitions:
                    if not self._handle_partition(topic, pd):
                        backoff = True
            for _tp, _rp, plog in fetchable:  # flush.messages / flush.ms, off the event loop
                try:
                    await flush_if_due(plog)
                except StorageError:
                    backoff = True  # its directory went offline (logged once)
            if backoff:
                with trio.move_on_after(RETRY_BACKOFF):
                    await self.changed.wait()

    def _handle_partition(self, topic: str, pd: Any) -> bool:
        """Apply one partition of a Fetch response; False asks the loop to back off."""
        m = self.manager
        tp = (topic, pd.partition_index)
        if self.partitions.get(tp) != FETCHING:
            return True
        rp = m.partitions.get(tp)
        plog = m.broker.logs.get_log(*tp) if m.broker.logs else None
        if rp is None or plog is None or rp.leader != self.leader_id or plog.offline:
            return True
        err = int(pd.error_code)
        if err == ErrorCode.offset_out_of_range:
            log.info(
                "%s-%d: fetch offset %d out of range at leader %d (hw %d, start %d)",
                topic,
                tp[1],
                plog.log_end_offset,
                self.leader_id,
                pd.high_watermark,
                pd.log_start_offset,
            )
            self.partitions[tp] = OUT_OF_RANGE  # ask the leader's offsets, then fetch again
            return True
        if err != 0:
            return False  # NOT_LEADER / FENCED / UNKNOWN epoch: wait for the new state
        records = pd.records
        if records:
            try:
                n = self._append(plog, records)
            except StorageError as e:
                log.warning("%s-%d: follower append failed: %s", topic, tp[1], e)
                self.partitions[tp] = TRUNCATING
                return False
            except Exception as e:  # corrupt or non-contiguous data: truncate and retry
                log.warning("%s-%d: follower append failed: %r", topic, tp[1], e)
                self.partitions[tp] = TRUNCATING
                return False
            if n:
                m.broker.appended.notify(tp)
        hw = min(int(pd.high_watermark), plog.log_end_offset)
        if hw != plog.high_watermark and hw >= 0:
            plog.high_watermark = hw
            m.broker.appended.notify(tp)
        new_start = follower_log_start(
            int(pd.log_start_offset), plog.log_start_offset, plog.high_watermark
        )
        if new_start is not None:
            plog.delete_records_before(new_start)
            self._checkpoint_log_starts()
        return True

    def _append(self, plog: Any, records: bytes | memoryview) -> int:
        """Append fetched batches; an empty log restarted at the leader's log start offset
        restarts at the first batch's base when that start lies inside the batch (Kafka's
        Partition.appendRecordsToFollowerOrFutureReplica)."""
        now = self.manager.now_ms()
        first = parse_batch_header(records, 0)
        base = restart_for_first_batch(
            plog.log_start_offset, plog.log_end_offset, first.base_offset, first.last_offset
        )
        if base is not None:
            log.info(
                "%s-%d: log start %d lies inside the first fetched batch; restarting at %d",
                plog.topic,
                plog.partition,
                plog.log_start_offset,
                base,
            )
            plog.truncate_fully_and_start_at(base, now)
        return plog.append_as_follower(records, now_ms=now)

    def _checkpoint_log_starts(self) -> None:
        logs = self.manager.broker.logs
        try:
            logs.checkpoint_log_start_offsets()
        except OSError as e:
            log.warning("log-start-offset-checkpoint failed: %s", e)

    async def _truncate(self, conn: PeerConnection, tps: list[tuple[str, int]]) -> None:
        """OffsetForLeaderEpoch rounds until every partition in ``tps`` is truncated."""
        m = self.manager
        for _round in range(4):
            ask: dict[str, list[Any]] = {}
            for tp in tps:
                if self.partitions.get(tp) != TRUNCATING:
                    continue
                rp = m.partitions.get(tp)
                plog = m.broker.logs.get_log(*tp) if m.broker.logs else None
                if rp is None or plog is None or plog.offline:
                    self.partitions.pop(tp, None)
                    continue
                latest = plog.latest_epoch()
                if latest < 0:
                    if plog.log_end_offset > plog.high_watermark:
                        plog.truncate_to(plog.high_watermark)
                    self.partitions[tp] = FETCHING
                    continue
                ask.setdefault(tp[0], []).append(
                    ofle_req.OffsetForLeaderPartition(
                        partition=tp[1],
                        current_leader_epoch=rp.leader_epoch,
                        leader_epoch=latest,
                    )
                )
            if not ask:
                return
            req = ofle_req.OffsetForLeaderEpochRequest(
                replica_id=m.me,
                topics=tuple(
                    ofle_req.OffsetForLeaderTopic(topic=t, partitions=tuple(ps))
                    for t, ps in ask.items()
                ),
            )
            with trio.fail_after(REQUEST_TIMEOUT):
                resp = await conn.request(req)
            for t in resp.topics:
                for p in t.partitions:
                    tp = (t.topic, p.partition)
                    plog = m.broker.logs.get_log(*tp) if m.broker.logs else None
                    if plog is None or self.partitions.get(tp) != TRUNCATING:
                        continue
                    if int(p.error_code) != 0:
                        continue  # stays flagged: retried after the state settles
                    leader_epoch, leader_end = int(p.leader_epoch), int(p.end_offset)
                    own_epoch, own_end = (
                        plog.end_offset_for_epoch(leader_epoch) if leader_epoch >= 0 else (-1, -1)
                    )
                    decision = epoch_truncation(
                        leader_epoch,
                        leader_end,
                        own_epoch,
                        own_end,
                        plog.log_end_offset,
                        plog.high_watermark,
                    )
                    if decision.offset < plog.log_end_offset:
                        log.info(
                            "%s-%d: truncating from %d to %d (leader epoch %d ends at %d)",
                            tp[0],
                            tp[1],
                            plog.log_end_offset,
                            decision.offset,
                            leader_epoch,
                            leader_end,
                        )
                    plog.truncate_to(decision.offset)
                    if decision.done:
                        self.partitions[tp] = FETCHING
            if not any(self.partitions.get(tp) == TRUNCATING for tp in tps):
                return

    async def _list_offsets(
        self, conn: PeerConnection, tps: list[tuple[str, int]], timestamp: int
    ) -> dict[tuple[str, int], int]:
        """The leader's offset for ``timestamp`` (LATEST: its log end offset, as asked by a
        replica; EARLIEST: its log start offset) of each partition that answered without error."""
        m = self.manager
        by_topic: dict[str, list[Any]] = {}
        for tp in tps:
            rp = m.partitions.get(tp)
            if rp is None:
                continue
            by_topic.setdefault(tp[0], []).append(
                lo_req.ListOffsetsPartition(
                    partition_index=tp[1],
                    current_leader_epoch=rp.leader_epoch,
                    timestamp=timestamp,
                )
            )
        if not by_topic:
            return {}
        req = lo_req.ListOffsetsRequest(
            replica_id=m.me,
            isolation_level=0,
            topics=tuple(
                lo_req.ListOffsetsTopic(name=t, partitions=tuple(ps)) for t, ps in by_topic.items()
            ),
        )
        with trio.fail_after(REQUEST_TIMEOUT):
            resp = await conn.request(req)
        out: dict[tuple[str, int], int] = {}
        for t in resp.topics:
            for p in t.partitions:
                if int(p.error_code) == 0 and int(p.offset) >= 0:
                    out[(t.name, p.partition_index)] = int(p.offset)
                else:
                    log.info(
                        "%s-%d: ListOffsets(%d) at leader %d failed: error %d",
                        t.name,
                        p.partition_index,
                        timestamp,
                        self.leader_id,
                        int(p.error_code),
                    )
        return out

    async def _reset_out_of_range(self, conn: PeerConnection, tps: list[tuple[str, int]]) -> None:
        """Kafka's fetchOffsetAndTruncate for partitions whose fetch offset was out of range.
        Partitions whose leader did not answer stay out of range (asked again next round)."""
        m = self.manager

        def local(tp: tuple[str, int]) -> Any:
            rp = m.partitions.get(tp)
            plog = m.broker.logs.get_log(*tp) if m.broker.logs else None
            if rp is None or plog is None or rp.leader != self.leader_id or plog.offline:
                return None
            return plog

        tps = [tp for tp in tps if local(tp) is not None]
        latest = await self._list_offsets(conn, tps, LATEST)
        need_start = [
            tp for tp, end in latest.items() if (plog := local(tp)) and end >= plog.log_end_offset
        ]
        earliest = await self._list_offsets(conn, need_start, EARLIEST) if need_start else {}
        for tp, leader_end in latest.items():
            plog = local(tp)
            if plog is None or self.partitions.get(tp) != OUT_OF_RANGE:
                continue
            if tp in need_start and tp not in earliest:
                continue  # the earliest offset is still needed
            own_end = plog.log_end_offset
            action = out_of_range(own_end, leader_end, earliest.get(tp))
            if action.kind is OutOfRange.TRUNCATE:
                log.warning(
                    "%s-%d: leader %d ends at %d, before this replica's end %d: truncating",
                    tp[0],
                    tp[1],
                    self.leader_id,
                    leader_end,
                    own_end,
                )
                plog.truncate_to(action.offset)
            elif action.kind is OutOfRange.RESET:
                log.warning(
                    "%s-%d: leader %d starts at %d, after this replica's end %d: "
                    "truncating fully and restarting the log there",
                    tp[0],
                    tp[1],
                    self.leader_id,
                    action.offset,
                    own_end,
                )
                plog.truncate_fully_and_start_at(action.offset, m.now_ms())
                self._checkpoint_log_starts()
                m.broker.appended.notify(tp)
            self.partitions[tp] = FETCHING
