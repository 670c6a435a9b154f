"""Cluster metadata: Kafka's ZooKeeper data model behind one store interface
(embedded, ZooKeeper)."""
