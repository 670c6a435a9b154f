"""Differential sessions of delegation tokens on a SASL listener, with and without
delegation.token.secret.key, each against a pair of brokers of this module's own (Apache Kafka
4.4, one KRaft node, and kafkapy, each with a PLAINTEXT listener and a SASL_PLAINTEXT one
serving PLAIN for admin, bob and carol and SCRAM-SHA-256 for tokens; no authorizer). With the
key: create (owners, renewers, lifetimes, a renewer that is not a user), renew and expire by
owner, renewer and stranger and with unknown HMACs, describe with null, empty and named owners
as each user, a token's SCRAM login with tokenauth=true and the refusal of token requests on
that connection. Without it: every operation as an owner and as another user. Values that
differ between any two runs (token ids, HMACs, clock times) are reduced to what a client relies
on (lengths, lifetimes, which token). Differences not in known_differences.py fail the test.
"""

from __future__ import annotations

import base64
import datetime
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kio.index import load_response_schema
from kio.serial import entity_reader

from compat_tests.reference.conftest import SHARED_CONFIG, _differentials
from compat_tests.reference.differential import Differential, Target
from compat_tests.reference.kafka_broker import NODE_ID, ReferenceKafka
from kafkapy.cli.common import CliError
from kafkapy.cli.wire import Connection
from kafkapy.testing import BrokerProcess, free_port

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
USERS = ("admin", "bob", "carol")
HOUR = 3_600_000


def sasl_settings(secret: bool) -> dict[str, str]:
    users = " ".join(f'user_{u}="{u}-pw"' for u in USERS)
    out = {
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config":
            f'{PLAIN_MODULE} required username="admin" password="admin-pw" {users};',
        "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config":
            f"{SCRAM_MODULE} required;",
        "delegation.token.max.lifetime.ms": str(24 * HOUR),
        "delegation.token.expiry.time.ms": str(2 * HOUR),
    }
    if secret:
        out["delegation.token.secret.key"] = "differential-secret"
    return out


def start_pair(base: Path, secret: bool) -> tuple[Differential, Any]:
    """Both brokers with a SASL_PLAINTEXT listener beside their PLAINTEXT one; the pair and a
    function that stops them."""
    kafka = ReferenceKafka(base / "kafka", SHARED_CONFIG)
    k_sasl = free_port()
    kafka.overrides.update({
        **sasl_settings(secret),
        "listeners": f"PLAINTEXT://127.0.0.1:{kafka.port},SASL_PLAINTEXT://127.0.0.1:{k_sasl},"
                     f"CONTROLLER://127.0.0.1:{kafka.controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{kafka.port},"
                                f"SASL_PLAINTEXT://127.0.0.1:{k_sasl}",
        "listener.security.protocol.map":
            "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
    })
    port, p_sasl = free_port(), free_port()
    kafkapy = BrokerProcess(base / "kafkapy", {
        **SHARED_CONFIG, **sasl_settings(secret), "broker.id": str(NODE_ID),
        "listeners": f"PLAINTEXT://127.0.0.1:{port},SASL_PLAINTEXT://127.0.0.1:{p_sasl}",
        "inter.broker.listener.name": "PLAINTEXT",
    }, port=port)

    def stop() -> None:
        kafka.stop()
        assert kafkapy.stop() in (0, None), kafkapy.log_text()[-3000:]

    try:
        kafka.start()
        kafkapy.start()
    except BaseException:
        stop()
        raise
    pair = Differential(Target("kafka", f"127.0.0.1:{k_sasl}", kafka.cluster_id, NODE_ID),
                        Target("kafkapy", f"127.0.0.1:{p_sasl}", None, NODE_ID))
    _differentials.append(pair)
    return pair, stop


@pytest.fixture(scope="module")
def token_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Differential]:
    pair, stop = start_pair(Path(tmp_path_factory.mktemp("tokens-sasl")), secret=True)
    try:
        yield pair
    finally:
        stop()


@pytest.fixture(scope="module")
def keyless_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Differential]:
    pair, stop = start_pair(Path(tmp_path_factory.mktemp("tokens-keyless")), secret=False)
    try:
        yield pair
    finally:
        stop()


