"""API handlers, one module per Kafka API."""
