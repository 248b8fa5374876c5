"""librdkafka's mock cluster as a conformance target: the two answers that used to end `kgc conform` in a
traceback (issue 24) are reproduced on the mock itself and classified, and the whole command ends with a
report. The mock (confluent-kafka 2.16.1, librdkafka 2.16.0) starts in about a second."""
from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Iterator

import pytest

from kgc.cli import main
from wire.brokers import RdMockBroker
from wire.conform.driver import run_probe
from wire.conform.script import GROUP, Probe, Send

UNKNOWN = "kgc-unknown-member"


@pytest.fixture(scope="module")
def mock() -> Iterator[RdMockBroker]:
    with RdMockBroker() as broker:
        yield broker


def _probe(api: str, version: int, fields: tuple[tuple[str, object], ...]) -> Probe:
    return Probe("regression", "§-", "-", (Send(f"a.{api}.1", "a", api, version, 0, fields, pinned=True),), 2000)


def test_a_sync_group_error_answer_with_a_null_assignment_is_malformed(mock: RdMockBroker) -> None:
    fields = (("assignments", ()), ("generation_id", 1), ("group_id", GROUP), ("group_instance_id", None),
              ("member_id", UNKNOWN), ("protocol_name", "range"), ("protocol_type", "consumer"))
    run = asyncio.run(run_probe(_probe("SyncGroup", 3, fields), "127.0.0.1", mock.port, "kgc-regression-sync"))
    [ex] = run.exchanges
    assert ex.response is None and ex.malformed == "null in the non-nullable field SyncGroup.assignment of SyncGroup v3"


def test_a_leave_group_v3_answer_laid_out_as_v2_is_malformed(mock: RdMockBroker) -> None:
    fields = (("group_id", GROUP), ("member_id", ""), ("members", ((UNKNOWN, None),)))
    run = asyncio.run(run_probe(_probe("LeaveGroup", 3, fields), "127.0.0.1", mock.port, "kgc-regression-leave"))
    [ex] = run.exchanges
    # v3's body is throttle time, error code and the member list; the mock sends the first two only (10 bytes)
    assert ex.response is None and ex.malformed.startswith("10 bytes that do not decode as LeaveGroup v3")


def test_the_command_ends_with_a_report_and_says_which_versions_it_spoke(tmp_path: Path) -> None:
    out = tmp_path / "mock"
    code = main(["conform", "--target", "librdkafka-mock", "--probe", "known-member-on-missing-group",
                 "--min-session-timeout-ms", "2000", "--initial-delay-ms", "600", "--out", str(out)])
    assert code == 1
    result = json.loads((out / "conform.json").read_text(encoding="utf-8"))
    # ApiVersions v4 gets UNSUPPORTED_VERSION with no usable version list, so v0 is asked next (Kafka's client)
    assert result["negotiation"]["api_versions_asked"] == [4, 0]
    assert result["negotiation"]["apis"]["JoinGroup"]["shared"] == [0, 6]
    [probe] = result["probes"]
    assert probe["versions"]["LeaveGroup"] == [1, 4] and probe["verdict"] == "diverges"
    # the mock advertises JoinGroup v6 (flexible) but reads its protocol list as a v5 int32 count and closes the
    # connection (rdkafka_mock_handlers.c, rd_kafka_mock_handle_JoinGroup): a closed difference, not a crash
    assert ("a.JoinGroup.1", "closed") in {(d["step"], d["class"]) for d in probe["differences"]}
    assert sorted(os.listdir(out)) == [".kgc-lock", "conform.json", "junit.xml", "report.html", "report.md"]
