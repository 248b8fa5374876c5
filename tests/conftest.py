"""Shared fixtures: one Spark session per test run (NOTES-spark.md §5), started only by tests that ask."""
from __future__ import annotations

import sys
from typing import Any, Iterator

import pytest

# The project's caches (model successors and outcomes, reachable maps, release facts) are derived from the model:
# a test that monkeypatches a model rule must neither see nor leave behind answers computed under the other model.
PROJECT = ("model.", "harness.", "explore.", "properties.", "kgc.")


def _forget_model_caches() -> None:
    for module_name, module in list(sys.modules.items()):
        if module is None or not module_name.startswith(PROJECT):
            continue
        for value in list(vars(module).values()):
            if callable(getattr(value, "cache_clear", None)) and getattr(value, "__module__", None) == module_name:
                value.cache_clear()


@pytest.fixture(autouse=True)
def _no_inherited_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """kgc's output off a terminal is as wide as COLUMNS says (kgc/cli.py ``_width``); pytest-xdist's workers inherit
    COLUMNS=80, a plain run usually none, so every test starts without it and sets it where it means to."""
    monkeypatch.delenv("COLUMNS", raising=False)


@pytest.fixture(autouse=True)
def _model_caches_around_monkeypatch(request: pytest.FixtureRequest) -> Iterator[None]:
    """Tests that monkeypatch run with the model's caches empty, and empty them again afterwards."""
    patches = "monkeypatch" in request.fixturenames
    if patches:
        _forget_model_caches()
    yield
    if patches:
        _forget_model_caches()


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A local[2] SparkSession on 127.0.0.1 with the UI off (explore.spark.session); stopped at the end."""
    from explore.spark.session import spark_session
    session, _startup, _created = spark_session("local[2]", partitions=2, driver_memory="1g", app_name="kgc-tests")
    yield session
    session.stop()
