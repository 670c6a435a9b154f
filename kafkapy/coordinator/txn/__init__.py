"""The transaction coordinator (KIP-98, KIP-447, KIP-890 parts 1 and 2): transactional ids, their
producer ids and epochs, and their transactions, stored as records of the internal topic
__transaction_state.

Modules:

- ``states``: the states of a transactional id and the transition table.
- ``metadata``: one id's state and its two-step (prepare, then complete) transitions.
- ``records``: __transaction_state keys and values, per protocol_specs/transaction_state.json.
- ``cache``: the partitions this coordinator leads (loading, owned) and their ids.
- ``coordinator``: the decisions behind InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn,
  EndTxn, DescribeTransactions, ListTransactions, timeouts and id expiration.
- ``end_txn_v2``: EndTxn under transactions version 2 (an epoch bump per transaction).
- ``markers``: the bookkeeping of one transaction's commit/abort markers.
"""

from .coordinator import Prepared, TxnConfig, TxnCoordinator
from .markers import MarkerJob, Outcome
from .metadata import TxnMetadata, TxnTransit
from .states import TxnState

__all__ = [
    "MarkerJob",
    "Outcome",
    "Prepared",
    "TxnConfig",
    "TxnCoordinator",
    "TxnMetadata",
    "TxnState",
    "TxnTransit",
]
