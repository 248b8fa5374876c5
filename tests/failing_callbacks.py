"""A response callback that throws, for the tests of Kafka's callback guard (SPEC.md correction 5): Kafka's own
tests (GroupMetadataTest.testInvoke*CallbackFails, 3.3.2+) pass a callback that throws on its first call and
records its second; ``FailingFuture`` is that callback as a response future."""
from __future__ import annotations

from typing import Any, Hashable

from impl.guards import ResponseCallbackError
from impl.results import ResponseFuture


class FailingFuture(ResponseFuture):
    """Raises ResponseCallbackError on its first ``fails`` completions (nothing sent), then answers as usual."""

    __slots__ = ("fails", "attempts")

    def __init__(self, key: Hashable, api: str, outbox: list[tuple[Hashable, str, Any]], fails: int = 1) -> None:
        super().__init__(key, api, outbox)
        self.fails = fails
        self.attempts: list[Any] = []   # every result offered, the failed ones included

    def complete(self, result: Any) -> None:
        self.attempts.append(result)
        if self.fails > 0:
            self.fails -= 1
            raise ResponseCallbackError(f"the {self.api} response to {self.key!r} could not be sent")
        super().complete(result)
