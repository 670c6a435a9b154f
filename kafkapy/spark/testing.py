"""A small local SparkSession for tests and benchmarks.

One session per process (Spark allows one SparkContext per JVM): local[2], 2 shuffle
partitions, no UI, every directory under a temp dir, the executors' Python = this Python.
When KAFKAPY_SPARK_KAFKA_JARS is set (comma-separated jar paths of spark-sql-kafka-0-10 and
its dependencies), they go on the classpath through spark.jars, so format("kafka") works;
the first session of the process decides, so every session made here carries them.
KAFKAPY_SPARK_KAFKA_PACKAGES (e.g. org.apache.spark:spark-sql-kafka-0-10_2.13:4.3.0) does the
same through spark.jars.packages where a Maven repository is reachable.
"""

from __future__ import annotations

import atexit
import os
import sys
import tempfile

JARS_ENV = "KAFKAPY_SPARK_KAFKA_JARS"
PACKAGES_ENV = "KAFKAPY_SPARK_KAFKA_PACKAGES"


def kafka_connector_configured() -> bool:
    """True when Spark's built-in kafka connector was put on the classpath by the environment:
    KAFKAPY_SPARK_KAFKA_JARS (jar paths -> spark.jars) or KAFKAPY_SPARK_KAFKA_PACKAGES
    (Maven coordinates -> spark.jars.packages, needs access to a Maven repository)."""
    return bool(os.environ.get(JARS_ENV) or os.environ.get(PACKAGES_ENV))

_session = None


def local_session(app: str = "kafkapy-tests"):
    global _session
    if _session is not None:
        return _session
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    tmp = tempfile.mkdtemp(prefix="kafkapy-spark-")
    b = (SparkSession.builder.master("local[2]").appName(app)
         .config("spark.sql.shuffle.partitions", "2")
         .config("spark.default.parallelism", "2")
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.local.dir", os.path.join(tmp, "local"))
         .config("spark.sql.warehouse.dir", os.path.join(tmp, "warehouse"))
         .config("spark.sql.streaming.checkpointLocation", os.path.join(tmp, "ckpt"))
         .config("spark.driver.extraJavaOptions", f"-Djava.io.tmpdir={tmp}")
         .config("spark.python.worker.reuse", "true"))
    jars = os.environ.get(JARS_ENV)
    if jars:
        b = b.config("spark.jars", jars)
    packages = os.environ.get(PACKAGES_ENV)
    if packages:
        b = b.config("spark.jars.packages", packages)
    _session = b.getOrCreate()
    _session.sparkContext.setLogLevel("ERROR")
    atexit.register(stop_session)
    return _session


def stop_session() -> None:
    global _session
    if _session is not None:
        _session.stop()
        _session = None
