"""The driver surface of DESIGN.md §4: external conformance suites call these names, so they are pinned."""
from __future__ import annotations

import dataclasses
import inspect

import pytest

import impl
from impl import CoordinatorConfig, Errors, GroupCoordinator, GroupState

# method -> the parameter names DESIGN.md §4 gives, in order (extra optional ones may follow)
METHODS = {
    "join_group": ["group_id", "member_id", "session_timeout_ms", "rebalance_timeout_ms", "protocol_type",
                   "protocols", "group_instance_id", "require_known_member_id", "client_id", "client_host"],
    "sync_group": ["group_id", "generation_id", "member_id", "assignments", "group_instance_id", "protocol_type",
                   "protocol_name"],
    "heartbeat": ["group_id", "member_id", "generation_id", "group_instance_id"],
    "leave_group": ["group_id", "members"],
    "commit_offsets": ["group_id", "member_id", "generation_id", "offsets", "group_instance_id"],
    "advance": ["ms"],
    "complete_appends": ["ok", "error"],
    "describe": ["group_id"],
    "delayed_operations": [],
    "unload_group": ["group_id"],
    "load_group": ["group_id"],
    "set_loading": ["group_id", "loading"],   # DESIGN.md: set_loading(group_id, True|False)
}


@pytest.mark.parametrize("name", sorted(METHODS))
def test_coordinator_methods_keep_their_parameter_names(name: str) -> None:
    params = list(inspect.signature(getattr(GroupCoordinator, name)).parameters)[1:]
    assert params[:len(METHODS[name])] == METHODS[name]
    for extra in params[len(METHODS[name]):]:
        default = inspect.signature(getattr(GroupCoordinator, name)).parameters[extra].default
        assert default is not inspect.Parameter.empty, f"{name}: extra parameter {extra} must be optional"


def test_defaults_of_optional_request_arguments() -> None:
    sig = inspect.signature(GroupCoordinator.join_group).parameters
    assert sig["group_instance_id"].default is None and sig["require_known_member_id"].default is False
    assert sig["client_id"].default == "client" and sig["client_host"].default == "/127.0.0.1"


def test_config_fields_and_defaults() -> None:
    fields = {f.name: f.default for f in dataclasses.fields(CoordinatorConfig)}
    assert fields == {"profile": "3.9", "group_min_session_timeout_ms": 6000,
                      "group_max_session_timeout_ms": 1800000, "group_initial_rebalance_delay_ms": 3000,
                      "group_max_size": 2**31 - 1, "new_member_join_timeout_ms": 300000, "append_mode": "sync"}


@pytest.mark.parametrize("cls,names", [
    (impl.JoinGroupResult, ["error", "generation_id", "protocol_type", "protocol_name", "leader_id", "member_id",
                            "members"]),
    (impl.SyncGroupResult, ["error", "assignment"]),
    (impl.HeartbeatResult, ["error"]),
    (impl.LeaveGroupResult, ["error", "member_errors"]),
    (impl.CommitResult, ["error"]),
    (impl.DelayedOpView, ["kind", "key", "deadline_ms", "completed"]),
])
def test_result_and_view_fields(cls: type, names: list[str]) -> None:
    assert [f.name for f in dataclasses.fields(cls)][:len(names)] == names


def test_group_and_member_views() -> None:
    group_fields = {f.name for f in dataclasses.fields(impl.GroupView)}
    assert {"state", "generation_id", "leader_id", "protocol_type", "protocol_name", "members",
            "pending_members"} <= group_fields
    member_fields = {f.name for f in dataclasses.fields(impl.MemberView)}
    assert {"member_id", "group_instance_id", "session_timeout_ms", "rebalance_timeout_ms", "awaiting_join",
            "awaiting_sync", "is_new", "assignment", "protocols"} <= member_fields


def test_futures_report_done_and_result() -> None:
    coord = GroupCoordinator(CoordinatorConfig(profile="0.10.0"))
    f = coord.join_group("g", "", 10000, 10000, "consumer", [("range", b"")])
    assert f.done and f.result.error is Errors.NONE
    view = coord.describe("g")
    assert view is not None and view.state is GroupState.COMPLETING_REBALANCE


def test_errors_carry_kafka_names_and_codes() -> None:
    for name, code in [("NONE", 0), ("ILLEGAL_GENERATION", 22), ("UNKNOWN_MEMBER_ID", 25),
                       ("REBALANCE_IN_PROGRESS", 27), ("MEMBER_ID_REQUIRED", 79), ("NOT_COORDINATOR", 16)]:
        assert Errors[name] == code


def test_unknown_profile_is_one_clear_error() -> None:
    known = r"known profiles: 0\.10\.0, 2\.4\.1, 2\.7\.0, 3\.9\."
    with pytest.raises(impl.UnknownProfileError, match=r"unknown profile '2\.0'; " + known):
        GroupCoordinator(CoordinatorConfig(profile="2.0"))


@pytest.mark.parametrize("kwargs,needle", [
    ({"append_mode": "async"}, "append_mode must be one of"),
    ({"group_min_session_timeout_ms": 10, "group_max_session_timeout_ms": 5}, "must not exceed"),
    ({"group_max_size": 0}, "group_max_size must be at least 1"),
])
def test_bad_config_is_rejected(kwargs: dict[str, object], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        CoordinatorConfig(**kwargs)  # type: ignore[arg-type]
