"""Share groups (KIP-932, queues for Kafka), sans-io.

``groups`` holds the share group type of the group coordinator (Kafka's ShareGroup and
ShareGroupMember, GroupMetadataManager's shareGroupHeartbeat and shareGroupDescribe) with its
server-side ``assignor``; ``partition`` the state of one share-partition (Kafka's SharePartition:
in-flight records, acquisition locks, delivery counts); ``sessions`` the share session cache
(Kafka's ShareSessionCache).
"""
