"""Each listener's security settings, resolved from server.properties as Kafka resolves them.

A listener's effective settings are the broker-wide keys overridden by its own
``listener.name.<listener>.<key>`` keys (listener name in lower case, as Kafka writes it).
:class:`ListenerSecurity` holds what a connection on that listener needs:

* TLS (SSL, SASL_SSL): the server context (kafkapy.security.tls), ``ssl.client.auth``, and
  ``ssl.principal.mapping.rules`` for principals from client certificates;
* SASL (SASL_PLAINTEXT, SASL_SSL): ``sasl.enabled.mechanisms`` (PLAIN, SCRAM-SHA-256,
  SCRAM-SHA-512; Kafka's default GSSAPI is not served), PLAIN's user database from
  ``listener.name.<l>.plain.sasl.jaas.config`` (``user_<name>="<password>"``),
  ``connections.max.reauth.ms`` (also per mechanism: ``listener.name.<l>.<mechanism>.
  connections.max.reauth.ms``) and ``sasl.server.max.receive.size``; with OAUTHBEARER, its token
  validator (kafkapy.security.oauthbearer_listener).

:class:`InterBrokerSecurity` is the client side used on the inter-broker listener: the TLS client
context from the same listener's settings and, with SASL, ``sasl.mechanism.inter.broker.protocol``
with the ``username``/``password`` options of that mechanism's JAAS config on the listener.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field

from .jaas import PLAIN_LOGIN_MODULE, JaasConfigError, parse_jaas_config
from .oauthbearer import TokenValidator
from .oauthbearer_listener import OAuthListenerConfigError, oauthbearer_validator
from .sasl import GSSAPI, OAUTHBEARER, PLAIN, SERVED_MECHANISMS
from .session import PLAINTEXT, SECURITY_PROTOCOLS, uses_sasl, uses_tls
from .ssl_principal import InvalidRule, SslPrincipalMapper
from .tls import TlsConfigError, client_context, server_context

DEFAULT_SASL_MAX_RECEIVE = 524288  # Kafka's sasl.server.max.receive.size


class SecurityConfigError(ValueError):
    """A listener's security settings are unusable (one line)."""


def listener_settings(props: Mapping[str, str], listener_name: str) -> dict[str, str]:
    """The broker-wide keys with the listener's ``listener.name.<l>.`` keys laid over them."""
    prefix = f"listener.name.{listener_name.lower()}."
    out = {k: v for k, v in props.items() if not k.startswith("listener.name.")}
    for key, value in props.items():
        if key.lower().startswith(prefix):
            out[key[len(prefix) :]] = value
    return out


def inter_broker_listener(props: Mapping[str, str], advertised: list[str]) -> str:
    """The listener brokers reach each other on, by Kafka's rules: ``inter.broker.listener.name``,
    else the listener named by ``security.inter.broker.protocol`` (default PLAINTEXT), never both;
    it must be advertised. kafkapy also lets a lone listener serve brokers whatever its name."""
    name = props.get("inter.broker.listener.name", "").strip().upper() or None
    protocol = props.get("security.inter.broker.protocol", "").strip().upper() or None
    if name and protocol:
        raise SecurityConfigError(
            f"Invalid value {protocol!r} for configuration security.inter.broker.protocol: only "
            "one of inter.broker.listener.name and security.inter.broker.protocol may be set"
        )
    if protocol is not None and protocol not in SECURITY_PROTOCOLS:
        raise SecurityConfigError(
            f"Invalid value {protocol!r} for configuration security.inter.broker.protocol: "
            f"allowed values are {', '.join(SECURITY_PROTOCOLS)}"
        )
    if name is None:
        name = protocol or PLAINTEXT
        if protocol is None and name not in advertised and len(advertised) == 1:
            name = advertised[0]
    if name not in advertised:
        key = (
            "inter.broker.listener.name"
            if "inter.broker.listener.name" in props
            else ("security.inter.broker.protocol")
        )
        raise SecurityConfigError(
            f"Invalid value {props.get(key, name)!r} for configuration {key}: must be the name "
            f"of one of the listeners; the inter-broker listener {name} is not in "
            f"advertised.listeners ({', '.join(advertised)})"
        )
    return name


def _int(settings: Mapping[str, str], key: str, default: int, where: str) -> int:
    value = settings.get(key)
    if value is None or not value.strip():
        return default
    try:
        n = int(value.strip())
    except ValueError:
        raise SecurityConfigError(
            f"Invalid value {value!r} for configuration {where}{key}: expected an integer"
        ) from None
    if n < 0:
        raise SecurityConfigError(
            f"Invalid value {value!r} for configuration {where}{key}: value must be at least 0"
        )
    return n


def _jaas_options(
    settings: Mapping[str, str], listener: str, mechanism: str
) -> dict[str, str] | None:
    """Options of the JAAS login module configured for ``mechanism`` on the listener."""
    key = f"{mechanism.lower()}.sasl.jaas.config"
    text = settings.get(key)
    if text is None:
        return None
    try:
        entries = parse_jaas_config(text)
    except JaasConfigError as e:
        raise SecurityConfigError(
            f"Invalid value for configuration listener.name.{listener.lower()}.{key}: {e}"
        ) from None
    options: dict[str, str] = {}
    for entry in entries:
        if mechanism == PLAIN and entry.login_module != PLAIN_LOGIN_MODULE:
            continue
        options.update(entry.options)
    return options


