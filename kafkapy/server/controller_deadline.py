"""The controller's deadline for the requests it runs (Kafka's
ControllerRequestContext.requestTimeoutMsToDeadlineNs with KafkaEventQueue's deadlines).

Apache Kafka gives CreateTopics, DeleteTopics, CreatePartitions, ElectLeaders and
AlterPartitionReassignments a deadline of the request's arrival plus its timeout_ms, and its
controller refuses an operation that has not started by then: the whole request is answered
REQUEST_TIMED_OUT (every topic or partition, no message) and nothing changes. kafkapy starts the
operation as soon as the handler runs, so only a timeout of 0 or less is past its deadline here
(Kafka's controller, a queue away, usually misses a 1 ms deadline as well; see FINDINGS.md).
"""

from __future__ import annotations

import datetime

_ZERO = datetime.timedelta(0)


def deadline_passed(timeout: datetime.timedelta) -> bool:
    """Whether an operation asked for with ``timeout`` is past its deadline when it starts."""
    return timeout <= _ZERO
