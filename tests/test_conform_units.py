"""The conformance pieces without a network: structural comparison, difference classes, the
response-level properties (each shown failing), probe scripts, and one-sentence bad targets."""
from __future__ import annotations

import asyncio
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from kgc.cli import main
from wire.conform.answers import compare
from wire.conform.driver import Exchange, Run
from wire.conform.probes import PROBES, get_probes
from wire.conform.properties import PROPERTIES, check_run
from wire.conform.script import BrokerConfig, Id


def join(label: str, member: str, mid: str, gen: int, leader: str, members: list[str], *, sent: int = 0,
         answered: int = 10, error: int = 0, protocol: str = "range", request_id: str = "") -> Exchange:
    listed = [dict(member_id=m, group_instance_id=None, metadata="meta") for m in members]
    response = dict(error_code=error, generation_id=gen, protocol_type=None, protocol_name=protocol, leader=leader,
                    member_id=mid, members=listed)
    return Exchange(label, member, "JoinGroup", 5, {"member_id": request_id, "session_timeout_ms": 1000,
                                                     "protocol_type": "consumer", "protocols": (("range", b""),)},
                    sent, answered, response)


def beat(label: str, member: str, mid: str, error: int, *, sent: int = 20, answered: int = 21) -> Exchange:
    return Exchange(label, member, "Heartbeat", 3, {"member_id": mid, "generation_id": 1}, sent, answered,
                    {"error_code": error})


def group(prefix: str) -> Run:
    """Two members form generation 1 (a leads); ids are broker-chosen with ``prefix``."""
    a, b = f"{prefix}-a", f"{prefix}-b"
    return Run("p", [join("a.JoinGroup.1", "a", a, 1, a, [a, b]), join("b.JoinGroup.1", "b", b, 1, a, []),
                     beat("b.Heartbeat.1", "b", b, 0)])


# --- comparison ------------------------------------------------------------------------------
def test_member_ids_are_compared_structurally_not_literally() -> None:
    assert compare(group("kafka"), group("tansu-uuid"), 250) == []


def test_each_field_difference_gets_its_class() -> None:
    target = group("t")
    target.exchanges[0].response["generation_id"] = 2                  # generation
    target.exchanges[1].response["leader"] = "t-b"                      # membership (leader)
    target.exchanges[1].response["protocol_name"] = "roundrobin"        # protocol
    target.exchanges[2].response["error_code"] = 27                     # error-code (REBALANCE_IN_PROGRESS)
    found = {(d.step, d.cls, d.field) for d in compare(target, group("r"), 250)}
    assert found == {("a.JoinGroup.1", "generation", "generation"), ("b.JoinGroup.1", "membership", "leader"),
                     ("b.JoinGroup.1", "protocol", "protocol_name"), ("b.Heartbeat.1", "error-code", "error")}


def test_timing_differences_are_latencies_beyond_the_window_or_a_missing_answer() -> None:
    late, never = group("t"), group("t")
    late.exchanges[0].answered_ms = 1240                   # reported rounded to 500 ms: 1000
    assert [(d.cls, d.field, d.target, d.reference) for d in compare(late, group("r"), 250)] == [
        ("timing", "latency_ms", 1000, 0)]
    assert compare(late, group("r"), 1300) == []
    never.exchanges[2].answered_ms, never.exchanges[2].response = None, None
    assert [(d.cls, d.field) for d in compare(never, group("r"), 250)] == [("timing", "answered")]
    closed = group("t")
    closed.exchanges[2].closed = True
    assert [(d.cls, d.target) for d in compare(closed, group("r"), 250)] == [("closed", "closed")]


# --- the response-level properties: each can fail ----------------------------------------------
def failing(run: Run) -> set[str]:
    return {f.property for f in check_run(run)}


def test_a_good_run_satisfies_every_property() -> None:
    assert failing(group("x")) == set()
    assert len(PROPERTIES) == 5


