"""`KafkaServer`: an asyncio TCP server on 127.0.0.1 that looks like a one-node Kafka cluster.

Owns the listener, the connections (one request at a time each, in order, as Kafka's processor
mutes a channel while a request is in flight — so a parked JoinGroup holds back later requests on
its connection only), the real-time clock adapter that fires the coordinator's timers at their
deadlines, and the routing of the session's answers back to the connections waiting for them.
Group APIs go through the session (wire/session.py); everything else is wire/cluster.py.
Malformed input closes that connection (or gets Kafka's error answer); the server keeps serving.
"""
from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from core.types import Errors

from wire import cluster as cl
from wire import groups as gr
from wire.codec import FrameError, Frame, api_versions_unsupported, classify, encode_response, read_frame
from wire.versions import supported_versions

log = logging.getLogger(__name__)
LOOPBACK = "127.0.0.1"


@dataclass(eq=False)
class _Conn:
    """One client connection; ``index`` is its number in the session once it sends a group request."""

    writer: asyncio.StreamWriter
    index: int | None = None
    client_id: str = ""


@dataclass(eq=False)
class _Pending:
    """A group request handed to the session, waiting for its answer (by (conn, corr))."""

    api: str
    group_id: str
    client_id: str
    future: asyncio.Future[Any]
    commit: gr.Commit | None = None


@dataclass
class _State:
    waiting: dict[tuple[int, int], _Pending] = field(default_factory=dict)
    offsets: dict[tuple[str, str, int], tuple[int, str | None]] = field(default_factory=dict)


