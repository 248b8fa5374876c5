"""kgc core: the vocabulary every layer shares (stdlib only)."""
from core.actions import Action
from core.trace import SCHEMA, Step, Trace, TraceFormatError, Violation
from core.types import NO_GENERATION, UNKNOWN_MEMBER_ID, Errors, GroupState

__all__ = ["Action", "Errors", "GroupState", "NO_GENERATION", "SCHEMA", "Step", "Trace",
           "TraceFormatError", "UNKNOWN_MEMBER_ID", "Violation"]
