"""Which of Apache Kafka 4.4's configs kafkapy acts on, and why not the others (sans-io).

Every config of the definition table (server/config/config_definitions.py) is accepted: parsed,
validated, stored and described as 4.4 does. Most broker configs kafkapy applies (those it
reads into BrokerConfig, the topic-config synonyms, the log cleaner's, the connection limits and
the listeners' TLS and SASL settings); the rest it accepts without acting on them, each with a
reason: :func:`not_implemented`. The docs' configuration reference says so per config
(docs/hooks/config_reference.py), and a broker given any of them in server.properties says so at
start in one structured log line (:func:`warn_not_implemented`; nothing when there are none).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from .config_definitions import definitions
from .config_keys import OPTIONS, SPECIAL_KEYS
from .connection_limit_configs import is_connection_config
from .dynamic_broker_configs import DYNAMIC_CONFIGS
from .group_configs import NOT_APPLIED as GROUP_NOT_APPLIED
from .log_configs import CLEANER_CONFIGS, SYNONYM_OF
from .topic_configs import TOPIC_CONFIGS

log = logging.getLogger("kafkapy.configs")

NOT_IMPLEMENTED = "not implemented by kafkapy"
# the TLS and SASL settings kafkapy builds its listeners from (server/config/listener_config.py)
LISTENER_SECURITY = frozenset(
    """
ssl.keystore.location ssl.keystore.password ssl.key.password ssl.keystore.type
ssl.keystore.certificate.chain ssl.keystore.key ssl.truststore.location ssl.truststore.password
ssl.truststore.type ssl.truststore.certificates ssl.client.auth ssl.enabled.protocols
ssl.protocol ssl.cipher.suites ssl.endpoint.identification.algorithm ssl.keymanager.algorithm
ssl.trustmanager.algorithm sasl.enabled.mechanisms sasl.mechanism.inter.broker.protocol
sasl.jaas.config sasl.server.callback.handler.class sasl.oauthbearer.jwks.endpoint.url
sasl.oauthbearer.jwks.endpoint.refresh.ms sasl.oauthbearer.jwks.endpoint.retry.backoff.ms
sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms sasl.oauthbearer.expected.audience
sasl.oauthbearer.expected.issuer sasl.oauthbearer.allow.unverified.audience
sasl.oauthbearer.allow.unverified.issuer sasl.oauthbearer.clock.skew.seconds
sasl.oauthbearer.sub.claim.name sasl.oauthbearer.scope.claim.name
""".split()
)
# the share group (KIP-932) broker configs kafkapy applies (server/share, coordinator/share)
SHARE_APPLIED = frozenset(
    """
group.share.session.timeout.ms group.share.min.session.timeout.ms
group.share.max.session.timeout.ms group.share.heartbeat.interval.ms
group.share.min.heartbeat.interval.ms group.share.max.heartbeat.interval.ms group.share.max.size
group.share.record.lock.duration.ms group.share.min.record.lock.duration.ms
group.share.max.record.lock.duration.ms group.share.delivery.count.limit
group.share.min.delivery.count.limit group.share.max.delivery.count.limit
group.share.partition.max.record.locks group.share.min.partition.max.record.locks
group.share.max.partition.max.record.locks group.share.max.share.sessions group.share.assignors
share.coordinator.state.topic.num.partitions share.coordinator.state.topic.replication.factor
share.coordinator.state.topic.segment.bytes share.coordinator.state.topic.min.isr
""".split()
)
# broker configs whose subject kafkapy lacks: why (checked by prefix, most specific first)
_KRAFT = "kafkapy keeps its metadata in ZooKeeper or its embedded store, not KRaft"
_PREFIX_REASONS = (
    ("process.roles", _KRAFT),
    ("controller.", _KRAFT),
    ("metadata.", _KRAFT),
    ("share.", "kafkapy's share coordinator writes at once, in the broker's event loop"),
    ("group.share.", "kafkapy computes share assignments at once"),
    ("group.streams.", "kafkapy has no streams groups"),
    ("remote.", "kafkapy has no tiered storage"),
    ("log.remote.", "kafkapy has no tiered storage"),
    ("sasl.kerberos.", "kafkapy does not serve SASL/GSSAPI (Kerberos)"),
    (
        "sasl.oauthbearer.",
        "a setting of the OAUTHBEARER client's login (token retrieval); kafkapy's brokers "
        "connect to each other with PLAIN or SCRAM, and validate tokens with Kafka's default "
        "validator only",
    ),
)


def not_implemented(scope: str, name: str) -> str | None:
    """Why kafkapy accepts this config of ``scope`` (broker, topic, group) without acting on
    it, None when it applies it."""
    if scope == "topic":
        d = TOPIC_CONFIGS.get(name)
        return None if d is None else d.not_applied
    if scope == "group":
        return GROUP_NOT_APPLIED.get(name)
    if name in LISTENER_SECURITY:
        return None
    dynamic = DYNAMIC_CONFIGS.get(name)
    if dynamic is not None and dynamic.not_applied:
        return dynamic.not_applied
    if name in SYNONYM_OF:
        return TOPIC_CONFIGS[SYNONYM_OF[name]].not_applied
    if (
        name in OPTIONS
        or name in SPECIAL_KEYS
        or name in CLEANER_CONFIGS
        or is_connection_config(name)
        or name in SHARE_APPLIED
    ):
        return None
    for prefix, why in _PREFIX_REASONS:
        if name.startswith(prefix):
            return why
    return NOT_IMPLEMENTED


def unimplemented_settings(props: Mapping[str, str]) -> dict[str, str]:
    """The 4.4 broker configs among ``props`` that kafkapy does not act on: name -> why."""
    table = definitions("broker")
    out = {}
    for name in sorted(props):
        if name in table:
            why = not_implemented("broker", name)
            if why is not None:
                out[name] = why
    return out


def warn_not_implemented(props: Mapping[str, str]) -> None:
    """One structured warning naming the given broker configs kafkapy does not act on."""
    found = unimplemented_settings(props)
    if found:
        log.warning(
            "broker configs accepted, not implemented count=%d configs=%s",
            len(found),
            ",".join(f"{name} ({why})" for name, why in found.items()),
        )
