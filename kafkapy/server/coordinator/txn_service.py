"""The transaction coordinator's place in the broker: its topic, its log, its timers, and the
composition of each API's steps.

``TxnService`` owns the sans-io ``TxnCoordinator`` (kafkapy.coordinator.txn) and gives it what
it cannot do itself:

- the topic: __transaction_state is created on first need (FindCoordinator with key type 1)
  with transaction.state.log.num.partitions partitions, replication factor
  transaction.state.log.replication.factor (capped with the embedded store), and Kafka's
  enforced configs: cleanup.policy=compact, compression.type=uncompressed,
  unclean.leader.election.enable=false, min.insync.replicas=transaction.state.log.min.isr,
  segment.bytes=transaction.state.log.segment.bytes;
- the log: each transition is one record appended to the id's partition as its leader and
  waited for until the ISR has it (within the transaction's timeout, as Kafka), before the
  coordinator takes it and answers (server/coordinator/internal_log.py);
- leadership: the partitions led here are loaded at start (requests get
  COORDINATOR_LOAD_IN_PROGRESS meanwhile) and whenever leadership is gained (ZooKeeper mode),
  under the partition's leader epoch as the coordinator epoch; transactions found in
  PrepareCommit/PrepareAbort get their markers sent again. Leadership lost drops the partition's
  ids and cancels their markers (the new coordinator completes them);
- markers: kafkapy.server.coordinator.txn_marker_sender, to local leaders in process and to other
brokers
  with WriteTxnMarkers;
- time: every transaction.abort.timed.out.transaction.cleanup.interval.ms, Ongoing transactions
  older than their timeout are fenced (epoch bump) and aborted; every
  transaction.remove.expired.transaction.cleanup.interval.ms, ids idle for
  transactional.id.expiration.ms get a tombstone and are forgotten;
- KIP-890 verification for partition leaders (``verify``, the broker's ``txn_verifier``): answered
  here when this broker coordinates the id, else asked of its coordinator with
  AddPartitionsToTxn v5 (verify_only); for transactions version 2 clients the same call adds the
  partitions (verify_only false), as Kafka's AddPartitionsToTxnManager does.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import trio
from kio.schema.add_partitions_to_txn.v5 import request as apt_req

from kafkapy import clock
from kafkapy.coordinator.txn import MarkerJob, Prepared, TxnConfig, TxnCoordinator
from kafkapy.coordinator.txn.metadata import TV_2, TopicPartition
from kafkapy.coordinator.txn.records import encode_key, encode_state
from kafkapy.coordinator.txn.states import TxnState
from kafkapy.metadata.names import TRANSACTION_STATE_TOPIC
from kafkapy.protocol.errors import ErrorCode

from ..network.peer_pool import PeerPool, PeerUnavailable
from .internal_log import (
    InternalAppendError,
    InternalTopicLog,
    create_internal_topic,
    read_log_records,
)
from .txn_marker_sender import MarkerSender

if TYPE_CHECKING:
    from ..broker import Broker

log = logging.getLogger("kafkapy.txn")

TXN_TOPIC = TRANSACTION_STATE_TOPIC


class TxnService:
    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        c = broker.config
        self.coordinator = TxnCoordinator(
            TxnConfig(
                num_partitions=c.transaction_state_log_num_partitions,
                max_timeout_ms=c.transaction_max_timeout_ms,
                id_expiration_ms=c.transactional_id_expiration_ms,
                abort_interval_ms=c.transaction_abort_timed_out_transaction_cleanup_interval_ms,
                remove_expired_interval_ms=(
                    c.transaction_remove_expired_transaction_cleanup_interval_ms
                ),
            ),
            self._allocate_producer_id,
        )
        self.log = InternalTopicLog(broker, TXN_TOPIC)
        # separate connections, as Kafka's marker channel and AddPartitionsToTxnManager: a
        # WriteTxnMarkers waiting for an ISR must not hold up verifications
        self.marker_peers = PeerPool(broker, f"broker-{broker.broker_id}-txn-marker-sender")
        self.verify_peers = PeerPool(broker, f"broker-{broker.broker_id}-txn-verification")
        self.markers = MarkerSender(self)
        self.loaded = trio.Event()
        self._wakeup = trio.Event()
        self._nursery: trio.Nursery | None = None

    def _allocate_producer_id(self) -> int:
        return self.broker.producer_ids.allocate()

    def partition_for(self, transactional_id: str) -> int:
        return self.coordinator.partition_for(transactional_id)

    # -- the topic ------------------------------------------------------------------------------
    def _led(self) -> dict[int, int]:
        """partition -> leader epoch of the __transaction_state partitions led here."""
        info = self.broker.topics.get(TXN_TOPIC)
        if info is None:
            return {}
        out = {}
        for p in info.partitions:
            epoch = self.log.leader_epoch(p)
            if epoch is not None:
                out[p] = epoch
        return out

    def start(self) -> None:
        """Synchronous part of startup: mark the partitions led here to load."""
        info = self.broker.topics.get(TXN_TOPIC)
        if info is None:
            return
        # Kafka keeps the topic's real partition count for the id hash
        self.coordinator.cache.num_partitions = len(info.partitions)
        for p, epoch in self._led().items():
            self.coordinator.cache.begin_loading(p, epoch)

    def ensure_topic(self) -> bool:
        """Create __transaction_state if it does not exist; False if it cannot be created."""
        if self.broker.topics.get(TXN_TOPIC) is not None:
            return True
        c = self.broker.config
        info = create_internal_topic(
            self.broker,
            TXN_TOPIC,
            c.transaction_state_log_num_partitions,
            c.transaction_state_log_replication_factor,
            {
                "cleanup.policy": "compact",
                "compression.type": "uncompressed",
                "unclean.leader.election.enable": "false",
                "min.insync.replicas": str(c.transaction_state_log_min_isr),
                "segment.bytes": str(c.transaction_state_log_segment_bytes),
            },
            "transaction.state.log.replication.factor",
        )
        if info is None:
            return False
        cache = self.coordinator.cache
        cache.num_partitions = len(info.partitions)
        for p, epoch in self._led().items():  # new and empty: nothing to load
            cache.begin_loading(p, epoch)
            cache.complete_loading(p, epoch, [])
        return True

    def on_leadership_change(self, became: list[int], lost: list[int]) -> None:
        """The replica manager moved __transaction_state leaderships (ZooKeeper mode)."""
        cache = self.coordinator.cache
        for p in lost:
            cache.unload(p)
            self.markers.cancel_partition(p)
            log.info("resigned as transaction coordinator for %s-%d", TXN_TOPIC, p)
        led = self._led()
        for p in became:
            if p in led:
                self.markers.cancel_partition(p)
                cache.begin_loading(p, led[p])
        if became:
            self.kick()

    async def _load(self) -> None:
        cache = self.coordinator.cache
        for p, epoch in sorted(cache.loading.items()):
            plog = self.broker.topics.log(TXN_TOPIC, p)
            try:
                records = (
                    [] if plog is None else await trio.to_thread.run_sync(read_log_records, plog)
                )
            except Exception as e:  # an offline log dir: this broker cannot coordinate these ids
                log.warning("cannot load %s-%d: %r", TXN_TOPIC, p, e)
                if cache.loading.get(p) == epoch:
                    cache.unload(p)
                continue
            owned = cache.complete_loading(p, epoch, records)
            if owned is None:
                continue  # leadership moved during the load
            log.info(
                "loaded transactional ids=%d from %s-%d coordinator_epoch=%d",
                len(owned.txns),
                TXN_TOPIC,
                p,
                epoch,
            )
            now = clock.now_ms()
            for md in list(owned.txns.values()):
                if md.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
                    commit = md.state == TxnState.PREPARE_COMMIT
                    complete = md.prepare_complete(now)
                    entry = cache.get(md.transactional_id)
                    assert not isinstance(entry, ErrorCode) and entry is not None
                    log.info(
                        "completing transactional.id=%s (%s) after loading",
                        md.transactional_id,
                        md.state.display_name,
                    )
                    self.markers.send(
                        MarkerJob.start(
                            entry, commit, Prepared(md.transactional_id, epoch, complete)
                        )
                    )
        self.loaded.set()

    # -- writing ----------------------------------------------------------------------------------
    async def write(
        self, prepared: Prepared, *, retry_on: frozenset[ErrorCode] = frozenset()
    ) -> ErrorCode:
        """Append ``prepared``'s record, wait for the ISR, complete the transition; the error to
        answer (Kafka's mapping of append errors to coordinator errors)."""
        err = self.coordinator.check_write(prepared)
        if err:
            return err
        partition = self.partition_for(prepared.transactional_id)
        t = prepared.transit
        value = None if t.state == TxnState.DEAD else encode_state(t)
        try:
            append_err = await self._append(
                partition, [(encode_key(prepared.transactional_id), value)], t.timeout_ms
            )
        except trio.Cancelled:
            # the request went away mid-write: drop the pending transition, as after a timeout
            # (what reached the log is reloaded by the next leader)
            self.coordinator.complete_write(prepared, ErrorCode.request_timed_out)
            raise
        return self.coordinator.complete_write(prepared, append_err, retry_on=retry_on)

    async def _append(
        self, partition: int, records: list[tuple[bytes, bytes | None]], timeout_ms: int
    ) -> ErrorCode:
        try:
            mark = self.log.append(partition, records, clock.now_ms())
        except InternalAppendError as e:
            return e.error_code
        except Exception:
            log.exception("cannot append to %s-%d", TXN_TOPIC, partition)
            return ErrorCode.unknown_server_error
        return await self.log.replicated(mark, timeout_ms / 1000)

    # -- the APIs' steps ------------------------------------------------------------------------
    async def init_producer_id(
        self, transactional_id: str, timeout_ms: int, expected: tuple[int, int] | None
    ) -> tuple[ErrorCode, int, int]:
        got = self.coordinator.prepare_init_producer_id(
            transactional_id, timeout_ms, expected, clock.now_ms()
        )
        if isinstance(got, ErrorCode):
            return got, -1, -1
        if got.fenced:
            # the ongoing transaction of the previous instance is aborted; the client retries
            err = await self._end(got, commit=False)
            return err or ErrorCode.concurrent_transactions, -1, -1
        err = await self.write(got)
        if err:
            return err, -1, -1
        t = got.transit
        log.info(
            "initialized transactional.id=%s producer.id=%d epoch=%d partition=%d",
            transactional_id,
            t.producer_id,
            t.producer_epoch,
            self.partition_for(transactional_id),
        )
        return ErrorCode.none, t.producer_id, t.producer_epoch

    async def add_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: list[TopicPartition],
        client_transaction_version: int = 0,
    ) -> ErrorCode:
        got = self.coordinator.prepare_add_partitions(
            transactional_id,
            producer_id,
            producer_epoch,
            partitions,
            clock.now_ms(),
            client_transaction_version,
        )
        if isinstance(got, ErrorCode):
            return got
        return await self.write(got)

    async def end_txn(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        client_transaction_version: int = 0,
    ) -> tuple[ErrorCode, int, int]:
        """The error, and the producer id and epoch the client continues with (EndTxn v5)."""
        got = self.coordinator.prepare_end_txn(
            transactional_id,
            producer_id,
            producer_epoch,
            commit=commit,
            from_client=True,
            now_ms=clock.now_ms(),
            client_transaction_version=client_transaction_version,
        )
        err = got if isinstance(got, ErrorCode) else await self._end(got, commit)
        if err:
            return err, -1, -1
        return (ErrorCode.none, *self.coordinator.producer_after_end(transactional_id))

    async def _end(self, prepared: Prepared, commit: bool) -> ErrorCode:
        """Write PrepareCommit/PrepareAbort, then start the markers (answered before they are
        written, as Kafka does: read_committed consumers wait for them, not the producer)."""
        err = await self.write(prepared)
        if err:
            self.coordinator.end_txn_write_failed(prepared)
            return err
        t = prepared.transit
        got = self.coordinator.begin_markers(
            prepared.transactional_id,
            t.producer_id,
            t.producer_epoch,
            commit,
            prepared.coordinator_epoch,
            clock.now_ms(),
        )
        if isinstance(got, ErrorCode):
            return got
        entry, complete = got
        self.markers.send(
            MarkerJob.start(
                entry,
                commit,
                Prepared(prepared.transactional_id, entry.coordinator_epoch, complete),
            )
        )
        return ErrorCode.none

    async def verify(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: list[TopicPartition],
        add: bool = False,
    ) -> dict[TopicPartition, ErrorCode]:
        """The verifier seam (KIP-890): is each partition in the producer's transaction? With
        ``add`` (a transactions version 2 client, KIP-890 part 2) the partitions are added to
        it instead, as its AddPartitionsToTxn would have."""
        leader = self.coordinator_node(transactional_id)
        if leader is None:
            return dict.fromkeys(partitions, ErrorCode.coordinator_not_available)
        if leader == self.broker.broker_id:
            if add:
                err = await self.add_partitions(
                    transactional_id, producer_id, producer_epoch, partitions, TV_2
                )
                return dict.fromkeys(partitions, err)
            return self.coordinator.verify_partitions(
                transactional_id, producer_id, producer_epoch, partitions
            )
        return await self._verify_remote(
            leader, transactional_id, producer_id, producer_epoch, partitions, add
        )

    async def _verify_remote(
        self,
        leader: int,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: list[TopicPartition],
        add: bool,
    ) -> dict[TopicPartition, ErrorCode]:
        by_topic: dict[str, list[int]] = {}
        for topic, p in partitions:
            by_topic.setdefault(topic, []).append(p)
        request = apt_req.AddPartitionsToTxnRequest(
            transactions=(
                apt_req.AddPartitionsToTxnTransaction(
                    transactional_id=transactional_id,
                    producer_id=producer_id,
                    producer_epoch=producer_epoch,
                    verify_only=not add,
                    topics=tuple(
                        apt_req.AddPartitionsToTxnTopic(name=t, partitions=tuple(ps))
                        for t, ps in by_topic.items()
                    ),
                ),
            )
        )
        timeout = self.broker.config.request_timeout_ms / 1000
        try:
            response = await self.verify_peers.request(leader, request, timeout)
        except PeerUnavailable as e:
            log.info(
                "cannot verify transactional.id=%s with broker %d: %s", transactional_id, leader, e
            )
            return dict.fromkeys(partitions, ErrorCode.network_exception)
        if response.error_code:
            return dict.fromkeys(partitions, ErrorCode(response.error_code))
        out = dict.fromkeys(partitions, ErrorCode.unknown_server_error)
        for txn in response.results_by_transaction:
            for topic in txn.topic_results:
                for r in topic.results_by_partition:
                    tp = (topic.name, r.partition_index)
                    if tp in out:
                        out[tp] = ErrorCode(r.partition_error_code)
        return out

    def coordinator_node(self, transactional_id: str) -> int | None:
        """The broker leading the id's __transaction_state partition, if known."""
        info = self.broker.topics.get(TXN_TOPIC)
        if info is None:
            return None
        state = info.states.get(self.partition_for(transactional_id))
        if state is None or state.leader < 0:
            return None
        return state.leader

    # -- time -----------------------------------------------------------------------------------
    def kick(self) -> None:
        self._wakeup.set()

    def spawn(self, fn: Any, *args: Any) -> None:
        """Run ``fn(*args)`` in the service's nursery; a failure is logged, never fatal."""

        async def guarded() -> None:
            try:
                await fn(*args)
            except Exception:
                log.exception("transaction coordinator task %s failed", fn.__name__)

        assert self._nursery is not None
        self._nursery.start_soon(guarded)

    async def run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        config = self.coordinator.config
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            self.broker.txn_verifier = self
            task_status.started()
            await self._load()
            now = clock.now_ms()
            next_abort = now + config.abort_interval_ms
            next_expiry = now + config.remove_expired_interval_ms
            while True:
                self._wakeup = trio.Event()
                if self.coordinator.cache.loading:
                    await self._load()
                now = clock.now_ms()
                if now >= next_abort:
                    next_abort = now + config.abort_interval_ms
                    for prepared in self.coordinator.timed_out(now):
                        self.spawn(self._end, prepared, False)
                if now >= next_expiry:
                    next_expiry = now + config.remove_expired_interval_ms
                    for partition, expired in self.coordinator.expire_ids(now).items():
                        self.spawn(self._write_tombstones, partition, expired)
                wait = max(min(next_abort, next_expiry) - clock.now_ms(), 0) / 1000
                with trio.move_on_after(wait):
                    await self._wakeup.wait()

    async def _write_tombstones(self, partition: int, expired: list[Prepared]) -> None:
        records = [(encode_key(p.transactional_id), None) for p in expired]
        err = await self._append(partition, records, self.broker.config.request_timeout_ms)
        for p in expired:
            self.coordinator.complete_expiration(p, err)
