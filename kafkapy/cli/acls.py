"""`kafkapy acls` (kafka-acls.sh): add, remove and list ACLs through the brokers, as Kafka 3.9's
AclCommand does with --bootstrap-server.

Resources: --topic, --group, --transactional-id (each repeatable, ``*`` for all), --cluster, with
--resource-pattern-type literal (default) or prefixed; listing and removing also take any and
match. ACL entries: every --allow-principal (and --deny-principal) with every --operation (default
All) from every --allow-host (--deny-host; default ``*``). --producer stands for WRITE, DESCRIBE
and CREATE on the topics and WRITE, DESCRIBE on the transactional ids (--idempotent adds
IDEMPOTENT_WRITE on the cluster); --consumer for READ, DESCRIBE on the topics and READ on the
groups. Operations a resource type does not support are refused before anything is sent.

Output is Kafka's: ``Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=t,
patternType=LITERAL)`:`` then one tab-indented ``(principal=User:alice, host=*, operation=READ,
permissionType=ALLOW)`` line per entry; --list prints ``Current ACLs for resource `...`:`` blocks
(per --principal: ``ACLs for principal `User:alice``` first). --remove asks for confirmation
unless --force. Failures print ``Error while executing ACL command: <reason>`` and exit 1.
--command-config takes the Java client's properties (security settings included).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from typing import Any

from kafkapy.cli.common import (
    CliError,
    ToolParser,
    admin_client,
    kafka_error_message,
    load_properties,
)
from kafkapy.metadata.acl_model import (
    CLUSTER_NAME,
    WILDCARD_HOST,
    AccessControlEntry,
    AclOperation,
    PatternType,
    PermissionType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from kafkapy.security.authorizer import SUPPORTED_OPERATIONS

DESCRIPTION = "This tool helps to manage acls on kafka."


def entry_order(e: AccessControlEntry) -> tuple:
    return (e.principal, e.permission_type, e.operation, e.host)


class UsageError(CliError):
    """A usage mistake: the reason, then a pointer to --help (Kafka prints the usage)."""


def build_parser() -> ToolParser:
    p = ToolParser("kafka-acls", DESCRIPTION)
    p.add_argument("--bootstrap-server", metavar="HOST:PORT", help="REQUIRED: the broker(s)")
    p.add_argument("--command-config", metavar="FILE", help="admin client properties file")
    p.add_argument("--authorizer", help="not supported: use --bootstrap-server")
    p.add_argument("--authorizer-properties", action="append", help="not supported")
    for action, text in (("add", "add ACLs"), ("remove", "remove ACLs"), ("list", "list ACLs")):
        p.add_argument(f"--{action}", action="store_true", help=text)
    p.add_argument("--topic", action="append", help="topic ('*' for all topics)")
    p.add_argument("--group", action="append", help="consumer group ('*' for all groups)")
    p.add_argument("--transactional-id", action="append", help="transactional id ('*' for all)")
    p.add_argument("--cluster", action="store_true", help="the cluster resource")
    p.add_argument("--delegation-token", action="append", help="not supported by this client")
    p.add_argument("--user-principal", action="append", help="not supported by this client")
    p.add_argument(
        "--resource-pattern-type", default="literal",
        help="literal (default) or prefixed; listing and removing also any or match",
    )
    p.add_argument("--operation", action="append", help="Read, Write, Create, Describe, ... (All)")
    p.add_argument("--allow-principal", action="append", help="principal as Type:name")
    p.add_argument("--deny-principal", action="append", help="principal as Type:name")
    p.add_argument("--allow-host", action="append", help="host of --allow-principal (*)")
    p.add_argument("--deny-host", action="append", help="host of --deny-principal (*)")
    p.add_argument("--principal", action="append", help="with --list: only this principal's ACLs")
    p.add_argument("--producer", action="store_true", help="producer role ACLs")
    p.add_argument("--consumer", action="store_true", help="consumer role ACLs")
    p.add_argument("--idempotent", action="store_true", help="with --producer: IdempotentWrite")
    p.add_argument("--force", action="store_true", help="do not ask before removing")
    return p


# -- options -> patterns and entries ---------------------------------------------------------------


def check_args(o: Any) -> None:
    """Kafka's AclCommandOptions.checkArgs."""
    if o.authorizer or o.authorizer_properties:
        raise UsageError("--authorizer and --authorizer-properties are not supported (they are "
                         "deprecated in Kafka); use --bootstrap-server")
    if not o.bootstrap_server:
        raise UsageError("Missing required argument \"[bootstrap-server]\"")
    if sum((o.add, o.remove, o.list)) != 1:
        raise UsageError("Command must include exactly one action: --list, --add, --remove. ")
    if o.delegation_token or o.user_principal:
        raise UsageError("--delegation-token and --user-principal are not supported by this tool")
    if o.list and (o.producer or o.consumer or o.allow_host or o.allow_principal or o.deny_host
                   or o.deny_principal):
        raise UsageError("Option \"[list]\" can't be used with option \"[producer, consumer, "
                         "allow-host, allow-principal, deny-host, deny-principal]\"")
    if (o.producer or o.consumer) and (o.operation or o.deny_principal or o.deny_host):
        role = "producer" if o.producer else "consumer"
        raise UsageError(f"Option \"[{role}]\" can't be used with option \"[operation, "
                         "deny-principal, deny-host]\"")
    if o.principal and not o.list:
        raise UsageError("The --principal option is only available if --list is set")
    if o.producer and not o.topic:
        raise UsageError("With --producer you must specify a --topic")
    if o.idempotent and not o.producer:
        raise UsageError("The --idempotent option is only available if --producer is set")
    if o.consumer and (not o.topic or not o.group
                       or (not o.producer and (o.cluster or o.transactional_id))):
        raise UsageError("With --consumer you must specify a --topic and a --group and no "
                         "--cluster or --transactional-id option should be specified.")


