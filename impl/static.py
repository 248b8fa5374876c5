"""Static membership (KIP-345, group.instance.id): the rules that differ between releases, as one value.

A ``Profile`` holds a ``StaticRules`` in ``static_membership`` (None: the release has no KIP-345 and a
JoinGroup carrying an instance id is refused). What is the same in every release with static members —
the instanceId → memberId map, fencing of a request whose instance id maps to another member id,
static members surviving join completion, leave by instance id — is code in impl/static_members.py;
only the differences are fields here (SPEC.md §3.1 J5a step 4, J5b step 4, §3.3–§3.5).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: a known static member rejoining with an unknown member id outside PreparingRebalance:
#: "answer" — replace the id and answer the current generation at once (no rebalance, no log write);
#: "rebalance" — replace the id, then prepareRebalance;
#: "persist" — replace the id; rebalance if re-selecting the protocol would change it, otherwise store the
#: group (new member id) and answer from the store callback.
RejoinAnswer = Literal["answer", "rebalance", "persist"]


@dataclass(frozen=True, slots=True)
class StaticRules:
    """What one release does with static members where releases differ."""

    #: J5a step 4 in CompletingRebalance: "answer" in 2.3–2.4, "rebalance" from 2.5.0 (KAFKA-9801)
    rejoin_in_completing_rebalance: RejoinAnswer
    #: J5a step 4 in Stable: "answer" in 2.3.0–2.6.0, "persist" from 2.6.1/2.7.0 (KAFKA-10284)
    rejoin_in_stable: RejoinAnswer
    #: [3.2+, KIP-814] a JoinGroup v9 client may skip the assignment: the Stable answer of a persisted rejoin
    #: then names the real leader, lists the members to the leader and says skip_assignment (§3.1 J5a step 4)
    skip_assignment: bool
    #: 3.x validateCurrentMember: a request whose instance id is unknown gets UNKNOWN_MEMBER_ID, and a
    #: LeaveGroup with member id "" is an admin removal by instance id. 2.x only fences an instance id that
    #: maps to another member id and otherwise judges the member id (SPEC.md §3.1 J5b step 4, §3.4).
    validate_current_member: bool
    #: 2.3.0–2.7.x: a JoinGroup refused with GROUP_MAX_SIZE_REACHED also drops the static mapping of the instance id
    #: the request carries (handleJoinGroup: remove(memberId) then removeStaticMember(groupInstanceId); 2.8.0 moved
    #: the mapping's removal into remove, commit 6d411620ddb), so a static restart refused at capacity leaves its
    #: instance's member in the group without a mapping (GroupCoordinator.scala 2.4.1 lines 161-167, 2.7.0 184-187)
    refusal_drops_request_instance: bool = False


#: 2.4.1 (E3): SPEC.md §3.1 J5a step 4 ("CompletingRebalance → 2.3–2.4: same immediate answer as Stable",
#: "Stable → 2.3.0–2.6.0: answer immediately … old leader id"), §3.4 "[2.4]" LeaveGroup form.
STATIC_2_4_1 = StaticRules(rejoin_in_completing_rebalance="answer", rejoin_in_stable="answer",
                           skip_assignment=False, validate_current_member=False, refusal_drops_request_instance=True)
#: 2.7.0 (E4): "2.5.0+: prepareRebalance" in CompletingRebalance; "2.6.1/2.7.0+ (KAFKA-10284)" in Stable;
#: SPEC.md tags validateCurrentMember and the admin-removal LeaveGroup form "3.x", so 2.7.0 keeps the 2.4 forms.
STATIC_2_7_0 = StaticRules(rejoin_in_completing_rebalance="rebalance", rejoin_in_stable="persist",
                           skip_assignment=False, validate_current_member=False, refusal_drops_request_instance=True)
#: 3.9 (E5): as 2.7.0 plus KIP-814 ("[3.2+]") and validateCurrentMember (SPEC.md §3.1 J5b step 4, §3.4 "[3.x]").
STATIC_3_9 = StaticRules(rejoin_in_completing_rebalance="rebalance", rejoin_in_stable="persist",
                         skip_assignment=True, validate_current_member=True)
