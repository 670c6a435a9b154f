"""Java client security properties (a tool's --command-config) in librdkafka's terms.

Kafka's tools read ``security.protocol``, ``sasl.mechanism``, ``sasl.jaas.config`` and the
``ssl.*`` store settings of the Java client; kafkapy's tools talk through librdkafka, which
names them differently:

* ``sasl.jaas.config`` (PlainLoginModule or ScramLoginModule ``username``/``password``) becomes
  ``sasl.username`` / ``sasl.password``;
* a PEM trust store (``ssl.truststore.location``) becomes ``ssl.ca.location``; inline
  ``ssl.truststore.certificates`` becomes ``ssl.ca.pem``;
* a PEM key store (key and certificate chain in one file) becomes ``ssl.certificate.location``
  and ``ssl.key.location``, a PKCS12 one stays ``ssl.keystore.location`` /
  ``ssl.keystore.password``; inline ``ssl.keystore.key`` / ``ssl.keystore.certificate.chain``
  become ``ssl.key.pem`` / ``ssl.certificate.pem``; JKS stores are refused with a hint;
* ``ssl.endpoint.identification.algorithm`` empty means ``none``.
"""

from __future__ import annotations

from kafkapy.cli.errors import CliError
from kafkapy.security.jaas import JaasConfigError, login_options

_DROPPED = frozenset(
    {
        "ssl.truststore.type",
        "ssl.truststore.password",
        "ssl.keystore.type",
        "ssl.protocol",
        "ssl.enabled.protocols",
        "ssl.keymanager.algorithm",
        "ssl.trustmanager.algorithm",
        "sasl.login.callback.handler.class",
        "sasl.client.callback.handler.class",
    }
)


def _store_type(props: dict[str, str], prefix: str) -> str:
    kind = props.get(f"{prefix}.type", "").strip().upper()
    if kind:
        return kind
    location = props.get(f"{prefix}.location", "")
    try:
        with open(location, "rb") as f:
            return "PEM" if b"-----BEGIN" in f.read(4096) else "PKCS12"
    except OSError as e:
        raise CliError(f"Cannot read {prefix}.location {location}: {e.strerror}") from None


def translate(props: dict[str, str]) -> dict[str, str]:
    """Rewrite the Java security properties of ``props`` for librdkafka (others untouched)."""
    out: dict[str, str] = {}
    for key, value in props.items():
        if key in _DROPPED:
            continue
        if key == "sasl.jaas.config":
            try:
                options = login_options(value)
            except JaasConfigError as e:
                raise CliError(f"Invalid sasl.jaas.config: {e}") from None
            if "username" in options:
                out["sasl.username"] = options["username"]
            if "password" in options:
                out["sasl.password"] = options["password"]
        elif key == "ssl.truststore.location":
            if _store_type(props, "ssl.truststore") != "PEM":
                raise CliError(
                    "Only PEM trust stores are supported (ssl.truststore.type=PEM); export the "
                    "CA certificates to a PEM file"
                )
            out["ssl.ca.location"] = value
        elif key == "ssl.truststore.certificates":
            out["ssl.ca.pem"] = value
        elif key == "ssl.keystore.location":
            kind = _store_type(props, "ssl.keystore")
            if kind == "PEM":
                out["ssl.certificate.location"] = value
                out["ssl.key.location"] = value
            elif kind == "PKCS12":
                out["ssl.keystore.location"] = value
            else:
                raise CliError(
                    f"ssl.keystore.type={kind} is not supported: use a PEM or PKCS12 key store"
                )
        elif key == "ssl.keystore.key":
            out["ssl.key.pem"] = value
        elif key == "ssl.keystore.certificate.chain":
            out["ssl.certificate.pem"] = value
        elif key == "ssl.endpoint.identification.algorithm":
            out[key] = value.strip() or "none"
        else:
            out[key] = value
    return out
