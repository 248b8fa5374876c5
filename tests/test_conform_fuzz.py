"""The conformance driver never crashes on an answer (issue 24 §1): Hypothesis plays a broker.

A fake broker on 127.0.0.1 answers each request of a small probe with bytes Hypothesis chooses: the
asked API's response with random field values, with every string/bytes/array null (nullable or not),
laid out at another version, truncated, run on past the body, with a wrong correlation id, an unknown
error code, a refused frame size, or random bytes. Every answer must become a decoded response, a
``malformed`` or ``closed`` exchange, or no answer — never an exception — and the comparison, the
response-level properties and the reports must take the run. Expected classes come from the bytes
sent (a strict prefix of a body cannot decode; a valid body must), never from the driver.
"""
from __future__ import annotations

import asyncio
import io
import struct
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reports.conform import render_html, render_markdown
from wire.codec import MESSAGES, MAX_FRAME_BYTES
from wire.conform.answers import compare, labeller
from wire.conform.driver import run_probe
from wire.conform.properties import check_run
from wire.conform.run import probe_record, result_json
from wire.conform.script import GROUP, Assign, BrokerConfig, Gen, Id, Probe, Send
from kafka.protocol.api_header import RequestHeader
from kafka.protocol.api_key import ApiKey

KINDS = ("valid", "all-null", "other-version", "truncated", "over-long", "wrong-correlation", "unknown-error",
         "bad-size", "random", "close")
INT_RANGES = {"int8": 7, "int16": 15, "int32": 31, "int64": 63}


def _steps() -> tuple[Send, ...]:
    """Two members, every API the driver sends, each at a version the codec knows (some flexible)."""
    join = (("group_id", GROUP), ("group_instance_id", None), ("member_id", ""), ("protocol_type", "consumer"),
            ("protocols", (("range", b"m"),)), ("reason", None), ("rebalance_timeout_ms", 1000),
            ("session_timeout_ms", 1000))
    sync = (("assignments", Assign("a")), ("generation_id", Gen("a")), ("group_id", GROUP),
            ("group_instance_id", None), ("member_id", Id("a")), ("protocol_name", "range"),
            ("protocol_type", "consumer"))
    beat = (("generation_id", Gen("b")), ("group_id", GROUP), ("group_instance_id", None), ("member_id", Id("b")))
    leave = (("group_id", GROUP), ("member_id", Id("a")), ("members", ((Id("a"), None),)))
    commit = (("generation_id", Gen("b")), ("group_id", GROUP), ("group_instance_id", None),
              ("member_id", Id("b")))
    return (Send("a.JoinGroup.1", "a", "JoinGroup", 5, 0, join), Send("a.SyncGroup.1", "a", "SyncGroup", 4, 0, sync),
            Send("a.LeaveGroup.1", "a", "LeaveGroup", 3, 0, leave),
            Send("b.JoinGroup.1", "b", "JoinGroup", 7, 0, join), Send("b.Heartbeat.1", "b", "Heartbeat", 4, 0, beat),
            Send("b.OffsetCommit.1", "b", "OffsetCommit", 8, 0, commit),
            Send("b.LeaveGroup.1", "b", "LeaveGroup", 2, 0, leave))


PROBE = Probe("fuzz", "§-", "fuzz", _steps(), end_ms=400)


def _value(field: Any, version: int, data: st.DataObject, null: bool) -> Any:
    if field.is_struct_array():
        if null:
            return None
        return [_struct(field.array_of, version, data, null) for _ in range(data.draw(st.integers(0, 2)))]
    if field.is_array():
        return None if null else data.draw(st.lists(st.integers(-5, 5), max_size=2))
    kind = field.type_str
    if kind in INT_RANGES:
        bits = INT_RANGES[kind]
        return data.draw(st.integers(-(1 << bits), (1 << bits) - 1))
    if kind == "bool":
        return data.draw(st.booleans())
    if kind in ("string", "bytes"):
        nullable = field.nullable_for_version_q(version)
        if null or (nullable and data.draw(st.booleans())):
            return None
        text = data.draw(st.text(max_size=6))
        return text if kind == "string" else text.encode()
    return None


def _struct(struct_field: Any, version: int, data: st.DataObject, null: bool) -> Any:
    fields = {f.name: _value(f, version, data, null) for f in struct_field.untagged_fields(version)}
    return struct_field(**fields)


def _body(api: str, version: int, data: st.DataObject, null: bool, error: int | None = None) -> bytes:
    cls = MESSAGES[api][1]
    fields = {f.name: _value(f, version, data, null) for f in cls._struct.untagged_fields(version)}
    if error is not None and "error_code" in fields:
        fields["error_code"] = error
    elif "error_code" in fields:
        fields["error_code"] = data.draw(st.sampled_from([0, 0, 0, 15, 16, 22, 25, 27, 79, 82]))
    response = cls[version](**fields)
    return bytes(response.encode(header=False))


def _header(api: str, version: int, corr: int) -> bytes:
    flexible = MESSAGES[api][1].flexible_version_q(version) and api != "ApiVersions"
    return struct.pack(">i", corr) + (b"\x00" if flexible else b"")


