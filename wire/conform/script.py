"""A conformance probe as data: a timed script of group requests from several members.

Owns ``BrokerConfig`` (the broker settings a probe's timers and expectations are derived from),
``Send`` (one request of one member: not before ``at_ms`` and not before the answers it waits
for), the references a request field may hold until the driver resolves them at send time
(``Id``, ``Gen``, ``Assign``, ``GROUP``), ``Probe`` (name, the SPEC.md section it checks, the
script) and ``Builder``, the small vocabulary probes are written in (join with the KIP-394
handshake, sync, heartbeat, leave, commit).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

#: the lowest version of each API a probe step needs unless it names one: JoinGroup v5 / SyncGroup v3 /
#: Heartbeat v3 / OffsetCommit v7 carry group.instance.id (KIP-345), LeaveGroup v3 a member list (KAFKA-8221)
FLOORS = {"JoinGroup": 5, "SyncGroup": 3, "Heartbeat": 3, "LeaveGroup": 3, "OffsetCommit": 7}

#: the one topic OffsetCommit probes commit to (the reference serves it; other targets get it created)
TOPIC = "kgc-conform"


@dataclass(frozen=True, slots=True)
class BrokerConfig:
    """The target's group settings the probes assume; defaults are Kafka's (SPEC.md §0)."""

    min_session_ms: int = 6000          # group.min.session.timeout.ms
    max_session_ms: int = 1800000       # group.max.session.timeout.ms
    initial_delay_ms: int = 3000        # group.initial.rebalance.delay.ms
    max_size: int | None = None         # group.max.size (None: Kafka's default, unbounded)

    @property
    def window_ms(self) -> int:
        """How far a target's answer latency may stray from the reference's and still be on time."""
        return max(500, self.min_session_ms // 10)

    def overrides(self) -> dict[str, int]:
        """The reference coordinator's CoordinatorConfig settings for this config."""
        out = {"group_min_session_timeout_ms": self.min_session_ms,
               "group_max_session_timeout_ms": self.max_session_ms,
               "group_initial_rebalance_delay_ms": self.initial_delay_ms}
        if self.max_size is not None:
            out["group_max_size"] = self.max_size
        return out

    def describe(self) -> str:
        size = "unbounded" if self.max_size is None else str(self.max_size)
        return (f"group.min.session.timeout.ms={self.min_session_ms}, "
                f"group.max.session.timeout.ms={self.max_session_ms}, "
                f"group.initial.rebalance.delay.ms={self.initial_delay_ms}, group.max.size={size}")


# --- references resolved by the driver at send time ------------------------------------------
@dataclass(frozen=True, slots=True)
class Id:
    """The member id the broker gave ``member`` (``nth``: 0 the first, -1 the latest; "" if none yet)."""

    member: str
    nth: int = -1


@dataclass(frozen=True, slots=True)
class Gen:
    """The generation of ``member``'s latest successful JoinGroup, plus ``delta`` (-1 if none yet)."""

    member: str
    delta: int = 0


@dataclass(frozen=True, slots=True)
class Assign:
    """The leader's assignments: one entry per member of ``member``'s latest JoinGroup member list,
    the bytes naming that member structurally (the driver writes its label), so answers compare."""

    member: str


class _Group:
    def __repr__(self) -> str:
        return "GROUP"


#: the probe's group id (unique per run and attempt, never in a report)
GROUP = _Group()


@dataclass(frozen=True, slots=True)
class Send:
    """One request: ``member``'s connection sends it ``at_ms`` after the latest answer to the steps
    labelled in ``after`` (none: after the probe's start) and after its own previous request was
    answered; ``fields`` may hold references. ``version`` is exact when ``pinned`` (a probe about an old
    version); otherwise it is the lowest the probe needs, and the run sends the highest version both the
    target and the reference support, as Kafka's clients do (wire/conform/run.py ``resolve``)."""

    label: str
    member: str
    api: str
    version: int
    at_ms: int
    fields: tuple[tuple[str, Any], ...]
    after: tuple[str, ...] = ()
    pinned: bool = False


@dataclass(frozen=True, slots=True)
class Probe:
    """A conformance probe: what it checks (``spec``: SPEC.md sections), the script and its end."""

    name: str
    spec: str
    claim: str
    steps: tuple[Send, ...]
    end_ms: int
    timing: bool = False                # timing-sensitive: a timing-only difference is retried once
    needs: str = ""                     # the broker settings the expected answers depend on
    seed: str = ""                      # the seed scenario it puts on the wire, if any
    skip: str = ""                      # why it cannot run with this configuration ("" = it can)


