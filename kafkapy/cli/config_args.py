"""Parsing kafka-configs' ``--add-config`` and ``--delete-config`` arguments, as Kafka's
ConfigCommand parses them (shared by the entity-config and the quota/user-config paths).
"""

from __future__ import annotations

import re

from kafkapy.cli.errors import CliError


def parse_add_config(text: str | None) -> dict[str, str]:
    """`k1=v1,k2=[a,b]`: commas inside [] do not split; brackets are removed from values."""
    if not text:
        return {}
    out: dict[str, str] = {}
    lookahead = r"(?=[^\]]*(?:\[|$))"
    for item in re.split("," + lookahead, text):
        pair = re.split(r"\s*=\s*" + lookahead, item)
        if len(pair) != 2:
            raise CliError(
                'Invalid entity config: all configs to be added must be in the format "key=val" '
                'or "key=[val1,val2]" to group values which contain commas.'
            )
        out[pair[0].strip()] = re.sub(r"\[?\]?", "", pair[1]).strip()
    for key in out:
        if not re.fullmatch(r"[$a-zA-Z0-9._-]*", key):
            raise CliError(f"Invalid character found for config key: {key}")
    return out


def parse_delete_config(items: list[str] | None) -> list[str]:
    out: list[str] = []
    for item in items or []:
        out.extend(s.strip() for s in item.split(",") if s.strip())
    return out
