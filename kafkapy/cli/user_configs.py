"""`kafkapy configs --entity-type users`: SCRAM credentials of users, as Kafka 3.9's
kafka-configs.sh manages them.

    --alter --add-config 'SCRAM-SHA-256=[iterations=8192,password=alice-secret]'
    --alter --delete-config SCRAM-SHA-512
    --describe [--entity-name alice]

With ``--bootstrap-server`` the tool sends AlterUserScramCredentials (the salted password is
computed here; the password never travels) and DescribeUserScramCredentials, printing
``SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192``. With
``--zookeeper`` (how Kafka bootstraps the brokers' own SCRAM users before any broker runs) the
credential is computed here and written to /config/users/<user> with a change notification;
``--describe`` then prints ``Configs for user-principal 'alice' are SCRAM-SHA-256=salt=...``.
Iterations default to 4096 and must be at least 4096. Client quota configs of users:
kafkapy.cli.quota_configs (which also routes SCRAM changes through the brokers here).
"""

from __future__ import annotations

import re

from kafkapy.cli.common import CliError, result
from kafkapy.metadata.scram_credentials import SCRAM_KEYS
from kafkapy.security.scram import MECHANISMS, MIN_ITERATIONS, ScramCredential

DEFAULT_ITERATIONS = 4096
_CREDENTIAL = re.compile(r"(?:iterations=(-?[0-9]*),)?password=(.*)", re.S)


def _check_keys(to_add: dict[str, str], to_delete: list[str]) -> None:
    unknown = [k for k in [*to_add, *to_delete] if k not in SCRAM_KEYS]
    if unknown:
        raise CliError(
            "Only SCRAM credential configs (SCRAM-SHA-256, SCRAM-SHA-512) can be altered for "
            f"users with this tool. Unexpected config names: {','.join(unknown)}"
        )
    if not to_add and not to_delete:
        raise CliError(
            "At least one of --add-config, --add-config-file or --delete-config "
            "must be specified with --alter"
        )


def iterations_and_password(mechanism: str, value: str) -> tuple[int, str]:
    """``[iterations=N,]password=P`` -> (N or 4096, P); CliError when it is not that."""
    m = _CREDENTIAL.fullmatch(value)
    if m is None:
        raise CliError(f"Invalid credential property {mechanism}={value}")
    text = m.group(1)
    iterations = int(text) if text and text != "-1" else DEFAULT_ITERATIONS
    if iterations < MIN_ITERATIONS:
        raise CliError(
            f"Iterations {iterations} is less than the minimum {MIN_ITERATIONS} required for "
            f"{mechanism}"
        )
    return iterations, m.group(2)


def alter_with_admin(admin, user: str, to_add: dict[str, str], to_delete: list[str]) -> str:
    from confluent_kafka.admin import (
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialDeletion,
        UserScramCredentialUpsertion,
    )

    _check_keys(to_add, to_delete)
    mech = {
        "SCRAM-SHA-256": ScramMechanism.SCRAM_SHA_256,
        "SCRAM-SHA-512": ScramMechanism.SCRAM_SHA_512,
    }
    alterations: list = [UserScramCredentialDeletion(user, mech[m]) for m in to_delete]
    for m, value in to_add.items():
        iterations, password = iterations_and_password(m, value)
        alterations.append(
            UserScramCredentialUpsertion(
                user, ScramCredentialInfo(mech[m], iterations), password.encode()
            )
        )
    for fut in admin.alter_user_scram_credentials(alterations, request_timeout=30).values():
        result(fut)
    return f"Completed updating config for user {user}."


def describe_with_admin(admin, user: str | None) -> list[str]:
    from confluent_kafka import KafkaException

    futures = admin.describe_user_scram_credentials([user] if user else None, request_timeout=30)
    if not isinstance(futures, dict):  # all users: one future of a dict
        descriptions = result(futures)
        futures = None
    lines = []
    for name in sorted(descriptions) if futures is None else futures:
        try:
            description = descriptions[name] if futures is None else futures[name].result(30)
        except KafkaException as e:
            err = e.args[0]
            if user and err.code() == 91:  # RESOURCE_NOT_FOUND: the user has no credentials
                continue
            lines.append(
                f"Error retrieving SCRAM credential configs for user-principal "
                f"'{name}': {err.str()}"
            )
            continue
        infos = ", ".join(
            f"{i.mechanism.name.replace('_', '-')}=iterations={i.iterations}"
            for i in description.scram_credential_infos
        )
        lines.append(f"SCRAM credential configs for user-principal '{name}' are {infos}")
    return lines


def _store(connect: str):
    from kafkapy.metadata.errors import MetadataError
    from kafkapy.metadata.zookeeper import ZooKeeperStore

    try:
        return ZooKeeperStore(connect, session_timeout_ms=30000, connection_timeout_ms=30000)
    except MetadataError as e:
        raise CliError(f"Cannot connect to ZooKeeper at {connect}: {e}") from None


def alter_with_zookeeper(
    connect: str, user: str, to_add: dict[str, str], to_delete: list[str]
) -> str:
    from kafkapy.metadata import scram_credentials as sc

    _check_keys(to_add, to_delete)
    upserts = {}
    for m, value in to_add.items():
        iterations, password = iterations_and_password(m, value)
        upserts[m] = ScramCredential.from_password(MECHANISMS[m], password, iterations).to_config()
    store = _store(connect)
    try:
        missing = [m for m in to_delete if m not in sc.read_user(store, user)]
        if missing:
            raise CliError(f"Invalid config(s): {','.join(missing)}")
        sc.alter_user(store, user, upserts, to_delete)
    finally:
        store.close()
    return f"Completed updating config for entity: user-principal '{user}'."


def describe_with_zookeeper(connect: str, user: str | None) -> list[str]:
    from kafkapy.metadata import client_quotas as cq

    store = _store(connect)
    try:
        if user is not None:
            entities = [({cq.USER: user}, cq.read(store, {cq.USER: user}))]
        else:
            entities = [
                (e, c)
                for e, c in cq.all_entities(store)
                if set(e) == {cq.USER} and e[cq.USER] is not None and c
            ]
    finally:
        store.close()
    return [
        f"Configs for user-principal '{e[cq.USER]}' are "
        + ",".join(f"{k}={v}" for k, v in configs.items())
        for e, configs in entities
    ]
