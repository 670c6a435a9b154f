"""`kafkapy delegation-tokens` (kafka-delegation-tokens.sh): create, renew, expire and describe
delegation tokens with Kafka's DelegationTokenCommand's flags and output.

- ``--create --max-life-time-period MS [--renewer-principal User:x ...] [--owner-principal
  User:y]`` (CreateDelegationToken v3);
- ``--renew --hmac H --renew-time-period MS`` (RenewDelegationToken v2);
- ``--expire --hmac H --expiry-time-period MS`` (ExpireDelegationToken v2; -1 expires at once);
- ``--describe [--owner-principal User:x ...]`` (DescribeDelegationToken v3; without an owner
  the request names no owner, so, as with Kafka 4.4's tool, no token is listed).

``--bootstrap-server`` and ``--command-config`` are required, as in Kafka: brokers hand tokens
only to SASL or mutual-TLS connections. Tokens print as Kafka prints them: a header line
``TOKENID HMAC OWNER REQUESTER RENEWERS ISSUEDATE EXPIRYDATE MAXDATE`` and one line per token,
each after an empty line, dates as ``yyyy-MM-dd'T'HH:mm`` in local time. A refusal prints the
Java client's exception (``org.apache.kafka.common.errors.DelegationTokenNotFoundException:
Delegation Token is not found on server.``) to stderr and exits 1.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import datetime
import struct
import sys
import time
from typing import Any

from kio.static.primitive import i64Timedelta

from kafkapy.cli.common import CliError, ToolParser, load_properties
from kafkapy.cli.wire import Connection, connect_any

DESCRIPTION = "This tool helps to create, renew, expire, or describe delegation tokens."
ONE_ACTION = "Command must include exactly one action: --create, --renew, --expire or --describe"
ERRORS = "org.apache.kafka.common.errors."
# error code -> (the Java client's exception class, Kafka's message)
_FAILURES = {
    61: ("DelegationTokenDisabledException", "Delegation Token feature is not enabled."),
    62: ("DelegationTokenNotFoundException", "Delegation Token is not found on server."),
    63: ("DelegationTokenOwnerMismatchException",
         "Specified Principal is not valid Owner/Renewer."),
    64: ("UnsupportedByAuthenticationException",
         "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on "
         "delegation token authenticated channels."),
    65: ("DelegationTokenAuthorizationException", "Delegation Token authorization failed."),
    66: ("DelegationTokenExpiredException", "Delegation Token is expired."),
    67: ("InvalidPrincipalTypeException", "Supplied principalType is not supported."),
}
MS = datetime.timedelta(milliseconds=1)


class TokenFailure(Exception):
    """The broker refused the operation (an error code)."""


def _check(error_code: int) -> None:
    code = int(error_code)
    if code:
        name, message = _FAILURES.get(code, ("KafkaException", f"error code {code}"))
        raise TokenFailure(f"{ERRORS}{name}: {message}")


def _call(conn: Connection, request: Any) -> Any:
    """The response, after its error code (every token response's first field) is checked: a
    refusal carries -1 timestamps, which kio's timestamp fields do not read."""
    from kio.index import load_response_schema
    from kio.serial import entity_reader

    frame, pos = conn.request_raw(request)
    _check(struct.unpack_from(">h", frame, pos)[0])
    schema = load_response_schema(request.__api_key__, request.__version__)
    return entity_reader(schema)(frame, pos)[0]


def date(ms: int) -> str:
    """Kafka's SimpleDateFormat("yyyy-MM-dd'T'HH:mm"), local time."""
    return time.strftime("%Y-%m-%dT%H:%M", time.localtime(ms / 1000))


def _ms(value: Any) -> int:
    if isinstance(value, datetime.datetime):
        return round(value.timestamp() * 1000)
    return int(value)


def _principal(text: str) -> tuple[str, str]:
    kind, sep, name = text.strip().partition(":")
    if not sep or not kind or not name:
        raise CliError(f"expected a string in format principalType:principalName but got {text}")
    return kind, name


def _principals(values: list[str] | None) -> list[tuple[str, str]]:
    return [_principal(v) for v in values or () if v is not None]


def _listing(principals: list[tuple[str, str]]) -> str:
    """A Java List<KafkaPrincipal>'s toString: ``[User:a, User:b]``."""
    return "[" + ", ".join(f"{k}:{n}" for k, n in principals) + "]"


def print_tokens(tokens: list[dict[str, Any]]) -> None:
    row = "\n{:<15} {:<30} {:<15} {:<15} {:<25} {:<15} {:<15} {:<15}\n"
    sys.stdout.write(row.format("TOKENID", "HMAC", "OWNER", "REQUESTER", "RENEWERS",
                                "ISSUEDATE", "EXPIRYDATE", "MAXDATE"))
    for t in tokens:
        sys.stdout.write(row.format(
            t["token_id"], base64.b64encode(t["hmac"]).decode(), t["owner"], t["requester"],
            _listing(t["renewers"]), date(t["issue"]), date(t["expiry"]), date(t["max"]),
        ))


def create(conn: Connection, opts: argparse.Namespace) -> None:
    from kio.schema.create_delegation_token.v3.request import (
        CreatableRenewers,
        CreateDelegationTokenRequest,
    )

    renewers = _principals(opts.renewer_principal)
    owners = _principals(opts.owner_principal)
    max_life = opts.max_life_time_period
    print(f"Calling create token operation with renewers :{_listing(renewers)} , "
          f"max-life-time-period :{max_life}")
    owner = owners[0] if owners else (None, None)
    resp = _call(conn, CreateDelegationTokenRequest(
        owner_principal_type=owner[0], owner_principal_name=owner[1],
        renewers=tuple(CreatableRenewers(principal_type=k, principal_name=n) for k, n in renewers),
        max_lifetime=i64Timedelta.parse(datetime.timedelta(milliseconds=max_life)),
    ))
    print(f"Created delegation token with tokenId : {resp.token_id}")
    print_tokens([{
        "token_id": resp.token_id, "hmac": resp.hmac,
        "owner": f"{resp.principal_type}:{resp.principal_name}",
        "requester": f"{resp.token_requester_principal_type}:"
                     f"{resp.token_requester_principal_name}",
        "renewers": renewers, "issue": _ms(resp.issue_timestamp),
        "expiry": _ms(resp.expiry_timestamp), "max": _ms(resp.max_timestamp),
    }])


def _hmac(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise CliError(f"Illegal base64 character in --hmac {text}") from None


def renew(conn: Connection, opts: argparse.Namespace) -> None:
    from kio.schema.renew_delegation_token.v2.request import RenewDelegationTokenRequest

    period = opts.renew_time_period
    print(f"Calling renew token operation with hmac :{opts.hmac} , renew-time-period :{period}")
    resp = _call(conn, RenewDelegationTokenRequest(
        hmac=_hmac(opts.hmac),
        renew_period=i64Timedelta.parse(datetime.timedelta(milliseconds=period))))
    sys.stdout.write(
        f"Completed renew operation. New expiry date : {date(_ms(resp.expiry_timestamp))}")


def expire(conn: Connection, opts: argparse.Namespace) -> None:
    from kio.schema.expire_delegation_token.v2.request import ExpireDelegationTokenRequest

    period = opts.expiry_time_period
    print(f"Calling expire token operation with hmac :{opts.hmac} , expire-time-period :{period}")
    resp = _call(conn, ExpireDelegationTokenRequest(
        hmac=_hmac(opts.hmac), expiry_time_period=i64Timedelta.parse(
            datetime.timedelta(milliseconds=period))))
    sys.stdout.write(
        f"Completed expire operation. New expiry date : {date(_ms(resp.expiry_timestamp))}")


def describe(conn: Connection, opts: argparse.Namespace) -> None:
    from kio.schema.describe_delegation_token.v3.request import (
        DescribeDelegationTokenOwner,
        DescribeDelegationTokenRequest,
    )

    owners = _principals(opts.owner_principal)
    if owners:
        print(f"Calling describe token operation for owners: {_listing(owners)}")
    else:
        print("Calling describe token operation for current user.")
    # as Kafka 4.4's tool: no --owner-principal sends an empty owner list, which no token matches
    resp = _call(conn, DescribeDelegationTokenRequest(owners=tuple(
        DescribeDelegationTokenOwner(principal_type=k, principal_name=n) for k, n in owners)))
    tokens = [{
        "token_id": t.token_id, "hmac": t.hmac,
        "owner": f"{t.principal_type}:{t.principal_name}",
        "requester": f"{t.token_requester_principal_type}:{t.token_requester_principal_name}",
        "renewers": [(r.principal_type, r.principal_name) for r in t.renewers],
        "issue": int(t.issue_timestamp), "expiry": int(t.expiry_timestamp),
        "max": int(t.max_timestamp),
    } for t in resp.tokens]
    sys.stdout.write(f"Total number of tokens : {len(tokens)}")
    print_tokens(tokens)


def _parser() -> ToolParser:
    p = ToolParser("kafka-delegation-tokens", DESCRIPTION)
    p.add_argument("--bootstrap-server", help="REQUIRED: server(s) to use for bootstrapping.")
    p.add_argument("--command-config", help="REQUIRED: A property file containing configs to "
                   "be passed to Admin Client (security settings: tokens need a secure mode).")
    for action, text in (("create", "Create a new delegation token."),
                         ("renew", "Renew delegation token."),
                         ("expire", "Expire delegation token."),
                         ("describe", "Describe delegation tokens for the given principals.")):
        p.add_argument(f"--{action}", action="store_true", help=text)
    p.add_argument("--owner-principal", action="append", nargs="?",
                   help="owner is a Kafka principal, in principalType:name format.")
    p.add_argument("--renewer-principal", action="append", nargs="?",
                   help="renewer is a Kafka principal, in principalType:name format.")
    p.add_argument("--max-life-time-period", type=int, help="Max life period for the token in "
                   "milliseconds; -1: the server's delegation.token.max.lifetime.ms.")
    p.add_argument("--renew-time-period", type=int, help="Renew time period in milliseconds; "
                   "-1: the server's delegation.token.expiry.time.ms.")
    p.add_argument("--expiry-time-period", type=int, help="Expiry time period in milliseconds; "
                   "-1: the token is invalidated immediately.")
    p.add_argument("--hmac", help="HMAC of the delegation token")
    return p


_INVALID = {  # Kafka's checkInvalidArgs, per action
    "create": ("hmac", "renew_time_period", "expiry_time_period"),
    "renew": ("renewer_principal", "max_life_time_period", "expiry_time_period",
              "owner_principal"),
    "expire": ("max_life_time_period", "renew_time_period", "owner_principal"),
    "describe": ("renew_time_period", "max_life_time_period", "hmac", "expiry_time_period"),
}
_REQUIRED = {
    "create": ("max_life_time_period",),
    "renew": ("hmac", "renew_time_period"),
    "expire": ("hmac", "expiry_time_period"),
    "describe": (),
}


def _flag(dest: str) -> str:
    return dest.replace("_", "-")


def main(argv: list[str]) -> int:
    parser = _parser()
    opts = parser.parse_args(argv)
    actions = [a for a in ("create", "renew", "expire", "describe") if getattr(opts, a)]
    if len(actions) != 1:
        parser.error(ONE_ACTION)
    action = actions[0]
    for dest in ("bootstrap_server", "command_config", *_REQUIRED[action]):
        if getattr(opts, dest) is None:
            parser.error(f'Missing required argument "[{_flag(dest)}]"')
    for dest in _INVALID[action]:
        if getattr(opts, dest) is not None:
            parser.error(f'Option "[{action}]" can\'t be used with option "[{_flag(dest)}]"')
    props = load_properties(opts.command_config)
    try:
        with connect_any(opts.bootstrap_server, props=props) as conn:
            {"create": create, "renew": renew, "expire": expire, "describe": describe}[action](
                conn, opts)
    except TokenFailure as e:
        sys.stdout.flush()
        print(e, file=sys.stderr)
        return 1
    return 0