def connect(target: Target, user: str, password: str | None = None, token: bool = False):
    if token:
        jaas = f'{SCRAM_MODULE} required username="{user}" password="{password}" tokenauth=true;'
    else:
        jaas = f'{PLAIN_MODULE} required username="{user}" password="{user}-pw";'
    host, port = target.bootstrap.rsplit(":", 1)
    return Connection(host, int(port), props={
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-256" if token else "PLAIN", "sasl.jaas.config": jaas})


def call(conn: Connection, request: Any) -> tuple[int, Any]:
    frame, pos = conn.request_raw(request)
    code = struct.unpack_from(">h", frame, pos)[0]
    if code:
        return code, "0x" + frame[pos:].hex()
    schema = load_response_schema(request.__api_key__, request.__version__)
    return 0, entity_reader(schema)(frame, pos)[0]


def ms(delta: int) -> datetime.timedelta:
    return datetime.timedelta(milliseconds=delta)


def create(conn: Connection, renewers: tuple[str, ...] = (), owner: str | None = None,
           lifetime: int = -1) -> tuple[dict[str, Any], Any]:
    from kio.schema.create_delegation_token.v3.request import (
        CreatableRenewers,
        CreateDelegationTokenRequest,
    )

    kind, name = owner.split(":") if owner else (None, None)
    code, resp = call(conn, CreateDelegationTokenRequest(
        owner_principal_type=kind, owner_principal_name=name, max_lifetime=ms(lifetime),
        renewers=tuple(CreatableRenewers(principal_type=r.split(":")[0],
                                         principal_name=r.split(":")[1]) for r in renewers)))
    if code:
        return {"error_code": code, "body": resp}, None
    ts = [round(t.timestamp() * 1000) for t in (resp.issue_timestamp, resp.expiry_timestamp,
                                                 resp.max_timestamp)]
    return {
        "error_code": 0,
        "owner": f"{resp.principal_type}:{resp.principal_name}",
        "requester": f"{resp.token_requester_principal_type}:"
                     f"{resp.token_requester_principal_name}",
        "lifetime_ms": ts[2] - ts[0], "until_expiry_ms": ts[1] - ts[0],
        "issued_now": abs(ts[0] - time.time() * 1000) < 60_000,
        "token_id_length": len(resp.token_id), "hmac_length": len(resp.hmac),
    }, resp


def renew(conn: Connection, hmac: bytes, period: int = -1) -> dict[str, Any]:
    from kio.schema.renew_delegation_token.v2.request import RenewDelegationTokenRequest

    code, resp = call(conn, RenewDelegationTokenRequest(hmac=hmac, renew_period=ms(period)))
    if code:
        return {"error_code": code, "body": resp}
    left = round(resp.expiry_timestamp.timestamp() * 1000 - time.time() * 1000)
    return {"error_code": 0, "expires_in_hours": round(left / HOUR)}


def expire(conn: Connection, hmac: bytes, period: int) -> dict[str, Any]:
    from kio.schema.expire_delegation_token.v2.request import ExpireDelegationTokenRequest

    code, resp = call(conn, ExpireDelegationTokenRequest(hmac=hmac, expiry_time_period=ms(period)))
    if code:
        return {"error_code": code, "body": resp}
    left = round(resp.expiry_timestamp.timestamp() * 1000 - time.time() * 1000)
    return {"error_code": 0, "expires_in_hours": round(left / HOUR)}


def describe(conn: Connection, names: dict[str, str], owners: tuple[str, ...] | None
             ) -> dict[str, Any]:
    from kio.schema.describe_delegation_token.v3.request import (
        DescribeDelegationTokenOwner,
        DescribeDelegationTokenRequest,
    )

    resp = conn.request(DescribeDelegationTokenRequest(owners=None if owners is None else tuple(
        DescribeDelegationTokenOwner(principal_type=o.split(":")[0],
                                     principal_name=o.split(":")[1]) for o in owners)))
    return {"error_code": int(resp.error_code), "tokens": sorted(
        (names.get(t.token_id, "other"), f"{t.principal_type}:{t.principal_name}",
         f"{t.token_requester_principal_type}:{t.token_requester_principal_name}",
         ",".join(f"{r.principal_type}:{r.principal_name}" for r in t.renewers),
         t.max_timestamp - t.issue_timestamp) for t in resp.tokens)}


def wait_visible(conn: Connection, token_ids: set[str], gone: str = "") -> None:
    """Until the broker's token cache has the tokens, and not ``gone`` (Kafka publishes them
    from its metadata log, a moment after the controller answered)."""
    from kio.schema.describe_delegation_token.v3.request import DescribeDelegationTokenRequest

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        resp = conn.request(DescribeDelegationTokenRequest(owners=None))
        seen = {t.token_id for t in resp.tokens}
        if token_ids <= seen and gone not in seen:
            return
        time.sleep(0.1)


def token_session(target: Target) -> dict[str, Any]:
    out: dict[str, Any] = {}
    admin, bob, carol = (connect(target, u) for u in USERS)
    try:
        out["create_admin"], t1 = create(admin, renewers=("User:bob",))
        out["create_short"], t2 = create(admin, lifetime=HOUR // 2)
        out["create_long_asked"], t3 = create(bob, lifetime=48 * HOUR)
        out["create_for_carol"], t4 = create(bob, owner="User:carol")
        out["create_group_renewer"], _ = create(admin, renewers=("Group:ops",))
        names = {t.token_id: n for n, t in (("t1", t1), ("t2", t2), ("t3", t3), ("t4", t4))}
        wait_visible(admin, set(names))
        for user, conn in (("admin", admin), ("bob", bob), ("carol", carol)):
            out[f"describe_{user}_null"] = describe(conn, names, None)
            out[f"describe_{user}_empty"] = describe(conn, names, ())
        out["describe_admin_of_bob"] = describe(admin, names, ("User:bob",))
        out["describe_admin_of_carol"] = describe(admin, names, ("User:carol",))
        out["renew_by_renewer"] = renew(bob, t1.hmac, HOUR)
        out["renew_by_owner_default"] = renew(admin, t1.hmac)
        out["renew_by_stranger"] = renew(carol, t1.hmac)
        out["renew_unknown"] = renew(admin, b"no such token")
        out["expire_by_stranger"] = expire(carol, t2.hmac, -1)
        out["expire_unknown"] = expire(admin, b"no such token", -1)
        out["expire_later"] = expire(admin, t2.hmac, HOUR // 4)
        out["expire_now_by_renewer"] = expire(bob, t1.hmac, -1)
        wait_visible(admin, set(names) - {t1.token_id}, gone=t1.token_id)
        out["renew_expired_away"] = renew(admin, t1.hmac)
        # the token as a login: its owner, and no token requests on such a connection
        password = base64.b64encode(t3.hmac).decode()
        try:
            with connect(target, t3.token_id, password, token=True) as session:
                out["token_login"] = "ok"
                out["token_create"], _ = create(session)
                out["token_renew"] = renew(session, t3.hmac)
                out["token_expire"] = expire(session, t3.hmac, -1)
                out["token_describe"] = describe(session, names, None)
        except CliError as e:
            out["token_login"] = str(e)
        try:
            wrong = ("B" if password[0] == "A" else "A") + password[1:]
            connect(target, t3.token_id, wrong, token=True).close()
            out["token_bad_hmac"] = "accepted"
        except CliError as e:
            out["token_bad_hmac"] = str(e)
        for t in (t2, t3, t4):
            expire(admin if t is t2 else bob if t is t3 else carol, t.hmac, -1)
    finally:
        for c in (admin, bob, carol):
            c.close()
    return out


def test_tokens_on_a_sasl_listener(token_pair: Differential) -> None:
    outcome = token_pair.check("token_session_sasl", token_session)
    assert outcome.observations > 60


def keyless_session(target: Target) -> dict[str, Any]:
    """Every operation on a broker without delegation.token.secret.key, as admin and bob."""
    out: dict[str, Any] = {}
    for user in ("admin", "bob"):
        with connect(target, user) as conn:
            out[f"create_{user}"], _ = create(conn, renewers=("User:bob",))
            out[f"create_{user}_for_carol"], _ = create(conn, owner="User:carol")
            out[f"create_{user}_group_renewer"], _ = create(conn, renewers=("Group:ops",))
            out[f"renew_{user}"] = renew(conn, b"no such token")
            out[f"expire_{user}"] = expire(conn, b"no such token", -1)
            out[f"describe_{user}_null"] = describe(conn, {}, None)
            out[f"describe_{user}_empty"] = describe(conn, {}, ())
    return out


def test_tokens_without_a_secret_key(keyless_pair: Differential) -> None:
    outcome = keyless_pair.check("token_session_sasl_keyless", keyless_session)
    assert outcome.observations >= 20