def test_each_property_fails_on_its_planted_bug() -> None:
    twice = group("x")
    twice.exchanges[2].correlation_ok = False
    assert failing(twice) == {"each-request-answered-at-most-once"}
    stray = group("x")
    stray.stray.append("b")
    assert failing(stray) == {"each-request-answered-at-most-once"}

    backwards = group("x")
    backwards.exchanges.append(join("a.JoinGroup.2", "a", "x-a", 0, "x-a", ["x-a"], answered=50))
    assert "generation-monotone-per-group" in failing(backwards)

    two_leaders = group("x")
    two_leaders.exchanges[1].response["leader"] = "x-b"
    assert "one-leader-and-protocol-per-generation" in failing(two_leaders)

    static_restart = group("x")    # a static leader's restart in Stable: the same generation, led by its new id
    static_restart.exchanges[0].request["group_instance_id"] = "i-a"
    static_restart.exchanges.append(join("a2.JoinGroup.1", "a2", "x-a2", 1, "x-a2", ["x-a2", "x-b"], answered=30))
    static_restart.exchanges[-1].request["group_instance_id"] = "i-a"
    assert failing(static_restart) == set()
    two_static_leaders = group("x")    # a leader with another instance id is another leader
    two_static_leaders.exchanges[0].request["group_instance_id"] = "i-a"
    two_static_leaders.exchanges.append(join("c.JoinGroup.1", "c", "x-c", 1, "x-c", ["x-c", "x-b"], answered=30))
    two_static_leaders.exchanges[-1].request["group_instance_id"] = "i-c"
    assert failing(two_static_leaders) == {"one-leader-and-protocol-per-generation"}

    no_list = group("x")
    no_list.exchanges[0].response["members"] = []
    assert failing(no_list) == {"leader-gets-the-member-list"}
    follower_list = group("x")
    follower_list.exchanges[1].response["members"] = no_list.exchanges[1].response["members"] + [
        dict(member_id="x-a", group_instance_id=None, metadata="meta")]
    assert failing(follower_list) == {"leader-gets-the-member-list"}

    zombie = group("x")
    zombie.exchanges.insert(2, Exchange("b.LeaveGroup.1", "b", "LeaveGroup", 3, {"member_id": "x-b",
                                        "members": (("x-b", None),)}, 15, 16,
                                        {"error_code": 0, "members": [dict(member_id="x-b", group_instance_id=None,
                                                                           error_code=0)]}))
    assert failing(zombie) == {"removed-member-gets-no-success"}
    fenced = group("x")
    fenced.exchanges.insert(2, beat("b.Heartbeat.0", "b", "x-b", 82, sent=12, answered=13))
    assert failing(fenced) == {"removed-member-gets-no-success"}


def test_property_messages_name_members_by_label_not_by_broker_id() -> None:
    run = group("broker-chosen-id")
    run.exchanges[1].response["leader"] = "broker-chosen-id-b"
    from wire.conform.answers import labeller
    [failure] = [f for f in check_run(run, labeller(run)) if f.property == "one-leader-and-protocol-per-generation"]
    assert "broker-chosen-id" not in failure.message and "leader b" in failure.message


# --- probe scripts -----------------------------------------------------------------------------
def test_every_probe_names_a_spec_section_and_uses_the_configured_timers() -> None:
    cfg = BrokerConfig(min_session_ms=7000, initial_delay_ms=0)
    probes = get_probes(None, cfg)
    assert [p.name for p in probes] == list(PROBES)
    assert all(p.spec.startswith("§") and p.claim for p in probes)
    [bounds] = get_probes(["session-timeout-bounds"], cfg)
    sessions = [dict(s.fields)["session_timeout_ms"] for s in bounds.steps]
    assert sessions == [6999, 1800001, 7000, 7000]          # min - 1, max + 1, then the minimum (handshake + join)


def test_a_new_dynamic_member_on_v4_plus_does_the_member_id_handshake() -> None:
    [probe] = get_probes(["first-join-waits-the-initial-delay"], BrokerConfig())
    first, second = probe.steps[:2]
    assert dict(first.fields)["member_id"] == "" and dict(second.fields)["member_id"] == Id("a")
    assert second.after == (first.label,)


# --- bad targets: one sentence, exit 2 ---------------------------------------------------------
def _serve_once(handler: Any) -> tuple[int, threading.Thread, socket.socket]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def loop() -> None:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        with conn:
            handler(conn)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return listener.getsockname()[1], thread, listener


