"""kgc harness: the deterministic world around the coordinator (DESIGN.md §5).

Simulated clients (a Java-consumer model and an adversarial client), the network, the clock,
deferred log appends, snapshots and replay. Imports core and impl (later model) only.
"""
from harness.clients import AdversarialClient, ClientConfig, JavaConsumer
from harness.messages import Request, Response
from harness.replay import ReplayDivergence, replay
from harness.scope import Scope
from harness.world import World

__all__ = ["AdversarialClient", "ClientConfig", "JavaConsumer", "ReplayDivergence", "Request", "Response",
           "Scope", "World", "replay"]
