"""`kafkapy configs` for client quotas (kafka-configs.sh --entity-type users|clients|ips with
--bootstrap-server), as Kafka 3.9's ConfigCommand does it, through DescribeClientQuotas and
AlterClientQuotas:

    --alter --entity-type users --entity-name alice --add-config 'producer_byte_rate=1024'
    --alter --entity-type users --entity-name alice --entity-type clients --entity-default \\
        --add-config 'consumer_byte_rate=2048,request_percentage=50'
    --alter --entity-type ips --entity-default --add-config connection_creation_rate=10
    --alter --entity-type clients --entity-name c1 --delete-config producer_byte_rate
    --describe --entity-type users [--entity-name alice | --entity-default]

The entity also comes from Kafka's shortcuts (--user, --client, --ip, --user-defaults,
--client-defaults, --ip-defaults); users and clients may be given together, and the n-th
--entity-name or --entity-default belongs to the n-th entity type. Keys: producer_byte_rate,
consumer_byte_rate, request_percentage, controller_mutation_rate for users and clients,
connection_creation_rate for ips; values are numbers; a key deleted must be set.
--alter prints ``Completed updating config for user alice.`` (``... default config for users in
the cluster.``). --describe prints one ``Quota configs for user-principal 'alice', client-id
'c1' are producer_byte_rate=1024.0, consumer_byte_rate=2048.0`` line per entity that has quotas
and matches exactly the types given (the default entity with --entity-default, every entity of a
type without a name), values and lines in the order Kafka's tool prints them (java_text.py); for
users alone, then the SCRAM credentials as before (user_configs.py). SCRAM credentials are still
altered through this path (users, with SCRAM-SHA-256/512 keys only).
"""

from __future__ import annotations

import argparse
import socket
from typing import Any

from kafkapy.cli.common import CliError, admin_client, load_properties
from kafkapy.cli.config_args import parse_add_config, parse_delete_config
from kafkapy.cli.java_text import hashmap_order, java_double, java_map_hash, java_string_hash
from kafkapy.metadata.scram_credentials import SCRAM_KEYS

USERS, CLIENTS, IPS = "users", "clients", "ips"
QUOTA_TYPES = (USERS, CLIENTS, IPS)
ENTITY_TYPE = {USERS: "user", CLIENTS: "client-id", IPS: "ip"}  # ClientQuotaEntity's names
LABEL = {"user": "user-principal", "client-id": "client-id", "ip": "ip"}
USER_CLIENT_KEYS = frozenset(
    {"producer_byte_rate", "consumer_byte_rate", "request_percentage", "controller_mutation_rate"}
)
IP_KEYS = frozenset({"connection_creation_rate"})
EXACT, DEFAULT, ANY = 0, 1, 2  # DescribeClientQuotas match types

# Kafka's entity shortcuts, in the order its tool lists them
ENTITY_FLAGS = (("topic", "topics"), ("client", CLIENTS), ("user", USERS), ("broker", "brokers"),
                ("broker_logger", "broker-loggers"), ("ip", IPS))
DEFAULT_FLAGS = (("client_defaults", CLIENTS), ("user_defaults", USERS),
                 ("broker_defaults", "brokers"), ("ip_defaults", IPS))


class EntityName(argparse.Action):
    """--entity-name (and, with ``nargs=0``, --entity-default): also kept, in command-line order,
    in ``entity_names_in_order`` ("" for a default), which pairs them with --entity-type."""

    def __call__(self, parser: Any, ns: Any, values: Any, option_string: Any = None) -> None:
        name = "" if self.nargs == 0 else values
        if self.nargs == 0:
            ns.entity_default = True
        else:
            ns.entity_name = [*(ns.entity_name or []), name]
        ns.entity_names_in_order = [*(getattr(ns, "entity_names_in_order", None) or []), name]


def add_entity_options(p: argparse.ArgumentParser) -> None:
    """The quota entity shortcuts of Kafka's tool."""
    p.add_argument("--user", metavar="USER", help="same as --entity-type users --entity-name")
    p.add_argument("--client", metavar="ID", help="same as --entity-type clients --entity-name")
    p.add_argument("--ip", metavar="IP", help="same as --entity-type ips --entity-name")
    for kind in ("user", "client", "ip"):
        p.add_argument(f"--{kind}-defaults", action="store_true",
                       help=f"same as --entity-type {kind}s --entity-default")


def entity_types(o: Any) -> list[str]:
    """Kafka's ConfigCommandOptions.entityTypes."""
    return [*(o.entity_type or []), *(t for a, t in ENTITY_FLAGS if getattr(o, a, None)),
            *(t for a, t in DEFAULT_FLAGS if getattr(o, a, False))]


