"""The coordinators' place in the broker (Kafka's GroupCoordinator and
TransactionCoordinator wiring): their internal topics as logs, timers, transaction
markers and their sending, KIP-890 verification and producer-id blocks. The sans-io
state machines live in kafkapy/coordinator.
"""
