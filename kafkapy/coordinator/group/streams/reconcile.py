"""A streams group member's next assignment towards its target (Kafka 4.4's streams
CurrentAssignmentBuilder).

A member first gives up what it must revoke: it keeps its epoch, in UNREVOKED_TASKS, until a
heartbeat no longer lists those tasks as owned; then it moves to the target epoch and gets the
tasks that are free. An active task is not free while any member owns it, nor while the member's
own process still holds it as a standby or warm-up; a standby or warm-up task is not free while
the member's process still holds it in any role. A member waiting for such tasks is in
UNRELEASED_TASKS and gets them on a later heartbeat once released.
"""

from __future__ import annotations

from collections.abc import Callable

from .model import MemberState, StreamsMember, Tasks, TasksTuple

IsUnreleased = Callable[[str, int], bool]


class UnknownMemberState(Exception):
    """The member is in a state this coordinator does not know: it must rejoin."""


def _difference(
    current: Tasks, target: Tasks, unreleased: IsUnreleased
) -> tuple[Tasks, Tasks, Tasks, bool]:
    assigned: Tasks = {}
    revoke: Tasks = {}
    pending: Tasks = {}
    blocked = False
    for s in set(current) | set(target):
        have = current.get(s, set())
        want = target.get(s, set())
        keep = have & want
        gone = have - keep
        todo = {p for p in want - keep if not unreleased(s, p)}
        if len(todo) != len(want - keep):
            blocked = True
        if keep:
            assigned[s] = keep
        if gone:
            revoke[s] = gone
        if todo:
            pending[s] = todo
    return assigned, revoke, pending, blocked


def reconcile(
    member: StreamsMember,
    target_epoch: int,
    target: TasksTuple,
    owned: TasksTuple | None,
    active_process: Callable[[str, int], str | None],
    standby_processes: Callable[[str, int], set[str]],
    warmup_processes: Callable[[str, int], set[str]],
) -> StreamsMember:
    """``owned``: the tasks the member reported in this heartbeat (None: not reported)."""
    if member.state == MemberState.STABLE:
        if member.member_epoch == target_epoch:
            return member
        return _next(
            member,
            member.member_epoch,
            target_epoch,
            target,
            owned,
            active_process,
            standby_processes,
            warmup_processes,
        )
    if member.state == MemberState.UNREVOKED_TASKS:
        if owned is None or owned.contains_any(member.pending_revocation):
            return member
        return _next(
            member,
            member.member_epoch + 1,
            target_epoch,
            target,
            owned,
            active_process,
            standby_processes,
            warmup_processes,
        )
    if member.state == MemberState.UNRELEASED_TASKS:
        return _next(
            member,
            member.member_epoch,
            target_epoch,
            target,
            owned,
            active_process,
            standby_processes,
            warmup_processes,
        )
    if owned is None or not owned.is_empty():
        raise UnknownMemberState(
            "The streams group member is in a unknown state. "
            "The member must abandon all its tasks and rejoin."
        )
    return _next(
        member,
        target_epoch,
        target_epoch,
        target,
        owned,
        active_process,
        standby_processes,
        warmup_processes,
    )


def _next(
    member: StreamsMember,
    member_epoch: int,
    target_epoch: int,
    target: TasksTuple,
    owned: TasksTuple | None,
    active_process: Callable[[str, int], str | None],
    standby_processes: Callable[[str, int], set[str]],
    warmup_processes: Callable[[str, int], set[str]],
) -> StreamsMember:
    pid = member.process_id

    def active_unreleased(s: str, p: int) -> bool:
        return (
            active_process(s, p) is not None
            or pid in standby_processes(s, p)
            or pid in warmup_processes(s, p)
        )

    def other_unreleased(s: str, p: int) -> bool:
        return (
            active_process(s, p) == pid
            or pid in standby_processes(s, p)
            or pid in warmup_processes(s, p)
        )

    a_keep, a_rev, a_new, a_blk = _difference(
        member.assigned.active, target.active, active_unreleased
    )
    s_keep, s_rev, s_new, s_blk = _difference(
        member.assigned.standby, target.standby, other_unreleased
    )
    w_keep, w_rev, w_new, w_blk = _difference(
        member.assigned.warmup, target.warmup, other_unreleased
    )
    revoke = TasksTuple(a_rev, s_rev, w_rev)
    keep = TasksTuple(a_keep, s_keep, w_keep)
    new = TasksTuple(a_new, s_new, w_new)
    blocked = a_blk or s_blk or w_blk
    if not revoke.is_empty() and (owned is None or owned.contains_any(revoke)):
        return member.copy(
            state=MemberState.UNREVOKED_TASKS,
            member_epoch=member_epoch,
            previous_member_epoch=member.member_epoch,
            assigned=keep,
            pending_revocation=revoke,
        )
    assigned = keep.merge(new)
    epochs = dict(member.active_epochs)
    for s, ps in new.active.items():
        for p in ps:
            epochs[(s, p)] = target_epoch
    epochs = {k: e for k, e in epochs.items() if k[1] in assigned.active.get(k[0], ())}
    state = MemberState.UNRELEASED_TASKS if blocked else MemberState.STABLE
    return member.copy(
        state=state,
        member_epoch=target_epoch,
        previous_member_epoch=member.member_epoch,
        assigned=assigned,
        pending_revocation=TasksTuple(),
        active_epochs=epochs,
    )
