"""Data pipelines that run on kafkapy: an nginx access-log generator and a Spark job over it.

- `access_log_generator`: realistic combined-log-format lines (library), with malformed ones.
- `generate_logs`: `python -m kafkapy.pipelines.generate_logs` produces them into a topic.
- `access_log_job`: `python -m kafkapy.pipelines.access_log_job`, the Structured Streaming job.
"""
