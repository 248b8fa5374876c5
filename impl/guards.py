"""What Kafka's coordinator throws from its own checks, as exceptions the reference raises in the same places.

Kafka's GroupMetadata, MemberMetadata and GroupCoordinator guard their bookkeeping with exceptions — an
IllegalStateException (a state transition, a member id that is already a member), an IllegalArgumentException
(replacing a member id that is not there, a protocol a member does not support) or a Scala ``assert`` (a member
added whose protocols the group does not support). None of them fires on a path Kafka expects to run: when one
does, the request handler (KafkaApis.handle) answers the request in progress UNKNOWN_SERVER_ERROR and logs it, and
a timer task's exception is logged. The coordinator's ``_guard`` does the same with a ``GuardError``, and records
it as an ``IllegalState`` event, which the gate reports (property ``no-illegal-state-error``) like any other.

A ``ResponseCallbackError`` stands for Kafka's response callback throwing (KAFKA-14422: a JoinGroup response that
cannot be serialised at the client's version): a response future raises it from ``complete``. From 3.3.2 the
group catches it and answers again with UNKNOWN_SERVER_ERROR (GroupMetadata.maybeInvoke*Callback, #12910).
"""
from __future__ import annotations


class GuardError(RuntimeError):
    """One of the coordinator's own checks refused a call (a Kafka exception the request handler catches)."""

    #: the Java exception Kafka throws in this place
    kafka_exception = "RuntimeException"

    def describe(self) -> str:
        """The text the coordinator logs: the message, after the Java exception's name unless it is an
        IllegalStateException (whose messages the logs have always carried bare)."""
        return str(self) if isinstance(self, IllegalStateError) else f"{self.kafka_exception}: {self}"


class IllegalStateError(GuardError):
    """A transition or call the coordinator's own assertions forbid (Kafka's IllegalStateException)."""

    kafka_exception = "IllegalStateException"


class IllegalArgumentError(GuardError):
    """A call with an argument the group cannot take (Kafka's IllegalArgumentException)."""

    kafka_exception = "IllegalArgumentException"


class GuardAssertionError(GuardError):
    """A Scala ``assert`` in the group's bookkeeping failed (java.lang.AssertionError)."""

    kafka_exception = "AssertionError"


class ResponseCallbackError(GuardError):
    """A response callback failed to send its answer (raised by a response future's ``complete``)."""

    kafka_exception = "Throwable"   # Kafka catches any Throwable a callback throws
