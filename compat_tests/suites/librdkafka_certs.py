"""Certificates for librdkafka's SSL tests, in the files and encodings trivup provides.

:func:`make_client_files` makes the test PKI (kafkapy.testing.tls: a CA, the broker's PEM key
store for 127.0.0.1, client ``alice``) and writes the client's certificate and key in every
encoding 0097_ssl_verify loads, named by trivup's environment variables: ``SSL_pkcs`` (PKCS#12
with key, certificate and CA, protected by the key password), ``SSL_pub_pem`` / ``SSL_pub_der``
(the certificate), ``SSL_priv_pem`` (the key, encrypted with the key password) /
``SSL_priv_der`` (PKCS#8, unencrypted), ``SSL_ca_der`` (the CA) and ``SSL_all_cas_pem`` (the CA
and a second, unrelated one), plus ``SSL_password``.
"""

from __future__ import annotations

import datetime
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

from kafkapy.testing.tls import make_pki


def _other_ca() -> x509.Certificate:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "another test CA")])
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )


def make_client_files(directory: Path, key_password: str) -> dict[str, str]:
    """The PKI in ``directory``: ``ca``, ``server_keystore`` and trivup's ``SSL_*`` names ->
    file paths (``SSL_password``: the password itself)."""
    pki = make_pki(directory)
    cert_file, key_file = pki.client("alice")
    cert = x509.load_pem_x509_certificate(Path(cert_file).read_bytes())
    key = serialization.load_pem_private_key(Path(key_file).read_bytes(), None)
    ca = x509.load_pem_x509_certificate(Path(pki.ca).read_bytes())
    pem, der = serialization.Encoding.PEM, serialization.Encoding.DER
    pkcs8 = serialization.PrivateFormat.PKCS8
    secret = serialization.BestAvailableEncryption(key_password.encode())
    contents = {
        "SSL_pkcs": ("client.p12", pkcs12.serialize_key_and_certificates(
            b"client", key, cert, [ca], secret)),  # type: ignore[arg-type]
        "SSL_pub_pem": ("client-cert.pem", cert.public_bytes(pem)),
        "SSL_pub_der": ("client-cert.der", cert.public_bytes(der)),
        "SSL_priv_pem": ("client-key.pem", key.private_bytes(pem, pkcs8, secret)),
        "SSL_priv_der": ("client-key.der", key.private_bytes(
            der, pkcs8, serialization.NoEncryption())),
        "SSL_ca_der": ("ca.der", ca.public_bytes(der)),
        "SSL_all_cas_pem": ("all-cas.pem", ca.public_bytes(pem) + _other_ca().public_bytes(pem)),
    }
    files = {"ca": pki.ca, "server_keystore": pki.server_keystore, "SSL_password": key_password}
    for var, (name, data) in contents.items():
        (directory / name).write_bytes(data)
        files[var] = str(directory / name)
    return files
