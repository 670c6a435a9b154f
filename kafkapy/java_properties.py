"""The java.util.Properties text format, read as Kafka reads server.properties and client
property files (``key=value``, ``key: value``, ``key value``; ``#``/``!`` comment lines;
backslash continuations; ``\\t``-style and ``\\uXXXX`` escapes). Sans-io: text in, dict out.

Shared by the broker's configuration (kafkapy.server.config.broker_config) and the command-line
tools' ``--command-config`` files (kafkapy.cli.common).
"""

from __future__ import annotations

_WS = " \t\f"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


class PropertiesFormatError(ValueError):
    """The text breaks the format (a malformed ``\\uXXXX`` escape)."""


def _unescape(s: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c != "\\" or i + 1 >= len(s):
            if c != "\\":
                out.append(c)
            i += 1
            continue
        n = s[i + 1]
        if n == "u":
            digits = s[i + 2 : i + 6]
            if len(digits) != 4 or not all(d in "0123456789abcdefABCDEF" for d in digits):
                raise PropertiesFormatError(f"Malformed \\uxxxx encoding in properties: {s!r}")
            out.append(chr(int(digits, 16)))
            i += 6
        else:
            out.append(_ESCAPES.get(n, n))
            i += 2
    return "".join(out)


def _ends_with_continuation(line: str) -> bool:
    count = len(line) - len(line.rstrip("\\"))
    return count % 2 == 1


def _split_key_value(line: str) -> tuple[str, str]:
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in "=:" or c in _WS:
            break
        i += 1
    key = line[:i]
    j = i
    while j < n and line[j] in _WS:
        j += 1
    if j < n and line[j] in "=:":
        j += 1
        while j < n and line[j] in _WS:
            j += 1
    return _unescape(key), _unescape(line[j:])


def read_properties(text: str) -> dict[str, str]:
    """Parse java.util.Properties text; later duplicates win. PropertiesFormatError on a
    malformed escape."""
    props: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].lstrip(_WS)
        i += 1
        if not line or line[0] in "#!":
            continue
        while _ends_with_continuation(line):
            line = line[:-1]
            if i >= len(lines):
                break
            line += lines[i].lstrip(_WS)
            i += 1
        key, value = _split_key_value(line)
        props[key] = value
    return props
