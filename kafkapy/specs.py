"""Where the project's declarative specs (protocol_specs/) are read from at run time.

``kafkapy/protocol_specs`` is a link to the repository's top-level ``protocol_specs/``, shipped as
package data, so a wheel install (not only an editable checkout) carries the specs it reads.
"""

from __future__ import annotations

from pathlib import Path

SPECS_DIR = Path(__file__).resolve().parent / "protocol_specs"


def spec_path(name: str) -> Path:
    """The path of one spec file, e.g. ``spec_path("api_versions.json")``."""
    return SPECS_DIR / name
