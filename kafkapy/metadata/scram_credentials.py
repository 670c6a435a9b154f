"""SCRAM credentials in Kafka's ZooKeeper layout: the user's config entity /config/users/<user>
(name sanitized as for client quotas) holds one key per mechanism, ``SCRAM-SHA-256`` and
``SCRAM-SHA-512``, whose value is the credential's stored form
(``salt=..,stored_key=..,server_key=..,iterations=N``, kafkapy.security.scram). The same znode
may hold the user's client quotas; writes keep whatever else is there and post a config change
notification (``users/<user>``) so every broker reloads the user's credentials."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from . import client_quotas as cq
from . import znodes as zn
from .store import MetadataStore

SCRAM_KEYS = ("SCRAM-SHA-256", "SCRAM-SHA-512")


def scram_configs(configs: Mapping[str, str]) -> dict[str, str]:
    """The SCRAM entries of a user's configs (mechanism -> stored credential text)."""
    return {k: v for k, v in configs.items() if k in SCRAM_KEYS}


def read_user(store: MetadataStore, user: str) -> dict[str, str]:
    return scram_configs(cq.read(store, {cq.USER: user}))


def all_users(store: MetadataStore) -> dict[str, dict[str, str]]:
    """Every user with at least one SCRAM credential -> its SCRAM entries."""
    out: dict[str, dict[str, str]] = {}
    users = zn.CONFIG_ENTITY_TYPE.path("users")
    if store.exists(users) is None:
        return out
    for node in store.children(users):
        if node == cq.DEFAULT:
            continue
        got = store.get_or_none(f"{users}/{node}")
        entries = scram_configs(zn.CONFIG_ENTITY.decode(got[0])) if got else {}
        if entries:
            out[cq.desanitize(node)] = entries
    return out


def alter_user(
    store: MetadataStore, user: str, upserts: Mapping[str, str], deletions: Iterable[str]
) -> None:
    """Set and remove the user's SCRAM entries in one write, keeping its other configs."""
    store.ensure_path(zn.CONFIG_CHANGES.path())  # before any broker made it (--zookeeper)
    entity = {cq.USER: user}
    configs = cq.read(store, entity)
    for mechanism in deletions:
        configs.pop(mechanism, None)
    configs.update(upserts)
    cq.write(store, entity, configs)
