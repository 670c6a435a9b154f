"""A seeded wire fuzzer for the broker (issue 12, point 5), independent of kafkapy's runtime.

* ``generate``: valid requests of any served (API, version), built from kio's schemas (the same
  JSON specs Kafka generates its own code from), with values that reach real code paths (the
  fuzz topic's name and id, its partitions, a group) mixed with edge values (null where the
  schema allows it, -1, 0, the type's extremes, empty and unknown names);
* ``mutate``: the byte-level mutations of a frame (truncation, bit flips, lengths and counts
  made huge or negative, bad varints, garbage tagged fields, wrong header versions);
* ``runner``: sends cases to a broker process and checks the invariants (it answers or closes
  within the request timeout, a healthy client on another connection keeps being served, its
  RSS stays bounded, it never dies); a failing case is written to ``cases/`` and replayed by
  compat_tests/test_fuzz_wire.py from then on.
"""
