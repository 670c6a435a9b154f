"""Request and response headers (v0-v2), sans-io.

The request header is decoded by hand because it decides everything else: which API, which
version, whether the body is flexible. Header v2 (flexible requests) carries a tagged-field
section that is skipped; unknown tags are legal there. Responses use header v1 for flexible
versions, except ApiVersions, whose response header is always v0 so that a client of any version
can read the error in it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import cache

from kio.index import UnknownAPIKey, UnknownEntity, load_request_schema

from .wire import INT32, DecodeError, skip_tagged_fields

API_VERSIONS_KEY = 18
CONTROLLED_SHUTDOWN_KEY = 7


@dataclass(frozen=True, slots=True)
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    body_offset: int  # where the request body starts in the frame
    flexible: bool


@cache
def is_flexible(api_key: int, api_version: int) -> bool:
    """Whether a request version uses flexible encoding (KIP-482); False if kio lacks it."""
    try:
        return bool(load_request_schema(api_key, api_version).__flexible__)
    except (UnknownAPIKey, UnknownEntity):
        return False


_FIXED = struct.Struct(">hhih")  # api key, api version, correlation id, client id length
_flexible: dict[tuple[int, int], bool] = {}


def parse_request_header(frame: bytes | bytearray) -> RequestHeader:
    """Decode the header at the start of a request frame.

    Raises DecodeError when the frame is too short for a header.
    """
    n = len(frame)
    if n < 10:
        raise DecodeError("request header truncated")
    api_key, api_version, correlation_id, cid_len = _FIXED.unpack_from(frame, 0)
    client_id: str | None = None
    if api_key == CONTROLLED_SHUTDOWN_KEY and api_version == 0:
        pos = 8  # ControlledShutdown v0 has no client id
    else:
        pos = 10
        if cid_len >= 0:
            if pos + cid_len > n:
                raise DecodeError("client id truncated")
            client_id = frame[pos : pos + cid_len].decode("utf-8", "replace")
            pos += cid_len
    flexible = _flexible.get((api_key, api_version))
    if flexible is None:
        flexible = _flexible[(api_key, api_version)] = is_flexible(api_key, api_version)
    if flexible:
        if pos < n and frame[pos] == 0:  # the usual empty tagged-field section
            pos += 1
        else:
            pos = skip_tagged_fields(frame, pos)
    return RequestHeader(api_key, api_version, correlation_id, client_id, pos, flexible)


_FLEXIBLE_TAIL = b"\x00"  # the empty tagged-field section of response header v1


def response_header(api_key: int, correlation_id: int, flexible: bool) -> bytes:
    """Encode the response header that goes with a request of this API and flexibility."""
    if flexible and api_key != API_VERSIONS_KEY:
        return INT32.pack(correlation_id) + _FLEXIBLE_TAIL
    return INT32.pack(correlation_id)
