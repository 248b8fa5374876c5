"""What each restated Kafka test file covers: the names of Kafka's tests at each release tag, which kgc tests
restate which of them (on which tags), and which do not apply to the reference (each with its reason).

A restating module names its `Suite` as ``SUITE`` (a large Kafka file may be restated in several modules, by
subject, that share one `Suite` value) and marks each of its tests with `@restates(kafka_test, tag, ...)`:
the test is run once per tag, on the profile that tag stands for (`TAG_PROFILE`), with the profile name as
its ``profile`` argument, so a test whose answer differs by release asserts each release's answer.
The expected values are Kafka's assertions at that tag; the code is ours (restated, never transliterated).
`tests/kafka_suites/test_registry.py` checks that every Kafka test of every tag is either restated or
declared not applicable, and that the README's table is the one `table()` prints.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import pytest

#: the Kafka release tag a restated test is checked at -> the kgc profile that stands for it. Apache's mirror
#: carries no final 3.9.0 tag; "3.9.0" names the 3.9.0 release line as read at 3.9.0-rc3 / 3.9.1 (see the module
#: docstrings where the two differ).
TAG_PROFILE: dict[str, str] = {"2.4.1": "2.4.1", "2.7.0": "2.7.0", "3.9.0": "3.9", "4.1.1": "4.1"}

F = Callable[..., Any]


@dataclass(frozen=True)
class Suite:
    """One Kafka test file: its path in apache/kafka, its test names per tag, and the tests that do not apply."""
    kafka_file: str
    tests: Mapping[str, tuple[str, ...]]           # tag -> the names of its @Test/@ParameterizedTest methods
    not_applicable: Mapping[str, str] = field(default_factory=dict)   # Kafka test name -> why it does not apply

    @property
    def short_name(self) -> str:
        return self.kafka_file.rsplit("/", 1)[-1]


def restates(kafka_test: str, *tags: str) -> Callable[[F], F]:
    """Mark a kgc test as the restatement of Kafka test ``kafka_test``, holding at ``tags``; it runs once per
    tag with ``profile`` set to the tag's profile."""
    unknown = [t for t in tags if t not in TAG_PROFILE]
    if not tags or unknown:
        raise ValueError(f"restates({kafka_test!r}): tags must be among {sorted(TAG_PROFILE)}, got {tags!r}")

    def mark(fn: F) -> F:
        restated = getattr(fn, "kafka_restates", ())
        fn.kafka_restates = restated + ((kafka_test, tuple(tags)),)   # type: ignore[attr-defined]
        if restated:                                   # a second @restates on one test: parametrize once
            tags_all = sorted({t for _, ts in fn.kafka_restates for t in ts}, key=list(TAG_PROFILE).index)  # type: ignore[attr-defined]
            fn.pytestmark = [m for m in getattr(fn, "pytestmark", [])  # type: ignore[attr-defined]
                             if not (m.name == "parametrize" and m.args[0] == "profile")]
        else:
            tags_all = list(tags)
        return pytest.mark.parametrize("profile", [TAG_PROFILE[t] for t in tags_all],
                                       ids=[f"kafka-{t}" for t in tags_all])(fn)
    return mark


_TEST_METHOD = re.compile(r"@(?:Test|ParameterizedTest)\b[^\n]*\n(?:\s*@[^\n]*\n)*"
                          r"\s*(?:def|(?:public\s+)?void)\s+(\w+)")


def kafka_test_names(source: str) -> tuple[str, ...]:
    """The names of the test methods of a Kafka test file (Scala `def` or Java `void` after @Test or
    @ParameterizedTest, other annotations between), in file order; a name defined twice counts once."""
    seen: dict[str, None] = {}
    for name in _TEST_METHOD.findall(source):
        seen.setdefault(name, None)
    return tuple(seen)


def restated_in(module: Any) -> dict[str, set[str]]:
    """Kafka test name -> the tags at which some test of ``module`` restates it."""
    out: dict[str, set[str]] = {}
    for value in vars(module).values():
        for name, tags in getattr(value, "kafka_restates", ()):
            out.setdefault(name, set()).update(tags)
    return out


def failing_in(module: Any) -> dict[str, set[str]]:
    """Kafka test name -> tags at which its restatement is marked xfail (a known disagreement, not yet resolved)."""
    out: dict[str, set[str]] = {}
    for value in vars(module).values():
        marks = [m for m in getattr(value, "pytestmark", []) if m.name == "xfail"]
        if marks:
            for name, tags in getattr(value, "kafka_restates", ()):
                out.setdefault(name, set()).update(tags)
    return out


@dataclass(frozen=True)
class Row:
    kafka_file: str
    tag: str
    tests: int
    restated: int
    not_applicable: int
    failing: int

    @property
    def missing(self) -> int:
        return self.tests - self.restated - self.not_applicable


def by_suite(modules: list[Any]) -> dict[str, list[Any]]:
    """The restating modules grouped by the Kafka file they restate, in the order first seen."""
    out: dict[str, list[Any]] = {}
    for module in modules:
        out.setdefault(module.SUITE.kafka_file, []).append(module)
    return out


def restated_by(modules: list[Any]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for module in modules:
        for name, tags in restated_in(module).items():
            out.setdefault(name, set()).update(tags)
    return out


def rows(modules: list[Any]) -> list[Row]:
    """One row per tag of the Kafka file the (one or more) ``modules`` restate together."""
    suite: Suite = modules[0].SUITE
    done = restated_by(modules)
    failing: dict[str, set[str]] = {}
    for module in modules:
        for name, tags in failing_in(module).items():
            failing.setdefault(name, set()).update(tags)
    out = []
    for tag, names in suite.tests.items():
        restated = sum(tag in done.get(n, ()) for n in names)
        na = sum(n in suite.not_applicable and tag not in done.get(n, ()) for n in names)
        out.append(Row(suite.short_name, tag, len(names), restated, na,
                       sum(tag in failing.get(n, ()) for n in names)))
    return out


def table(modules: list[Any]) -> str:
    """The README's table: per Kafka file and tag, tests in the file, restated, not applicable, failing."""
    lines = ["| Kafka test file | tag | tests | restated | not applicable | failing |",
             "|---|---|---|---|---|---|"]
    for group in by_suite(modules).values():
        for r in rows(group):
            lines.append(f"| {r.kafka_file} | {r.tag} | {r.tests} | {r.restated} | {r.not_applicable} | {r.failing} |")
    return "\n".join(lines)