def _answer(kind: str, api: str, version: int, corr: int, data: st.DataObject) -> bytes | None:
    """The frame for one request (None: close the connection instead)."""
    if kind == "close":
        return None
    if kind == "bad-size":
        return struct.pack(">i", data.draw(st.sampled_from([-1, -(1 << 31), MAX_FRAME_BYTES + 1])))
    if kind == "random":
        payload = data.draw(st.binary(max_size=24))
        return struct.pack(">i", len(payload)) + payload
    if kind == "other-version":
        versions = [v for v in range(MESSAGES[api][1].max_version + 1) if v != version]
        other = data.draw(st.sampled_from(versions))
        payload = _header(api, other, corr) + _body(api, other, data, False)
    elif kind == "unknown-error":
        code = data.draw(st.sampled_from([-2, 120, 999, 32767]))
        payload = _header(api, version, corr) + _body(api, version, data, False, error=code)
    else:
        wrong = corr + data.draw(st.integers(1, 5)) if kind == "wrong-correlation" else corr
        payload = _header(api, version, wrong) + _body(api, version, data, kind == "all-null")
    if kind == "truncated":
        payload = payload[:data.draw(st.integers(0, len(payload) - 1))]
    if kind == "over-long":
        payload += data.draw(st.binary(min_size=1, max_size=8))
    return struct.pack(">i", len(payload)) + payload


async def _fake_broker(plan: list[str], data: st.DataObject, sent: dict[str, str]) -> asyncio.AbstractServer:
    """Answers the n-th request it reads (over all connections) as ``plan[n % len(plan)]`` says."""
    count = [0]

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                size = struct.unpack(">i", await reader.readexactly(4))[0]
                head = RequestHeader.decode(io.BytesIO(await reader.readexactly(size)), flexible=False)
                api = ApiKey(head.request_api_key).name
                kind = plan[count[0] % len(plan)]
                count[0] += 1
                frame = _answer(kind, api, head.request_api_version, head.correlation_id, data)
                sent[f"{api}/{head.correlation_id}/{count[0]}"] = kind
                if frame is None:
                    break
                writer.write(frame)
                await writer.drain()
                if kind == "bad-size":
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    return await asyncio.start_server(serve, "127.0.0.1", 0)


async def _drive(plan: list[str], data: st.DataObject) -> tuple[Any, dict[str, str]]:
    sent: dict[str, str] = {}
    server = await _fake_broker(plan, data, sent)
    port = server.sockets[0].getsockname()[1]
    try:
        run = await run_probe(PROBE, "127.0.0.1", port, "fuzz-group")
    finally:
        server.close()
        await server.wait_closed()
    return run, sent


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(plan=st.lists(st.sampled_from(KINDS), min_size=1, max_size=7), data=st.data())
def test_no_answer_a_broker_can_send_crashes_the_driver(plan: list[str], data: st.DataObject) -> None:
    run, _sent = asyncio.run(_drive(plan, data))
    assert [e.label for e in run.exchanges] == [s.label for s in PROBE.steps]
    for e in run.exchanges:
        outcomes = [e.response is not None, bool(e.malformed), e.closed]
        assert sum(outcomes) <= 1, e                        # one outcome per exchange (or no answer at all)
    # everything downstream of the driver takes the run as it is
    compare(run, run, 500)
    check_run(run, labeller(run))
    record = probe_record(PROBE, run, run, compare(run, run, 500), attempts=1)
    result = result_json([record], "3.9", "fuzz", BrokerConfig())
    assert render_markdown(result) and render_html(result)


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(["valid", "truncated", "bad-size", "all-null"]), data=st.data())
def test_each_kind_of_answer_is_classified_as_its_bytes_say(kind: str, data: st.DataObject) -> None:
    """A valid body decodes; a strict prefix of one is malformed; a refused frame size is malformed; a null in
    SyncGroup's assignment (never nullable) is malformed — each seen on the first exchange, a JoinGroup v5
    (where every-field-null also nulls the non-nullable leader and member id)."""
    run, _sent = asyncio.run(_drive([kind], data))
    first = run.exchanges[0]
    if kind == "valid":
        assert first.response is not None and not first.malformed, first
    else:
        assert first.malformed and first.response is None, first


def test_a_librdkafka_style_leave_group_v3_laid_out_as_v2_is_malformed_not_a_crash() -> None:
    """The librdkafka mock's LeaveGroup v3 answer (throttle time and error code only, no member list) and its
    SyncGroup error answer with a null assignment, byte for byte as the mock sent them (librdkafka 2.16.0)."""
    from wire.codec import Undecodable, decode_exact
    for api, version, raw in (("LeaveGroup", 3, "00000001000000000045"),
                              ("SyncGroup", 3, "00000001000000000045ffffffff")):
        try:
            decode_exact(api, version, bytes.fromhex(raw))
        except Undecodable as exc:
            message = str(exc)
        else:                                   # pragma: no cover - the assertion below fails
            message = ""
        assert message, (api, version)
    assert "null in the non-nullable field SyncGroup.assignment" in message
