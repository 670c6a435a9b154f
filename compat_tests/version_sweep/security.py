"""Checks of the security APIs: SaslHandshake, SaslAuthenticate, the SCRAM credential APIs
and the ACL APIs."""

from __future__ import annotations

import datetime
import struct
from typing import Any

from kafkapy.protocol.errors import ErrorCode as E

from .builder import make
from .env import SWEEP, Env, ok


def check_sasl_handshake(env: Env, v: int) -> None:
    """On a PLAINTEXT listener there is no SASL to start: ILLEGAL_SASL_STATE, as Kafka."""
    resp = env.request(make("SaslHandshake", v, env, mechanism="PLAIN"))
    assert resp.error_code == E.illegal_sasl_state and tuple(resp.mechanisms) == (), resp


def check_sasl_authenticate(env: Env, v: int) -> None:
    resp = env.request(make("SaslAuthenticate", v, env, auth_bytes=b"\0u\0p"))
    assert resp.error_code == E.illegal_sasl_state, resp
    assert resp.error_message == "SaslAuthenticate request received after successful authentication"


def _alter_scram(env: Env, user: str, iterations: int) -> Any:
    return env.request(
        make(
            "AlterUserScramCredentials",
            0,
            env,
            deletions=[],
            upsertions=[
                {"name": user, "mechanism": 1, "iterations": iterations, "salt": b"salt",
                 "salted_password": bytes(32)}
            ],
        )
    )


def check_alter_user_scram_credentials(env: Env, v: int) -> None:
    resp = _alter_scram(env, "sweep-scram", 4096)
    assert [(r.user, r.error_code) for r in resp.results] == [("sweep-scram", 0)], resp
    resp = _alter_scram(env, "sweep-weak", 10)
    assert [(r.user, r.error_code, r.error_message) for r in resp.results] == [
        ("sweep-weak", E.unacceptable_credential, "Too few iterations")
    ], resp


def check_describe_user_scram_credentials(env: Env, v: int) -> None:
    assert ok(_alter_scram(env, "sweep-described", 8192).results[0].error_code)
    resp = env.request(
        make("DescribeUserScramCredentials", v, env,
             users=[{"name": "sweep-described"}, {"name": "sweep-nobody"}])
    )
    assert ok(resp.error_code), resp
    found, missing = resp.results
    assert [(c.mechanism, c.iterations) for c in found.credential_infos] == [(1, 8192)]
    assert missing.error_code == E.resource_not_found, missing


_ACL = {"resource_type": 2, "resource_name": SWEEP, "principal": "User:alice", "host": "*",
        "operation": 3, "permission_type": 3}
_ACL_FILTER = {"resource_type_filter": 2, "resource_name_filter": SWEEP, "pattern_type_filter": 3,
               "principal_filter": None, "host_filter": None, "operation": 1,
               "permission_type": 1}


def check_describe_acls(env: Env, v: int) -> None:
    """Without an authorizer (authorizer.class.name unset) the ACL APIs answer SECURITY_DISABLED,
    as Kafka; the ACL semantics are in compat_tests/security/test_authorization.py."""
    resp = env.request(make("DescribeAcls", v, env, **_ACL_FILTER))
    assert (resp.error_code, resp.resources) == (E.security_disabled, ()), resp
    assert resp.error_message == "No Authorizer is configured on the broker"


def check_create_acls(env: Env, v: int) -> None:
    resp = env.request(
        make("CreateAcls", v, env, creations=[{**_ACL, "resource_pattern_type": 3}] * 2)
    )
    assert [r.error_code for r in resp.results] == [E.security_disabled] * 2, resp


def check_delete_acls(env: Env, v: int) -> None:
    resp = env.request(make("DeleteAcls", v, env, filters=[_ACL_FILTER]))
    assert [(r.error_code, r.matching_acls) for r in resp.filter_results] == [
        (E.security_disabled, ())
    ], resp


# Delegation tokens: on a PLAINTEXT listener no token request is allowed (Kafka's
# allowTokenRequests): DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, at every version. The refusals carry
# -1 timestamps, which kio's timestamp fields do not decode: the error code (every token
# response's first field) is read from the undecoded body.
TOKEN_REFUSED = E.delegation_token_request_not_allowed
NEVER = datetime.timedelta(milliseconds=-1)


def _refused(env: Env, entity: Any) -> None:
    body = env.response_body(entity)
    assert struct.unpack(">h", body[:2])[0] == TOKEN_REFUSED, body.hex()


def check_create_delegation_token(env: Env, v: int) -> None:
    spec: dict[str, Any] = {"renewers": [{"principal_type": "User", "principal_name": "bob"}],
                            "max_lifetime": NEVER}
    if v >= 3:
        spec.update(owner_principal_type=None, owner_principal_name=None)
    _refused(env, make("CreateDelegationToken", v, env, **spec))


def check_renew_delegation_token(env: Env, v: int) -> None:
    _refused(env, make("RenewDelegationToken", v, env, hmac=b"sweep", renew_period=NEVER))


def check_expire_delegation_token(env: Env, v: int) -> None:
    _refused(env, make("ExpireDelegationToken", v, env, hmac=b"sweep",
                       expiry_time_period=NEVER))


def check_describe_delegation_token(env: Env, v: int) -> None:
    resp = env.request(make("DescribeDelegationToken", v, env, owners=None))
    assert resp.error_code == TOKEN_REFUSED and tuple(resp.tokens) == (), resp
