"""Kafka wire protocol: framing, headers, the served API table, record batches, codecs (sans-io).

Importing the package registers the Kafka 4.4 schema versions kio lacks (kio_schemas), so every
kio index lookup in the broker sees them.
"""

from .kio_schemas import register as _register_kio_schemas

_register_kio_schemas()
