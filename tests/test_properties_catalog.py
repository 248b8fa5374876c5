"""The property catalog: its records, its order, its lookups, and the decorators that fill it."""
from __future__ import annotations

import re

import pytest

from core.types import GroupState
from properties import catalog as cat
from properties.catalog import CATALOG, KINDS, CatalogError, for_profile

CONCRETE = [p for p in CATALOG.values() if p.level == "concrete"]
DESIGN_CARD = {"delayed-join-completes-only-when-all-rejoined": "always_step",
               "member-kept-alive-while-callback-pending": "always_step"}
#: the seed rules of the brief, by the names they are published under
SEED_RULES = ("rebalance-timeout-is-the-maximum", "one-delayed-join-per-group", "at-most-one-live-heartbeat-per-member",
              "fresh-heartbeat-not-completed-by-its-own-watch",
              "join-completion-removes-every-member-that-did-not-rejoin", "join-response-reschedules-the-heartbeat",
              "sync-in-preparing-rebalance-answers-rebalance-in-progress")


def test_at_least_26_concrete_properties_besides_witnesses() -> None:
    checked = [p for p in CONCRETE if p.kind != "sometimes"]
    assert len(checked) >= 26, len(checked)
    assert {p.kind for p in CONCRETE} == set(KINDS)


@pytest.mark.parametrize("prop", CONCRETE, ids=lambda p: p.name)
def test_every_record_is_complete(prop: cat.Property) -> None:
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", prop.name)
    assert prop.kind in KINDS and prop.level == "concrete"
    assert prop.claim.endswith(".") and "\n" not in prop.claim and len(prop.claim) > 30
    assert re.search(r"seed \d{3}|SPEC\.md §|DESIGN\.md §", prop.source), prop.source
    assert prop.applies_to and set(prop.applies_to) <= {"0.10.0", "2.4.1", "2.7.0", "3.9", "4.1"}
    assert callable(prop.check) and callable(prop.explain)


def test_names_are_unique_and_the_design_card_and_seed_rules_are_there() -> None:
    names = list(CATALOG)
    assert len(names) == len(set(names))
    for name, kind in DESIGN_CARD.items():
        assert CATALOG[name].kind == kind and CATALOG[name].applies_to == ("0.10.0", "2.4.1", "2.7.0", "3.9", "4.1")
    assert all(name in CATALOG for name in SEED_RULES)
    # the two documented findings (deadline arithmetic ≤ 2.4; the 0.9 state table) keep the properties off
    assert CATALOG["at-most-one-live-heartbeat-per-member"].applies_to == ("2.7.0", "3.9", "4.1")
    assert CATALOG["no-illegal-state-error"].applies_to == ("2.4.1", "2.7.0", "3.9", "4.1")
    assert "unless the member has a parked JoinGroup or SyncGroup" in CATALOG[
        "fresh-heartbeat-not-completed-by-its-own-watch"].claim


def test_catalog_order_follows_the_module_list_then_definitions() -> None:
    orders = [p.order for p in CATALOG.values()]
    assert orders == sorted(orders)
    modules = [cat.PROPERTY_MODULES[p.order[0]] for p in CONCRETE]
    assert modules == sorted(modules, key=cat.PROPERTY_MODULES.index)
    assert next(iter(CATALOG)) == "awaiting-join-counter-matches-members"


def test_for_profile_filters_by_profile_level_and_kind() -> None:
    old, new = for_profile("0.10.0"), for_profile("3.9", level="concrete")
    assert "at-most-one-live-heartbeat-per-member" not in {p.name for p in old}
    assert "at-most-one-live-heartbeat-per-member" in {p.name for p in new}
    monitors = for_profile("3.9", kind="eventually_within")
    assert {p.name for p in monitors} == {"rebalance-ends-within-its-delayed-join-timeout",
                                         "silent-member-is-removed-within-its-session-timeout",
                                         "parked-request-is-answered-within-its-phase-bound"}
    assert for_profile("0.10.0", level="abstract", kind="eventually_within") == ()
    assert len(for_profile("3.9", level="abstract", kind="always_step")) == 9   # the output properties
    with pytest.raises(CatalogError, match="unknown profile '2.4'; the catalog knows 0.10.0, 2.4.1, 2.7.0, 3.9"):
        for_profile("2.4")


def test_decorators_refuse_bad_records_with_one_sentence() -> None:
    size = len(cat._REGISTRY)
    with pytest.raises(CatalogError, match=r"property 'Bad_Name': its name is not kebab-case"):
        cat.always("Bad_Name", claim="x.", source="SPEC.md §1")(lambda obs: None)
    with pytest.raises(CatalogError, match="that name is already registered"):
        cat.always("leader-is-a-member", claim="x.", source="SPEC.md §1")(lambda obs: None)
    with pytest.raises(CatalogError, match=r"applies_to \('2.4',\) must be"):
        cat.always("some-new-claim", claim="x.", source="SPEC.md §1", applies_to=("2.4",))(lambda obs: None)
    with pytest.raises(CatalogError, match="it needs a claim and a source"):
        cat.always_step("another-new-claim", claim=" ", source="SPEC.md §1")(lambda b, s, a: None)
    assert len(cat._REGISTRY) == size   # nothing half-registered


def test_check_message_and_explain_share_one_witness() -> None:
    prop = CATALOG["dead-group-is-not-cached"]

    class Group:
        state, incarnation = GroupState.DEAD, 2

    class Obs:
        group: object = Group()
    msg = prop.check(Obs())
    assert msg == ("dead-group-is-not-cached: A group that became Dead is no longer in the coordinator's group cache "
                   "— violated: group=2, state='Dead', cached=True")
    assert prop.explain(Obs()) == {"group": 2, "state": "Dead", "cached": True}
    Obs.group = None
    assert prop.check(Obs()) is None and prop.explain(Obs()) == {}


def test_monitor_explain_is_the_witness_of_its_last_violation() -> None:
    prop = CATALOG["rebalance-ends-within-its-delayed-join-timeout"]
    monitor = prop.check()
    assert isinstance(monitor, cat.Monitor) and prop.explain(monitor) == {}
    monitor.witness = {"group": 1}
    assert prop.explain(monitor) == {"group": 1}
