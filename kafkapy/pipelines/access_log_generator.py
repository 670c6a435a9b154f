"""Realistic nginx access-log lines in the combined log format, plus deliberate garbage.

    203.0.113.9 - alice [12/Mar/2025:14:02:11 +0000] "GET /api/v1/items?id=42 HTTP/1.1" 200 5123
        "https://example.com/" "Mozilla/5.0 ..."          (one line)

`AccessLogGenerator.line(ts)` returns one line as bytes and whether it is well formed. Paths
follow a Zipf-like popularity (a few hot paths, a long tail); statuses mix 2xx/3xx/4xx/5xx with
path-dependent odds; sizes depend on the path kind; clients keep their user agent. A fraction
of lines (`malformed_fraction`) is malformed in one of several ways a real collector meets:
truncated lines, binary garbage, impossible dates, missing fields, empty lines, free text.

Everything is drawn from one `random.Random(seed)`, so a seed reproduces the same traffic.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

_STATIC = ["/", "/index.html", "/favicon.ico", "/robots.txt", "/static/app.js",
           "/static/app.css", "/static/logo.png", "/static/fonts/inter.woff2"]
_PAGES = ["/login", "/logout", "/signup", "/search", "/cart", "/checkout", "/about",
          "/blog", "/blog/2025/kafka-in-python", "/docs", "/docs/getting-started", "/pricing"]
_API = ["/api/v1/items", "/api/v1/items/{id}", "/api/v1/users/{id}", "/api/v1/orders",
        "/api/v1/orders/{id}", "/api/v1/search", "/api/v1/health", "/api/v2/recommendations"]
_PROBES = ["/wp-login.php", "/.env", "/admin/config.php", "/phpmyadmin/", "/.git/config"]

USER_AGENTS = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.4 Safari/605.1.15",
    "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0.0.0 Mobile Safari/537.36",
    "curl/8.5.0",
    "python-requests/2.31.0",
    "Googlebot/2.1 (+http://www.google.com/bot.html)",
    "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
    "kube-probe/1.29",
]
REFERERS = ["-", "-", "-", "https://www.google.com/", "https://duckduckgo.com/",
            "https://example.com/", "https://example.com/blog", "https://news.ycombinator.com/",
            "https://t.co/xyz123"]
USERS = ["-"] * 12 + ["alice", "bob", "carol", "dave"]


@dataclass(frozen=True)
class LogLine:
    raw: bytes
    ok: bool


def format_time(ts: datetime) -> str:
    """nginx's $time_local: 10/Oct/2000:13:55:36 +0000 (always UTC here)."""
    ts = ts.astimezone(UTC)
    return f"{ts.day:02d}/{MONTHS[ts.month - 1]}/{ts.year}:{ts:%H:%M:%S} +0000"


