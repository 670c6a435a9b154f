"""The dispatch registry: API key -> handler, with the versions taken from the served table.

Each module under server/apis registers its handler with `@api("Name")`; importing the
``kafkapy.server.apis`` package (the broker does) imports them all. The registry itself imports no
handler, so handlers and the connection code may import it without an import circle. ApiVersions
is computed from this registry, so it can never advertise an API that has no handler.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafkapy.protocol.api_table import ApiRange, served_apis

if TYPE_CHECKING:
    from .request_context import RequestContext

# a handler: the request's context and its decoded body (a kio request entity of the version
# received, or the frame itself for raw handlers) -> a kio response entity, a RawResponse or
# NO_RESPONSE (server/responses.py)
Handler = Callable[["RequestContext", Any], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Registration:
    range: ApiRange
    handler: Handler
    raw: bool  # the handler decodes the body itself (hot paths); it receives the frame bytes


REGISTRY: dict[int, Registration] = {}


def api(name: str, *, raw: bool = False) -> Callable[[Handler], Handler]:
    """Register the decorated coroutine as the handler of API `name` from the served table."""
    rng = served_apis()[name]

    def register(fn: Handler) -> Handler:
        if rng.key in REGISTRY:
            raise RuntimeError(f"API {name} registered twice")
        REGISTRY[rng.key] = Registration(rng, fn, raw)
        return fn

    return register

