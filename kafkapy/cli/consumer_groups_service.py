"""What `kafkapy consumer-groups` does against a cluster, through confluent-kafka's AdminClient:
look groups, committed offsets and log offsets up; print the --describe tables; plan and apply
--reset-offsets; delete groups (--delete) and committed offsets (--delete-offsets). Failures
that Kafka's tool reports and goes on from set ``failed`` (exit status 1)."""

from __future__ import annotations

import sys
import time

from kafkapy.cli.common import (
    CliError,
    admin_client,
    kafka_error_message,
    load_properties,
    result,
)
from kafkapy.cli.consumer_groups_input import (
    parse_datetime_ms,
    parse_duration_ms,
    parse_reset_csv,
    split_topic_args,
)
from kafkapy.cli.consumer_groups_output import (
    MISSING,
    Member,
    Row,
    export_csv,
    members_table,
    offsets_table,
    reset_table,
    state_table,
)
from kafkapy.cli.offset_delete import error_message, offset_delete

# confluent-kafka ConsumerGroupState names -> Kafka's GroupState names
STATE_NAMES = {
    "UNKNOWN": "Unknown",
    "PREPARING_REBALANCING": "PreparingRebalance",
    "COMPLETING_REBALANCING": "CompletingRebalance",
    "STABLE": "Stable",
    "DEAD": "Dead",
    "EMPTY": "Empty",
    "ASSIGNING": "Assigning",
    "RECONCILING": "Reconciling",
}