def pattern_type(o: Any) -> PatternType:
    value = PatternType.parse(o.resource_pattern_type)
    if value == PatternType.UNKNOWN:
        raise UsageError(f"Unknown resource-pattern-type: {o.resource_pattern_type}")
    return value


def principal(text: str) -> str:
    kind, sep, name = text.strip().partition(":")
    if not sep or not kind or not name:
        raise CliError(f"expected a string in format principalType:principalName but got {text}")
    return f"{kind}:{name}"


def resource_filters(o: Any, required: bool = True) -> list[ResourcePatternFilter]:
    pt = pattern_type(o)
    out = [ResourcePatternFilter(ResourceType.TOPIC, t.strip(), pt) for t in o.topic or ()]
    if pt == PatternType.LITERAL and (o.cluster or o.idempotent):
        out.append(ResourcePatternFilter(ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL))
    out += [ResourcePatternFilter(ResourceType.GROUP, g.strip(), pt) for g in o.group or ()]
    out += [ResourcePatternFilter(ResourceType.TRANSACTIONAL_ID, t, pt)
            for t in o.transactional_id or ()]
    out = list(dict.fromkeys(out))
    if not out and required:
        raise UsageError("You must provide at least one resource: --topic <topic> or --cluster or "
                         "--group <group> or --delegation-token <Delegation Token ID>")
    return out


def entries(o: Any, operations: set[AclOperation]) -> set[AccessControlEntry]:
    """Every (principal, operation, host) for the allowed and the denied principals."""
    out = set()
    for principals, hosts, perm in (
        (o.allow_principal, o.allow_host, PermissionType.ALLOW),
        (o.deny_principal, o.deny_host, PermissionType.DENY),
    ):
        for who in principals or ():
            for op in operations:
                for host in [h.strip() for h in hosts] if hosts else [WILDCARD_HOST]:
                    out.add(AccessControlEntry(principal(who), host, op, perm))
    return out


def filters_to_entries(o: Any) -> dict[ResourcePatternFilter, set[AccessControlEntry]]:
    """Kafka's getResourceFilterToAcls: the entries to add or remove, per resource filter."""
    Op, RT = AclOperation, ResourceType
    out: dict[ResourcePatternFilter, set[AccessControlEntry]] = {}
    filters = resource_filters(o)
    if not o.producer and not o.consumer:
        ops = {Op.parse(x) for x in o.operation or ["All"]}
        out = {f: entries(o, ops) for f in filters}
    if o.producer:
        for f in filters:
            if f.resource_type == RT.TOPIC:
                out[f] = entries(o, {Op.WRITE, Op.DESCRIBE, Op.CREATE})
            elif f.resource_type == RT.TRANSACTIONAL_ID:
                out[f] = entries(o, {Op.WRITE, Op.DESCRIBE})
            elif f.resource_type == RT.CLUSTER and o.idempotent:
                out[f] = entries(o, {Op.IDEMPOTENT_WRITE})
    if o.consumer:
        for f in filters:
            if f.resource_type == RT.TOPIC:
                out[f] = out.get(f, set()) | entries(o, {Op.READ, Op.DESCRIBE})
            elif f.resource_type == RT.GROUP:
                out[f] = out.get(f, set()) | entries(o, {Op.READ})
    for f, acls in out.items():
        valid = SUPPORTED_OPERATIONS[f.resource_type] | {Op.ALL}
        if any(e.operation not in valid for e in acls):
            names = ", ".join(sorted(op.kafka_name for op in valid))
            raise UsageError(
                f"ResourceType {f.resource_type.name} only supports operations {names}"
            )
    return out


# -- the admin client ------------------------------------------------------------------------------


