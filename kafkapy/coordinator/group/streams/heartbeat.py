"""StreamsGroupHeartbeat in the group coordinator (sans-io), as Kafka 4.4's
GroupMetadataManager.streamsGroupHeartbeat.

One heartbeat: (1) get or create the group and the member (epoch 0 joins, -1 leaves); (2) the
first member's topology initializes the group's (a later member's equal topology, or an older
epoch, is accepted; a different one is INVALID_REQUEST "Topology updates are not supported
yet."); (3) the topology is configured against the topics (``configure``) whenever the group has
none or the topics it needs changed; (4) the group epoch is bumped when the member is new or
changed, the topics changed, the topology became valid, or the assignment configs changed; a
bumped epoch computes a new target assignment (``assignor``) unless the initial rebalance delay
(group.streams.initial.rebalance.delay.ms, from the first join of an empty group) or the
assignment interval (group.streams.assignment.interval.ms since the last computation) holds it
back (status ASSIGNMENT_DELAYED); (5) the member reconciles towards its target (``reconcile``).

The answer carries the member epoch, the heartbeat interval, the tasks when the member joined or
its tasks changed, the statuses (STALE_TOPOLOGY, MISSING_SOURCE_TOPICS,
INCORRECTLY_PARTITIONED_TOPICS, MISSING_INTERNAL_TOPICS with the internal topics the broker then
creates, SHUTDOWN_APPLICATION, ASSIGNMENT_DELAYED), and the endpoints of every member's tasks for
interactive queries when the member's endpoint epoch is behind.

Timers: ("streams-session", group, member) fences a member that stops heartbeating
(group.streams.session.timeout.ms); ("streams-rebalance", group, member) one that does not revoke
within its rebalance timeout; ("streams-initial", group) ends the initial rebalance delay.
Streams group membership is kept in memory, not in __consumer_offsets (committed offsets are):
after a coordinator move or restart members rejoin (UNKNOWN_MEMBER_ID, GROUP_ID_NOT_FOUND).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from kafkapy.protocol.errors import ErrorCode as E

from ..classic import ClassicGroup, GroupState
from ..state import CoordinatorState
from . import assignor
from .configure import ASSIGNMENT_DELAYED, SHUTDOWN_APPLICATION, STALE_TOPOLOGY, configure_topics
from .model import StreamsGroup, StreamsMember, StreamsTopology, Tasks, TasksTuple
from .reconcile import UnknownMemberState, reconcile
from .request import (
    Endpoint,
    HeartbeatError,
    StreamsHeartbeatRequest,
    StreamsHeartbeatResult,
    validate,
)

log = logging.getLogger("kafkapy.coordinator.group")

DEFAULT_REBALANCE_TIMEOUT_MS = 300_000


def not_a_streams_group(group_id: str) -> HeartbeatError:
    return HeartbeatError(E.group_id_not_found, f"Group {group_id} is not a streams group.")


@dataclass(slots=True)
class StreamsHeartbeat:
    state: CoordinatorState

    # -- the API ---------------------------------------------------------------------------
    def heartbeat(self, r: StreamsHeartbeatRequest, now_ms: int) -> StreamsHeartbeatResult:
        try:
            validate(r)
            err = self.state.group_error(r.group_id)
            if err:
                return StreamsHeartbeatResult(error=err)
            if r.member_epoch < 0:
                return self._leave(r, now_ms)
            return self._heartbeat(r, now_ms)
        except HeartbeatError as e:
            return StreamsHeartbeatResult(error=e.error, message=e.message)
        except Exception as e:  # a bug must not take the broker down: Kafka's answer to one
            log.exception("streams group heartbeat failed group=%s", r.group_id)
            return StreamsHeartbeatResult(error=E.unknown_server_error, message=str(e) or None)

    # -- groups ----------------------------------------------------------------------------
    def group(self, group_id: str, *, create: bool) -> StreamsGroup:
        group = self.state.groups.get(group_id)
        if isinstance(group, StreamsGroup):
            return group
        if group is None or (isinstance(group, ClassicGroup) and group.is_in(GroupState.EMPTY)):
            if not create:
                raise HeartbeatError(E.group_id_not_found, f"Streams group {group_id} not found.")
            streams = StreamsGroup(group_id)
            if group is not None:  # an empty classic group (offsets only) becomes a streams group
                streams.offsets = group.offsets
            self.state.groups[group_id] = streams
            return streams
        if not create:
            raise HeartbeatError(E.group_id_not_found, f"Streams group {group_id} not found.")
        raise not_a_streams_group(group_id)

    # -- a heartbeat of a member -------------------------------------------------------------
    def _heartbeat(self, r: StreamsHeartbeatRequest, now_ms: int) -> StreamsHeartbeatResult:
        cfg = self.state.config
        gid = r.group_id
        joining = r.member_epoch == 0
        if r.instance_id is not None:
            raise HeartbeatError(E.unknown_server_error, "Static members are not supported yet.")
        group = self.group(gid, create=joining)
        if (
            joining
            and r.member_id not in group.members
            and len(group.members) >= cfg.streams_max_size
        ):
            raise HeartbeatError(
                E.group_max_size_reached,
                "The streams group has reached its maximum capacity of "
                f"{cfg.streams_max_size} members.",
            )
        owned = None
        if r.active is not None and r.standby is not None and r.warmup is not None:
            owned = TasksTuple(r.active, r.standby, r.warmup)
        member = group.members.get(r.member_id)
        if member is None:
            if not joining:
                raise HeartbeatError(
                    E.unknown_member_id, f"Member {r.member_id} is not a member of group {gid}."
                )
            member = StreamsMember(r.member_id)
            log.info("member=%s joins streams group=%s", r.member_id, gid)
        else:
            _check_epoch(member, r.member_epoch, owned)
        status: list[tuple[int, str]] = []
        updated = member.copy(
            rack_id=r.rack_id if r.rack_id is not None else member.rack_id,
            rebalance_timeout_ms=(
                r.rebalance_timeout_ms
                if r.rebalance_timeout_ms != -1
                else member.rebalance_timeout_ms
            ),
            topology_epoch=r.topology.epoch if r.topology is not None else member.topology_epoch,
            client_id=r.client_id,
            client_host=r.client_host,
            process_id=r.process_id if r.process_id is not None else member.process_id,
            client_tags=dict(r.client_tags) if r.client_tags is not None else member.client_tags,
            user_endpoint=r.user_endpoint if r.user_endpoint is not None else member.user_endpoint,
        )
        if r.task_offsets is not None:
            updated.task_offsets = dict(r.task_offsets)
        if r.task_end_offsets is not None:
            updated.task_end_offsets = dict(r.task_end_offsets)
        bump = r.member_id not in group.members or updated.metadata() != member.metadata()

        topology = self._topology(group, r.topology)
        if group.topology is not None and updated.topology_epoch < group.topology.epoch:
            status.append(
                (
                    STALE_TOPOLOGY,
                    f"The member's topology epoch {updated.topology_epoch} is behind the group's "
                    f"topology epoch {group.topology.epoch}.",
                )
            )
        metadata_hash = self._metadata_hash(topology)
        configured = group.configured
        if configured is None or metadata_hash != group.metadata_hash or group.topology is None:
            if metadata_hash != group.metadata_hash:
                bump = True
            configured = configure_topics(topology, self._partitions)
        validated = -1
        if configured.is_ready:  # type: ignore[attr-defined]
            validated = topology.epoch
            for tasks in (r.active, r.standby, r.warmup):
                _check_tasks(configured.subtopologies, tasks)  # type: ignore[attr-defined]
        if validated != group.validated_topology_epoch:
            bump = True
        assignment_configs = {
            "num.standby.replicas": str(cfg.streams_setting(gid, "num.standby.replicas"))
        }
        if not bump and assignment_configs != group.last_assignment_configs:
            bump = True

        # from here on the heartbeat succeeds: apply
        group.topology = topology
        group.configured = configured
        group.metadata_hash = metadata_hash
        group.validated_topology_epoch = validated
        was_empty = group.is_empty()
        group.members[updated.member_id] = updated
        if bump:
            # a new group's first epoch is 2: members joining during the initial rebalance
            # delay are at epoch 1 with no tasks, and reconcile to 2 once it ends
            group.group_epoch = 2 if group.group_epoch == 0 else group.group_epoch + 1
            group.last_assignment_configs = assignment_configs
            log.info("streams group=%s epoch bumped to %d", gid, group.group_epoch)
        delay = cfg.streams_setting(gid, "initial.rebalance.delay.ms")
        if was_empty and delay > 0 and ("streams-initial", gid) not in self.state.timers:
            self.state.timers.schedule(
                ("streams-initial", gid),
                now_ms + delay,
                lambda now: self._initial_delay_over(gid, now),
            )
        target_epoch = group.assignment_epoch
        target = group.target.get(updated.member_id, TasksTuple())
        if group.group_epoch > group.assignment_epoch:
            if ("streams-initial", gid) in self.state.timers:
                target_epoch, target = max(1, group.assignment_epoch), TasksTuple()
                status.append((
                    ASSIGNMENT_DELAYED,
                    "Assignment delayed due to the configured initial rebalance delay.",
                ))
            elif not self._may_assign(group, now_ms):
                status.append((
                    ASSIGNMENT_DELAYED,
                    "Assignment delayed due to the configured assignment interval.",
                ))
            else:
                self.update_target(group, now_ms)
                target_epoch = group.assignment_epoch
                target = group.target.get(updated.member_id, TasksTuple())
        try:
            new = reconcile(
                updated,
                target_epoch,
                target,
                owned,
                group.active_owner_process,
                group.standby_processes,
                group.warmup_processes,
            )
        except UnknownMemberState as e:
            raise HeartbeatError(E.fenced_member_epoch, str(e)) from None
        group.members[new.member_id] = new
        if new.state.name == "UNREVOKED_TASKS" and (
            member.state.name != "UNREVOKED_TASKS" or member.member_epoch != new.member_epoch
        ):
            self._schedule_rebalance_timeout(group, new, now_ms)
        elif new.state.name != "UNREVOKED_TASKS":
            self.state.timers.cancel(("streams-rebalance", gid, new.member_id))
        self._schedule_session(gid, new.member_id, now_ms)
        if r.shutdown_application and group.shutdown_requested_by is None:
            group.shutdown_requested_by = r.member_id

        result = StreamsHeartbeatResult(
            member_id=new.member_id,
            member_epoch=new.member_epoch,
            heartbeat_interval_ms=cfg.streams_setting(gid, "heartbeat.interval.ms"),
        )
        if joining or new.assigned != member.assigned:
            result.active = new.assigned.active
            result.standby = new.assigned.standby
            result.warmup = new.assigned.warmup
            if new.user_endpoint is not None:
                group.endpoint_information_epoch += 1
        if group.endpoint_information_epoch != r.endpoint_information_epoch:
            result.partitions_by_endpoint = self._endpoints(group, new)
        result.endpoint_information_epoch = group.endpoint_information_epoch
        if configured.status is not None:  # type: ignore[attr-defined]
            result.status.append(configured.status)  # type: ignore[attr-defined]
            result.to_create = {
                t.name: (t.partitions, t.replication_factor, t.configs)
                for t in configured.to_create.values()  # type: ignore[attr-defined]
            }
        result.status = status + result.status
        if group.shutdown_requested_by is not None:
            result.status.append(
                (
                    SHUTDOWN_APPLICATION,
                    f"Streams group member {group.shutdown_requested_by} encountered a fatal error "
                    "and requested a shutdown for the entire application.",
                )
            )
        return result

    def _topology(self, group: StreamsGroup, topology: StreamsTopology | None) -> StreamsTopology:
        """The group's topology after this heartbeat (Kafka's maybeUpdateTopology): the first
        one sent initializes it; an older epoch keeps the group's; any other difference is
        refused."""
        current = group.topology
        if topology is None:
            if current is None:
                raise HeartbeatError(
                    E.unknown_server_error,
                    "The topology is null and the group topology is also null.",
                )
            return current
        if current is None:
            return topology
        if current.epoch > topology.epoch:
            return current
        if current != topology:
            raise HeartbeatError(E.invalid_request, "Topology updates are not supported yet.")
        return current

    def _partitions(self, topic: str) -> int | None:
        found = self.state.topics.lookup(topic)
        return None if found is None else found[1]

    def _metadata_hash(self, topology: StreamsTopology) -> object:
        out = []
        for name in sorted(topology.required_topics()):
            found = self.state.topics.lookup(name)
            if found is not None:
                out.append((name, found[0], found[1]))
        return tuple(out)

    def _may_assign(self, group: StreamsGroup, now_ms: int) -> bool:
        interval = self.state.config.streams_setting(group.group_id, "assignment.interval.ms")
        return group.assignment_epoch == 0 or now_ms - group.assignment_timestamp_ms >= interval

    def update_target(self, group: StreamsGroup, now_ms: int) -> None:
        """A new target assignment at the group epoch, for every member."""
        configured = group.configured
        tasks = {}
        if configured is not None and configured.is_ready:  # type: ignore[attr-defined]
            tasks = dict(configured.subtopologies)  # type: ignore[attr-defined]
        standby = self.state.config.streams_setting(group.group_id, "num.standby.replicas")
        group.target = assignor.assign(group.members, tasks, group.target, standby)
        group.assignment_epoch = group.group_epoch
        group.assignment_timestamp_ms = now_ms
        log.info(
            "streams group=%s new target assignment at epoch %d", group.group_id, group.group_epoch
        )

    def _initial_delay_over(self, gid: str, now_ms: int) -> None:
        group = self.state.groups.get(gid)
        if (
            isinstance(group, StreamsGroup)
            and group.members
            and group.group_epoch > group.assignment_epoch
        ):
            self.update_target(group, now_ms)

    def _endpoints(self, group: StreamsGroup, member: StreamsMember) -> list[Endpoint]:
        """Each member's endpoint with the input partitions of its active and standby tasks."""
        out: list[Endpoint] = []
        topology = group.topology
        if topology is None:
            return out
        by_id = topology.by_id()
        others = [m for mid, m in group.members.items() if mid != member.member_id] + [member]
        for m in others:
            if m.user_endpoint is None:
                continue

            def partitions(tasks: Tasks) -> dict[str, set[int]]:
                got: dict[str, set[int]] = {}
                for s, ps in tasks.items():
                    sub = by_id.get(s)
                    if sub is None:
                        continue
                    for t in sub.input_topics():
                        n = self._partitions(t) or 0
                        got.setdefault(t, set()).update(p for p in ps if p < n)
                return got

            standby = {**m.assigned.standby}
            for s, ps in m.assigned.warmup.items():
                standby.setdefault(s, set()).update(ps)
            out.append((m.user_endpoint, partitions(m.assigned.active), partitions(standby)))
        return out

    # -- leaving and fencing -------------------------------------------------------------------
    def _leave(self, r: StreamsHeartbeatRequest, now_ms: int) -> StreamsHeartbeatResult:
        group = self.group(r.group_id, create=False)
        if r.shutdown_application and group.shutdown_requested_by is None:
            group.shutdown_requested_by = r.member_id
        if r.instance_id is not None:
            raise HeartbeatError(
                E.unknown_server_error, "Static members are not supported in streams groups."
            )
        if r.member_id not in group.members:
            raise HeartbeatError(
                E.unknown_member_id, f"Member {r.member_id} is not a member of group {r.group_id}."
            )
        log.info("member=%s left streams group=%s", r.member_id, r.group_id)
        self.fence(group, r.member_id, now_ms)
        return StreamsHeartbeatResult(member_id=r.member_id, member_epoch=r.member_epoch)

    def fence(self, group: StreamsGroup, member_id: str, now_ms: int) -> None:
        if group.remove_member(member_id) is None:
            return
        for kind in ("streams-session", "streams-rebalance"):
            self.state.timers.cancel((kind, group.group_id, member_id))
        group.group_epoch += 1
        if not group.members:
            self.state.timers.cancel(("streams-initial", group.group_id))

    def _schedule_session(self, gid: str, mid: str, now_ms: int) -> None:
        timeout = self.state.config.streams_setting(gid, "session.timeout.ms")
        self.state.timers.schedule(
            ("streams-session", gid, mid),
            now_ms + timeout,
            lambda now: self._expired(gid, mid, now),
        )

    def _schedule_rebalance_timeout(
        self, group: StreamsGroup, member: StreamsMember, now_ms: int
    ) -> None:
        gid, mid, epoch = group.group_id, member.member_id, member.member_epoch
        timeout = (
            member.rebalance_timeout_ms
            if member.rebalance_timeout_ms > 0
            else DEFAULT_REBALANCE_TIMEOUT_MS
        )

        def expired(now: int) -> None:
            g = self.state.groups.get(gid)
            if isinstance(g, StreamsGroup):
                m = g.members.get(mid)
                if m is not None and m.member_epoch == epoch:
                    log.info("member=%s of streams group=%s did not revoke in time", mid, gid)
                    self.fence(g, mid, now)

        self.state.timers.schedule(("streams-rebalance", gid, mid), now_ms + timeout, expired)

    def _expired(self, gid: str, mid: str, now_ms: int) -> None:
        group = self.state.groups.get(gid)
        if isinstance(group, StreamsGroup) and mid in group.members:
            log.info("member=%s of streams group=%s fenced: the member session expired", mid, gid)
            self.fence(group, mid, now_ms)


