"""Delegation tokens on one broker with the embedded metadata store, over the wire (kafkapy's
protocol client, as kafka-delegation-tokens.sh uses it): a broker without
delegation.token.secret.key answers DELEGATION_TOKEN_AUTH_DISABLED; with one, owners, renewers
and the authorizer decide as Kafka 4.4 does (CreateTokens on another owner's USER resource,
DescribeTokens and DESCRIBE on DELEGATION_TOKEN for others' tokens, DELEGATION_TOKEN_OWNER_MISMATCH
for renewals by others); a token authenticates over SCRAM with tokenauth=true as its owner, and
such a connection may not ask for tokens; tokens survive a restart; the token znode and the HMAC
are Kafka's."""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac as hmac_lib
import struct
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kio.index import load_response_schema
from kio.serial import entity_reader

from kafkapy.cli.common import CliError
from kafkapy.cli.wire import Connection
from kafkapy.metadata import delegation_tokens as dt
from kafkapy.testing import free_port
from kafkapy.testing.inprocess import BrokerThread

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
SECRET = "the-secret"
NONE, NOT_ALLOWED, AUTHORIZATION_FAILED = 0, 64, 65
AUTH_DISABLED, NOT_FOUND, OWNER_MISMATCH, INVALID_PRINCIPAL_TYPE = 61, 62, 63, 67
NEVER = datetime.timedelta(milliseconds=-1)


def settings(port: int, secret: str | None) -> dict[str, str]:
    users = " ".join(f'user_{u}="{u}-pw"' for u in ("admin", "bob", "carol"))
    out = {
        "listeners": f"SASL_PLAINTEXT://127.0.0.1:{port}",
        "security.inter.broker.protocol": "SASL_PLAINTEXT",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
        "sasl.mechanism.inter.broker.protocol": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config":
            f'{PLAIN_MODULE} required username="admin" password="admin-pw" {users};',
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
        "super.users": "User:admin",
    }
    if secret:
        out["delegation.token.secret.key"] = secret
    return out


@pytest.fixture(scope="module")
def broker(tmp_path_factory) -> Iterator[BrokerThread]:
    port = free_port()
    b = BrokerThread(tmp_path_factory.mktemp("tokens"), settings(port, SECRET), port=port)
    b.start()
    try:
        yield b
    finally:
        b.stop()


def connect(broker: Any, user: str, password: str | None = None, *, token: bool = False):
    if token:
        jaas = f'{SCRAM_MODULE} required username="{user}" password="{password}" tokenauth=true;'
        mechanism = "SCRAM-SHA-256"
    else:
        jaas = f'{PLAIN_MODULE} required username="{user}" password="{user}-pw";'
        mechanism = "PLAIN"
    host, port = broker.bootstrap.rsplit(":", 1)
    return Connection(host, int(port), props={
        "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism,
        "sasl.jaas.config": jaas})


def call(conn: Connection, request: Any) -> tuple[int, Any]:
    """(error code, the decoded response or None when refused: -1 timestamps)."""
    frame, pos = conn.request_raw(request)
    code = struct.unpack_from(">h", frame, pos)[0]
    if code:
        return code, frame[pos:]
    schema = load_response_schema(request.__api_key__, request.__version__)
    return 0, entity_reader(schema)(frame, pos)[0]


def create(conn: Connection, owner: str | None = None, renewers: tuple[str, ...] = (),
           lifetime: datetime.timedelta = NEVER) -> tuple[int, Any]:
    from kio.schema.create_delegation_token.v3.request import (
        CreatableRenewers,
        CreateDelegationTokenRequest,
    )

    kind, name = owner.split(":") if owner else (None, None)
    return call(conn, CreateDelegationTokenRequest(
        owner_principal_type=kind, owner_principal_name=name, max_lifetime=lifetime,
        renewers=tuple(CreatableRenewers(principal_type=r.split(":")[0],
                                         principal_name=r.split(":")[1]) for r in renewers)))


def renew(conn: Connection, hmac: bytes) -> int:
    from kio.schema.renew_delegation_token.v2.request import RenewDelegationTokenRequest

    return call(conn, RenewDelegationTokenRequest(hmac=hmac, renew_period=NEVER))[0]


def expire(conn: Connection, hmac: bytes, period_ms: int = -1) -> int:
    from kio.schema.expire_delegation_token.v2.request import ExpireDelegationTokenRequest

    return call(conn, ExpireDelegationTokenRequest(
        hmac=hmac, expiry_time_period=datetime.timedelta(milliseconds=period_ms)))[0]


def describe(conn: Connection, *owners: str) -> tuple[int, list[str]]:
    from kio.schema.describe_delegation_token.v3.request import (
        DescribeDelegationTokenOwner,
        DescribeDelegationTokenRequest,
    )

    request = DescribeDelegationTokenRequest(owners=tuple(
        DescribeDelegationTokenOwner(principal_type=o.split(":")[0],
                                     principal_name=o.split(":")[1]) for o in owners) or None)
    resp = conn.request(request)
    return int(resp.error_code), [t.token_id for t in resp.tokens]


def test_without_a_secret_key_every_operation_is_disabled(tmp_path) -> None:
    port = free_port()
    b = BrokerThread(tmp_path, settings(port, None), port=port).start()
    try:
        with connect(b, "admin") as c:
            assert create(c)[0] == AUTH_DISABLED
            assert renew(c, b"x") == AUTH_DISABLED
            assert expire(c, b"x") == AUTH_DISABLED
            assert describe(c) == (AUTH_DISABLED, [])
    finally:
        b.stop()


