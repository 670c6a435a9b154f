"""ISR changes of the partitions this broker leads, written to ZooKeeper (Kafka's ZkIsrManager and
ReplicaManager's isr-expiration task, ZooKeeper-era).

The decisions are kafkapy.replication.partition.PartitionReplica's (``isr_to_expand`` after a
follower's fetch, ``isr_to_shrink`` every replica.lag.time.max.ms / 2); this module carries them
out: the leader writes the new ISR to the partition's state znode with a conditional write (its
last known znode version), in a worker thread, one write per partition at a time
(``isr_change_pending``). Only once the write succeeded does the ISR in memory change
(``isr_written``) and the high watermark move; a lost race (another writer changed the znode)
re-reads the topic (the replica manager's sync), any other store error leaves it to the next
decision.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import trio

from kafkapy.metadata.errors import BadVersionError, NoNodeError, StoreError
from kafkapy.metadata.models import PartitionState
from kafkapy.replication.partition import PartitionReplica

if TYPE_CHECKING:
    from .replica_manager import ReplicaManager

log = logging.getLogger("kafkapy.replica_manager")


class ZkIsrManager:
    def __init__(self, manager: ReplicaManager) -> None:
        self.manager = manager

    def submit(self, rp: PartitionReplica, isr: list[int]) -> None:
        """Write ``isr`` as the partition's new ISR, unless a write of it is under way."""
        nursery = self.manager._nursery
        if nursery is None or rp.isr_change_pending:
            return
        rp.isr_change_pending = True
        nursery.start_soon(self._write, rp, isr)

    async def _write(self, rp: PartitionReplica, isr: list[int]) -> None:
        m = self.manager
        cluster, logs = m.cluster, m.broker.logs
        assert cluster is not None and logs is not None  # ZooKeeper mode, started
        epoch, version = rp.leader_epoch, rp.zk_version
        state = PartitionState(
            leader=m.me,
            leader_epoch=epoch,
            isr=list(isr),
            controller_epoch=rp.controller_epoch,
        )
        try:
            new = await trio.to_thread.run_sync(
                cluster.update_partition_state, rp.topic, rp.partition, state, version
            )
        except (BadVersionError, NoNodeError):
            log.info("%s-%d: ISR update to %s lost a race; re-reading", rp.topic, rp.partition, isr)
            rp.isr_change_pending = False
            m.topic_changed(rp.topic)
            return
        except StoreError as e:
            log.warning("%s-%d: ISR update failed: %s", rp.topic, rp.partition, e)
            rp.isr_change_pending = False
            return
        if rp.leader_epoch == epoch and rp.is_leader:
            log.info("%s-%d: ISR %s -> %s", rp.topic, rp.partition, rp.isr, isr)
            rp.isr_written(isr, new.zk_version)
            plog = logs.get_log(rp.topic, rp.partition)
            if plog is not None:
                m.advance_hw(rp, plog)
        else:
            rp.isr_change_pending = False
        m.broker.appended.notify((rp.topic, rp.partition))

    async def shrink_loop(self) -> None:
        """Every replica.lag.time.max.ms / 2: drop the followers that fell behind."""
        m = self.manager
        interval = max(m.lag_ms / 2000, 0.05)
        while True:
            await trio.sleep(interval)
            logs = m.broker.logs
            assert logs is not None
            now = m.now_ms()
            for (topic, p), rp in list(m.partitions.items()):
                if not rp.is_leader:
                    continue
                plog = logs.get_log(topic, p)
                if plog is None or plog.offline:
                    continue
                shrink = rp.isr_to_shrink(now, m.lag_ms, plog.log_end_offset)
                if shrink is not None:
                    self.submit(rp, shrink)
