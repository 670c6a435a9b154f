"""The states of a transactional id and the transitions between them, as an explicit table.

The ids are those stored in __transaction_state records (protocol_specs/transaction_state.json)
and the names those DescribeTransactions and ListTransactions report. A transition is legal only
when the current state is listed among the target's previous states (Kafka's
``validPreviousStates``):

========================  ==========================================  =========================
target                    from                                        caused by
========================  ==========================================  =========================
Empty                     Empty, CompleteCommit, CompleteAbort        InitProducerId
Ongoing                   Ongoing, Empty, CompleteCommit,             AddPartitionsToTxn,
                          CompleteAbort                               AddOffsetsToTxn
PrepareCommit             Ongoing                                     EndTxn(commit)
PrepareAbort              Ongoing, PrepareEpochFence, Empty,          EndTxn(abort), timeout,
                          CompleteCommit, CompleteAbort               fencing InitProducerId
CompleteCommit            PrepareCommit                               every marker written
CompleteAbort             PrepareAbort                                every marker written
Dead                      Empty, CompleteCommit, CompleteAbort        transactional.id expiry
PrepareEpochFence         Ongoing                                     InitProducerId or the
                                                                      timeout while Ongoing
========================  ==========================================  =========================

PrepareAbort from Empty, CompleteCommit or CompleteAbort is an abort under transactions version
2 (KIP-890 part 2), whose client does not know whether a partition was added; the coordinator
refuses it to version 1 clients (INVALID_TXN_STATE) before the table is asked.

PrepareEpochFence and Dead are never written to the log: the first is a pending state on the
way to PrepareAbort with a bumped epoch, the second ends with a tombstone.
"""

from __future__ import annotations

import enum


class TxnState(enum.IntEnum):
    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def display_name(self) -> str:
        """Kafka's name: "Empty", "PrepareCommit", ..."""
        return _NAMES[self]

    @classmethod
    def from_name(cls, name: str) -> TxnState | None:
        return _BY_NAME.get(name)


_NAMES = {
    TxnState.EMPTY: "Empty",
    TxnState.ONGOING: "Ongoing",
    TxnState.PREPARE_COMMIT: "PrepareCommit",
    TxnState.PREPARE_ABORT: "PrepareAbort",
    TxnState.COMPLETE_COMMIT: "CompleteCommit",
    TxnState.COMPLETE_ABORT: "CompleteAbort",
    TxnState.DEAD: "Dead",
    TxnState.PREPARE_EPOCH_FENCE: "PrepareEpochFence",
}
_BY_NAME = {name: state for state, name in _NAMES.items()}

S = TxnState
VALID_PREVIOUS: dict[TxnState, frozenset[TxnState]] = {
    S.EMPTY: frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.ONGOING: frozenset({S.ONGOING, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.PREPARE_COMMIT: frozenset({S.ONGOING}),
    S.PREPARE_ABORT: frozenset(
        {S.ONGOING, S.PREPARE_EPOCH_FENCE, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}
    ),
    S.COMPLETE_COMMIT: frozenset({S.PREPARE_COMMIT}),
    S.COMPLETE_ABORT: frozenset({S.PREPARE_ABORT}),
    S.DEAD: frozenset({S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT}),
    S.PREPARE_EPOCH_FENCE: frozenset({S.ONGOING}),
}

# states in which an idle transactional id may expire (transactional.id.expiration.ms)
EXPIRATION_ALLOWED = frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT})

# states with a transaction in progress: its markers are not all written yet
IN_PROGRESS = frozenset({S.ONGOING, S.PREPARE_COMMIT, S.PREPARE_ABORT})


class IllegalTransition(Exception):
    """A transition the table does not allow: a coordinator bug, never a client's fault."""


def check_transition(current: TxnState, target: TxnState) -> None:
    if current not in VALID_PREVIOUS[target]:
        raise IllegalTransition(f"{current.display_name} -> {target.display_name} is not allowed")
