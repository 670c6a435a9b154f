"""Kafka's ``sasl.jaas.config`` values: JAAS login module entries in one string.

    org.apache.kafka.common.security.plain.PlainLoginModule required
        username="admin" password="admin-secret" user_admin="admin-secret" user_alice="a";

Each entry is a login module class name, a control flag (required, requisite, sufficient,
optional) and ``name=value`` options (values quoted with double quotes, or bare words), ended by
``;``. For the broker, Kafka reads the options of PLAIN's module as its user database
(``user_<name>="<password>"``) and, on the inter-broker listener, ``username``/``password`` as the
broker's own client credentials; SCRAM's module gives those two for inter-broker SCRAM.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

FLAGS = ("required", "requisite", "sufficient", "optional")
PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_LOGIN_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"

_TOKEN = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|([^\s=;"]+)|(=)|(;))', re.S)


class JaasConfigError(ValueError):
    """The text is not a JAAS configuration."""


@dataclass(frozen=True)
class LoginModuleEntry:
    login_module: str
    flag: str
    options: dict[str, str] = field(default_factory=dict)

    def users(self) -> dict[str, str]:
        """PLAIN's user database: ``user_<name>`` options -> {name: password}."""
        return {k[5:]: v for k, v in self.options.items() if k.startswith("user_") and k[5:]}


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise JaasConfigError(f"unexpected character at {text[pos : pos + 20]!r}")
        quoted, word, eq, semi = m.groups()
        if quoted is not None:
            out.append(("value", re.sub(r"\\(.)", r"\1", quoted)))
        elif word is not None:
            out.append(("word", word))
        elif eq is not None:
            out.append(("=", eq))
        else:
            out.append((";", semi))
        pos = m.end()
    return out


def parse_jaas_config(text: str) -> list[LoginModuleEntry]:
    """Parse a JAAS configuration string; JaasConfigError with a one-line reason otherwise."""
    toks = _tokens(text)
    entries: list[LoginModuleEntry] = []
    i = 0
    while i < len(toks):
        if toks[i][0] != "word":
            raise JaasConfigError("expected a login module class name")
        module = toks[i][1]
        if i + 1 >= len(toks) or toks[i + 1][1].lower() not in FLAGS:
            raise JaasConfigError(
                f"login module {module} must be followed by a control flag ({', '.join(FLAGS)})"
            )
        flag = toks[i + 1][1].lower()
        i += 2
        options: dict[str, str] = {}
        while i < len(toks) and toks[i][0] != ";":
            if not (
                i + 2 < len(toks)
                and toks[i][0] == "word"
                and toks[i + 1][0] == "="
                and toks[i + 2][0] in ("word", "value")
            ):
                raise JaasConfigError(f"options of {module} must be name=value pairs")
            options[toks[i][1]] = toks[i + 2][1]
            i += 3
        if i >= len(toks):
            raise JaasConfigError(f"the entry for {module} must end with ';'")
        i += 1
        entries.append(LoginModuleEntry(module, flag, options))
    if not entries:
        raise JaasConfigError("no login module entry")
    return entries


def login_options(text: str) -> dict[str, str]:
    """The options of a client's login module (the first entry): ``username``, ``password``."""
    return dict(parse_jaas_config(text)[0].options)
