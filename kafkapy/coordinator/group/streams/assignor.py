"""The streams group's server-side task assignor ("sticky", group.streams.assignors), after
Kafka 4.4's StickyTaskAssignor.

Every task (subtopology, partition) gets one active owner: tasks stay with the member that had
them (the previous target) while that member is below its share (the task count divided by the
member count; one more for as many members as the division leaves over); the rest go to the
least-loaded member, members of the least-loaded process first, so member loads differ by one
at most. Then each task gets up to ``num_standby`` standby replicas, each on
another process than its active task and than the task's other standbys, preferring the member
that had it before and then the least-loaded member; a task with fewer processes available gets
fewer standbys, as Kafka's assignor does. No warm-up tasks are assigned.
"""

from __future__ import annotations

from .model import StreamsMember, TaskKey, TasksTuple

NAME = "sticky"


def assign(
    members: dict[str, StreamsMember],
    tasks_per_subtopology: dict[str, int],
    previous: dict[str, TasksTuple],
    num_standby: int,
) -> dict[str, TasksTuple]:
    out = {mid: TasksTuple() for mid in members}
    if not members:
        return out
    tasks: list[TaskKey] = [
        (s, p) for s in sorted(tasks_per_subtopology) for p in range(tasks_per_subtopology[s])
    ]
    load = dict.fromkeys(members, 0)
    process_load: dict[str, int] = {}
    for m in members.values():
        process_load.setdefault(m.process_id, 0)

    def give(mid: str, task: TaskKey, standby: bool) -> None:
        target = out[mid].standby if standby else out[mid].active
        target.setdefault(task[0], set()).add(task[1])
        load[mid] += 1
        process_load[members[mid].process_id] += 1

    def least_loaded(candidates: list[str]) -> str:
        return min(candidates, key=lambda m: (load[m], process_load[members[m].process_id], m))

    # active tasks: sticky up to the member's share (tasks // members, one more for as many
    # members as the division leaves over), then the least loaded
    base, extra = divmod(len(tasks), len(members))
    previous_active = {
        (s, p): mid
        for mid, t in previous.items()
        if mid in members
        for s, ps in t.active.items()
        for p in ps
    }
    unassigned = []
    for task in tasks:
        mid = previous_active.get(task)
        if mid is not None and load[mid] < base:
            give(mid, task, False)
        elif mid is not None and load[mid] == base and extra > 0:
            extra -= 1
            give(mid, task, False)
        else:
            unassigned.append(task)
    for task in unassigned:
        give(least_loaded(list(members)), task, False)

    # standby tasks: on other processes than the active task and its other standbys
    if num_standby > 0:
        previous_standby: dict[TaskKey, set[str]] = {}
        for mid, t in previous.items():
            if mid in members:
                for s, ps in t.standby.items():
                    for p in ps:
                        previous_standby.setdefault((s, p), set()).add(mid)
        owner = {(s, p): mid for mid, t in out.items() for s, ps in t.active.items() for p in ps}
        for task in tasks:
            used = {members[owner[task]].process_id}
            for _ in range(num_standby):
                candidates = [m for m in members if members[m].process_id not in used]
                if not candidates:
                    break
                sticky = [m for m in candidates if m in previous_standby.get(task, ())]
                mid = least_loaded(sticky or candidates)
                give(mid, task, True)
                used.add(members[mid].process_id)
    return out
