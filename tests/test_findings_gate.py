"""Documented findings are verdicts the gate enforces (issue 11 item 5): every gate-enforced finding has,
per profile, a counterexample the tool found (reports/findings/NAME/PROFILE/), it still reproduces with the
finding's excuse off, the excuse is what lets the same trace pass, and a finding that no longer reproduces
fails `kgc check`."""
from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import pytest
from rich.console import Console

from core.trace import Trace
from harness.excuses import excused, unexcused
from kgc import check_cmd, findings_cmd
from kgc.cli import main
from kgc.findings_cmd import TRACE, reproduce
from kgc.gate import GateResult
from kgc.runs import actions_of, replay_checked
from properties import findings as findings_module
from properties.findings import FINDINGS, gated

CASES = [(f.name, p) for f in FINDINGS if f.gated for p in f.profiles if (f.record(p) / TRACE).is_file()]
#: documented for a profile from SPEC.md, but no counterexample found by the search is recorded there yet
UNRECORDED = [(f.name, p) for f in FINDINGS if f.gated for p in f.profiles if (f.name, p) not in CASES]


def test_every_gated_finding_is_recorded_on_at_least_one_profile() -> None:
    assert {n for n, _ in CASES} == {f.name for f in FINDINGS if f.gated}


def test_an_unrecorded_finding_is_a_warning_not_a_stale_verdict(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Every documented (finding, profile) has a record today; one without (planted: the records moved away) is
    reported as not recorded — a warning — never as stale."""
    assert UNRECORDED == []
    monkeypatch.setattr(findings_module, "RECORDS", tmp_path)
    for f in FINDINGS:
        if f.gated:
            r = reproduce(f, f.profiles[0])
            assert not r.recorded and not r.stale and "no counterexample found by the search" in r.detail


def _trace(name: str, profile: str) -> Trace:
    f = next(f for f in FINDINGS if f.name == name)
    return Trace.loads((f.record(profile) / TRACE).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name,profile", CASES)
def test_every_gated_finding_has_a_record_that_reproduces(name: str, profile: str) -> None:
    f = next(f for f in FINDINGS if f.name == name)
    record = f.record(profile)
    assert {TRACE, "report.md", "report.html", "violation.json"} <= {p.name for p in record.iterdir()}
    assert any(p.name.startswith("test_") and p.suffix == ".py" for p in record.iterdir())
    r = reproduce(f, profile)
    assert r.reproduced, r.detail
    assert r.detail.split(" at step ")[0] in f.properties


@pytest.mark.parametrize("name,profile", CASES)
def test_the_excuse_is_what_lets_the_recorded_trace_pass(name: str, profile: str) -> None:
    """With the finding's excuse on (the gate's default) the same actions break nothing the finding names:
    the excuse is narrow enough that the search goes on, and it is in force."""
    trace = _trace(name, profile)
    prop = trace.violation.property if trace.violation else ""
    assert excused(name)
    assert replay_checked(trace, actions_of(trace), prop) is None
    with unexcused([name]):
        assert not excused(name)
        assert replay_checked(trace, actions_of(trace), prop) is not None
    assert excused(name)


def test_a_finding_that_no_longer_reproduces_is_reported_stale(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    name, profile = CASES[-1]
    f = next(f for f in FINDINGS if f.name == name)
    trace = _trace(name, profile)
    # the break is at the end; the violation keeps its property but not its step (a trace naming a step it lacks is
    # invalid; -1 is "no step")
    assert trace.violation is not None
    cut = dataclasses.replace(trace, steps=trace.steps[: len(trace.steps) // 2],
                              violation=dataclasses.replace(trace.violation, step=-1))
    (tmp_path / name / profile).mkdir(parents=True)
    (tmp_path / name / profile / TRACE).write_text(cut.dumps(), encoding="utf-8")
    monkeypatch.setattr("properties.findings.RECORDS", tmp_path)
    r = reproduce(f, profile)
    assert not r.reproduced and r.stale and "no longer breaks" in r.detail
    (tmp_path / name / profile / TRACE).unlink()
    assert not reproduce(f, profile).stale


def test_kgc_check_fails_on_a_stale_finding_and_lists_reproduced_ones(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    name, profile = CASES[-1]

    def passing_gate(profile: str, *_a: object, **_k: object) -> GateResult:
        return GateResult(profile=profile, mutant=None, seed=0)

    monkeypatch.setattr(check_cmd, "run_gate", passing_gate)
    args = argparse.Namespace(profile=profile, mutant=None, budget=10.0, seed=0, out=tmp_path / "ok",
                              list_mutants=False, unexcuse=[])
    log = tmp_path / "log.txt"
    with open(log, "w") as out:
        assert check_cmd.run(args, Console(file=out, width=300)) == 0
    assert f"finding {name} reproduced on {profile}" in log.read_text()
    run = json.loads((tmp_path / "ok" / profile / "run.json").read_text())
    assert [x["finding"] for x in run["findings"]] == [f.name for f in gated(profile)]
    assert all(x["reproduced"] or not x["recorded"] for x in run["findings"])

    stale = dataclasses.replace(reproduce(next(f for f in FINDINGS if f.name == name), profile), reproduced=False,
                                detail="planted")
    monkeypatch.setattr(check_cmd, "reproduce_all", lambda _p: [stale])
    with open(log, "w") as out:
        assert check_cmd.run(argparse.Namespace(**{**vars(args), "out": tmp_path / "stale"}),
                             Console(file=out, width=300)) == 1
    assert f"stale finding {name} on {profile}: planted" in log.read_text()


def test_unexcuse_of_an_unknown_finding_is_one_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--unexcuse", "nope", "--budget", "10"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("kgc: error: --unexcuse nope: not a documented finding") and len(err.splitlines()) == 1


def test_record_refuses_a_counterexample_of_another_property(tmp_path: Path) -> None:
    name, profile = CASES[-1]
    trace = _trace(name, profile)
    assert trace.violation is not None
    other = dataclasses.replace(trace, violation=dataclasses.replace(trace.violation, property="no-such-property"))
    (tmp_path / profile).mkdir()
    (tmp_path / profile / TRACE).write_text(other.dumps(), encoding="utf-8")
    with pytest.raises(findings_cmd.FindingsUsageError, match="does not name"):
        findings_cmd.record(name, profile, tmp_path)


def test_kgc_findings_lists_every_finding_and_exits_0_when_all_reproduce(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["findings"]) == 0
    out = capsys.readouterr().out
    assert all(f.name[:30] in out for f in FINDINGS)
    assert "stale:" not in out


@pytest.mark.parametrize("name,profile", CASES)
def test_each_records_regression_test_passes(name: str, profile: str) -> None:
    """The pytest file filed with each record (``pytest reports/findings``) runs green on the reference."""
    import importlib.util
    f = next(f for f in FINDINGS if f.name == name)
    path = f.record(profile) / findings_cmd.regression_test_name(f, profile)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    getattr(module, path.stem)()
