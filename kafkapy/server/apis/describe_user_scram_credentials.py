"""DescribeUserScramCredentials (key 50), version 0, as a ZooKeeper-mode Kafka 3.9 broker does.

Null or empty ``users``: every user with a SCRAM credential, sorted by name. Named users: one
result each, in request order without repeats; an empty name is RESOURCE_NOT_FOUND "Username must
not be empty", a name asked twice DUPLICATE_RESOURCE, a user without credentials
RESOURCE_NOT_FOUND. A result lists (mechanism, iterations) per credential; never the secrets.

Authorization: DESCRIBE on the cluster (else CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import Any

import trio

from kafkapy.metadata import scram_credentials as sc
from kafkapy.protocol.errors import ErrorCode
from kafkapy.security.scram import MECHANISM_ID_OF, ScramCredential

from ..registry import api
from ..request_context import RequestContext
from ..responses import THROTTLE_NONE, build
from ..security.authorization import CLUSTER_DENIED_MESSAGE, DESCRIBE, authorize_cluster

NOT_FOUND = "Attempt to describe a user credential that does not exist"


def _infos(R, entries: dict[str, str]) -> tuple:
    out = []
    for mechanism in sorted(entries, key=MECHANISM_ID_OF.__getitem__):
        iterations = ScramCredential.from_config(entries[mechanism]).iterations
        out.append(
            build(R.CredentialInfo, mechanism=MECHANISM_ID_OF[mechanism], iterations=iterations)
        )
    return tuple(out)


def describe(R, store, names: list[str] | None) -> list:
    def result(
        user: str, code: ErrorCode = ErrorCode.none, message: str | None = None, infos: tuple = ()
    ):
        return build(
            R.DescribeUserScramCredentialsResult,
            user=user,
            error_code=code,
            error_message=message,
            credential_infos=infos,
        )

    if not names:
        return [result(u, infos=_infos(R, e)) for u, e in sorted(sc.all_users(store).items())]
    out = []
    for name in dict.fromkeys(names):
        if not name:
            out.append(result(name, ErrorCode.resource_not_found, "Username must not be empty"))
        elif names.count(name) > 1:
            out.append(
                result(
                    name,
                    ErrorCode.duplicate_resource,
                    "Cannot describe SCRAM credentials for the same user twice in a single "
                    f"request: {name}",
                )
            )
        else:
            entries = sc.read_user(store, name)
            if entries:
                out.append(result(name, infos=_infos(R, entries)))
            else:
                out.append(result(name, ErrorCode.resource_not_found, f"{NOT_FOUND}: {name}"))
    return out


@api("DescribeUserScramCredentials")
async def handle(ctx: RequestContext, request: Any) -> Any:
    R = ctx.R
    if not authorize_cluster(ctx, DESCRIBE):
        denied = ErrorCode.cluster_authorization_failed
        return build(
            R.DescribeUserScramCredentialsResponse, throttle_time=THROTTLE_NONE,
            error_code=denied, error_message=CLUSTER_DENIED_MESSAGE,
            results=tuple(
                build(R.DescribeUserScramCredentialsResult, user="", error_code=denied,
                      error_message=CLUSTER_DENIED_MESSAGE, credential_infos=())
                for _ in request.users or ()
            ),
        )
    names = None if request.users is None else [u.name for u in request.users]
    results = await trio.to_thread.run_sync(describe, R, ctx.broker.cluster.store, names)
    return build(
        R.DescribeUserScramCredentialsResponse,
        throttle_time=THROTTLE_NONE,
        error_code=ErrorCode.none,
        error_message=None,
        results=tuple(results),
    )