class AccessLogGenerator:
    def __init__(self, seed: int | None = None, malformed_fraction: float = 0.02,
                 clients: int = 500) -> None:
        if not 0.0 <= malformed_fraction <= 1.0:
            raise ValueError("malformed_fraction must be within [0, 1]")
        self.rng = random.Random(seed)
        self.malformed_fraction = malformed_fraction
        rng = self.rng
        self.paths = _PAGES + _API + _STATIC + _PROBES
        rng.shuffle(self.paths)
        # Zipf-like popularity: weight 1/rank^1.1, so the first few paths dominate.
        self.weights = [1.0 / (rank ** 1.1) for rank in range(1, len(self.paths) + 1)]
        self.clients = []
        for _ in range(clients):
            if rng.random() < 0.8:
                ip = f"{rng.randint(1, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}." \
                     f"{rng.randint(1, 254)}"
            else:
                ip = "2001:db8:" + ":".join(f"{rng.randint(0, 0xFFFF):x}" for _ in range(3)) \
                     + "::" + f"{rng.randint(1, 0xFFFF):x}"
            self.clients.append((ip, rng.choice(USER_AGENTS), rng.choice(USERS)))

    # -- well-formed lines -------------------------------------------------------------------
    def _request(self) -> tuple[str, str, int, int]:
        rng = self.rng
        path = rng.choices(self.paths, self.weights)[0]
        if "{id}" in path:
            path = path.replace("{id}", str(rng.randint(1, 99999)))
        if path.startswith("/api/"):
            method = rng.choices(["GET", "POST", "PUT", "DELETE", "PATCH"], [70, 18, 6, 4, 2])[0]
        else:
            method = rng.choices(["GET", "HEAD", "POST", "OPTIONS"], [90, 5, 4, 1])[0]
        if path in ("/search", "/api/v1/search") and rng.random() < 0.7:
            path += "?q=" + rng.choice(["kafka", "spark", "python", "logs", "nginx"])
        if path in _PROBES:
            status = rng.choices([404, 403, 400], [80, 15, 5])[0]
        elif path.startswith("/static/") or path in ("/favicon.ico", "/robots.txt"):
            status = rng.choices([200, 304, 404], [75, 22, 3])[0]
        elif path.startswith("/api/"):
            status = rng.choices([200, 201, 204, 400, 401, 404, 429, 500, 502, 503, 504],
                                 [70, 8, 4, 4, 3, 3, 2, 2, 1, 2, 1])[0]
        else:
            status = rng.choices([200, 301, 302, 304, 401, 404, 500, 503],
                                 [78, 4, 6, 5, 2, 3, 1, 1])[0]
        if status in (204, 304) or method == "HEAD":
            size = 0
        elif path.startswith("/static/"):
            size = rng.randint(2_000, 400_000)
        elif status >= 400:
            size = rng.randint(150, 600)
        else:
            size = int(rng.lognormvariate(8.0, 1.0))
        return method, path, status, size

    def good_line(self, ts: datetime) -> bytes:
        ip, ua, user = self.rng.choice(self.clients)
        method, path, status, size = self._request()
        proto = self.rng.choices(["HTTP/1.1", "HTTP/2.0", "HTTP/1.0"], [70, 28, 2])[0]
        ref = self.rng.choice(REFERERS)
        # nginx writes "-" for a zero body size only with $body_bytes_sent = 0 -> "0";
        # some configs log "-": keep a few of those, they are valid.
        size_s = "-" if size == 0 and self.rng.random() < 0.3 else str(size)
        return (f'{ip} - {user} [{format_time(ts)}] "{method} {path} {proto}" {status} '
                f'{size_s} "{ref}" "{ua}"').encode()

    # -- malformed lines ---------------------------------------------------------------------
    def bad_line(self, ts: datetime) -> bytes:
        rng = self.rng
        kind = rng.randrange(7)
        good = self.good_line(ts)
        if kind == 0:  # truncated mid-line (a collector cut it)
            return good[: rng.randint(5, good.index(b'"') - 1)]
        if kind == 1:  # binary garbage, not UTF-8
            return bytes(rng.randint(128, 255) for _ in range(rng.randint(8, 40)))
        if kind == 2:  # impossible date
            return good.replace(format_time(ts).encode(),
                                f"{rng.randint(32, 39)}/Foo/{ts.year}:25:61:61 +0000".encode())
        if kind == 3:  # missing status and size
            head, _, tail = good.partition(b'" ')
            return head + b'" "' + tail.split(b'"', 1)[1] if b'"' in tail else head
        if kind == 4:
            return b""
        if kind == 5:  # free text from an application that shares the log
            return rng.choice([b"upstream timed out (110: Connection timed out)",
                               b"worker process 1234 exited on signal 9",
                               b"GET / HTTP/1.1"])
        # kind 6: status that is not a number
        return good.replace(b'" 200 ', b'" OK ').replace(b'" 404 ', b'" xx ') \
            if (b'" 200 ' in good or b'" 404 ' in good) else good[: len(good) // 3]

    def line(self, ts: datetime) -> LogLine:
        if self.rng.random() < self.malformed_fraction:
            return LogLine(self.bad_line(ts), False)
        return LogLine(self.good_line(ts), True)

    def lines(self, n: int, start: datetime, span: timedelta, jitter_s: float = 5.0
              ) -> list[LogLine]:
        """n lines whose timestamps advance evenly from `start` over `span`, each off by up to
        ±jitter_s (real logs arrive slightly out of order)."""
        out = []
        step = span / max(n, 1)
        for i in range(n):
            ts = start + step * i + timedelta(seconds=self.rng.uniform(-jitter_s, jitter_s))
            out.append(self.line(ts))
        return out