def test_owner_renewers_and_authorization(broker) -> None:
    with connect(broker, "admin") as admin, connect(broker, "bob") as bob, \
            connect(broker, "carol") as carol:
        code, token = create(admin, renewers=("User:bob",))
        assert code == NONE
        assert (token.principal_name, token.token_requester_principal_name) == ("admin", "admin")
        assert token.hmac == hmac_lib.new(SECRET.encode(), token.token_id.encode(),
                                          hashlib.sha512).digest()
        # the owner and the renewer see it, carol (neither, no ACL) does not
        assert token.token_id in describe(admin)[1] and token.token_id in describe(bob)[1]
        assert token.token_id not in describe(carol)[1]
        assert renew(carol, token.hmac) == OWNER_MISMATCH
        assert expire(carol, token.hmac) == OWNER_MISMATCH
        assert renew(bob, token.hmac) == NONE
        assert renew(bob, b"unknown") == NOT_FOUND
        # another owner needs CreateTokens on that USER resource; renewers must be users
        assert create(bob, owner="User:carol")[0] == AUTHORIZATION_FAILED
        assert create(admin, owner="User:carol")[0] == NONE  # a super user
        assert create(bob, renewers=("Group:ops",))[0] == INVALID_PRINCIPAL_TYPE
        carols = describe(carol, "User:carol")[1]
        assert len(carols) == 1
        # DescribeTokens on User:admin lets carol see admin's tokens
        from kio.schema.create_acls.v3.request import AclCreation, CreateAclsRequest

        acl = admin.request(CreateAclsRequest(creations=(AclCreation(
            resource_type=7, resource_name="User:admin", resource_pattern_type=3,
            principal="User:carol", host="*", operation=14, permission_type=3),)))
        assert acl.results[0].error_code == 0
        assert token.token_id in describe(carol)[1]
        assert expire(bob, token.hmac) == NONE
        assert token.token_id not in describe(admin)[1]


def test_a_token_authenticates_as_its_owner_and_may_not_ask_for_tokens(broker) -> None:
    with connect(broker, "admin") as admin:
        _, token = create(admin, renewers=("User:bob",))
    password = base64.b64encode(token.hmac).decode()
    with connect(broker, token.token_id, password, token=True) as session:
        assert create(session)[0] == NOT_ALLOWED
        assert renew(session, token.hmac) == NOT_ALLOWED
        assert expire(session, token.hmac) == NOT_ALLOWED
        assert describe(session) == (NOT_ALLOWED, [])
        # ACLs apply to the owner: a super user may read the cluster's ACLs
        from kio.schema.describe_acls.v3.request import DescribeAclsRequest

        acls = session.request(DescribeAclsRequest(
            resource_type_filter=1, resource_name_filter=None, pattern_type_filter=1,
            principal_filter=None, host_filter=None, operation=1, permission_type=1))
        assert acls.error_code == 0
    with pytest.raises(CliError, match="SASL authentication failed"):
        connect(broker, token.token_id, "wrong" + password[5:], token=True)
    with pytest.raises(CliError, match="SASL authentication failed"):  # the id as a user
        connect(broker, token.token_id, password)


def test_tokens_survive_a_restart_in_the_embedded_store(broker) -> None:
    with connect(broker, "admin") as admin:
        _, token = create(admin, renewers=("User:bob",))
    got = broker.broker.store.get(dt.TOKEN_INFO.path(token.token_id))[0]
    assert dt.TOKEN_INFO.decode(got).renewers == ("User:bob",)
    broker.restart()
    with connect(broker, "bob") as bob:
        assert token.token_id in describe(bob, "User:admin")[1]
    password = base64.b64encode(token.hmac).decode()
    with connect(broker, token.token_id, password, token=True) as session:
        assert describe(session)[0] == NOT_ALLOWED


def test_a_token_session_lasts_until_the_token_expires(broker) -> None:
    """Kafka bounds a token session by the token's expiry (CREDENTIAL_LIFETIME_MS): the
    SaslAuthenticate answer gives the time left, and a client re-authenticates before it."""
    from kio.schema.sasl_authenticate.v2.request import SaslAuthenticateRequest
    from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest

    from kafkapy.security.scram import ScramClient

    with connect(broker, "admin") as admin:
        _, token = create(admin)
    left_ms = round(token.expiry_timestamp.timestamp() * 1000) - int(time.time() * 1000)
    host, port = broker.bootstrap.rsplit(":", 1)
    with Connection(host, int(port)) as raw:
        assert raw.request(SaslHandshakeRequest(mechanism="SCRAM-SHA-256")).error_code == 0
        client = ScramClient("SCRAM-SHA-256", token.token_id,
                             base64.b64encode(token.hmac).decode(), token_auth=True)
        first = raw.request(SaslAuthenticateRequest(auth_bytes=client.first()))
        final = raw.request(SaslAuthenticateRequest(auth_bytes=client.evaluate(first.auth_bytes)))
        assert final.error_code == 0
        lifetime_ms = final.session_lifetime // datetime.timedelta(milliseconds=1)
        assert left_ms - 60_000 < lifetime_ms <= left_ms  # the broker's default: one day
