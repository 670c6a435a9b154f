"""TLS contexts (the standard library's ``ssl``) built from Kafka's ``ssl.*`` settings.

Key and trust stores:

* ``PEM`` (``ssl.keystore.type=PEM``): ``ssl.keystore.location`` is a PEM file with the private
  key (encrypted with ``ssl.key.password``, or not) and the certificate chain; or the key and
  chain inline in ``ssl.keystore.key`` and ``ssl.keystore.certificate.chain``.
  ``ssl.truststore.location`` is a PEM file of CA certificates, or they are inline in
  ``ssl.truststore.certificates``.
* ``PKCS12``: read with ``ssl.keystore.password`` / ``ssl.truststore.password`` through the
  ``cryptography`` package (a runtime dependency: the standard library cannot read PKCS12).
* ``JKS``: no maintained Python library reads Java key stores; refused with a one-line error
  saying how to convert one (keytool to PKCS12, or openssl to PEM).

With no ``ssl.keystore.type``, a file starting with ``-----BEGIN`` is read as PEM. Without a
trust store the system's default CAs are trusted (as the JVM's default trust store is).

``ssl.client.auth`` (none, requested, required) sets whether a server asks clients for a
certificate; ``ssl.enabled.protocols`` (TLSv1.2,TLSv1.3 by default) bounds the versions;
``ssl.cipher.suites`` takes Kafka's (IANA) suite names or OpenSSL's and restricts the TLS 1.2
suites (TLS 1.3's suites are not configurable through Python's ssl module: when the list names
no TLS 1.3 suite, TLS 1.3 is disabled). ``ssl.endpoint.identification.algorithm`` (``https``, the
default, or empty) decides whether a client checks the server's host name.
"""

from __future__ import annotations

import os
import ssl
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

CLIENT_AUTH = ("none", "requested", "required")
_VERSIONS = {
    "TLSv1": ssl.TLSVersion.TLSv1,
    "TLSv1.1": ssl.TLSVersion.TLSv1_1,
    "TLSv1.2": ssl.TLSVersion.TLSv1_2,
    "TLSv1.3": ssl.TLSVersion.TLSv1_3,
}
DEFAULT_ENABLED_PROTOCOLS = "TLSv1.2,TLSv1.3"


class TlsConfigError(ValueError):
    """An ssl.* setting cannot be used (one line: setting, value, why)."""


def _get(settings: Mapping[str, str], key: str) -> str | None:
    value = settings.get(key)
    if value is None:
        return None
    value = value.strip()
    return value or None


@contextmanager
def _private_file(data: bytes) -> Iterator[str]:
    """A file readable by this user only, holding ``data``, removed afterwards (the ssl module
    loads keys from files)."""
    fd, path = tempfile.mkstemp(prefix="kafkapy-tls-", suffix=".pem")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        yield path
    finally:
        os.unlink(path)


def _store_type(settings: Mapping[str, str], prefix: str, location: str | None) -> str:
    kind = _get(settings, f"{prefix}.type")
    if kind is not None:
        return kind.upper()
    if location is None:
        return "PEM"
    try:
        with open(location, "rb") as f:
            head = f.read(4096)
    except OSError as e:
        raise TlsConfigError(f"{prefix}.location {location}: {e.strerror or e}") from None
    return "PEM" if b"-----BEGIN" in head else "PKCS12"


def _refuse_jks(prefix: str) -> TlsConfigError:
    return TlsConfigError(
        f"{prefix}.type=JKS is not supported: convert the store to PKCS12 (keytool "
        f"-importkeystore -deststoretype PKCS12) or to PEM, and set {prefix}.type accordingly"
    )


def _pkcs12(settings: Mapping[str, str], prefix: str, location: str) -> tuple:
    from cryptography.hazmat.primitives.serialization import pkcs12

    password = _get(settings, f"{prefix}.password")
    try:
        with open(location, "rb") as f:
            data = f.read()
        return pkcs12.load_key_and_certificates(data, password.encode() if password else None)
    except OSError as e:
        raise TlsConfigError(f"{prefix}.location {location}: {e.strerror or e}") from None
    except ValueError as e:
        raise TlsConfigError(f"{prefix}.location {location}: cannot read PKCS12: {e}") from None


