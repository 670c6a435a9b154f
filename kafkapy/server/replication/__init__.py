"""Replication glue of a running broker (Kafka's ReplicaManager, ReplicaFetcherThread and
DelayedOperationPurgatory): leadership and ISR in ZooKeeper mode, follower fetching,
broker registration, and waiting for partitions to change.
"""
