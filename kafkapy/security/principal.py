"""Kafka's principal: who a connection authenticated as (``type:name``, usually ``User:alice``).

Kafka's DefaultKafkaPrincipalBuilder gives ``User:ANONYMOUS`` on PLAINTEXT listeners and on SSL
listeners whose client sent no certificate, ``User:<mapped DN>`` for a verified client
certificate (kafkapy.security.ssl_principal), and ``User:<authorization id>`` after SASL. ACLs
name principals as ``User:alice`` (or ``User:*``, the wildcard), ``super.users`` is a
semicolon-separated list of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

USER_TYPE = "User"
WILDCARD_NAME = "*"


@dataclass(frozen=True, slots=True)
class KafkaPrincipal:
    """An authenticated identity; equal when type and name are (as Kafka's KafkaPrincipal).
    ``token_authenticated``: the connection authenticated with a delegation token (SCRAM with
    ``tokenauth=true``); such a principal may not create, renew, expire or describe tokens."""

    principal_type: str
    name: str
    token_authenticated: bool = field(default=False, compare=False)

    def __str__(self) -> str:
        return f"{self.principal_type}:{self.name}"

    @classmethod
    def user(cls, name: str) -> KafkaPrincipal:
        return cls(USER_TYPE, name)


ANONYMOUS = KafkaPrincipal(USER_TYPE, "ANONYMOUS")
WILDCARD = KafkaPrincipal(USER_TYPE, WILDCARD_NAME)


def parse_principal(text: str) -> KafkaPrincipal:
    """``Type:name`` -> KafkaPrincipal (Kafka's SecurityUtils.parseKafkaPrincipal); ValueError
    when there is no colon or either side is empty. The name may itself contain colons."""
    kind, sep, name = text.partition(":")
    if not sep or not kind or not name:
        raise ValueError(
            f"expected a string in format principalType:principalName but got {text!r}"
        )
    return KafkaPrincipal(kind, name)
