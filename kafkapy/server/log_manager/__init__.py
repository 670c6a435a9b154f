"""The running broker's side of the logs (Kafka's LogManager tasks): flushing, retention
and cleaning schedules, the cleaner's process, and log directory failures. The sans-io
log lives in kafkapy/storage.
"""
