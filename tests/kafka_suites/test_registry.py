"""The restated Kafka suites are complete and the README's table is true: every test of every Kafka file at every
tag is restated at that tag or declared not applicable with a reason, nothing is restated that Kafka does not have
at that tag, and README.md carries the table `registry.table()` prints."""
from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest

import tests.kafka_suites as package
from tests.kafka_suites.registry import TAG_PROFILE, by_suite, kafka_test_names, restated_by, restates, table

ROOT = Path(__file__).resolve().parents[2]


def suite_modules() -> list:
    names = sorted(m.name for m in pkgutil.iter_modules(package.__path__) if m.name.startswith("test_")
                   and m.name != "test_registry")
    modules = [importlib.import_module(f"tests.kafka_suites.{n}") for n in names]
    return [m for m in modules if hasattr(m, "SUITE")]


@pytest.mark.parametrize("modules", list(by_suite(suite_modules()).values()),
                         ids=lambda ms: ms[0].SUITE.short_name)
def test_every_kafka_test_is_restated_or_declared_not_applicable(modules) -> None:
    suite, done = modules[0].SUITE, restated_by(modules)
    assert all(m.SUITE == suite for m in modules), f"{suite.short_name}: its modules declare different Suites"
    missing = [(tag, n) for tag, names in suite.tests.items() for n in names
               if tag not in done.get(n, ()) and n not in suite.not_applicable]
    assert not missing, f"{suite.short_name}: not restated and not declared not applicable: {missing[:20]}"
    unknown = [(n, sorted(tags - {t for t in tags if n in suite.tests.get(t, ())})) for n, tags in done.items()]
    unknown = [(n, tags) for n, tags in unknown if tags]
    assert not unknown, f"{suite.short_name}: restated at tags where Kafka has no such test: {unknown}"
    every = {n for names in suite.tests.values() for n in names}
    stray = sorted(set(suite.not_applicable) - every)
    assert not stray, f"{suite.short_name}: declared not applicable but not a Kafka test: {stray}"
    assert all(reason.strip() for reason in suite.not_applicable.values())
    assert set(suite.tests) <= set(TAG_PROFILE)


def test_the_readme_table_is_the_registry_table() -> None:
    modules = suite_modules()
    assert modules, "no restated Kafka suite found under tests/kafka_suites"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert table(modules) in readme, "README.md's table of restated Kafka suites is stale; paste registry.table()"


def test_test_names_are_read_from_scala_and_java() -> None:
    scala = """
  @Test
  def testJoin(): Unit = {}
  def helper(): Unit = {}
  @ParameterizedTest
  @ValueSource(booleans = Array(true, false))
  def staticMemberRejoin(skip: Boolean): Unit = {}
  @Test
  def testJoin(): Unit = {}
"""
    java = """
    @Test
    public void testClassicJoin() {}
    @ParameterizedTest
    @MethodSource("args")
    void testParam(int x) {}
"""
    assert kafka_test_names(scala) == ("testJoin", "staticMemberRejoin")
    assert kafka_test_names(java) == ("testClassicJoin", "testParam")


def test_restates_runs_once_per_tag_on_its_profile_and_refuses_unknown_tags() -> None:
    @restates("testA", "2.4.1", "3.9.0")
    @restates("testB", "2.7.0")
    def fn(profile: str) -> None:
        pass
    assert fn.kafka_restates == (("testB", ("2.7.0",)), ("testA", ("2.4.1", "3.9.0")))
    params = [m for m in fn.pytestmark if m.name == "parametrize" and m.args[0] == "profile"]
    assert len(params) == 1 and params[0].args[1] == ["2.4.1", "2.7.0", "3.9"]
    with pytest.raises(ValueError):
        restates("testC", "9.9.9")
