"""The broker side of share groups (KIP-932): effective group settings (``settings``), the
share-partition manager serving ShareFetch and ShareAcknowledge (``partitions``), and the share
state's durability in ``__share_group_state`` (``state_log``)."""