class KafkaServer:
    """A one-node Kafka look-alike (node 0 at 127.0.0.1:port) whose group coordinator is ``session``.

    ``session`` is a LiveSession or a zero-argument factory of one; ``topics`` maps name -> partition
    count. The advertised API versions follow the session's profile (wire/versions.py).
    """

    def __init__(self, session: Any, topics: Mapping[str, int], port: int = 0, host: str = LOOPBACK,
                 profile: str | None = None) -> None:
        if host != LOOPBACK:
            raise ValueError(f"kgc serve binds {LOOPBACK} only, not {host!r}.")
        self.session = session if hasattr(session, "submit") else session()
        self.profile: str = profile or str(getattr(self.session, "profile", "3.9"))
        self.topics = dict(sorted(topics.items()))
        self.host, self.port = host, port
        self.versions = supported_versions(self.profile)
        self._state = _State()
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._conns: set[_Conn] = set()
        self._timer_task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._origin = time.monotonic()
        self._cluster: cl.Cluster | None = None
        self._stopping = False

    # --- lifecycle -------------------------------------------------------------------------
    async def start(self) -> int:
        """Listen on 127.0.0.1 (port 0: a free one); returns the bound port."""
        self._server = await asyncio.start_server(self._on_connection, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        self._cluster = cl.Cluster(self.host, self.port, self.topics, self.versions, self.profile)
        self._origin = time.monotonic()
        self._timer_task = asyncio.create_task(self._timers())
        log.info("serving on %s:%d (profile %s)", self.host, self.port, self.profile)
        return self.port

    async def stop(self) -> None:
        """Close the listener and every connection; stop the timer task."""
        self._stopping = True
        self._wake.set()
        if self._server is not None:
            self._server.close()
        for conn in list(self._conns):
            conn.writer.close()
        tasks = [t for t in self._tasks if t is not asyncio.current_task()]
        if self._timer_task is not None:
            tasks.append(self._timer_task)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    # --- connections -----------------------------------------------------------------------
    async def _on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        conn = _Conn(writer)
        self._conns.add(conn)
        try:
            while True:
                reply = await self._handle(conn, await read_frame(reader))
                if reply is None:
                    break
                if reply:                          # b"": a request with no response (Produce acks=0)
                    writer.write(reply)
                    await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass                                   # the client went away, possibly mid-frame
        except asyncio.CancelledError:
            pass                                   # stop(): end quietly (asyncio logs a cancelled handler)
        except FrameError as exc:
            log.info("closing a connection: %s", exc)
        except Exception:                          # a bug in an answer must not take the server down
            log.exception("closing a connection after an internal error")
        finally:
            self._conns.discard(conn)
            self._tasks.discard(task)
            writer.close()

    async def _handle(self, conn: _Conn, payload: bytes) -> bytes | None:
        """The framed reply to one request, or None to close the connection (what Kafka does for an
        unknown API key, an unsupported version of anything but ApiVersions, or unparseable bytes)."""
        frame = classify(payload, self.versions)
        if frame.kind == "unsupported_version" and frame.api == "ApiVersions":
            return api_versions_unsupported(frame.correlation_id, self.versions)
        if frame.kind != "request":
            log.info("closing a connection: %s (api key %d, version %d)", frame.kind, frame.api_key,
                     frame.api_version)
            return None
        conn.client_id = frame.client_id
        response = await self._answer(conn, frame)
        if not frame.body.expect_response():
            return b""
        return encode_response(response, frame.correlation_id)

    async def _answer(self, conn: _Conn, frame: Frame) -> Any:
        api, version, body = frame.api, frame.api_version, frame.body
        assert api is not None and self._cluster is not None
        c = self._cluster
        if api == "ApiVersions":
            return cl.api_versions(version, c)
        if api == "Produce":
            return cl.produce(version, body, c)
        if api == "Metadata":
            return cl.metadata(version, body, c)
        if api == "FindCoordinator":
            return cl.find_coordinator(version, body, c)
        if api == "ListOffsets":
            return cl.list_offsets(version, body, c)
        if api == "Fetch":
            response, wait_ms = cl.fetch(version, body, c)
            await asyncio.sleep(wait_ms / 1000)
            return response
        if api == "OffsetFetch":
            return cl.offset_fetch(version, body, self._state.offsets)
        if api == "DescribeGroups":
            return cl.describe_groups(version, body, lambda g: self.session.describe_group(g, version))
        if api == "OffsetCommit":
            return await self._commit(conn, version, body)
        result, protocol = await self._submit(conn, api, gr.request_fields(api, version, body), version)
        return gr.group_response(api, version, result, protocol)

    # --- the session -----------------------------------------------------------------------
    async def _commit(self, conn: _Conn, version: int, body: Any) -> Any:
        """KafkaApis answers partitions of unknown topics itself; an empty rest never reaches the coordinator."""
        assert self._cluster is not None
        commit = gr.split_commit(body, self._cluster.has)
        if not commit.known:
            return gr.commit_response(version, commit, Errors.NONE)
        result, _ = await self._submit(conn, "OffsetCommit", gr.commit_fields(version, body, commit), version, commit)
        return gr.commit_response(version, commit, result.error)

    async def _submit(self, conn: _Conn, api: str, fields: dict[str, Any], version: int,
                      commit: gr.Commit | None = None) -> tuple[Any, tuple[str | None, str | None]]:
        """Hand a group request (at ``version``) to the session at the current real time; wait for its answer."""
        if conn.index is None:
            conn.index = self.session.open(conn.client_id)
        self.session.advance_to(self._now_ms())
        self._route()
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        corr = self.session.submit(conn.index, api, api_version=version, **fields)
        self._state.waiting[(conn.index, corr)] = _Pending(api, fields["group_id"], conn.client_id, future, commit)
        self._route()
        self._wake.set()                           # the request may have armed an earlier timer
        result: tuple[Any, tuple[str | None, str | None]] = await future
        return result

    def _route(self) -> None:
        """Hand every answer the session produced to the request waiting for it."""
        for answer in self.session.answers():
            pending = self._state.waiting.pop((answer.conn, answer.corr), None)
            if pending is None:
                continue                           # a second answer to one request, or an unknown one
            protocol = self._observe(pending, answer.result)
            if not pending.future.done():
                pending.future.set_result((answer.result, protocol))

    def _observe(self, pending: _Pending, result: Any) -> tuple[str | None, str | None]:
        """Remember what later answers need: committed offsets, the protocol."""
        if result.error is not Errors.NONE:
            return (None, None)
        if pending.commit is not None:
            for (topic, partition), value in sorted(pending.commit.known.items()):
                self._state.offsets[(pending.group_id, topic, partition)] = value
        if pending.api != "SyncGroup":
            return (None, None)
        view = self.session.describe(pending.group_id)
        return (None, None) if view is None else (view.protocol_type, view.protocol_name)

    # --- real time -------------------------------------------------------------------------
    def _now_ms(self) -> int:
        return int((time.monotonic() - self._origin) * 1000)

    async def _timers(self) -> None:
        """Sleep until the coordinator's next timer is due (or a request may have armed an earlier
        one), then move its clock to now, which fires the due timers, and route their answers."""
        while not self._stopping:
            self._wake.clear()
            deadline = self.session.next_deadline_ms()
            delay = None if deadline is None else max(deadline - self._now_ms(), 1) / 1000
            if await self._woken_within(delay) or self._stopping:
                continue
            try:
                self.session.advance_to(self._now_ms())
                self._route()
            except Exception:
                log.exception("the session failed while firing timers")
                await asyncio.sleep(0.05)

    async def _woken_within(self, delay: float | None) -> bool:
        """True when ``_wake`` is set before ``delay`` seconds pass (asyncio.wait, not wait_for:
        3.11's wait_for can swallow a cancel that races the event, and stop() would then hang)."""
        woken = asyncio.ensure_future(self._wake.wait())
        try:
            done, _ = await asyncio.wait({woken}, timeout=delay)
        finally:
            woken.cancel()
        return woken in done


class ServerThread:
    """A KafkaServer on its own event loop in a daemon thread (tests, benchmarks): ``.port``, ``.call``, ``.stop()``."""

    def __init__(self, session: Any, topics: Mapping[str, int], port: int = 0, profile: str | None = None) -> None:
        self.loop = asyncio.new_event_loop()
        self.server = KafkaServer(session, topics, port=port, profile=profile)
        self.port = 0
        self._error: BaseException | None = None
        self._stopped = False
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kgc-serve", daemon=True)
        self._thread.start()
        if not self._ready.wait(10) or self._error is not None:
            self._stopped = True
            raise RuntimeError(f"the server did not start ({self._error or 'timed out'}).")

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.port = self.loop.run_until_complete(self.server.start())
        except BaseException as exc:      # reported by __init__ in the caller's thread
            self._error = exc
            self.loop.close()
            return
        finally:
            self._ready.set()
        self.loop.run_forever()
        self.loop.close()

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn(*args)`` on the server's loop (the session is not thread-safe) and return its result."""
        async def run() -> Any:
            return fn(*args)
        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(10)

    def stop(self) -> None:
        """Stop the server (listener and connections), then the loop and its thread; idempotent."""
        if self._stopped:
            return
        self._stopped = True
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)


def run_in_thread(session: Any, topics: Mapping[str, int], port: int = 0, profile: str | None = None) -> ServerThread:
    """Start a server in a background thread; the caller stops it with ``.stop()``."""
    return ServerThread(session, topics, port=port, profile=profile)
