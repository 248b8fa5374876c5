"""`kgc prove`: the table, the verdict and the exit status; bad arguments are one sentence and exit 2."""
from __future__ import annotations

import argparse

import pytest
from rich.console import Console

from kgc import prove_cmd


def run(*argv: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser(prog="kgc")
    prove_cmd.add_parser(parser.add_subparsers(dest="command"))
    console = Console(record=True, width=200)
    code = prove_cmd.run(parser.parse_args(["prove", *argv]), console)
    return code, console.export_text()


def test_prove_on_one_profile_proves_everything_and_reports_the_findings() -> None:
    code, out = run("--profile", "0.10.0")
    assert code == 0
    assert "model-idle-member-has-liveness-watch" in out and "proved (strengthening)" in out
    assert "finding model-removed-member-leaves-no-liveness-op on 0.10.0: KAFKA-7196" in out
    assert "  3  ExpireJoin" in out   # the finding's BMC trace, one action per line
    assert "all proved: 16 proved, 2 known finding(s), 0 not proved" in out
    assert "output properties: 7 proved, 0 not proved" in out   # properties/abstract_outputs.py on 0.10.0
    assert "model-member-list-goes-only-to-the-leader" in out and "proved (output)" in out


def test_bmc_reports_each_invariant_and_the_known_findings_do_not_fail_it() -> None:
    code, out = run("--profile", "0.10.0", "--bmc", "3", "--members", "2")
    assert code == 0
    assert "holds to depth 3" in out and "violated at depth 3 (known finding)" in out
    assert "model-removed-member-leaves-no-liveness-op on 0.10.0, violated after 3 steps:" in out


def test_a_not_proved_invariant_fails_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    from properties.z3 import rules, steps
    monkeypatch.setattr(rules, "_hand_over_leadership", lambda w, gone: None)
    monkeypatch.setattr(steps, "_CACHE", {})
    code, out = run("--profile", "0.10.0")
    assert code == 1
    assert "not-inductive model-leader-exists-iff-a-member-exists on 0.10.0 — broken by" in out
    assert "counterexample to induction:" in out and "  pre   " in out


def test_a_not_proved_output_property_fails_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Heartbeat that the encoding forgets to answer: the invariants still hold, the output proof fails."""
    from properties.z3 import steps
    monkeypatch.setitem(steps.SLOT_ACTIONS, "Heartbeat", lambda p, w, i: [w])
    monkeypatch.setattr(steps, "_CACHE", {})
    code, out = run("--profile", "0.10.0")
    assert code == 1
    assert "1 not proved: 16 proved, 2 known finding(s), 0 not proved; output properties: 6 proved, 1 not proved" in out
    assert "not-proved model-request-is-answered-or-parked on 0.10.0 — broken by Heartbeat" in out
    assert "counterexample step (its pre-state satisfies every proved invariant):" in out and "  out   " in out


@pytest.mark.parametrize(("argv", "message"), [
    (["--profile", "2.4"], "unknown profile '2.4'; known profiles: 0.10.0, 2.4.1, 2.7.0, 3.9, 4.1."),
    (["--bmc", "-1"], "--bmc needs a depth from 0 to 40, not -1."),
    (["--members", "2"], "--members applies to bounded model checking only: add --bmc K."),
    (["--bmc", "2", "--members", "9"], "--members must be 1 to 5, not 9."),
])
def test_bad_arguments_are_one_sentence_and_exit_2(argv: list[str], message: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run(*argv)
    assert code == 2
    assert capsys.readouterr().err == f"kgc: error: {message}\n"


def test_bmc_over_a_static_scope_checks_the_static_invariants_too() -> None:
    code, out = run("--profile", "3.9", "--static", "--bmc", "2", "--members", "1")
    assert code == 0
    assert "2 steps from the initial state, 1 static member slots" in out
    assert "model-static-slot-is-a-member" in out and "model-persisted-replacement-has-a-pending-static-append" in out


@pytest.mark.slow
def test_the_static_proof_proves_every_static_claim_and_traces_its_findings() -> None:
    """`kgc prove --static` on 3.9 (~4 min): the static claims (the counting one too), with partition moves; the
    four findings (the static scope's three and 3.9's own) each with a BMC trace over 2 static slots; the output
    properties over the static actions, one of them a finding with its step."""
    code, out = run("--profile", "3.9", "--static")
    assert "finding model-idle-member-has-liveness-watch on 3.9" in out
    assert out.count("shortest violation (BMC") == 4 and "JoinGroup/static-rejoin" in out
    assert "all proved: 21 proved, 4 known finding(s), 0 not proved; output properties: 7 proved, 1 known " \
        "finding(s), 0 not proved" in out
    assert code == 0, out
