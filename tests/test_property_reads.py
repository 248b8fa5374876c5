"""properties/reads.py: every concrete property declares what it reads, in the table's vocabulary."""
from __future__ import annotations

from properties.catalog import CATALOG
from properties.reads import PARTS, QUIET_CHANGES, READS, reads, unchanged_by_quiet_steps


def test_every_concrete_property_declares_its_reads() -> None:
    concrete = {p.name for p in CATALOG.values() if p.level == "concrete"}
    assert sorted(concrete - set(READS)) == []       # a new property needs an entry in properties/reads.py
    assert sorted(set(READS) - concrete) == []       # and a renamed or removed one takes its entry along


def test_reads_use_the_vocabulary() -> None:
    for name, parts in READS.items():
        assert parts <= PARTS, name
    assert QUIET_CHANGES <= PARTS


def test_an_undeclared_property_is_never_skipped() -> None:
    prop = next(p for p in CATALOG.values() if p.level == "abstract")
    assert reads(prop) == PARTS and not unchanged_by_quiet_steps(prop)


def test_the_catalog_today_is_unaffected_by_steps_that_do_not_call_the_coordinator() -> None:
    # no concrete property reads the requests in flight or the action beyond the coordinator call it is; if one
    # starts to, it is evaluated on every step again (slower, still exact) and this pin shows it
    assert [n for n, parts in READS.items() if not parts.isdisjoint(QUIET_CHANGES)] == []