def _mechanisms(settings: Mapping[str, str], listener: str) -> tuple[str, ...]:
    text = settings.get("sasl.enabled.mechanisms")
    if text is None or not text.strip():
        raise SecurityConfigError(
            f"sasl.enabled.mechanisms must be set for SASL listener {listener} (Kafka's default, "
            f"{GSSAPI}, is not supported; kafkapy serves {', '.join(SERVED_MECHANISMS)})"
        )
    names = tuple(dict.fromkeys(m.strip().upper() for m in text.split(",") if m.strip()))
    unsupported = [m for m in names if m not in SERVED_MECHANISMS]
    if unsupported or not names:
        raise SecurityConfigError(
            f"Invalid value {text!r} for configuration sasl.enabled.mechanisms of listener "
            f"{listener}: kafkapy serves {', '.join(SERVED_MECHANISMS)}"
        )
    return names


@dataclass(frozen=True)
class ListenerSecurity:
    name: str
    protocol: str
    settings: Mapping[str, str] = field(repr=False, default_factory=dict)
    ssl_context: ssl.SSLContext | None = field(repr=False, default=None)
    client_auth: str = "none"
    principal_mapper: SslPrincipalMapper = field(default_factory=SslPrincipalMapper)
    mechanisms: tuple[str, ...] = ()
    plain_users: Mapping[str, str] = field(repr=False, default_factory=dict)
    reauth_ms: Mapping[str, int] = field(default_factory=dict)  # mechanism -> ms (0: off)
    oauth_validator: TokenValidator | None = field(repr=False, default=None)
    sasl_max_receive: int = DEFAULT_SASL_MAX_RECEIVE

    @property
    def tls(self) -> bool:
        return uses_tls(self.protocol)

    @property
    def sasl(self) -> bool:
        return uses_sasl(self.protocol)

    @classmethod
    def build(cls, props: Mapping[str, str], name: str, protocol: str) -> ListenerSecurity:
        settings = listener_settings(props, name)
        kw: dict = {"name": name, "protocol": protocol, "settings": settings}
        try:
            kw["principal_mapper"] = SslPrincipalMapper(settings.get("ssl.principal.mapping.rules"))
        except InvalidRule as e:
            raise SecurityConfigError(
                f"Invalid value for configuration ssl.principal.mapping.rules: {e}"
            ) from None
        if uses_tls(protocol):
            try:
                kw["ssl_context"] = server_context(settings)
            except TlsConfigError as e:
                raise SecurityConfigError(f"listener {name}: {e}") from None
            kw["client_auth"] = (settings.get("ssl.client.auth") or "none").strip().lower()
        if uses_sasl(protocol):
            mechanisms = _mechanisms(settings, name)
            kw["mechanisms"] = mechanisms
            if PLAIN in mechanisms:
                options = _jaas_options(settings, name, PLAIN)
                users = {k[5:]: v for k, v in (options or {}).items() if k.startswith("user_")}
                if not users:
                    raise SecurityConfigError(
                        f"listener.name.{name.lower()}.plain.sasl.jaas.config must give PLAIN's "
                        f'users (user_<name>="<password>") when PLAIN is enabled on listener {name}'
                    )
                kw["plain_users"] = users
            if OAUTHBEARER in mechanisms:
                try:
                    kw["oauth_validator"] = oauthbearer_validator(
                        settings, name, _jaas_options(settings, name, OAUTHBEARER)
                    )
                except OAuthListenerConfigError as e:
                    raise SecurityConfigError(str(e)) from None
            default_reauth = _int(settings, "connections.max.reauth.ms", 0, "")
            kw["reauth_ms"] = {
                m: _int(settings, f"{m.lower()}.connections.max.reauth.ms", default_reauth, "")
                for m in mechanisms
            }
            kw["sasl_max_receive"] = _int(
                settings, "sasl.server.max.receive.size", DEFAULT_SASL_MAX_RECEIVE, ""
            )
        return cls(**kw)


@dataclass(frozen=True)
class InterBrokerSecurity:
    """How this broker connects to the others (the inter-broker listener's client side)."""

    listener_name: str
    protocol: str
    ssl_context: ssl.SSLContext | None = field(repr=False, default=None)
    mechanism: str | None = None
    username: str = ""
    password: str = field(repr=False, default="")

    @classmethod
    def build(cls, props: Mapping[str, str], name: str, protocol: str) -> InterBrokerSecurity:
        settings = listener_settings(props, name)
        kw: dict = {"listener_name": name, "protocol": protocol}
        if uses_tls(protocol):
            try:
                kw["ssl_context"] = client_context(settings)
            except TlsConfigError as e:
                raise SecurityConfigError(f"inter-broker listener {name}: {e}") from None
        if uses_sasl(protocol):
            mechanism = (settings.get("sasl.mechanism.inter.broker.protocol") or GSSAPI).strip()
            mechanism = mechanism.upper()
            if mechanism == OAUTHBEARER:
                raise SecurityConfigError(
                    "sasl.mechanism.inter.broker.protocol OAUTHBEARER is not supported by kafkapy "
                    "(brokers connect to each other with PLAIN or SCRAM)"
                )
            if mechanism not in _mechanisms(settings, name):
                raise SecurityConfigError(
                    f"sasl.mechanism.inter.broker.protocol {mechanism} must be one of the "
                    f"mechanisms enabled on the inter-broker listener {name} "
                    f"(sasl.enabled.mechanisms)"
                )
            options = _jaas_options(settings, name, mechanism) or {}
            if not options.get("username") or "password" not in options:
                raise SecurityConfigError(
                    f"listener.name.{name.lower()}.{mechanism.lower()}.sasl.jaas.config must give "
                    f"username and password: the broker's own credentials on the inter-broker "
                    f"listener {name}"
                )
            kw.update(
                mechanism=mechanism, username=options["username"], password=options["password"]
            )
        return cls(**kw)
