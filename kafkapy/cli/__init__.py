"""The kafkapy command line."""