@dataclass
class Builder:
    """Writes a probe's steps: ``b.join("a", 0)``, ``b.sync("a", after=...)``; labels are ``a.JoinGroup.1``."""

    cfg: BrokerConfig
    steps: list[Send] = field(default_factory=list)
    _count: dict[str, int] = field(default_factory=dict)
    handshakes: dict[str, str] = field(default_factory=dict)

    @property
    def session(self) -> int:
        return self.cfg.min_session_ms

    def send(self, member: str, api: str, version: int, at: int, after: tuple[str, ...] | str = (),
             pinned: bool = True, **fields: Any) -> str:
        key = f"{member}.{api}"
        self._count[key] = self._count.get(key, 0) + 1
        label = f"{key}.{self._count[key]}"
        after = (after,) if isinstance(after, str) else tuple(after)
        own = [s.label for s in self.steps if s.member == member][-1:]
        after = tuple(dict.fromkeys(tuple(own) + after))        # after its own previous answer, always
        self.steps.append(Send(label, member, api, version, at, tuple(sorted(fields.items())), after, pinned))
        return label

    def join(self, member: str, at: int = 0, after: tuple[str, ...] | str = (), version: int | None = None,
             new: bool = True, session: int | None = None, rebalance: int | None = None,
             protocols: tuple[tuple[str, bytes], ...] = (("range", b"meta"),), protocol_type: str = "consumer",
             instance: str | None = None, member_id: Any = None, handshake: bool = True) -> str:
        """A JoinGroup; a new dynamic member on v4+ first gets MEMBER_ID_REQUIRED (SPEC.md §3.1 J5a.5) and
        rejoins with the id it was given (``handshake``; the first label is ``handshakes[member]``).
        Returns the label of the last JoinGroup sent."""
        fields = dict(group_id=GROUP, session_timeout_ms=session or self.session,
                      rebalance_timeout_ms=rebalance or session or self.session, protocol_type=protocol_type,
                      protocols=protocols, group_instance_id=instance, reason=None)
        if member_id is None:
            member_id = "" if new else Id(member)
        pinned, version = version is not None, FLOORS["JoinGroup"] if version is None else version
        label = self.send(member, "JoinGroup", version, at, after, pinned, member_id=member_id, **fields)
        if handshake and new and member_id == "" and version >= 4 and instance is None:
            self.handshakes[member] = label
            label = self.send(member, "JoinGroup", version, 0, label, pinned, member_id=Id(member), **fields)
        return label

    def sync(self, member: str, at: int = 0, after: tuple[str, ...] | str = (), leader: bool = False,
             version: int | None = None, gen: Any = None, member_id: Any = None,
             instance: str | None = None) -> str:
        return self.send(member, "SyncGroup", FLOORS["SyncGroup"] if version is None else version, at, after,
                         version is not None, group_id=GROUP, generation_id=Gen(member) if gen is None else gen,
                         member_id=Id(member) if member_id is None else member_id, group_instance_id=instance,
                         protocol_type="consumer", protocol_name="range",
                         assignments=Assign(member) if leader else ())

    def heartbeat(self, member: str, at: int = 0, after: tuple[str, ...] | str = (), version: int | None = None,
                  gen: Any = None, member_id: Any = None, instance: str | None = None) -> str:
        return self.send(member, "Heartbeat", FLOORS["Heartbeat"] if version is None else version, at, after,
                         version is not None, group_id=GROUP,
                         generation_id=Gen(member) if gen is None else gen,
                         member_id=Id(member) if member_id is None else member_id, group_instance_id=instance)

    def leave(self, member: str, at: int = 0, after: tuple[str, ...] | str = (), version: int | None = None,
              members: tuple[tuple[Any, str | None], ...] | None = None) -> str:
        return self.send(member, "LeaveGroup", FLOORS["LeaveGroup"] if version is None else version, at, after,
                         version is not None, group_id=GROUP, member_id=Id(member),
                         members=((Id(member), None),) if members is None else members)

    def commit(self, member: str, at: int = 0, after: tuple[str, ...] | str = (), version: int | None = None,
               gen: Any = None, member_id: Any = None, instance: str | None = None) -> str:
        return self.send(member, "OffsetCommit", FLOORS["OffsetCommit"] if version is None else version, at, after,
                         version is not None, group_id=GROUP,
                         generation_id=Gen(member) if gen is None else gen,
                         member_id=Id(member) if member_id is None else member_id, group_instance_id=instance)

    def stable(self, members: tuple[str, ...], at: int = 0, **join: Any) -> dict[str, str]:
        """Every member joins at ``at`` (the first is expected to lead), the first syncs as leader, the
        others after it; returns each member's SyncGroup label."""
        joins = {m: self.join(m, at + 100 * i, **join) for i, m in enumerate(members)}   # a leads
        leader_sync = self.sync(members[0], at, tuple(joins.values()), leader=True)
        done = {members[0]: leader_sync}
        for m in members[1:]:
            done[m] = self.sync(m, at, (joins[m], leader_sync))
        return done

    def probe(self, name: str, spec: str, claim: str, end_ms: int, **extra: Any) -> Probe:
        """The probe; it ends no sooner than D + 3 S + 3 s: Kafka's initial delay alone may last up to the
        rebalance timeout (§4.5), and a member's requests must not be cut off before the reference answers."""
        floor = self.cfg.initial_delay_ms + 3 * self.cfg.min_session_ms + 3000
        return Probe(name, spec, claim, tuple(self.steps), max(end_ms, floor), **extra)


ProbeFactory = Callable[[BrokerConfig], Probe]
