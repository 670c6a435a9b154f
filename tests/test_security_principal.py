"""Principals and the SSL principal mapping rules (Kafka's SslPrincipalMapper semantics)."""

from __future__ import annotations

import pytest

from kafkapy.security.principal import ANONYMOUS, KafkaPrincipal, parse_principal
from kafkapy.security.ssl_principal import (
    InvalidRule,
    NoMatchingRule,
    SslPrincipalMapper,
    subject_dn,
)


def test_principal_text_and_parse() -> None:
    assert str(ANONYMOUS) == "User:ANONYMOUS"
    assert parse_principal("User:CN=a,O=b:c") == KafkaPrincipal("User", "CN=a,O=b:c")
    for bad in ("alice", ":x", "User:"):
        with pytest.raises(ValueError):
            parse_principal(bad)


def test_mapping_rules() -> None:
    mapper = SslPrincipalMapper(
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, "
        "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L, "
        "RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U, "
        "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U, DEFAULT"
    )
    assert mapper.name("CN=Duke,OU=ServiceUsers,O=Org,C=US") == "duke"
    assert mapper.name("CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US") == "duke@sme"
    assert mapper.name("cn=duke,ou=sme,dc=mycp,dc=com") == "DUKE@SME"
    assert mapper.name("cN=duke,OU=JavaSoft,O=Sun Microsystems") == "DUKE"
    dn = "OU=JavaSoft,O=Sun Microsystems,C=US"
    assert mapper.name(dn) == dn
    escaped = SslPrincipalMapper(r"RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT")
    assert escaped.name(r"CN=Tkac\, Adam,OU=ITZ,DC=geodis,DC=cz") == r"Tkac\, Adam"
    with pytest.raises(NoMatchingRule):
        SslPrincipalMapper("RULE:^CN=(.*)$/$1/").name("O=x")
    assert SslPrincipalMapper().name("CN=a") == "CN=a"  # DEFAULT


@pytest.mark.parametrize(
    ("rules", "shown"),
    [
        ("", "[]"),
        ("  RULE:   /     / ,  DEFAULT  ", "[RULE:   /     , DEFAULT]"),
        (",,RULE://,,,DEFAULT,,", "[RULE:/, DEFAULT]"),
        (
            "  RULE:([A-Z]*)/$1/U   ,RULE:([a-z]+)/$1/,   DEFAULT  ",
            "[RULE:([A-Z]*)/$1/U, RULE:([a-z]+)/$1, DEFAULT]",
        ),
    ],
)
def test_rule_splitting(rules: str, shown: str) -> None:
    assert str(SslPrincipalMapper(rules)) == f"SslPrincipalMapper(rules = {shown})"


@pytest.mark.parametrize(
    "rules",
    [
        "default",
        "DEFAULT/L",
        "RULE:CN=(.*?),OU=S.*/$1",
        "rule:^CN=(.*?)$/$1/",
        "RULE:^CN=(.*?)$/$1/L/U",
        "RULE:^CN=(.*?)$/LU",
        "RULE:^CN=((.*$/$1/",
    ],
)
def test_invalid_rules(rules: str) -> None:
    with pytest.raises(InvalidRule):
        SslPrincipalMapper(rules)


def test_subject_dn_is_java_rfc2253() -> None:
    subject = (
        (("countryName", "US"),),
        (("organizationName", "A, B"),),
        (("commonName", " alice"), ("emailAddress", "a@b.c")),
    )
    assert subject_dn(subject) == r"CN=\ alice+1.2.840.113549.1.9.1=#16056140622e63,O=A\, B,C=US"
