"""The simulated network: messages in flight, keyed by (client, corr) (harness layer).

There is no per-connection FIFO: any in-flight message may be delivered next (SPEC.md §7 —
a heartbeat and a JoinGroup of one member are handled independently). A coordinator bug that
answers one request twice leaves two responses under one key; they are delivered in order.
"""
from __future__ import annotations

from typing import Any

from harness.messages import Request, Response

Key = tuple[int, int]


class Network:
    __slots__ = ("requests", "responses")

    def __init__(self) -> None:
        self.requests: dict[Key, Request] = {}
        self.responses: dict[Key, tuple[Response, ...]] = {}

    def send(self, req: Request) -> None:
        self.requests[(req.client, req.corr)] = req

    def take_request(self, key: Key) -> Request:
        return self.requests.pop(key)

    def add_response(self, resp: Response) -> None:
        key = (resp.client, resp.corr)
        self.responses[key] = self.responses.get(key, ()) + (resp,)

    def take_response(self, key: Key) -> Response:
        queued = self.responses[key]
        if len(queued) == 1:
            del self.responses[key]
        else:
            self.responses[key] = queued[1:]
        return queued[0]

    def drop_responses(self, key: Key) -> tuple[Response, ...]:
        return self.responses.pop(key, ())

    def to_state(self) -> tuple[Any, ...]:
        requests, responses = self.requests, self.responses
        return (tuple(requests[k].to_tuple() for k in sorted(requests)),
                tuple(r.to_tuple() for k in sorted(responses) for r in responses[k]))

    def set_state(self, state: tuple[Any, ...]) -> None:
        self.requests = {(r[1], r[2]): Request(*r) for r in state[0]}
        responses: dict[Key, tuple[Response, ...]] = {}
        for r in state[1]:
            key = (r[1], r[2])
            responses[key] = responses.get(key, ()) + (Response(*r),)
        self.responses = responses
