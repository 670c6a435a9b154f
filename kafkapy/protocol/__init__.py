"""Kafka wire protocol: framing, headers, the served API table, record batches, codecs (sans-io).

Importing the package registers the Kafka 4.4 schema versions kio lacks (kio_schemas) and the
4.4 error codes kio's ErrorCode lacks (errors), so every kio lookup in the broker sees them.
"""

from .errors import add_newer_error_codes as _add_newer_error_codes
from .kio_schemas import register as _register_kio_schemas

_register_kio_schemas()
_add_newer_error_codes()
