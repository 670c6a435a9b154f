"""Keeping an OAUTHBEARER listener's JSON Web Key Set fresh, as Kafka's RefreshingHttpsJwks does:
the set is fetched from ``sasl.oauthbearer.jwks.endpoint.url`` when the broker starts (a broker
that cannot fetch it does not start), then again every
``sasl.oauthbearer.jwks.endpoint.refresh.ms``, and early when a token names a key id the set
lacks (at most once per ``sasl.oauthbearer.jwks.endpoint.retry.backoff.ms``). Each fetch is
retried with exponential backoff from ``retry.backoff.ms`` within ``retry.backoff.max.ms`` (Kafka's
Retry); a refresh that fails keeps the keys already held. A file:// set needs no task: it is read
again whenever the file changes (kafkapy.security.oauthbearer_jwt).
"""

from __future__ import annotations

import logging
import time
import urllib.request
from collections.abc import Iterable

import trio

from kafkapy.security.listener_security import ListenerSecurity
from kafkapy.security.oauthbearer_jwt import JwksKeys, JwtValidator

log = logging.getLogger("kafkapy.oauth")
FETCH_TIMEOUT_S = 10.0


def fetch_with_retry(keys: JwksKeys) -> None:
    """One refresh: GET the set, retried with backoff; OSError/ValueError once out of time."""
    deadline = time.monotonic() + keys.backoff_max_ms / 1000
    wait_s = max(keys.backoff_ms, 1) / 1000
    while True:
        try:
            with urllib.request.urlopen(keys.url, timeout=FETCH_TIMEOUT_S) as response:
                keys.set_document(response.read())
            return
        except (OSError, ValueError) as e:
            if time.monotonic() + wait_s > deadline:
                raise
            log.debug("fetching the JWKS from %s failed (%s); retrying in %.3f s", keys.url, e,
                      wait_s)
            time.sleep(wait_s)
            wait_s = min(wait_s * 2, keys.backoff_max_ms / 1000)


def http_key_sets(securities: Iterable[ListenerSecurity]) -> list[JwksKeys]:
    """The key sets fetched over HTTP(S) of the listeners' OAUTHBEARER validators."""
    out = []
    for security in securities:
        validator = security.oauth_validator
        if isinstance(validator, JwtValidator) and validator.keys.file is None:
            out.append(validator.keys)
    return out


async def fetch_initial(keys: JwksKeys) -> None:
    """The fetch at start; RuntimeError with the reason when it fails."""
    try:
        await trio.to_thread.run_sync(fetch_with_retry, keys)
    except (OSError, ValueError) as e:
        raise RuntimeError(f"Could not refresh JWKS from {keys.url}: {e}") from None
    log.info("fetched the JWKS of %s", keys.url)


async def keep_fresh(keys: JwksKeys) -> None:
    """Refresh the set on schedule and when a token names an unknown key id, until cancelled."""
    wake = trio.Event()
    last_expedite = 0.0

    def expedite() -> None:
        nonlocal last_expedite
        now = time.monotonic()
        if now - last_expedite >= keys.backoff_ms / 1000:
            last_expedite = now
            wake.set()

    keys.on_missing_key = expedite
    while True:
        with trio.move_on_after(max(keys.refresh_ms, 1) / 1000):
            await wake.wait()
        wake = trio.Event()
        try:
            await trio.to_thread.run_sync(fetch_with_retry, keys)
            log.debug("refreshed the JWKS of %s", keys.url)
        except (OSError, ValueError) as e:
            log.warning("OAuth JWKS refresh of %s encountered an error; not updating local JWKS "
                        "cache: %s", keys.url, e)
