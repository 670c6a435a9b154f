"""The version sweep's checks (compat_tests/test_version_sweep.py runs them): every served API
at every served version, against one real broker, each answer checked for meaning, not just for
decoding.

Requests are built generically from kio's own schema for each version (``builder``); each API's
check overrides what it needs and asserts what Kafka answers. Modules, one job each:

* ``env``: the sweep's broker handle (``Env``) and shared constants (the topic "sweep", its seed);
* ``builder``: ``make(api, version, env, **spec)``, a request filled from spec, defaults, names;
* ``common``: requests several checks share (CreateTopics, Produce, Metadata, ListOffsets, Fetch);
* ``records``: Produce, Fetch, ListOffsets, DeleteRecords, OffsetForLeaderEpoch;
* ``topics``: Metadata, ApiVersions, topic and partition admin, cluster, log dirs, reassignments;
* ``configs``: DescribeConfigs, AlterConfigs, IncrementalAlterConfigs, client quotas;
* ``groups``: FindCoordinator, the classic group protocol, offsets, group admin, KIP-848;
* ``transactions``: InitProducerId, the transaction APIs, DescribeProducers;
* ``security``: SASL, SCRAM credentials, ACLs;
* ``checks``: ``CHECKS``, the check of each API by name.
"""
