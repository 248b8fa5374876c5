"""Kafka 4.x's group coordinator serving classic groups (profile ``4.1``, Apache tag 4.1.1): a sibling runtime of
the Scala-shaped coordinator in impl/, behind the same public surface (DESIGN.md §4). Read coordinator.py first,
then runtime.py (the event loop, writes and commits), joining.py, rebalance.py, syncing.py, members.py."""
from impl.java_gc.choices import ChoicePoint
from impl.java_gc.coordinator import JavaGroupCoordinator
from impl.java_gc.views import TaskView

__all__ = ["ChoicePoint", "JavaGroupCoordinator", "TaskView"]