class ConsumerGroupService:
    def __init__(self, opts) -> None:
        self.opts = opts
        self.timeout = opts.timeout / 1000.0
        self.admin = admin_client(opts.bootstrap_server, load_properties(opts.command_config))

    # --- lookups
    def list_groups(self) -> list[tuple[str, str]]:
        res = result(self.admin.list_consumer_groups(request_timeout=self.timeout))
        if res.errors and not res.valid:
            raise CliError(kafka_error_message(res.errors[0]))
        out = []
        for g in res.valid:
            state = STATE_NAMES.get(getattr(g.state, "name", ""), "Unknown")
            out.append((g.group_id, state))
        return out

    def group_ids(self) -> list[str]:
        if self.opts.all_groups:
            return sorted(g for g, _ in self.list_groups())
        return list(self.opts.group or [])

    def describe(self, group: str):
        from confluent_kafka import KafkaError, KafkaException

        fut = self.admin.describe_consumer_groups([group], request_timeout=self.timeout)[group]
        try:
            return fut.result()
        except KafkaException as e:
            err = e.args[0] if e.args else None
            if isinstance(err, KafkaError) and err.code() == KafkaError.GROUP_ID_NOT_FOUND:
                return None
            raise CliError(kafka_error_message(e)) from None

    def state_of(self, desc) -> str:
        if desc is None:
            return "Dead"
        return STATE_NAMES.get(getattr(desc.state, "name", ""), "Unknown")

    def committed(self, group: str) -> dict[tuple[str, int], int]:
        from confluent_kafka import ConsumerGroupTopicPartitions

        futs = self.admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group)], request_timeout=self.timeout
        )
        res = result(futs[group])
        return {
            (tp.topic, tp.partition): tp.offset for tp in res.topic_partitions if tp.offset >= 0
        }

    def partitions_of(self, topics: list[str]) -> dict[str, list[int]]:
        md = self.admin.list_topics(timeout=self.timeout + 10)
        out = {}
        for t in topics:
            tm = md.topics.get(t)
            if tm is None or tm.error is not None:
                raise CliError(f"Topic {t} does not exist")
            out[t] = sorted(tm.partitions)
        return out

    def log_offsets(self, tps: list[tuple[str, int]], spec) -> dict[tuple[str, int], int]:
        from confluent_kafka import KafkaException, TopicPartition

        if not tps:
            return {}
        futs = self.admin.list_offsets(
            {TopicPartition(t, p): spec for t, p in tps}, request_timeout=self.timeout
        )
        out = {}
        for tp, f in futs.items():
            try:
                out[(tp.topic, tp.partition)] = f.result().offset
            except KafkaException:
                pass
        return out

    def log_end(self, tps: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        from confluent_kafka.admin import OffsetSpec

        return self.log_offsets(tps, OffsetSpec.latest())

    def log_start(self, tps: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        from confluent_kafka.admin import OffsetSpec

        return self.log_offsets(tps, OffsetSpec.earliest())

    # --- actions
    def print_state_message(self, group: str, state: str, rows: int) -> bool:
        """Kafka's shouldPrintMemberState: a note for odd states; True if a table follows."""
        if state == "Dead":
            print(f"\nError: Consumer group '{group}' does not exist.", file=sys.stderr)
            self.failed = True
            return False
        if state == "Empty":
            print(f"\nConsumer group '{group}' has no active members.", file=sys.stderr)
        elif state in ("PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling"):
            print(f"\nWarning: Consumer group '{group}' is rebalancing.", file=sys.stderr)
        return rows > 0

    def describe_offsets(self, group: str) -> None:
        desc = self.describe(group)
        state = self.state_of(desc)
        committed = self.committed(group) if desc is not None else {}
        rows: list[Row] = []
        assigned: set[tuple[str, int]] = set()
        members = [m for m in (desc.members if desc else []) if m.assignment.topic_partitions]
        members.sort(key=lambda m: -len(m.assignment.topic_partitions))
        needed = [(tp.topic, tp.partition) for m in members for tp in m.assignment.topic_partitions]
        unassigned = sorted(k for k in committed if k not in set(needed))
        ends = self.log_end(needed + unassigned)
        for m in members:
            tps = sorted((tp.topic, tp.partition) for tp in m.assignment.topic_partitions)
            assigned.update(tps)
            for t, p in tps:
                rows.append(
                    Row(
                        group,
                        t,
                        p,
                        committed.get((t, p)),
                        ends.get((t, p)),
                        m.member_id,
                        m.host,
                        m.client_id,
                    )
                )
        for t, p in unassigned:
            rows.append(
                Row(group, t, p, committed[(t, p)], ends.get((t, p)), MISSING, MISSING, MISSING)
            )
        if self.print_state_message(group, state, len(rows)):
            sys.stdout.write(offsets_table(rows, self.opts.verbose))

    def describe_members(self, group: str) -> None:
        desc = self.describe(group)
        state = self.state_of(desc)
        members = [
            Member(
                group,
                m.member_id,
                m.group_instance_id or "",
                m.host,
                m.client_id,
                [(tp.topic, tp.partition) for tp in m.assignment.topic_partitions],
            )
            for m in (desc.members if desc else [])
        ]
        if self.print_state_message(group, state, len(members)) or state != "Dead":
            sys.stdout.write(members_table(members, self.opts.verbose))

    def describe_state(self, group: str) -> None:
        desc = self.describe(group)
        state = self.state_of(desc)
        if not self.print_state_message(group, state, 1):
            return
        c = desc.coordinator
        coordinator = f"{c.host}:{c.port}  ({c.id})"
        sys.stdout.write(
            state_table(group, coordinator, desc.partition_assignor, state, len(desc.members))
        )

    def partitions_to_reset(self, group: str) -> list[tuple[str, int]]:
        if self.opts.all_topics:
            return sorted(self.committed(group))
        out, plain = split_topic_args(self.opts.topic)
        for t, parts in self.partitions_of(plain).items():
            out.extend((t, p) for p in parts)
        return out

    def clamp(self, requested: dict[tuple[str, int], int]) -> dict[tuple[str, int], int]:
        tps = list(requested)
        starts, ends = self.log_start(tps), self.log_end(tps)
        out = {}
        for tp, off in requested.items():
            if tp in ends and off > ends[tp]:
                off = ends[tp]
            elif tp in starts and off < starts[tp]:
                off = starts[tp]
            out[tp] = off
        return out

    def by_timestamp(self, tps: list[tuple[str, int]], ts: int) -> dict[tuple[str, int], int]:
        from confluent_kafka.admin import OffsetSpec

        found = self.log_offsets(tps, OffsetSpec.for_timestamp(ts))
        missing = [tp for tp in tps if found.get(tp, -1) == -1]
        for t, p in missing:
            print(
                f"\nWarn: Partition {p} from topic {t} is empty. Falling back to latest known "
                "offset."
            )
        found.update(self.log_end(missing))
        return found

    def plan(self, group: str, file_plan) -> dict[tuple[str, int], int]:
        o = self.opts
        tps = self.partitions_to_reset(group) if not o.from_file else []
        existing = {t for t, _ in tps}
        if existing:
            known = self.partitions_of(sorted(existing))
            bad = [f"{t}-{p}" for t, p in tps if p not in known.get(t, [])]
            if bad:
                raise CliError(f'The partitions "{",".join(bad)}" do not exist')
        if o.to_offset is not None:
            return self.clamp({tp: o.to_offset for tp in tps})
        if o.to_earliest:
            return self.log_start(tps)
        if o.to_latest:
            return self.log_end(tps)
        if o.shift_by is not None:
            current = self.committed(group)
            requested = {}
            for t, p in tps:
                if (t, p) not in current:
                    raise CliError(
                        f"Cannot shift offset for partition {t}-{p} since there is no current "
                        "committed offset"
                    )
                requested[(t, p)] = current[(t, p)] + o.shift_by
            return self.clamp(requested)
        if o.to_datetime:
            return self.by_timestamp(tps, parse_datetime_ms(o.to_datetime))
        if o.by_duration:
            return self.by_timestamp(
                tps, int(time.time() * 1000) - parse_duration_ms(o.by_duration)
            )
        if o.from_file:
            if group not in file_plan:
                print(f"\nError: No reset plan for group {group} found.")
                return {}
            return self.clamp(file_plan[group])
        if o.to_current:
            current = self.committed(group)
            have = {tp: current[tp] for tp in tps if tp in current}
            have.update(self.log_end([tp for tp in tps if tp not in current]))
            return have
        raise CliError(
            "Option '[reset-offsets]' requires one of the following scenarios: --to-offset, "
            "--to-earliest, --to-latest, --shift-by, --from-file, --to-datetime, --by-duration, "
            "--to-current"
        )

    def reset(self) -> None:
        from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

        o = self.opts
        if not (o.all_topics or o.topic or o.from_file):
            raise CliError("One of the reset scopes should be defined: --all-topics, --topic.")
        file_plan = {}
        if o.from_file:
            try:
                with open(o.from_file, encoding="utf-8") as f:
                    file_plan = parse_reset_csv(f.read(), self.group_ids())
            except OSError as e:
                raise CliError(f"Cannot read {o.from_file}: {e.strerror}") from None
        plan: dict[str, dict[tuple[str, int], int]] = {}
        for group in self.group_ids():
            state = self.state_of(self.describe(group))
            if state not in ("Empty", "Dead"):
                print(
                    f"\nError: Assignments can only be reset if the group '{group}' is inactive, "
                    f"but the current state is {state}.",
                    file=sys.stderr,
                )
                self.failed = True
                plan[group] = {}
                continue
            offsets = self.plan(group, file_plan)
            if o.execute and offsets:
                tps = [TopicPartition(t, p, off) for (t, p), off in sorted(offsets.items())]
                futs = self.admin.alter_consumer_group_offsets(
                    [ConsumerGroupTopicPartitions(group, tps)], request_timeout=self.timeout
                )
                for f in futs.values():
                    result(f)
            plan[group] = offsets
        if o.export:
            sys.stdout.write(export_csv(plan, len(self.group_ids()) == 1) + "\n")
        else:
            sys.stdout.write(reset_table(plan))

    def delete_groups(self) -> None:
        groups = self.group_ids()
        futs = self.admin.delete_consumer_groups(groups, request_timeout=self.timeout)
        ok, failed = [], []
        for g, f in futs.items():
            try:
                f.result()
                ok.append(g)
            except Exception as e:
                failed.append((g, kafka_error_message(e)))
        if not failed:
            names = ", ".join(f"'{g}'" for g in ok)
            print(f"Deletion of requested consumer groups ({names}) was successful.")
            return
        self.failed = True
        print("\nError: Deletion of some consumer groups failed:")
        for g, err in failed:
            print(f"* Group '{g}' could not be deleted due to: {err}")
        if ok:
            names = ", ".join(f"'{g}'" for g in ok)
            print(f"\nThese consumer groups were deleted successfully: {names}")

    def delete_offsets(self) -> None:
        group = self.group_ids()[0]
        tps, plain = split_topic_args(self.opts.topic)
        results: dict[tuple[str, int], str | None] = {}
        md = self.admin.list_topics(timeout=self.timeout + 10)
        for t in plain:
            tm = md.topics.get(t)
            if tm is None or tm.error is not None:
                results[(t, -1)] = "Error: This server does not host this topic-partition."
                continue
            tps.extend((t, p) for p in sorted(tm.partitions))
        top, per_partition = offset_delete(
            self.opts.bootstrap_server, group, tps, self.timeout,
            load_properties(self.opts.command_config),
        )
        results.update(per_partition)
        if top == 0:
            print(f"Request succeeded for deleting offsets from group {group}.")
        else:
            self.failed = True
            from kafkapy.protocol.errors import ErrorCode

            name = ErrorCode(top).name.upper() if top in ErrorCode._value2member_map_ else top
            if name in (
                "GROUP_SUBSCRIBED_TO_TOPIC",
                "TOPIC_AUTHORIZATION_FAILED",
                "UNKNOWN_TOPIC_OR_PARTITION",
            ):
                print("\nError: Encountered some partition-level error, see the follow-up details.")
            else:
                print(f"\nError: {error_message(top)}")
        tw = max([15] + [len(t) for t, _ in results])
        out = f"\n{'TOPIC':<{tw}} {'PARTITION':<10} {'STATUS':<15}"
        for (t, p), err in sorted(results.items(), key=lambda kv: kv[0][0] + str(kv[0][1])):
            status = "Successful" if err is None else err
            out += f"\n{t:<{tw}} {(str(p) if p >= 0 else MISSING):<10} {status:<15}"
        print(out)