def _pem(key: object, certs: list) -> bytes:
    from cryptography.hazmat.primitives import serialization

    out = b""
    if key is not None:
        out += key.private_bytes(  # type: ignore[attr-defined]
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    for cert in certs:
        out += cert.public_bytes(serialization.Encoding.PEM)
    return out


def _load_keystore(ctx: ssl.SSLContext, settings: Mapping[str, str], required: bool) -> bool:
    """Load this side's certificate chain and key; False when none is configured."""
    location = _get(settings, "ssl.keystore.location")
    inline_key = _get(settings, "ssl.keystore.key")
    inline_chain = _get(settings, "ssl.keystore.certificate.chain")
    key_password = _get(settings, "ssl.key.password")
    if location is None and inline_key is None:
        if required:
            raise TlsConfigError(
                "ssl.keystore.location (or ssl.keystore.key with ssl.keystore.certificate.chain) "
                "is required on a TLS listener"
            )
        return False
    try:
        if location is None:
            if inline_chain is None:
                raise TlsConfigError("ssl.keystore.key needs ssl.keystore.certificate.chain")
            with _private_file((inline_key + "\n" + inline_chain + "\n").encode()) as path:
                ctx.load_cert_chain(path, password=key_password)
            return True
        kind = _store_type(settings, "ssl.keystore", location)
        if kind == "JKS":
            raise _refuse_jks("ssl.keystore")
        if kind == "PKCS12":
            key, cert, extra = _pkcs12(settings, "ssl.keystore", location)
            if key is None or cert is None:
                raise TlsConfigError(f"ssl.keystore.location {location}: no key and certificate")
            with _private_file(_pem(key, [cert, *extra])) as path:
                ctx.load_cert_chain(path)
            return True
        if kind != "PEM":
            raise TlsConfigError(f"ssl.keystore.type {kind}: allowed values are PEM, PKCS12")
        ctx.load_cert_chain(location, password=key_password)
        return True
    except ssl.SSLError as e:
        where = location or "ssl.keystore.key"
        raise TlsConfigError(
            f"ssl.keystore.location {where}: cannot load the key and certificate chain "
            f"({e.reason or e}; is ssl.key.password right?)"
        ) from None
    except FileNotFoundError as e:
        raise TlsConfigError(f"ssl.keystore.location {location}: {e.strerror}") from None


def _load_truststore(
    ctx: ssl.SSLContext, settings: Mapping[str, str], purpose: ssl.Purpose
) -> None:
    location = _get(settings, "ssl.truststore.location")
    inline = _get(settings, "ssl.truststore.certificates")
    try:
        if location is None and inline is None:
            ctx.load_default_certs(purpose)
            return
        if location is None:
            ctx.load_verify_locations(cadata=inline)
            return
        kind = _store_type(settings, "ssl.truststore", location)
        if kind == "JKS":
            raise _refuse_jks("ssl.truststore")
        if kind == "PKCS12":
            _key, cert, extra = _pkcs12(settings, "ssl.truststore", location)
            certs = ([cert] if cert is not None else []) + list(extra)
            ctx.load_verify_locations(cadata=_pem(None, certs).decode())
            return
        if kind != "PEM":
            raise TlsConfigError(f"ssl.truststore.type {kind}: allowed values are PEM, PKCS12")
        ctx.load_verify_locations(cafile=location)
    except ssl.SSLError as e:
        raise TlsConfigError(
            f"ssl.truststore.location {location or 'ssl.truststore.certificates'}: cannot load "
            f"the certificates ({e.reason or e})"
        ) from None
    except FileNotFoundError as e:
        raise TlsConfigError(f"ssl.truststore.location {location}: {e.strerror}") from None


def _protocols(ctx: ssl.SSLContext, settings: Mapping[str, str]) -> None:
    text = settings.get("ssl.enabled.protocols") or DEFAULT_ENABLED_PROTOCOLS
    names = [p.strip() for p in text.split(",") if p.strip()]
    unknown = [n for n in names if n not in _VERSIONS]
    if unknown or not names:
        raise TlsConfigError(
            f"ssl.enabled.protocols {text!r}: allowed values are {', '.join(_VERSIONS)}"
        )
    versions = sorted(_VERSIONS[n] for n in names)
    ctx.minimum_version, ctx.maximum_version = versions[0], versions[-1]


_TLS13_SUITES = (
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
    "TLS_AES_128_CCM_SHA256",
    "TLS_AES_128_CCM_8_SHA256",
)
_KEY_EXCHANGES = {
    "RSA": "",
    "DHE_RSA": "DHE-RSA",
    "ECDHE_RSA": "ECDHE-RSA",
    "ECDHE_ECDSA": "ECDHE-ECDSA",
}


def openssl_cipher_name(name: str) -> str:
    """Kafka's (IANA) TLS 1.2 suite name -> OpenSSL's; other names are returned unchanged.

    ``TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384`` -> ``ECDHE-RSA-AES256-GCM-SHA384``,
    ``TLS_RSA_WITH_AES_128_GCM_SHA256`` -> ``AES128-GCM-SHA256``.
    """
    if not name.startswith("TLS_") or "_WITH_" not in name:
        return name
    kx, _, cipher = name[4:].partition("_WITH_")
    kx_part = _KEY_EXCHANGES.get(kx, kx.replace("_", "-"))
    cipher = cipher.replace("AES_128", "AES128").replace("AES_256", "AES256")
    cipher = cipher.replace("CHACHA20_POLY1305_SHA256", "CHACHA20-POLY1305")
    cipher = cipher.replace("_", "-")
    if cipher.endswith("-SHA") or "-CBC-" in cipher:
        cipher = cipher.replace("-CBC", "")
    return f"{kx_part}-{cipher}" if kx_part else cipher


def _ciphers(ctx: ssl.SSLContext, settings: Mapping[str, str]) -> None:
    text = _get(settings, "ssl.cipher.suites")
    if text is None:
        return
    names = [n.strip() for n in text.split(",") if n.strip()]
    tls12 = [openssl_cipher_name(n) for n in names if n not in _TLS13_SUITES]
    if tls12:
        try:
            ctx.set_ciphers(":".join(tls12))
        except ssl.SSLError:
            raise TlsConfigError(
                f"ssl.cipher.suites {text!r}: no cipher suite of the list is available"
            ) from None
    elif ctx.minimum_version < ssl.TLSVersion.TLSv1_3:
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    if len(tls12) == len(names) and ctx.maximum_version >= ssl.TLSVersion.TLSv1_3:
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2


def server_context(settings: Mapping[str, str]) -> ssl.SSLContext:
    """The context of a TLS listener (``settings``: its effective ssl.* values)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _protocols(ctx, settings)
    _ciphers(ctx, settings)
    _load_keystore(ctx, settings, required=True)
    auth = (settings.get("ssl.client.auth") or "none").strip().lower()
    if auth not in CLIENT_AUTH:
        raise TlsConfigError(
            f"ssl.client.auth {auth!r}: allowed values are {', '.join(CLIENT_AUTH)}"
        )
    if auth != "none":
        _load_truststore(ctx, settings, ssl.Purpose.CLIENT_AUTH)
        ctx.verify_mode = ssl.CERT_REQUIRED if auth == "required" else ssl.CERT_OPTIONAL
    return ctx


def client_context(settings: Mapping[str, str]) -> ssl.SSLContext:
    """The context of a TLS client (the broker connecting to another broker)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    algorithm = settings.get("ssl.endpoint.identification.algorithm", "https").strip().lower()
    if algorithm not in ("https", ""):
        raise TlsConfigError(
            f"ssl.endpoint.identification.algorithm {algorithm!r}: allowed values are https "
            "or empty"
        )
    ctx.check_hostname = algorithm == "https"
    _protocols(ctx, settings)
    _ciphers(ctx, settings)
    _load_truststore(ctx, settings, ssl.Purpose.SERVER_AUTH)
    _load_keystore(ctx, settings, required=False)
    return ctx
