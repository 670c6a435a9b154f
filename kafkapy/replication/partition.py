"""One partition's replication state on one broker (Kafka's Partition, ZooKeeper-era ISR rules),
sans-io: the server feeds it partition states from ZooKeeper, follower fetches and the clock, and
asks it for the high watermark and for ISR changes to write.

Leader side:
* each follower's log end offset is the offset of its last fetch; ``last_caught_up_ms`` is the
  last time it had fetched everything the leader had (or everything it had at the follower's
  previous fetch) — Kafka's rule, so a follower under steady load is not dropped;
* high watermark = the smallest log end offset in the ISR (the leader's own included); it never
  moves backwards and stays put until every ISR member fetched once under this leader;
* shrink: an ISR follower not caught up for more than replica.lag.time.max.ms leaves the ISR;
* expand: a follower whose log end offset reached the high watermark and the start of the
  current leader epoch joins it.
The ISR in memory changes only once the leader's conditional write to the state znode succeeded
(``isr_written``); until then the old ISR decides the high watermark.

``replication_outcome`` is Kafka's checkEnoughReplicasReachOffset: how a write waiting for the
ISR (acks=all) ends, or None while it must wait.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from kafkapy.protocol.errors import ErrorCode

UNKNOWN = -1


@dataclass(slots=True)
class FollowerState:
    log_end_offset: int = UNKNOWN
    last_caught_up_ms: int = 0
    last_fetch_ms: int = 0
    last_fetch_leader_leo: int = UNKNOWN


@dataclass(slots=True)
class PartitionReplica:
    topic: str
    partition: int
    broker_id: int
    replicas: list[int] = field(default_factory=list)
    leader: int = -1
    leader_epoch: int = -1
    isr: list[int] = field(default_factory=list)
    zk_version: int = -1
    controller_epoch: int = 0
    epoch_start_offset: int = 0
    followers: dict[int, FollowerState] = field(default_factory=dict)
    isr_change_pending: bool = False

    @property
    def is_leader(self) -> bool:
        return self.leader == self.broker_id

    # -- state from ZooKeeper ------------------------------------------------------------------
    def apply_state(
        self,
        leader: int,
        leader_epoch: int,
        isr: list[int],
        zk_version: int,
        controller_epoch: int,
        replicas: list[int],
        log_end_offset: int,
        now_ms: int,
    ) -> str:
        """Take a partition state read from ZooKeeper. Returns "leader" (became leader or a new
        epoch as leader), "follower" (new leader elsewhere, or a new epoch), "update" (same
        leader and epoch: ISR or version change) or "stale" (an older epoch: ignored)."""
        self.replicas = list(replicas)
        if leader_epoch < self.leader_epoch:
            return "stale"
        if leader_epoch == self.leader_epoch and leader == self.leader:
            if zk_version >= self.zk_version:
                self.isr = list(isr)
                self.zk_version = zk_version
                self.controller_epoch = controller_epoch
                self.isr_change_pending = False
            return "update"
        self.leader, self.leader_epoch = leader, leader_epoch
        self.isr, self.zk_version, self.controller_epoch = list(isr), zk_version, controller_epoch
        self.isr_change_pending = False
        if leader == self.broker_id:
            self.epoch_start_offset = log_end_offset
            self.followers = {
                b: FollowerState(last_caught_up_ms=now_ms if b in isr else 0)
                for b in replicas
                if b != self.broker_id
            }
            return "leader"
        self.followers = {}
        return "follower"

    # -- leader side ---------------------------------------------------------------------------
    def on_follower_fetch(
        self, replica_id: int, fetch_offset: int, leader_leo: int, now_ms: int
    ) -> None:
        f = self.followers.get(replica_id)
        if f is None:
            f = self.followers[replica_id] = FollowerState()
        if fetch_offset >= leader_leo:
            f.last_caught_up_ms = max(f.last_caught_up_ms, now_ms)
        elif f.last_fetch_leader_leo != UNKNOWN and fetch_offset >= f.last_fetch_leader_leo:
            f.last_caught_up_ms = max(f.last_caught_up_ms, f.last_fetch_ms)
        f.log_end_offset = fetch_offset
        f.last_fetch_leader_leo = leader_leo
        f.last_fetch_ms = now_ms

    def high_watermark(self, leader_leo: int, current_hw: int) -> int:
        """The high watermark the ISR allows (never below ``current_hw``)."""
        lowest = leader_leo
        for b in self.isr:
            if b == self.broker_id:
                continue
            f = self.followers.get(b)
            if f is None or f.log_end_offset == UNKNOWN:
                return current_hw
            lowest = min(lowest, f.log_end_offset)
        return max(lowest, current_hw)

    def isr_to_expand(
        self, current_hw: int, live: Collection[int] | None = None
    ) -> list[int] | None:
        """The ISR with caught-up followers added; only registered brokers join (a broker in
        controlled shutdown has unregistered)."""
        if not self.is_leader or self.isr_change_pending:
            return None
        add = [
            b
            for b, f in sorted(self.followers.items())
            if b not in self.isr
            and b in self.replicas
            and f.log_end_offset != UNKNOWN
            and f.log_end_offset >= current_hw
            and f.log_end_offset >= self.epoch_start_offset
            and (live is None or b in live)
        ]
        if not add:
            return None
        return [b for b in self.replicas if b in self.isr or b in add]

    def isr_to_shrink(self, now_ms: int, lag_max_ms: int, leader_leo: int) -> list[int] | None:
        if not self.is_leader or self.isr_change_pending:
            return None
        out = []
        for b in self.isr:
            if b == self.broker_id:
                continue
            f = self.followers.get(b)
            caught = f.last_caught_up_ms if f is not None else 0
            lagging = f is None or f.log_end_offset < leader_leo
            if lagging and now_ms - caught > lag_max_ms:
                out.append(b)
        if not out:
            return None
        return [b for b in self.isr if b not in out]

    def isr_written(self, isr: list[int], zk_version: int) -> None:
        self.isr = list(isr)
        self.zk_version = zk_version
        self.isr_change_pending = False


def replication_outcome(
    leader_epoch: int | None,
    isr_size: int,
    high_watermark: int,
    epoch: int,
    required_offset: int,
    min_isr: int,
) -> ErrorCode | None:
    """Kafka's checkEnoughReplicasReachOffset for a write made under ``epoch`` that needs the
    high watermark at ``required_offset`` (its last offset + 1); None while it must wait.
    ``leader_epoch`` is this broker's current epoch as leader (None: not the leader)."""
    if leader_epoch is None or leader_epoch != epoch:
        return ErrorCode.not_leader_or_follower
    if high_watermark >= required_offset:
        if isr_size < min_isr:
            return ErrorCode.not_enough_replicas_after_append
        return ErrorCode.none
    return None
