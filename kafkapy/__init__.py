"""kafkapy: a wire-compatible Apache Kafka broker in Python."""