def _check_epoch(member: StreamsMember, epoch: int, owned: TasksTuple | None) -> None:
    """Kafka's throwIfStreamsGroupMemberEpochIsInvalid."""
    if epoch > member.member_epoch:
        raise HeartbeatError(
            E.fenced_member_epoch,
            f"The streams group member has a greater member epoch ({epoch}) than the one known "
            f"by the group coordinator ({member.member_epoch}). The member must abandon all its "
            "partitions and rejoin.",
        )
    if epoch < member.member_epoch:
        if epoch != member.previous_member_epoch or not _contained(owned, member.assigned):
            raise HeartbeatError(
                E.fenced_member_epoch,
                f"The streams group member has a smaller member epoch ({epoch}) than the one known "
                f"by the group coordinator ({member.member_epoch}). The member must abandon all "
                "its partitions and rejoin.",
            )


def _contained(owned: TasksTuple | None, assigned: TasksTuple) -> bool:
    if owned is None:
        return True
    for mine, theirs in (
        (owned.active, assigned.active),
        (owned.standby, assigned.standby),
        (owned.warmup, assigned.warmup),
    ):
        for s, ps in mine.items():
            if not set(ps) <= theirs.get(s, set()):
                return False
    return True


def _check_tasks(subtopologies: dict[str, int], tasks: Tasks | None) -> None:
    """Kafka's throwIfRequestContainsInvalidTasks."""
    if not tasks:
        return
    for s, ps in tasks.items():
        if s not in subtopologies:
            raise HeartbeatError(
                E.invalid_request, f"Subtopology {s} does not exist in the topology."
            )
        n = subtopologies[s]
        for p in sorted(ps):
            if p < 0 or p >= n:
                raise HeartbeatError(
                    E.invalid_request,
                    f"Task {p} for subtopology {s} is invalid. Number of tasks for this "
                    f"subtopology: {n}",
                )