@pytest.mark.parametrize("handler, words", [
    (lambda c: c.close(), "closed the connection"),
    (lambda c: (c.recv(64), c.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")), "not a Kafka response"),
])
def test_a_bad_target_ends_with_one_sentence_and_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                        handler: Any, words: str) -> None:
    port, thread, listener = _serve_once(handler)
    try:
        code = main(["conform", "--bootstrap", f"127.0.0.1:{port}", "--out", str(tmp_path)])
    finally:
        listener.close()
        thread.join(5)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("kgc: error: ") and words in err[0]


def test_nothing_listening_and_bad_usage_are_one_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    for argv, words in ((["--bootstrap", f"127.0.0.1:{free}"], "nothing accepts connections"),
                        (["--bootstrap", "no-port"], "HOST:PORT"),
                        (["--probe", "no-such-probe"], "unknown probe"),
                        (["--target", "tansu", "--mutant", "generation-not-bumped"], "--mutant needs --target serve")):
        assert main(["conform", *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and words in err[0], err


def test_list_shows_every_probe(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(name[:20] in out for name in PROBES)


# --- the second attempt ------------------------------------------------------------------------

def test_a_difference_counts_only_when_both_attempts_show_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Attempt 1: b's heartbeat is wrong; attempt 2: a's join answer is 5 s late. Neither reproduced, so the
    probe conforms and both are listed as unconfirmed; a difference in both attempts is reported."""
    from wire.conform import run as conform_run
    ok = group("x")
    beat_wrong = Run("p", [*ok.exchanges[:2], beat("b.Heartbeat.1", "b", "y-b", 25)])
    late = Run("p", [join("a.JoinGroup.1", "a", "x-a", 1, "x-a", ["x-a", "x-b"], answered=5010),
                           *ok.exchanges[1:]])
    both_wrong = Run("p", [late.exchanges[0], late.exchanges[1], beat_wrong.exchanges[2]])
    [probe] = get_probes(["leave-in-stable"], BrokerConfig())
    endpoint = conform_run.Endpoint("127.0.0.1", 1)

    def outcome(attempts: list[Run]) -> dict[str, Any]:
        async def attempt(*_args: Any) -> tuple[Run, Run]:
            return attempts.pop(0), group("r")
        monkeypatch.setattr(conform_run, "_attempt", attempt)
        return asyncio.run(conform_run.conform_probe(probe, endpoint, endpoint, BrokerConfig(), "t"))

    flaky = outcome([beat_wrong, late])
    assert flaky["attempts"] == 2 and flaky["verdict"] == "conforms" and flaky["differences"] == []
    assert flaky["unconfirmed"] == ["a.JoinGroup.1/timing/latency_ms", "b.Heartbeat.1/error-code/error"]
    real = outcome([beat_wrong, both_wrong])
    assert real["verdict"] == "diverges" and real["unconfirmed"] == ["a.JoinGroup.1/timing/latency_ms"]
    assert [(d["step"], d["class"], d["target"], d["reference"]) for d in real["differences"]] == [
        ("b.Heartbeat.1", "error-code", "UNKNOWN_MEMBER_ID", "NONE")]


def test_a_timing_difference_shows_its_milliseconds_in_every_report() -> None:
    """Issue 24 §6: a timing difference prints both sides' numbers — the latencies (tansu's join phase of S/2 was
    a bare "timing" before) or which side did not answer — in the table, the HTML and the diagram's note."""
    from reports.conform import differs_text, mermaid, render_html, render_markdown
    from wire.conform.run import probe_record
    late, never = group("t"), group("t")
    late.exchanges[0].answered_ms = 3010
    never.exchanges[2].answered_ms, never.exchanges[2].response = None, None
    probe = get_probes(None, BrokerConfig())[0]
    slow = probe_record(probe, late, group("r"), compare(late, group("r"), 250), attempts=1)
    silent = probe_record(probe, never, group("r"), compare(never, group("r"), 250), attempts=1)
    assert differs_text(slow, slow["steps"][0]) == "timing: 3000 ms, Kafka 0 ms"
    assert differs_text(silent, silent["steps"][2]) == "timing: Kafka answered, the target did not"
    assert differs_text(slow, slow["steps"][1]) == ""
    result = {"target": "t", "reference": "r", "profile": "3.9", "config": "-", "timing_window_ms": 250,
              "summary": {"conforms": 0, "diverges": 1, "unsupported": 0, "classes": {"timing": 1}},
              "probes": [slow]}
    for text in (render_markdown(result), render_html(result), mermaid(slow)):
        assert "3000 ms, Kafka 0 ms" in text
