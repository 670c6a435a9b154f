"""The principal of a TLS client certificate: its subject DN as Java prints it (RFC 2253), mapped
by Kafka's ``ssl.principal.mapping.rules``.

Kafka names an SSL client ``User:<name>`` where ``<name>`` comes from the certificate subject's
distinguished name (``X500Principal.getName()``: RDNs most specific first, ``CN=alice,OU=eng,
O=acme``) passed through the mapping rules, tried in order:

* ``DEFAULT``: the DN unchanged;
* ``RULE:pattern/replacement/`` with an optional ``L`` or ``U`` after the last slash: when the
  Java regular expression ``pattern`` matches the whole DN, every match of it is replaced by
  ``replacement`` (``$1`` refers to a group), then lower- or upper-cased.

No rule applying is an error (Kafka fails the authentication). :func:`subject_dn` turns the
subject that Python's ``ssl`` reports (``getpeercert()["subject"]``) into the RFC 2253 text;
attribute types without an RFC 2253 keyword are written as Java does, ``OID=#<DER hex>``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

DEFAULT_RULES = "DEFAULT"

_RULE = r"(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_RULE_SPLITTER = re.compile(r"\s*(" + _RULE + r")\s*(,\s*|$)")
_RULE_PARSER = re.compile(_RULE)
_JAVA_NAMED_GROUP = re.compile(r"\(\?<([A-Za-z])")


class InvalidRule(ValueError):
    """``ssl.principal.mapping.rules`` does not parse."""


class NoMatchingRule(ValueError):
    """No mapping rule applies to a DN."""


@lru_cache(maxsize=256)
def _python_regex(java_pattern: str) -> re.Pattern[str]:
    """Compile a Java regular expression (the subset rules use; ``(?<name>`` groups too)."""
    try:
        return re.compile(_JAVA_NAMED_GROUP.sub(r"(?P<\1", java_pattern))
    except re.error as e:
        raise InvalidRule(f"Invalid rule pattern {java_pattern!r}: {e}") from None


def _replacer(replacement: str, groups: int) -> Callable[[re.Match[str]], str]:
    """Java's Matcher replacement syntax (``$n`` group references, ``\\x`` a literal x), with
    Kafka's rule that ``$n`` beyond the pattern's groups is literal text."""
    parts: list[str | int] = []
    i = 0
    while i < len(replacement):
        c = replacement[i]
        if c == "\\" and i + 1 < len(replacement):
            parts.append(replacement[i + 1])
            i += 2
        elif c == "$" and i + 1 < len(replacement) and replacement[i + 1].isdigit():
            j = i + 2
            ref = int(replacement[i + 1])
            if ref > groups:
                parts.append(replacement[i : i + 2])
                i += 2
                continue
            while j < len(replacement) and replacement[j].isdigit():
                longer = ref * 10 + int(replacement[j])
                if longer > groups:
                    break
                ref, j = longer, j + 1
            parts.append(ref)
            i = j
        else:
            parts.append(c)
            i += 1

    def replace(m: re.Match[str]) -> str:
        return "".join(p if isinstance(p, str) else (m.group(p) or "") for p in parts)

    return replace


@dataclass(frozen=True)
class Rule:
    """One mapping rule (``pattern`` None: DEFAULT)."""

    pattern: str | None = None
    replacement: str = ""
    case: str = ""  # "", "L" or "U"

    def apply(self, dn: str) -> str | None:
        if self.pattern is None:
            return dn
        rx = _python_regex(self.pattern)
        if rx.fullmatch(dn) is None:
            return None
        result = rx.sub(_replacer(self.replacement, rx.groups), dn)
        if self.case == "L":
            return result.lower()
        if self.case == "U":
            return result.upper()
        return result

    def __str__(self) -> str:
        if self.pattern is None:
            return "DEFAULT"
        return f"RULE:{self.pattern}/{self.replacement}" + (f"/{self.case}" if self.case else "")


class SslPrincipalMapper:
    """``ssl.principal.mapping.rules`` parsed (Kafka's SslPrincipalMapper)."""

    def __init__(self, rules: str | None = None) -> None:
        text = DEFAULT_RULES if rules is None else rules
        self.rules: tuple[Rule, ...] = tuple(_parse_rules(text))

    def name(self, dn: str) -> str:
        """The principal name of ``dn``; NoMatchingRule when no rule applies."""
        for rule in self.rules:
            got = rule.apply(dn)
            if got is not None:
                return got
        raise NoMatchingRule(f"No rules apply to {dn}, rules [{', '.join(map(str, self.rules))}]")

    def __str__(self) -> str:
        return f"SslPrincipalMapper(rules = [{', '.join(map(str, self.rules))}])"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SslPrincipalMapper) and other.rules == self.rules

    def __hash__(self) -> int:
        return hash(self.rules)


def _parse_rules(text: str) -> list[Rule]:
    out: list[Rule] = []
    for m in _RULE_SPLITTER.finditer(text.strip()):
        rule = m.group(1)
        p = _RULE_PARSER.match(rule)
        if p is None:
            raise InvalidRule(f"Invalid rule: {rule}")
        if p.end() != len(rule):
            raise InvalidRule(f"Invalid rule: `{rule}`, unmatched substring: `{rule[p.end() :]}`")
        if p.group(1) is not None:
            out.append(Rule())
        elif p.group(2) is not None:
            r = Rule(p.group(2), p.group(4), p.group(6) or "")
            _python_regex(r.pattern or "")  # refuse a pattern that does not compile, up front
            out.append(r)
    return out


# --- subject DN in RFC 2253, as java.security X500Principal.getName() writes it ---------------

# Python's attribute names -> the RFC 2253 keywords Java uses
_KEYWORDS = {
    "commonName": "CN",
    "countryName": "C",
    "localityName": "L",
    "stateOrProvinceName": "ST",
    "organizationName": "O",
    "organizationalUnitName": "OU",
    "streetAddress": "STREET",
    "domainComponent": "DC",
    "userId": "UID",
}
# other attribute types Java writes as OID=#hex(DER value): OID and the value's ASN.1 string tag
_OIDS = {
    "emailAddress": ("1.2.840.113549.1.9.1", 0x16),  # IA5String
    "serialNumber": ("2.5.4.5", 0x13),  # PrintableString
    "title": ("2.5.4.12", 0x0C),
    "surname": ("2.5.4.4", 0x0C),
    "givenName": ("2.5.4.42", 0x0C),
    "initials": ("2.5.4.43", 0x0C),
    "generationQualifier": ("2.5.4.44", 0x0C),
    "pseudonym": ("2.5.4.65", 0x0C),
    "dnQualifier": ("2.5.4.46", 0x13),
    "businessCategory": ("2.5.4.15", 0x0C),
    "postalCode": ("2.5.4.17", 0x0C),
}
_SPECIAL = set(',+"\\<>;')


def _escape(value: str) -> str:
    out = "".join("\\" + c if c in _SPECIAL else c for c in value)
    if out.startswith((" ", "#")):
        out = "\\" + out
    if out.endswith(" ") and not out.endswith("\\ "):
        out = out[:-1] + "\\ "
    return out


def _der_hex(tag: int, value: str) -> str:
    data = value.encode()
    n = len(data)
    if n < 0x80:
        length = bytes([n])
    else:
        raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
        length = bytes([0x80 | len(raw)]) + raw
    return "#" + (bytes([tag]) + length + data).hex()


def _attribute(name: str, value: str) -> str:
    keyword = _KEYWORDS.get(name)
    if keyword is not None:
        return f"{keyword}={_escape(value)}"
    oid, tag = _OIDS.get(name, (name, 0x0C))
    return f"{oid}={_der_hex(tag, value)}"


def subject_dn(subject: Sequence[Sequence[tuple[str, str]]]) -> str:
    """RFC 2253 text of a subject as ``ssl.SSLSocket.getpeercert()`` gives it (RDNs in
    certificate order; Java writes the last one first)."""
    return ",".join("+".join(_attribute(n, v) for n, v in rdn) for rdn in reversed(subject))