def entity_names(o: Any) -> list[str]:
    """Kafka's ConfigCommandOptions.entityNames ("" for a default)."""
    return [*(getattr(o, "entity_names_in_order", None) or []),
            *(getattr(o, a) for a, _ in ENTITY_FLAGS if getattr(o, a, None)),
            *("" for a, _ in DEFAULT_FLAGS if getattr(o, a, False))]


def handles(o: Any) -> bool:
    """True when the command is about client quota entities (or users through the brokers)."""
    return not o.zookeeper and any(t in QUOTA_TYPES for t in entity_types(o))


def check_args(o: Any, types: list[str], names: list[str]) -> None:
    """Kafka's checkArgs and processCommand checks, for quota entities."""
    duplicates = sorted({t for t in types if types.count(t) > 1})
    if duplicates:
        raise CliError(f"Duplicate entity type(s) specified: {','.join(duplicates)}")
    if len(types) > 1 and set(types) != {USERS, CLIENTS}:
        raise CliError("Only 'users' and 'clients' entity types may be specified together")
    shortcuts = [a for a, _ in ENTITY_FLAGS + DEFAULT_FLAGS if getattr(o, a, None)]
    if (o.entity_name or o.entity_type or o.entity_default) and shortcuts:
        raise CliError("--entity-{type,name,default} should not be used in conjunction with "
                       "specific entity flags")
    if not o.bootstrap_server:
        raise CliError("One of the required --bootstrap-server or --bootstrap-controller "
                       "arguments must be specified")
    if IPS in types:
        for name in names:
            if name and not _resolvable(name):
                raise CliError("The entity name for ips must be a valid IP or resolvable host, "
                               f"but it is: {name}")
    if o.describe:
        if o.add_config or o.add_config_file or o.delete_config:
            raise CliError("--add-config and --delete-config can only be used with --alter")
        if len(names) > len(types):
            raise CliError("More entity names specified than entity types")
        return
    if not names:
        raise CliError("an entity-name or default entity must be specified with --alter of "
                       "users, clients, brokers or ips")
    if o.add_config and o.add_config_file:
        raise CliError("Only one of --add-config or --add-config-file must be specified")
    if not (o.add_config or o.add_config_file or o.delete_config):
        raise CliError("At least one of --add-config, --add-config-file, or --delete-config "
                       "must be specified with --alter")
    if len(types) != len(names):
        raise CliError("An entity name must be specified for every entity type")


def _resolvable(name: str) -> bool:
    try:
        socket.getaddrinfo(name, None)
    except (OSError, UnicodeError):
        return False
    return True


# -- the wire --------------------------------------------------------------------------------------


def describe_quotas(o: Any, types: list[str], names: list[str]) -> list[tuple[dict, list]]:
    """DescribeClientQuotas for exactly these entity types (ClientQuotaFilter.containsOnly):
    [(entity type -> name or None, [(key, value)])] in the order Kafka's tool prints them."""
    from kio.schema.describe_client_quotas.v1 import request as dq

    from kafkapy.cli.wire import connect_any

    components = []
    for i, kind in enumerate(types):
        name = names[i] if i < len(names) else None
        match_type = ANY if name is None else DEFAULT if name == "" else EXACT
        components.append(dq.ComponentData(entity_type=ENTITY_TYPE[kind], match_type=match_type,
                                           match=name or None))
    with connect_any(o.bootstrap_server, props=load_properties(o.command_config)) as conn:
        resp = conn.request(dq.DescribeClientQuotasRequest(components=tuple(components),
                                                           strict=True))
    if resp.error_code != 0:
        raise CliError(resp.error_message or f"DescribeClientQuotas failed ({resp.error_code})")
    found = [({e.entity_type: e.entity_name for e in entry.entity},
              hashmap_order([(v.key, v.value) for v in entry.values],
                            lambda kv: java_string_hash(kv[0])))
             for entry in resp.entries or ()]
    return hashmap_order(found, lambda ev: 31 + java_map_hash(ev[0]))


def describe_lines(o: Any, types: list[str], names: list[str]) -> list[str]:
    lines = []
    for entity, values in describe_quotas(o, types, names):
        who = ", ".join(
            f"{LABEL[t]} '{entity[t]}'" if entity[t] is not None else f"the default {LABEL[t]}"
            for t in ("user", "client-id", "ip") if t in entity
        )
        what = ", ".join(f"{k}={java_double(v)}" for k, v in values)
        lines.append(f"Quota configs for {who} are {what}")
    if types == [USERS] and "" not in names:  # then the users' SCRAM credentials
        from kafkapy.cli import user_configs as uc

        admin = admin_client(o.bootstrap_server, load_properties(o.command_config))
        lines += uc.describe_with_admin(admin, names[0] if names else None)
    return lines


