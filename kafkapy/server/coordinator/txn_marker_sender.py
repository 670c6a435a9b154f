"""Sending a transaction's commit/abort markers to the leaders of its partitions, and writing
its completion (Kafka's TransactionMarkerChannelManager).

Each ``MarkerJob`` (kafkapy.coordinator.txn.markers) is split by partition leader into
per-destination queues; one task per destination broker drains its queue into a single request: an
in-process call of the marker-writing seam (``server.txn_markers.write_txn_markers``) when this
broker leads the partitions, WriteTxnMarkers over the wire otherwise (v2, whose markers carry the
transaction version, when one of them is of a transactions version 2 client; else v1). Each
partition's answer is classified by the job: written, retried after a short backoff with the leader
looked up again (leader moved, ISR too small, timeout, unreachable broker), or the whole job
cancelled (coordinator epoch or producer epoch fenced, or this broker no longer coordinates the
id). Partitions of deleted topics are skipped; partitions whose leader is unknown wait and retry.
When no partition is left, CompleteCommit/CompleteAbort is written, again and again while the
answer is COORDINATOR_NOT_AVAILABLE (the ISR of __transaction_state is short), as Kafka does.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import trio
from kio.schema.write_txn_markers.v1 import request as wtm_req_v1
from kio.schema.write_txn_markers.v2 import request as wtm_req

from kafkapy.coordinator.txn import MarkerJob, Outcome
from kafkapy.coordinator.txn.metadata import TopicPartition
from kafkapy.protocol.errors import ErrorCode

from ..network.peer_pool import PeerUnavailable, broker_address
from ..responses import build
from .txn_markers import TxnMarker, write_txn_markers

if TYPE_CHECKING:
    from .txn_service import TxnService

log = logging.getLogger("kafkapy.txn")

RETRY_BACKOFF_S = 0.1
Batch = list[tuple[MarkerJob, frozenset[TopicPartition]]]


class MarkerSender:
    def __init__(self, service: TxnService) -> None:
        self.service = service
        self.jobs: dict[str, MarkerJob] = {}  # transactional id -> its markers in flight
        self._queues: dict[int, Batch] = {}
        self._wake: dict[int, trio.Event] = {}

    @property
    def _coordinator(self):
        return self.service.coordinator

    def send(self, job: MarkerJob) -> None:
        prev = self.jobs.get(job.transactional_id)
        if prev is not None and prev is not job:
            prev.cancelled = True
        self.jobs[job.transactional_id] = job
        self._route(job, job.remaining)
        self._maybe_complete(job)

    def cancel_partition(self, partition: int) -> None:
        """Leadership of a __transaction_state partition moved: its markers are not ours."""
        for txn_id, job in list(self.jobs.items()):
            if self._coordinator.partition_for(txn_id) == partition:
                job.cancelled = True
                del self.jobs[txn_id]

    # -- routing --------------------------------------------------------------------------------
    def _route(self, job: MarkerJob, tps: set[TopicPartition]) -> None:
        broker = self.service.broker
        by_leader: dict[int, set[TopicPartition]] = {}
        unknown: set[TopicPartition] = set()
        for tp in sorted(tps):
            info = broker.topics.get(tp[0])
            if info is None or tp[1] not in info.partitions:
                job.partition_gone(self._coordinator, tp)
                continue
            state = info.states.get(tp[1])
            leader = state.leader if state is not None else -1
            if leader < 0 or broker_address(broker, leader) is None:
                unknown.add(tp)
            else:
                by_leader.setdefault(leader, set()).add(tp)
        for leader, leader_tps in by_leader.items():
            self._queues.setdefault(leader, []).append((job, frozenset(leader_tps)))
            if leader not in self._wake:
                self._wake[leader] = trio.Event()
                self.service.spawn(self._sender, leader)
            self._wake[leader].set()
        if unknown:
            self.service.spawn(self._retry_later, job, unknown)

    async def _retry_later(self, job: MarkerJob, tps: set[TopicPartition]) -> None:
        await trio.sleep(RETRY_BACKOFF_S)
        if self.jobs.get(job.transactional_id) is not job:
            return
        if not job.still_coordinated(self._coordinator):
            self._forget(job)
            return
        self._route(job, tps & job.remaining)
        self._maybe_complete(job)

    # -- sending --------------------------------------------------------------------------------
    async def _sender(self, leader: int) -> None:
        while True:
            await self._wake[leader].wait()
            self._wake[leader] = trio.Event()
            batch = [(j, tps) for j, tps in self._queues.pop(leader, []) if not j.cancelled]
            if not batch:
                continue
            try:
                results = await self._deliver(leader, batch)
            except PeerUnavailable as e:
                log.info("transaction markers to broker %d not delivered: %s", leader, e)
                results = [dict.fromkeys(tps, ErrorCode.network_exception) for _, tps in batch]
            except Exception:
                log.exception("transaction markers to broker %d failed", leader)
                results = [dict.fromkeys(tps, ErrorCode.unknown_server_error) for _, tps in batch]
            for (job, tps), errors in zip(batch, results, strict=True):
                self._on_results(job, tps, errors)

    def _on_results(
        self, job: MarkerJob, tps: frozenset[TopicPartition], errors: dict[TopicPartition, int]
    ) -> None:
        retry = set()
        for tp in sorted(tps):
            error = ErrorCode(errors.get(tp, ErrorCode.unknown_server_error))
            if error == ErrorCode.network_exception:
                # disconnected: retried with the leader looked up again, as Kafka does
                outcome = (
                    Outcome.RETRY if job.still_coordinated(self._coordinator) else Outcome.CANCEL
                )
            else:
                outcome = job.on_marker_result(self._coordinator, tp, error)
            if outcome == Outcome.CANCEL:
                self._forget(job)
                return
            if outcome == Outcome.RETRY:
                retry.add(tp)
        if retry:
            self.service.spawn(self._retry_later, job, retry)
        else:
            self._maybe_complete(job)

    async def _deliver(self, leader: int, batch: Batch) -> list[dict[TopicPartition, int]]:
        markers = [
            TxnMarker(
                j.producer_id,
                j.producer_epoch,
                j.coordinator_epoch,
                j.commit,
                sorted(tps),
                j.transaction_version,
            )
            for j, tps in batch
        ]
        broker = self.service.broker
        if leader == broker.broker_id:
            return list(await write_txn_markers(broker, markers))
        # v2 (the markers' transaction version) only when a marker needs it, so that a broker
        # of the v1 line still takes the others
        req = wtm_req if any(m.transaction_version >= 2 for m in markers) else wtm_req_v1
        request = req.WriteTxnMarkersRequest(
            markers=tuple(
                build(
                    req.WritableTxnMarker,
                    producer_id=m.producer_id,
                    producer_epoch=m.producer_epoch,
                    transaction_result=m.committed,
                    topics=tuple(
                        req.WritableTxnMarkerTopic(name=topic, partition_indexes=tuple(ps))
                        for topic, ps in _by_topic(m.partitions).items()
                    ),
                    coordinator_epoch=m.coordinator_epoch,
                    transaction_version=m.transaction_version,
                )
                for m in markers
            )
        )
        # the leader waits up to request.timeout.ms for its ISR before it answers
        timeout = broker.config.request_timeout_ms / 1000 + 5
        response = await self.service.marker_peers.request(leader, request, timeout)
        answers = list(response.markers)
        if len(answers) != len(markers):
            by_pid = {a.producer_id: a for a in answers}
            answers = [by_pid.get(m.producer_id) for m in markers]
        out: list[dict[TopicPartition, int]] = []
        for answer in answers:
            errors: dict[TopicPartition, int] = {}
            for topic in answer.topics if answer is not None else ():
                for p in topic.partitions:
                    errors[(topic.name, p.partition_index)] = p.error_code
            out.append(errors)
        return out

    # -- completion -----------------------------------------------------------------------------
    def _forget(self, job: MarkerJob) -> None:
        job.cancelled = True
        if self.jobs.get(job.transactional_id) is job:
            del self.jobs[job.transactional_id]

    def _maybe_complete(self, job: MarkerJob) -> None:
        if job.finished and self.jobs.get(job.transactional_id) is job:
            del self.jobs[job.transactional_id]
            self.service.spawn(self._complete, job)

    async def _complete(self, job: MarkerJob) -> None:
        while True:
            err = await self.service.write(
                job.complete, retry_on=frozenset({ErrorCode.coordinator_not_available})
            )
            if err != ErrorCode.coordinator_not_available:
                break
            await trio.sleep(RETRY_BACKOFF_S)
        if err:
            log.info(
                "transactional.id=%s completion not written: %s",
                job.transactional_id,
                ErrorCode(err).name,
            )
        else:
            log.debug(
                "transactional.id=%s %s",
                job.transactional_id,
                "committed" if job.commit else "aborted",
            )


def _by_topic(partitions: list[TopicPartition]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for topic, p in partitions:
        out.setdefault(topic, []).append(p)
    return out
