"""Follower side of replication: one task per leader broker fetching every partition this broker
follows there (Kafka's ReplicaFetcherThread), over one connection speaking the Fetch API as a
replica (Fetch v12, replica_id = this broker).

Before fetching a partition after a leadership change, the follower truncates its divergent tail:
it asks the leader with OffsetForLeaderEpoch (v3, as a replica) for the end offset of its own
latest epoch and truncates to the smaller of that and its own end offset for the epoch the leader
answered (KIP-101 / KIP-279; a second round when the leader knew only an older epoch). Without
epoch information it truncates to its high watermark. Fetched batches are appended as they are
(offsets and epochs kept); the follower's high watermark is min(leader's, own log end offset).
"""

from __future__ import annotations

import datetime
import io
import logging
import struct
from typing import TYPE_CHECKING, Any

import trio
from kio.index import load_response_schema
from kio.schema.fetch.v12 import request as fetch_req
from kio.schema.offset_for_leader_epoch.v3 import request as ofle_req
from kio.serial import entity_reader, entity_writer

from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.headers import is_flexible
from kafkapy.storage.errors import StorageError

if TYPE_CHECKING:
    from .replica_manager import ReplicaManager

log = logging.getLogger("kafkapy.replica_fetcher")

RETRY_BACKOFF = 0.2


class PeerConnection:
    """A minimal async Kafka client connection to another broker."""

    def __init__(self, stream: trio.SocketStream, client_id: str) -> None:
        self.stream = stream
        self.client_id = client_id.encode()
        self._corr = 0
        self._buf = bytearray()

    @classmethod
    async def open(cls, host: str, port: int, client_id: str) -> PeerConnection:
        stream = await trio.open_tcp_stream(host, port)
        return cls(stream, client_id)

    async def request(self, entity: Any) -> Any:
        api_key, version = entity.__api_key__, entity.__version__
        self._corr += 1
        flexible = is_flexible(api_key, version)
        head = struct.pack(">hhih", api_key, version, self._corr, len(self.client_id))
        head += self.client_id
        if flexible:
            head += b"\x00"
        body = io.BytesIO()
        entity_writer(type(entity))(body, entity)
        payload = head + body.getvalue()
        await self.stream.send_all(struct.pack(">i", len(payload)) + payload)
        size = struct.unpack(">i", await self._recv(4))[0]
        frame = await self._recv(size)
        pos = 4 + (1 if flexible else 0)
        value, _ = entity_reader(load_response_schema(api_key, version))(frame, pos)
        return value

    async def _recv(self, n: int) -> bytes:
        while len(self._buf) < n:
            chunk = await self.stream.receive_some(1 << 20)
            if not chunk:
                raise ConnectionError("connection closed by the leader")
            self._buf += chunk
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    async def aclose(self) -> None:
        await self.stream.aclose()


