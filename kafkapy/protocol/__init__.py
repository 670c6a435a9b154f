"""Kafka wire protocol: framing, headers, the served API table, record batches, codecs (sans-io)."""
