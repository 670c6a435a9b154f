"""`kafkapy configs` (kafka-configs.sh): describe and alter topic and broker configs.

Users, clients and ips (client quotas, and users' SCRAM credentials) through the brokers:
kafkapy.cli.quota_configs. Users' SCRAM credentials straight into ZooKeeper with --zookeeper:
kafkapy.cli.user_configs.

--describe prints, as Kafka's tool does, `Dynamic configs for topic T are:` (or `All configs ...`
with --all, `Default configs for brokers in the cluster are:` for the cluster-wide broker
defaults) followed by `  name=value sensitive=false synonyms={SOURCE:name=value, ...}` lines.
--alter uses IncrementalAlterConfigs (--add-config k=v,k2=[a,b] SETs, --delete-config k DELETEs)
and prints `Completed updating config for topic T.`
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafkapy.cli.common import (
    CliError,
    ToolParser,
    admin_client,
    load_properties,
    result,
)
from kafkapy.cli.config_args import parse_add_config, parse_delete_config

DESCRIPTION = (
    "This tool helps to manipulate and describe entity config for a topic, client, user, broker, "
    "ip, client-metrics or group"
)

ENTITY_TYPES = ("topics", "brokers", "broker-loggers", "clients", "users", "ips", "groups")
SUPPORTED = ENTITY_TYPES

# Kafka's config source ids (DescribeConfigs v1+) -> ConfigEntry.ConfigSource names
SOURCE_NAMES = {
    0: "UNKNOWN",
    1: "DYNAMIC_TOPIC_CONFIG",
    2: "DYNAMIC_BROKER_CONFIG",
    3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
    4: "STATIC_BROKER_CONFIG",
    5: "DEFAULT_CONFIG",
    6: "DYNAMIC_BROKER_LOGGER_CONFIG",
    7: "DYNAMIC_CLIENT_METRICS_CONFIG",
    8: "DYNAMIC_GROUP_CONFIG",
}
RESOURCE_TYPES = {"topics": 2, "brokers": 4, "broker-loggers": 8, "groups": 32}


@dataclass
class Entry:
    name: str
    value: str | None
    sensitive: bool
    source: str
    synonyms: list[tuple[str, str, str | None]] = field(default_factory=list)


def build_parser() -> ToolParser:
    from kafkapy.cli import quota_configs as qc

    p = ToolParser("kafka-configs", DESCRIPTION)
    p.add_argument("--bootstrap-server", metavar="HOST:PORT", help="the broker(s) to connect to")
    p.add_argument(
        "--bootstrap-controller", metavar="HOST:PORT", help="not supported (no KRaft controllers)"
    )
    p.add_argument(
        "--zookeeper",
        metavar="HOST:PORT[/CHROOT]",
        help="with --entity-type users: SCRAM credentials written to ZooKeeper directly "
        "(how the brokers' own users are created before any broker runs)",
    )
    p.add_argument("--command-config", metavar="FILE", help="admin client properties file")
    p.add_argument("--describe", action="store_true", help="show the configs of the entity")
    p.add_argument("--alter", action="store_true", help="change the configs of the entity")
    p.add_argument(
        "--all", action="store_true", help="with --describe: all configs, not only dynamic ones"
    )
    p.add_argument(
        "--entity-type",
        action="append",
        metavar="TYPE",
        help="topics, brokers, broker-loggers, groups, users, clients or ips",
    )
    p.add_argument(
        "--entity-name",
        action=qc.EntityName,
        metavar="NAME",
        help="topic name, broker id, user, client id, ip (one per --entity-type, in order)",
    )
    p.add_argument(
        "--entity-default",
        action=qc.EntityName,
        nargs=0,
        default=False,
        help="the default entity (brokers, users, clients, ips) in place of an --entity-name",
    )
    qc.add_entity_options(p)
    p.add_argument("--topic", metavar="TOPIC", help="same as --entity-type topics --entity-name")
    p.add_argument("--broker", metavar="ID", help="same as --entity-type brokers --entity-name")
    p.add_argument(
        "--broker-defaults",
        action="store_true",
        help="same as --entity-type brokers --entity-default",
    )
    p.add_argument(
        "--broker-logger", metavar="ID", help="same as --entity-type broker-loggers --entity-name"
    )
    p.add_argument("--group", metavar="GROUP", help="same as --entity-type groups --entity-name")
    p.add_argument(
        "--add-config",
        metavar="K=V,...",
        help="configs to set: k1=v1,k2=[v1,v2] (square brackets group values with commas)",
    )
    p.add_argument("--add-config-file", metavar="FILE", help="properties file of configs to set")
    p.add_argument(
        "--delete-config", action="append", metavar="K,...", help="configs to remove (repeatable)"
    )
    return p


def entity(opts) -> tuple[str, str | None]:
    """(entity type, name or None for all, '' for the default)."""
    pairs: list[tuple[str, str | None]] = []
    if opts.topic:
        pairs.append(("topics", opts.topic))
    if opts.broker:
        pairs.append(("brokers", opts.broker))
    if opts.broker_defaults:
        pairs.append(("brokers", ""))
    if opts.broker_logger:
        pairs.append(("broker-loggers", opts.broker_logger))
    if opts.group:
        pairs.append(("groups", opts.group))
    types = opts.entity_type or []
    names = list(opts.entity_name or [])
    if opts.entity_default:
        names.append("")
    for t in types:
        if t not in ENTITY_TYPES:
            raise CliError(
                f"Invalid entity type {t}, the entity type must be one of "
                + ", ".join(ENTITY_TYPES)
            )
    if types:
        if len(types) > 1 or pairs:
            raise CliError("Only one entity may be given")
        pairs.append((types[0], names[0] if names else None))
    elif names:
        raise CliError("--entity-name requires --entity-type")
    if not pairs:
        raise CliError("At least one entity type must be specified")
    if len(pairs) > 1:
        raise CliError("Only one entity may be given")
    etype, name = pairs[0]
    if etype not in SUPPORTED:
        raise CliError(f"Entity type {etype} is not supported by this tool yet")
    if etype in ("brokers", "broker-loggers") and name:
        try:
            int(name)
        except ValueError:
            raise CliError(
                f"The entity name for {etype} must be a valid integer broker id, found: {name}"
            ) from None
    return etype, name


def _resource(etype: str, name: str):
    from confluent_kafka.admin import ConfigResource

    kind = {
        "topics": "topic",
        "brokers": "broker",
        "broker-loggers": "broker_logger",
        "groups": "group",
    }[etype]
    return ConfigResource(kind, name)


def _dynamic_source(etype: str, name: str) -> str | None:
    if etype == "topics":
        return "DYNAMIC_TOPIC_CONFIG"
    if etype == "brokers":
        return "DYNAMIC_DEFAULT_BROKER_CONFIG" if name == "" else "DYNAMIC_BROKER_CONFIG"
    if etype == "groups":
        return "DYNAMIC_GROUP_CONFIG"
    return None


def _source_name(src) -> str:
    code = int(getattr(src, "value", src))
    return SOURCE_NAMES.get(code, "UNKNOWN")


def entry_line(e: Entry) -> str:
    syn = ", ".join(f"{src}:{n}={'null' if v is None else v}" for src, n, v in e.synonyms)
    value = "null" if e.value is None else e.value
    return f"  {e.name}={value} sensitive={str(e.sensitive).lower()} synonyms={{{syn}}}"


def _entries_confluent(admin, etype: str, name: str) -> list[Entry]:
    futures = admin.describe_configs([_resource(etype, name)], request_timeout=30)
    (fut,) = futures.values()
    out = []
    for e in result(fut).values():
        syns = [(_source_name(s.source), s.name, s.value) for s in (e.synonyms or {}).values()]
        out.append(Entry(e.name, e.value, bool(e.is_sensitive), _source_name(e.source), syns))
    return out


def _entries_wire(bootstrap: str, etype: str, name: str, props: dict[str, str]) -> list[Entry]:
    """DescribeConfigs spoken directly (confluent-kafka rejects the empty default-entity name)."""
    from kio.schema.describe_configs.v4.request import (
        DescribeConfigsRequest,
        DescribeConfigsResource,
    )

    from kafkapy.cli.wire import connect_any

    req = DescribeConfigsRequest(
        resources=(
            DescribeConfigsResource(
                resource_type=RESOURCE_TYPES[etype], resource_name=name, configuration_keys=None
            ),
        ),
        include_synonyms=True,
    )
    with connect_any(bootstrap, props=props) as conn:
        resp = conn.request(req)
    out = []
    for r in resp.results:
        if r.error_code != 0:
            raise CliError(r.error_message or f"DescribeConfigs failed (error {int(r.error_code)})")
        for c in r.configs:
            syns = [(_source_name(s.source), s.name, s.value) for s in c.synonyms]
            out.append(Entry(c.name, c.value, c.is_sensitive, _source_name(c.config_source), syns))
    return out


def resource_entries(admin, etype: str, name: str, describe_all: bool) -> list[Entry]:
    if name == "":
        entries = _entries_wire(admin.kafkapy_bootstrap, etype, name, admin.kafkapy_props)
    else:
        entries = _entries_confluent(admin, etype, name)
    wanted = None if describe_all else _dynamic_source(etype, name)
    if wanted is not None:
        entries = [e for e in entries if e.source == wanted]
    return sorted(entries, key=lambda e: e.name)


def describe(admin, etype: str, name: str | None, describe_all: bool) -> list[str]:
    lines: list[str] = []
    singular = etype[:-1]
    if name is not None and not describe_all:
        if etype == "topics":
            if name not in admin.list_topics(timeout=30).topics:
                return [f"The {singular} '{name}' doesn't exist and doesn't have dynamic config."]
        elif etype in ("brokers", "broker-loggers") and name != "":
            ids = {str(n.id) for n in result(admin.describe_cluster(request_timeout=30)).nodes}
            if name not in ids:
                return [f"The {singular} '{name}' doesn't exist and doesn't have dynamic config."]
    if name is not None:
        names = [name]
    elif etype == "topics":
        names = sorted(admin.list_topics(timeout=30).topics)
    elif etype in ("brokers", "broker-loggers"):
        nodes = result(admin.describe_cluster(request_timeout=30)).nodes
        names = [str(n.id) for n in nodes] + [""]
    else:
        raise CliError(f"--entity-name is required to describe {etype}")
    for n in names:
        if n == "":
            lines.append(f"Default configs for {etype} in the cluster are:")
        else:
            lines.append(f"{'All' if describe_all else 'Dynamic'} configs for {singular} {n} are:")
        lines.extend(entry_line(e) for e in resource_entries(admin, etype, n, describe_all))
    return lines


def alter(admin, opts, etype: str, name: str | None) -> str:
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry

    if name is None:
        raise CliError("An entity name must be specified for every entity type")
    to_add = load_properties(opts.add_config_file)
    to_add.update(parse_add_config(opts.add_config))
    to_delete = parse_delete_config(opts.delete_config)
    if not to_add and not to_delete:
        raise CliError(
            "At least one of --add-config, --add-config-file or --delete-config "
            "must be specified with --alter"
        )
    if etype == "topics":
        if name not in admin.list_topics(timeout=30).topics:
            raise CliError(f"The topic '{name}' does not exist.")
    current = {e.name for e in resource_entries(admin, etype, name, describe_all=False)}
    invalid = [k for k in to_delete if k not in current]
    if invalid:
        raise CliError("Invalid config(s): " + ",".join(invalid))
    if name == "":
        _alter_wire(admin.kafkapy_bootstrap, admin.kafkapy_props, etype, to_add, to_delete)
        return f"Completed updating default config for {etype} in the cluster."
    resource = _resource(etype, name)
    for k in to_delete:
        resource.add_incremental_config(
            ConfigEntry(k, None, incremental_operation=AlterConfigOpType.DELETE)
        )
    for k, v in to_add.items():
        resource.add_incremental_config(
            ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET)
        )
    for fut in admin.incremental_alter_configs([resource], request_timeout=30).values():
        result(fut)
    if name:
        return f"Completed updating config for {etype[:-1]} {name}."
    return f"Completed updating default config for {etype} in the cluster."


def _alter_wire(
    bootstrap: str, props: dict[str, str], etype: str, to_add: dict[str, str], to_delete: list[str]
) -> None:
    from kio.schema.incremental_alter_configs.v1.request import (
        AlterableConfig,
        AlterConfigsResource,
        IncrementalAlterConfigsRequest,
    )

    from kafkapy.cli.wire import connect_any

    configs = tuple(AlterableConfig(name=k, config_operation=1, value=None) for k in to_delete)
    configs += tuple(
        AlterableConfig(name=k, config_operation=0, value=v) for k, v in to_add.items()
    )
    req = IncrementalAlterConfigsRequest(
        resources=(
            AlterConfigsResource(
                resource_type=RESOURCE_TYPES[etype], resource_name="", configs=configs
            ),
        ),
        validate_only=False,
    )
    with connect_any(bootstrap, props=props) as conn:
        try:
            resp = conn.request(req)
        except ConnectionError:
            raise CliError("The cluster does not support IncrementalAlterConfigs") from None
    for r in resp.responses:
        if r.error_code != 0:
            raise CliError(
                r.error_message or f"IncrementalAlterConfigs failed ({int(r.error_code)})"
            )


def _users(opts, name: str | None) -> list[str]:
    """--zookeeper --entity-type users: SCRAM credentials (kafkapy.cli.user_configs)."""
    from kafkapy.cli import user_configs as uc

    if name == "":
        raise CliError(
            "The use of --entity-default or --user-defaults is not allowed with User SCRAM "
            "Credentials."
        )
    if opts.alter:
        if name is None:
            raise CliError("An entity name must be specified for every entity type")
        to_add = load_properties(opts.add_config_file)
        to_add.update(parse_add_config(opts.add_config))
        to_delete = parse_delete_config(opts.delete_config)
        return [uc.alter_with_zookeeper(opts.zookeeper, name, to_add, to_delete)]
    return uc.describe_with_zookeeper(opts.zookeeper, name)


def main(argv: list[str]) -> int:
    from kafkapy.cli import quota_configs

    opts = build_parser().parse_args(argv)
    if opts.describe == opts.alter:
        raise CliError("Command must include exactly one action: --describe, --alter")
    if quota_configs.handles(opts):  # users, clients, ips through the brokers
        return quota_configs.main(opts)
    if opts.zookeeper:
        if opts.bootstrap_server:
            raise CliError("Only one of --bootstrap-server or --zookeeper must be specified")
        if entity(opts)[0] != "users":
            raise CliError(
                "--zookeeper is supported only for SCRAM credentials of users "
                "(--entity-type users); use --bootstrap-server"
            )
    if opts.bootstrap_controller and not opts.bootstrap_server:
        raise CliError("--bootstrap-controller is not supported; use --bootstrap-server")
    if not opts.bootstrap_server and not opts.zookeeper:
        raise CliError(
            "One of the required --bootstrap-server or --bootstrap-controller "
            "arguments must be specified"
        )
    if opts.describe and (opts.add_config or opts.add_config_file or opts.delete_config):
        raise CliError("--add-config and --delete-config can only be used with --alter")
    if opts.all and not opts.describe:
        raise CliError("--all can only be used with --describe")
    etype, name = entity(opts)
    if etype == "users":
        for line in _users(opts, name):
            print(line)
        return 0
    props = load_properties(opts.command_config)
    admin = admin_client(opts.bootstrap_server, props)
    admin.kafkapy_bootstrap = opts.bootstrap_server
    admin.kafkapy_props = props
    if opts.describe:
        for line in describe(admin, etype, name, opts.all):
            print(line)
    else:
        print(alter(admin, opts, etype, name))
    return 0
