"""Replication: replica placement, leader election, ISR and high-watermark bookkeeping, and the
ZooKeeper-mode controller. Pure logic where possible; the trio side lives in kafkapy/server."""
