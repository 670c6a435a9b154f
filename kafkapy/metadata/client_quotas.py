"""Client quota configs in Kafka's ZooKeeper layout, through the store interface.

A quota entity maps entity types (``user``, ``client-id``, ``ip``) to a name, or to None for the
default entity. Kafka keeps their configs as config-entity znodes ({"version":1,"config":{..}}):

    /config/users/<user>                     user (or <default>)
    /config/users/<user>/clients/<client>    user and client id together
    /config/clients/<client>                 client id (or <default>)
    /config/ips/<ip>                         ip (or <default>)

User and client-id names are sanitized as Kafka's Sanitizer does (URL-encoding, with space as
%20 and '*' as %2A), ips are not; the default entity is ``<default>``. Every write goes with a
config change notification naming the entity path (``users/<u>/clients/<c>``, ...), in one
multi-op, as Kafka's AdminZkClient writes them. Values are strings: integral quotas as integers,
the others as floats.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from urllib.parse import quote, unquote

from . import znodes as zn
from .store import CreateOp, MetadataStore, SetOp

USER, CLIENT_ID, IP = "user", "client-id", "ip"
ENTITY_TYPES = (USER, CLIENT_ID, IP)
DEFAULT = "<default>"

Entity = dict[str, str | None]  # entity type -> name (None: the default entity)


def sanitize(name: str) -> str:
    """Kafka's Sanitizer.sanitize: a name made safe for a znode path."""
    return quote(name, safe="").replace("~", "%7E")


def desanitize(name: str) -> str:
    return unquote(name)


def _node_name(name: str | None, sanitized: bool = True) -> str:
    if name is None:
        return DEFAULT
    return sanitize(name) if sanitized else name


def _entity_name(node: str, sanitized: bool = True) -> str | None:
    if node == DEFAULT:
        return None
    return desanitize(node) if sanitized else node


def entity_path(entity: Mapping[str, str | None]) -> tuple[str, str]:
    """(config entity type, entity name) of the entity's znode under /config; the change
    notification's entity path is ``f"{type}/{name}"``. ValueError for a combination Kafka has
    no place for."""
    kinds = set(entity)
    if kinds == {USER, CLIENT_ID}:
        return "users", f"{_node_name(entity[USER])}/clients/{_node_name(entity[CLIENT_ID])}"
    if kinds == {USER}:
        return "users", _node_name(entity[USER])
    if kinds == {CLIENT_ID}:
        return "clients", _node_name(entity[CLIENT_ID])
    if kinds == {IP}:
        return "ips", _node_name(entity[IP], sanitized=False)
    raise ValueError(f"no quota entity path for {sorted(kinds)}")


def read(store: MetadataStore, entity: Mapping[str, str | None]) -> dict[str, str]:
    """The entity's stored configs ({} when it has none)."""
    kind, name = entity_path(entity)
    got = store.get_or_none(zn.CONFIG_ENTITY.path(kind, name))
    return zn.CONFIG_ENTITY.decode(got[0]) if got else {}


def write(
    store: MetadataStore, entity: Mapping[str, str | None], configs: Mapping[str, str]
) -> None:
    """Replace the entity's configs and post a change notification, atomically."""
    kind, name = entity_path(entity)
    path = zn.CONFIG_ENTITY.path(kind, name)
    store.ensure_path(path.rsplit("/", 1)[0])  # e.g. /config/users/<u>/clients
    data = zn.CONFIG_ENTITY.encode(dict(configs))
    stat = store.exists(path)
    op = CreateOp(path, data) if stat is None else SetOp(path, data, stat.version)
    store.multi(
        [
            op,
            CreateOp(
                zn.CONFIG_CHANGE_NOTIFICATION.path(),
                zn.CONFIG_CHANGE_NOTIFICATION.encode(f"{kind}/{name}"),
                sequential=True,
            ),
        ]
    )


def _children(store: MetadataStore, path: str) -> list[str]:
    if store.exists(path) is None:
        return []
    return store.children(path)


def _configs(store: MetadataStore, path: str) -> dict[str, str]:
    got = store.get_or_none(path)
    return zn.CONFIG_ENTITY.decode(got[0]) if got else {}


def all_entities(store: MetadataStore) -> Iterator[tuple[Entity, dict[str, str]]]:
    """Every quota entity with a znode, and its stored configs (possibly empty)."""
    users = zn.CONFIG_ENTITY_TYPE.path("users")
    for u in _children(store, users):
        user_path = f"{users}/{u}"
        yield {USER: _entity_name(u)}, _configs(store, user_path)
        for c in _children(store, f"{user_path}/clients"):
            yield (
                {USER: _entity_name(u), CLIENT_ID: _entity_name(c)},
                _configs(store, f"{user_path}/clients/{c}"),
            )
    clients = zn.CONFIG_ENTITY_TYPE.path("clients")
    for c in _children(store, clients):
        yield {CLIENT_ID: _entity_name(c)}, _configs(store, f"{clients}/{c}")
    ips = zn.CONFIG_ENTITY_TYPE.path("ips")
    for i in _children(store, ips):
        yield {IP: _entity_name(i, sanitized=False)}, _configs(store, f"{ips}/{i}")
