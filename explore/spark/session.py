"""One place that builds kgc's SparkSession, with the settings NOTES-spark.md measured on these machines.

Everything binds to 127.0.0.1 and the UI is off unless asked for. The master comes from the argument,
else ``SPARK_MASTER``, else spark-submit (``PYSPARK_GATEWAY_PORT`` is set), else ``local[*]``.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

CONF_DIR = Path(__file__).with_name("conf")
#: C1 JIT + serial GC: the biggest speed-up for the RDD BFS on a 2-core box (NOTES-spark.md §2)
JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


class SparkUnavailable(RuntimeError):
    """PySpark or Java is missing; the message says how to get them."""


def check_available() -> None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise SparkUnavailable("the Spark engine needs PySpark; install kgc's spark extra "
                               "(bin/kgc and bin/test do it) or use --engine local.") from None
    home = os.environ.get("JAVA_HOME")
    java = shutil.which("java") or (os.path.join(home, "bin", "java") if home else None)
    if java is None or not os.access(java, os.X_OK):
        raise SparkUnavailable("the Spark engine needs Java 17 or 21; install openjdk-17-jre-headless "
                               "or use --engine local.")
    major = java_major(java)
    if major is not None and major < 17:
        raise SparkUnavailable(f"the Spark engine needs Java 17 or 21 but found Java {major}; install "
                               "openjdk-17-jre-headless and put it first on PATH, or use --engine local.")


def java_major(java: str) -> int | None:
    """The major version `java -version` names ('version "17.0.15"' -> 17, 'version "1.8.0_392"' -> 8)."""
    try:
        shown = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r'version "(?:1\.)?(\d+)', shown)
    return int(found.group(1)) if found else None


def resolve_master(master: str | None) -> str | None:
    """The master URL to set on the builder (None: spark-submit already chose it)."""
    if master:
        return master
    if os.environ.get("SPARK_MASTER"):
        return os.environ["SPARK_MASTER"]
    if os.environ.get("PYSPARK_GATEWAY_PORT"):
        return None
    return "local[*]"


def spark_session(master: str | None = None, partitions: int | None = None, ui: bool = False,
                  app_name: str = "kgc-explore", driver_memory: str = "2g") -> tuple[Any, float, bool]:
    """A SparkSession, the seconds it took to start, and whether this call started it (False: a session
    was already running in this process and is returned as it is — its owner stops it)."""
    check_available()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_CONF_DIR", str(CONF_DIR))
    from pyspark import SparkContext
    from pyspark.sql import SparkSession
    created = SparkContext._active_spark_context is None
    cores = partitions or os.cpu_count() or 2
    start = time.perf_counter()
    builder = SparkSession.builder.appName(app_name)
    url = resolve_master(master)
    if url is not None:
        builder = builder.master(url)
    settings = {
        "spark.ui.enabled": "true" if ui else "false", "spark.ui.showConsoleProgress": "false",
        "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
        "spark.sql.shuffle.partitions": str(cores), "spark.default.parallelism": str(cores),
        "spark.driver.memory": driver_memory, "spark.driver.extraJavaOptions": JVM_OPTIONS,
        "spark.executor.extraJavaOptions": JVM_OPTIONS, "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.python.worker.reuse": "true",
    }
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session, time.perf_counter() - start, created
