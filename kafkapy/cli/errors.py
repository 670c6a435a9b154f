"""The command-line tools' one user-facing error (Kafka's tools print such a failure as one line).

Raise :class:`CliError` anywhere in a tool; ``cli.common.run_tool`` prints its message and exits
with its code.
"""

from __future__ import annotations


class CliError(Exception):
    """A user-facing failure: printed as one line, exit status 1."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code
