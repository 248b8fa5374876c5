"""Shared fixtures: one Spark session per test run (NOTES-spark.md §5), started only by tests that ask."""
from __future__ import annotations

from typing import Any, Iterator

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A local[2] SparkSession on 127.0.0.1 with the UI off (explore.spark.session); stopped at the end."""
    from explore.spark.session import spark_session
    session, _startup, _created = spark_session("local[2]", partitions=2, driver_memory="1g", app_name="kgc-tests")
    yield session
    session.stop()
