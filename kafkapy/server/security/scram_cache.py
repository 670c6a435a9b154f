"""The broker's in-memory SCRAM credentials (Kafka's CredentialCache), which the SCRAM exchanges
of SASL listeners look users up in.

Loaded from /config/users at startup (kafkapy.metadata.scram_credentials), then kept current by
the config change listener: a ``users/<user>`` notification (AlterUserScramCredentials or
kafka-configs on any broker) replaces that user's credentials with what its znode holds now, so
a new or changed password works on every broker, and a deleted one stops working, without a
restart. An entry that does not parse is logged and ignored (the user cannot log in with it).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from kafkapy.metadata import scram_credentials as sc
from kafkapy.metadata.store import MetadataStore
from kafkapy.security.scram import ScramCredential

log = logging.getLogger("kafkapy.scram")


class ScramCredentialCache:
    def __init__(self) -> None:
        self._users: dict[str, dict[str, ScramCredential]] = {}

    def load(self, store: MetadataStore) -> None:
        """Read every user's credentials (blocking store calls)."""
        self._users = {}
        for user, entries in sc.all_users(store).items():
            self.update(user, entries)

    def update(self, user: str, configs: Mapping[str, str]) -> bool:
        """Replace ``user``'s credentials with the SCRAM entries of ``configs``; whether they
        changed."""
        before = self._users.get(user)
        creds: dict[str, ScramCredential] = {}
        for mechanism, text in sc.scram_configs(configs).items():
            try:
                creds[mechanism] = ScramCredential.from_config(text)
            except ValueError:
                log.warning("ignoring an invalid %s credential of user %s", mechanism, user)
        if creds:
            self._users[user] = creds
        else:
            self._users.pop(user, None)
        return creds != (before or {})

    def get(self, mechanism: str, user: str) -> ScramCredential | None:
        return self._users.get(user, {}).get(mechanism)

    def users(self) -> dict[str, dict[str, ScramCredential]]:
        return {u: dict(c) for u, c in self._users.items()}