def _scala_set(names: list[str]) -> str:
    return f"Set({', '.join(names)})"


def alter(o: Any, types: list[str], names: list[str]) -> str:
    to_add = load_properties(o.add_config_file)
    to_add.update(parse_add_config(o.add_config))
    to_delete = parse_delete_config(o.delete_config)
    head = types[0]
    if head == IPS:
        unknown = [k for k in [*to_add, *to_delete] if k not in IP_KEYS]
        if unknown:
            raise CliError("Only connection quota configs can be added for 'ips' using "
                           f"--bootstrap-server. Unexpected config names: {','.join(unknown)}")
    elif head == CLIENTS or len(types) == 2:
        for verb, keys in (("added", list(to_add)), ("deleted", to_delete)):
            unknown = [k for k in keys if k not in USER_CLIENT_KEYS]
            if unknown:
                raise CliError(f"Only quota configs can be {verb} for 'clients' using "
                               "--bootstrap-server. Unexpected config names: "
                               f"{_scala_set(unknown)}")
    else:
        for verb, keys in (("added", list(to_add)), ("deleted", to_delete)):
            unknown = [k for k in keys if k not in USER_CLIENT_KEYS.union(SCRAM_KEYS)]
            if unknown:
                raise CliError(f"Only quota and SCRAM credential configs can be {verb} for "
                               f"'users' using --bootstrap-server. Unexpected config names: "
                               f"{_scala_set(unknown)}")
        if any(k in SCRAM_KEYS for k in [*to_add, *to_delete]):
            if "" in names:
                raise CliError("The use of --entity-default or --user-defaults is not allowed "
                               "with User SCRAM Credentials using --bootstrap-server.")
            if any(k in USER_CLIENT_KEYS for k in [*to_add, *to_delete]):
                raise CliError("Cannot alter both quota and SCRAM credential configs "
                               "simultaneously for 'users' using --bootstrap-server.")
            from kafkapy.cli import user_configs as uc

            admin = admin_client(o.bootstrap_server, load_properties(o.command_config))
            return uc.alter_with_admin(admin, names[0], to_add, to_delete)
    alter_quotas(o, types, names, to_add, to_delete)
    if names[0]:
        return f"Completed updating config for {head[:-1]} {names[0]}."
    return f"Completed updating default config for {head} in the cluster."


def alter_quotas(o: Any, types: list[str], names: list[str], to_add: dict[str, str],
                 to_delete: list[str]) -> None:
    """Kafka's alterQuotaConfigs: deleted keys must be set; values are doubles."""
    from kio.schema.alter_client_quotas.v1 import request as aq

    from kafkapy.cli.wire import connect_any

    current = describe_quotas(o, types, names)
    keys = {k for k, _ in current[0][1]} if current else set()
    missing = [k for k in to_delete if k not in keys]
    if missing:
        raise CliError(f"Invalid config(s): {','.join(missing)}")
    ops = []
    for key, text in to_add.items():
        try:
            value = float(text)
        except ValueError:
            raise CliError(f"Cannot parse quota configuration value for {key}: {text}") from None
        ops.append(aq.OpData(key=key, value=value, remove=False))
    ops += [aq.OpData(key=k, value=0.0, remove=True) for k in to_delete]
    entity = tuple(aq.EntityData(entity_type=ENTITY_TYPE[t], entity_name=n or None)
                   for t, n in zip(types, names, strict=True))
    request = aq.AlterClientQuotasRequest(entries=(aq.EntryData(entity=entity, ops=tuple(ops)),),
                                          validate_only=False)
    with connect_any(o.bootstrap_server, props=load_properties(o.command_config)) as conn:
        resp = conn.request(request)
    for entry in resp.entries:
        if entry.error_code != 0:
            raise CliError(entry.error_message or f"AlterClientQuotas failed ({entry.error_code})")


def main(o: Any) -> int:
    """kafka-configs for quota entities (configs.main routes here when ``handles(o)``)."""
    types, names = entity_types(o), entity_names(o)
    check_args(o, types, names)
    if o.describe:
        for line in describe_lines(o, types, names):
            print(line)
    else:
        print(alter(o, types, names))
    return 0
