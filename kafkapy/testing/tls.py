"""Certificates for tests and benchmarks, made with the ``cryptography`` package (test extra).

:func:`make_pki` writes, into a directory, a CA and certificates signed by it (EC P-256 keys,
fast to make and to handshake with):

* ``ca.pem``: the CA certificate (clients' and brokers' trust store);
* ``server.pem``: the broker's PEM key store, private key then certificate chain, for
  ``localhost`` and ``127.0.0.1``; ``server-encrypted.pem`` the same with the key encrypted with
  :data:`KEY_PASSWORD`; ``server.p12`` a PKCS12 key store with that password;
* ``<name>.key`` / ``<name>.crt`` / ``<name>.pem`` (key and certificate together) for each
  client: ``alice`` (CN=alice,OU=clients,O=kafkapy), ``expired`` (validity ended yesterday) and
  ``rogue`` (signed by another CA, untrusted).
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

KEY_PASSWORD = "key-secret"
ALICE_DN = "CN=alice,OU=clients,O=kafkapy"


def _name(cn: str, ou: str | None = None, o: str = "kafkapy") -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o)]
    if ou:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, ou))
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    return x509.Name(attrs)


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _cert(
    subject: x509.Name,
    key: ec.EllipticCurvePrivateKey,
    issuer: x509.Name,
    issuer_key: ec.EllipticCurvePrivateKey,
    *,
    ca: bool = False,
    san: list[x509.GeneralName] | None = None,
    days: tuple[int, int] = (-1, 365),
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now + datetime.timedelta(days=days[0]))
        .not_valid_after(now + datetime.timedelta(days=days[1]))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if san:
        builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _pem_key(key: ec.EllipticCurvePrivateKey, password: str | None = None) -> bytes:
    encryption = (
        serialization.BestAvailableEncryption(password.encode())
        if password
        else serialization.NoEncryption()
    )
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
    )


def _pem_cert(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


@dataclass(frozen=True)
class Pki:
    dir: Path

    @property
    def ca(self) -> str:
        return str(self.dir / "ca.pem")

    @property
    def server_keystore(self) -> str:
        return str(self.dir / "server.pem")

    def client(self, name: str) -> tuple[str, str]:
        """(certificate file, key file) of a client."""
        return str(self.dir / f"{name}.crt"), str(self.dir / f"{name}.key")

    def client_pem(self, name: str) -> str:
        return str(self.dir / f"{name}.pem")


def make_pki(directory: Path) -> Pki:
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, rogue_key = _key(), _key()
    ca_name, rogue_name = _name("kafkapy test CA"), _name("rogue CA")
    ca = _cert(ca_name, ca_key, ca_name, ca_key, ca=True)
    (directory / "ca.pem").write_bytes(_pem_cert(ca))

    server_key = _key()
    server = _cert(
        _name("localhost", "brokers"),
        server_key,
        ca_name,
        ca_key,
        san=[x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))],
    )
    (directory / "server.pem").write_bytes(_pem_key(server_key) + _pem_cert(server) + _pem_cert(ca))
    (directory / "server-encrypted.pem").write_bytes(
        _pem_key(server_key, KEY_PASSWORD) + _pem_cert(server) + _pem_cert(ca)
    )
    (directory / "server.p12").write_bytes(
        pkcs12.serialize_key_and_certificates(
            b"server",
            server_key,
            server,
            [ca],
            serialization.BestAvailableEncryption(KEY_PASSWORD.encode()),
        )
    )
    clients = {
        "alice": (_name("alice", "clients"), ca_name, ca_key, (-1, 365)),
        "expired": (_name("expired", "clients"), ca_name, ca_key, (-30, -1)),
        "rogue": (_name("rogue", "clients"), rogue_name, rogue_key, (-1, 365)),
    }
    for name, (subject, issuer, issuer_key, days) in clients.items():
        key = _key()
        cert = _cert(subject, key, issuer, issuer_key, days=days)
        (directory / f"{name}.key").write_bytes(_pem_key(key))
        (directory / f"{name}.crt").write_bytes(_pem_cert(cert))
        (directory / f"{name}.pem").write_bytes(_pem_key(key) + _pem_cert(cert))
    return Pki(directory)
