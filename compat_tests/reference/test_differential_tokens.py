"""Differential session of the delegation token APIs on a PLAINTEXT listener, where Kafka refuses
them all: CreateDelegationToken v1-3 (with and without another owner), RenewDelegationToken and
ExpireDelegationToken v1-2, DescribeDelegationToken v1-3 (owners null, empty, named), each asked
of Apache Kafka 4.4 and of kafkapy (neither has a delegation.token.secret.key). The responses are
compared whole, byte for byte after their error code: a refusal carries -1 timestamps, which
kio's timestamp fields do not decode. Differences not in known_differences.py fail the test.
"""

from __future__ import annotations

import datetime
import struct
from typing import Any

from compat_tests.rawclient import encode_request
from compat_tests.reference.differential import Differential, Target
from compat_tests.reference.observe import raw

NEVER = datetime.timedelta(milliseconds=-1)


def _requests() -> list[tuple[str, Any]]:
    from kio.schema.create_delegation_token import v1 as c1
    from kio.schema.create_delegation_token import v2 as c2
    from kio.schema.create_delegation_token import v3 as c3
    from kio.schema.describe_delegation_token import v1 as d1
    from kio.schema.describe_delegation_token import v2 as d2
    from kio.schema.describe_delegation_token import v3 as d3
    from kio.schema.expire_delegation_token import v1 as e1
    from kio.schema.expire_delegation_token import v2 as e2
    from kio.schema.renew_delegation_token import v1 as r1
    from kio.schema.renew_delegation_token import v2 as r2

    out: list[tuple[str, Any]] = []
    for v, m in ((1, c1), (2, c2)):
        out.append((f"create_v{v}", m.request.CreateDelegationTokenRequest(
            renewers=(m.request.CreatableRenewers(principal_type="User", principal_name="bob"),),
            max_lifetime=NEVER)))
    r3 = c3.request
    out.append(("create_v3", r3.CreateDelegationTokenRequest(
        owner_principal_type=None, owner_principal_name=None,
        renewers=(r3.CreatableRenewers(principal_type="User", principal_name="bob"),),
        max_lifetime=NEVER)))
    out.append(("create_v3_owner", r3.CreateDelegationTokenRequest(
        owner_principal_type="User", owner_principal_name="alice", renewers=(),
        max_lifetime=datetime.timedelta(hours=1))))
    for v, m in ((1, r1), (2, r2)):
        out.append((f"renew_v{v}", m.request.RenewDelegationTokenRequest(
            hmac=b"not-a-token", renew_period=NEVER)))
    for v, m in ((1, e1), (2, e2)):
        out.append((f"expire_v{v}", m.request.ExpireDelegationTokenRequest(
            hmac=b"not-a-token", expiry_time_period=NEVER)))
    for v, m in ((1, d1), (2, d2), (3, d3)):
        owner = m.request.DescribeDelegationTokenOwner(principal_type="User",
                                                       principal_name="alice")
        for name, owners in (("null", None), ("empty", ()), ("alice", (owner,))):
            out.append((f"describe_v{v}_{name}",
                        m.request.DescribeDelegationTokenRequest(owners=owners)))
    return out


def token_requests(target: Target) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with raw(target) as client:
        for i, (name, request) in enumerate(_requests(), start=1):
            client.send_frame(encode_request(request, i, client.client_id))
            frame = client.recv_frame()
            assert struct.unpack_from(">i", frame)[0] == i
            pos = 5 if request.__version__ >= 2 else 4  # flexible: the header's tagged fields
            out[name] = {"error_code": struct.unpack_from(">h", frame, pos)[0],
                         "body": frame[pos + 2:].hex()}
    return out


def test_token_requests_on_plaintext(differential: Differential) -> None:
    outcome = differential.check("token_requests_plaintext", token_requests)
    assert outcome.observations >= 2 * 17