class LeaderFetcher:
    """Fetches the partitions this broker follows from one leader."""

    def __init__(self, manager: ReplicaManager, leader_id: int) -> None:
        self.manager = manager
        self.leader_id = leader_id
        # (topic, partition) -> needs truncation before fetching
        self.partitions: dict[tuple[str, int], bool] = {}
        self.changed = trio.Event()
        self.cancel_scope = trio.CancelScope()

    def add(self, tp: tuple[str, int]) -> None:
        self.partitions[tp] = True
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
                if info is None:
                    self.changed = trio.Event()
                    with trio.move_on_after(RETRY_BACKOFF):
                        await self.changed.wait()
                    continue
                conn = None
                try:
                    with trio.fail_after(10):
                        conn = await PeerConnection.open(
                            info.host, info.port, f"replica-fetcher-{self.manager.me}"
                        )
                    await self._fetch_loop(conn)
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
        while self.partitions:
            self.changed = trio.Event()
            todo = [tp for tp, trunc in self.partitions.items() if trunc]
            if todo:
                await self._truncate(conn, todo)
            fetchable = []
            for tp, trunc in list(self.partitions.items()):
                if trunc:
                    continue
                rp = m.partitions.get(tp)
                plog = m.broker.logs.get_log(*tp) if m.broker.logs else None
                if rp is None or plog is None or rp.leader != self.leader_id:
                    continue
                fetchable.append((tp, rp, plog))
            if not fetchable:
                with trio.move_on_after(RETRY_BACKOFF):
                    await self.changed.wait()
                continue
            by_topic: dict[str, list[Any]] = {}
            for (topic, p), rp, plog in fetchable:
                by_topic.setdefault(topic, []).append(
                    fetch_req.FetchPartition(
                        partition=p,
                        current_leader_epoch=rp.leader_epoch,
                        fetch_offset=plog.log_end_offset,
                        last_fetched_epoch=-1,
                        log_start_offset=plog.log_start_offset,
                        partition_max_bytes=cfg.replica_fetch_max_bytes,
                    )
                )
            req = fetch_req.FetchRequest(
                cluster_id=None,
                replica_id=m.me,
                max_wait=datetime.timedelta(milliseconds=cfg.replica_fetch_wait_max_ms),
                min_bytes=cfg.replica_fetch_min_bytes,
                max_bytes=cfg.replica_fetch_response_max_bytes,
                isolation_level=0,
                session_id=0,
                session_epoch=-1,
                topics=tuple(
                    fetch_req.FetchTopic(topic=t, partitions=tuple(ps))
                    for t, ps in by_topic.items()
                ),
                forgotten_topics_data=(),
                rack_id="",
            )
            timeout = cfg.replica_fetch_wait_max_ms / 1000 + cfg.replica_socket_timeout_ms / 1000
            with trio.fail_after(timeout):
                resp = await conn.request(req)
            backoff = False
            for t in resp.responses:
                for pd in t.partitions:
                    if not self._handle_partition(t.topic, pd):
                        backoff = True
            if backoff:
                with trio.move_on_after(RETRY_BACKOFF):
                    await self.changed.wait()

    def _handle_partition(self, topic: str, pd: Any) -> bool:
        m = self.manager
        tp = (topic, pd.partition_index)
        if tp not in self.partitions or self.partitions[tp]:
            return True
        rp = m.partitions.get(tp)
        plog = m.broker.logs.get_log(*tp) if m.broker.logs else None
        if rp is None or plog is None or rp.leader != self.leader_id:
            return True
        err = int(pd.error_code)
        if err == ErrorCode.offset_out_of_range:
            log.warning(
                "%s-%d: fetch offset %d out of range at leader %d (hw %d, start %d)",
                topic,
                tp[1],
                plog.log_end_offset,
                self.leader_id,
                pd.high_watermark,
                pd.log_start_offset,
            )
            self.partitions[tp] = True  # truncate again
            return False
        if err != 0:
            return False  # NOT_LEADER / FENCED / UNKNOWN epoch: wait for the new state
        records = pd.records
        if records:
            try:
                n = plog.append_as_follower(bytes(records), now_ms=m.now_ms())
            except StorageError as e:
                log.warning("%s-%d: follower append failed: %s", topic, tp[1], e)
                self.partitions[tp] = True
                return False
            except Exception as e:  # corrupt or non-contiguous data: truncate and retry
                log.warning("%s-%d: follower append failed: %r", topic, tp[1], e)
                self.partitions[tp] = True
                return False
            if n:
                m.broker.appended.notify()
        hw = min(int(pd.high_watermark), plog.log_end_offset)
        if hw != plog.high_watermark and hw >= 0:
            plog.high_watermark = hw
            m.broker.appended.notify()
        return True

    async def _truncate(self, conn: PeerConnection, tps: list[tuple[str, int]]) -> None:
        m = self.manager
        for _round in range(4):
            ask: dict[str, list[Any]] = {}
            for tp in tps:
                if not self.partitions.get(tp):
                    continue
                rp = m.partitions.get(tp)
                plog = m.broker.logs.get_log(*tp) if m.broker.logs else None
                if rp is None or plog is None:
                    self.partitions.pop(tp, None)
                    continue
                latest = plog.latest_epoch()
                if latest < 0:
                    if plog.log_end_offset > plog.high_watermark:
                        plog.truncate_to(plog.high_watermark)
                    self.partitions[tp] = False
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
            with trio.fail_after(10):
                resp = await conn.request(req)
            for t in resp.topics:
                for p in t.partitions:
                    tp = (t.topic, p.partition)
                    plog = m.broker.logs.get_log(*tp) if m.broker.logs else None
                    if plog is None or tp not in self.partitions:
                        continue
                    if int(p.error_code) != 0:
                        continue  # stays flagged: retried after the state settles
                    leader_epoch, leader_end = int(p.leader_epoch), int(p.end_offset)
                    if leader_epoch < 0 or leader_end < 0:
                        target = plog.high_watermark
                        done = True
                    else:
                        own_epoch, own_end = plog.end_offset_for_epoch(leader_epoch)
                        if own_epoch == leader_epoch:
                            target = min(leader_end, own_end)
                            done = True
                        else:
                            target = own_end if own_end >= 0 else plog.high_watermark
                            done = False
                    target = min(target, plog.log_end_offset)
                    if target < plog.log_end_offset:
                        log.info(
                            "%s-%d: truncating from %d to %d (leader epoch %d ends at %d)",
                            tp[0],
                            tp[1],
                            plog.log_end_offset,
                            target,
                            leader_epoch,
                            leader_end,
                        )
                        plog.truncate_to(target)
                    if done:
                        self.partitions[tp] = False
            if not any(self.partitions.get(tp) for tp in tps):
                return