def _binding(pattern: ResourcePattern | ResourcePatternFilter, e: Any) -> Any:
    """A confluent-kafka AclBinding (or filter): its enums have Kafka's codes."""
    from confluent_kafka import admin as ck

    cls = ck.AclBinding if isinstance(pattern, ResourcePattern) else ck.AclBindingFilter
    return cls(
        ck.ResourceType(int(pattern.resource_type)), pattern.name,
        ck.ResourcePatternType(int(pattern.pattern_type)), e.principal, e.host,
        ck.AclOperation(int(e.operation)), ck.AclPermissionType(int(e.permission_type)),
    )


ANY_ENTRY = AccessControlEntry(None, None, AclOperation.ANY, PermissionType.ANY)  # type: ignore[arg-type]


def _wait(futures: Any) -> list[Any]:
    from confluent_kafka import KafkaException

    out = []
    for f in futures:
        try:
            got = f.result(30)
        except KafkaException as e:
            raise CliError(kafka_error_message(e)) from None
        out.extend(got or ())
    return out


def _block(title: str, acls: set[AccessControlEntry]) -> str:
    body = "\n".join("\t" + str(e) for e in sorted(acls, key=entry_order))
    return f"{title}: \n {body} \n"


def add(admin: Any, o: Any) -> None:
    if not pattern_type(o).specific:
        raise UsageError(f"A '--resource-pattern-type' value of '{pattern_type(o).name}' is not "
                         "valid when adding acls.")
    todo = filters_to_entries(o)
    if any(not acls for acls in todo.values()):
        raise UsageError("You must specify one of: --allow-principal, --deny-principal when "
                         "trying to add ACLs.")
    for f, acls in sorted(todo.items(), key=lambda kv: str(kv[0])):
        pattern = ResourcePattern(f.resource_type, str(f.name), f.pattern_type)
        print(_block(f"Adding ACLs for resource `{pattern}`", acls))
        _wait(admin.create_acls([_binding(pattern, e) for e in acls]).values())


def remove(admin: Any, o: Any) -> None:
    for f, acls in sorted(filters_to_entries(o).items(), key=lambda kv: str(kv[0])):
        if acls:
            question = ("Are you sure you want to remove ACLs: \n "
                        + "\n".join("\t" + str(e) for e in sorted(acls, key=entry_order))
                        + f" \n from resource filter `{f}`? (y/n)")
        else:
            question = f"Are you sure you want to delete all ACLs for resource filter `{f}`? (y/n)"
        if not o.force:
            print(question)
            if sys.stdin.readline().strip().lower() != "y":
                continue
        wanted = [_binding(f, e) for e in acls] if acls else [_binding(f, ANY_ENTRY)]
        _wait(admin.delete_acls(wanted).values())


def current(admin: Any, o: Any) -> dict[ResourcePattern, set[AccessControlEntry]]:
    """The ACLs of the resources given (all when none is), by resource pattern."""
    filters = resource_filters(o, required=False) or [
        ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY)
    ]
    found: dict[ResourcePattern, set[AccessControlEntry]] = defaultdict(set)
    for f in filters:
        for b in _wait([admin.describe_acls(_binding(f, ANY_ENTRY))]):
            pattern = ResourcePattern(ResourceType(b.restype.value), b.name,
                                      PatternType(b.resource_pattern_type.value))
            found[pattern].add(AccessControlEntry(
                b.principal, b.host, AclOperation(b.operation.value),
                PermissionType(b.permission_type.value)))
    return found


def list_acls(admin: Any, o: Any) -> None:
    found = current(admin, o)
    order = sorted(found, key=lambda p: (p.resource_type, p.pattern_type, p.name))
    groups: list[tuple[str | None, dict]] = [(None, found)]
    if o.principal:
        groups = []
        for who in o.principal:
            name = principal(who)
            mine = {p: {e for e in found[p] if e.principal == name} for p in order}
            groups.append((name, {p: acls for p, acls in mine.items() if acls}))
    for name, acls_of in groups:
        if name is not None:
            print(f"ACLs for principal `{name}`")
        for pattern in order:
            if pattern in acls_of:
                print(_block(f"Current ACLs for resource `{pattern}`", acls_of[pattern]))


def main(argv: list[str]) -> int:
    o = build_parser().parse_args(argv)
    check_args(o)
    try:
        if o.list:  # mistakes are reported before connecting
            resource_filters(o, required=False)
        else:
            filters_to_entries(o)
        admin = admin_client(o.bootstrap_server, load_properties(o.command_config))
        if o.add:
            add(admin, o)
        elif o.remove:
            remove(admin, o)
        else:
            list_acls(admin, o)
    except UsageError:
        raise
    except CliError as e:
        print(f"Error while executing ACL command: {e}")
        return 1
    return 0
