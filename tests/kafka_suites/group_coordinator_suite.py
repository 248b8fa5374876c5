"""The one Suite value of Kafka's GroupCoordinatorTest.scala, shared by the modules that restate it by subject
(tests/kafka_suites/test_group_coordinator_*.py): its test names at 2.4.1, 2.7.0 and 3.9.0 (read at 3.9.0-rc3, equal
to 3.9.1's file), and the tests that do not apply to the reference, each with why.

Names as `python bench/kafka_suite_names.py --repo /work/.mirror/apache+kafka/repo --file
core/src/test/scala/unit/kafka/coordinator/group/GroupCoordinatorTest.scala --tag 2.4.1 --tag 2.7.0
--tag 3.9.0=3.9.0-rc3` prints them, grouped by the tags that have them.
"""
from __future__ import annotations

from tests.kafka_suites.registry import Suite

KAFKA_FILE = "core/src/test/scala/unit/kafka/coordinator/group/GroupCoordinatorTest.scala"

#: at 2.4.1, 2.7.0, 3.9.0
IN_ALL = (
    "testRequestHandlingWhileLoadingInProgress", "testOffsetsRetentionMsIntegerOverflow",
    "testJoinGroupWrongCoordinator", "testJoinGroupShouldReceiveErrorIfGroupOverMaxSize",
    "testJoinGroupSessionTimeoutTooSmall", "testJoinGroupSessionTimeoutTooLarge",
    "testJoinGroupUnknownConsumerNewGroup", "testInvalidGroupId", "testValidJoinGroup",
    "testJoinGroupInconsistentProtocolType", "testJoinGroupWithEmptyProtocolType",
    "testJoinGroupWithEmptyGroupProtocol", "testNewMemberTimeoutCompletion", "testNewMemberJoinExpiration",
    "testJoinGroupInconsistentGroupProtocol", "testJoinGroupUnknownConsumerExistingGroup",
    "testJoinGroupUnknownConsumerNewDeadGroup", "testSyncDeadGroup", "testJoinGroupSecondJoinInconsistentProtocol",
    "staticMemberJoinAsFirstMember", "staticMemberReJoinWithExplicitUnknownMemberId",
    "staticMemberFenceDuplicateRejoinedFollower", "staticMemberFenceDuplicateSyncingFollowerAfterMemberIdChanged",
    "staticMemberFenceDuplicateRejoiningFollowerAfterMemberIdChanged", "staticMemberRejoinWithKnownMemberId",
    "staticMemberRejoinWithLeaderIdAndUnknownMemberId", "staticMemberRejoinWithLeaderIdAndKnownMemberId",
    "staticMemberRejoinWithLeaderIdAndUnexpectedDeadGroup", "staticMemberRejoinWithLeaderIdAndUnexpectedEmptyGroup",
    "staticMemberRejoinWithFollowerIdAndChangeOfProtocol",
    "staticMemberRejoinWithKnownLeaderIdToTriggerRebalanceAndFollowerWithChangeofProtocol",
    "staticMemberRejoinAsFollowerWithUnknownMemberId",
    "staticMemberRejoinAsFollowerWithKnownMemberIdAndNoProtocolChange",
    "staticMemberRejoinAsFollowerWithMismatchedMemberId", "staticMemberRejoinAsLeaderWithMismatchedMemberId",
    "staticMemberSyncAsLeaderWithInvalidMemberId", "staticMemberHeartbeatLeaderWithInvalidMemberId",
    "shouldGetDifferentStaticMemberIdAfterEachRejoin", "testOffsetCommitDeadGroup",
    "staticMemberCommitOffsetWithInvalidMemberId", "staticMemberJoinWithUnknownInstanceIdAndKnownMemberId",
    "staticMemberReJoinWithIllegalStateAsUnknownMember",
    "testLeaderFailToRejoinBeforeFinalRebalanceTimeoutWithLongSessionTimeout",
    "testLeaderRejoinBeforeFinalRebalanceTimeoutWithLongSessionTimeout",
    "testStaticMemberFollowerFailToRejoinBeforeRebalanceTimeout",
    "testStaticMemberLeaderFailToRejoinBeforeRebalanceTimeout", "testHeartbeatWrongCoordinator",
    "testHeartbeatUnknownGroup", "testHeartbeatUnknownConsumerExistingGroup", "testHeartbeatRebalanceInProgress",
    "testHeartbeatIllegalGeneration", "testValidHeartbeat", "testSessionTimeout", "testHeartbeatMaintainsSession",
    "testCommitMaintainsSession", "testSessionTimeoutDuringRebalance", "testRebalanceCompletesBeforeMemberJoins",
    "testSyncGroupEmptyAssignment", "testSyncGroupNotCoordinator", "testSyncGroupFromUnknownGroup",
    "testSyncGroupFromUnknownMember", "testSyncGroupFromIllegalGeneration",
    "testJoinGroupFromUnchangedFollowerDoesNotRebalance", "testJoinGroupFromUnchangedLeaderShouldRebalance",
    "testSecondMemberPartiallyJoinAndTimeout", "testJoinGroupCompletionWhenPendingMemberJoins",
    "testJoinGroupCompletionWhenPendingMemberTimesOut", "testPendingMembersLeavesGroup",
    "testLeaderFailureInSyncGroup", "testSyncGroupFollowerAfterLeader", "testSyncGroupLeaderAfterFollower",
    "testCommitOffsetFromUnknownGroup", "testCommitOffsetWithDefaultGeneration",
    "testCommitOffsetsAfterGroupIsEmpty", "testFetchOffsets", "testCommitAndFetchOffsetsWithEmptyGroup",
    "testBasicFetchTxnOffsets", "testFetchTxnOffsetsWithAbort", "testFetchTxnOffsetsIgnoreSpuriousCommit",
    "testFetchTxnOffsetsOneProducerMultipleGroups", "testFetchTxnOffsetsMultipleProducersOneGroup",
    "testFetchOffsetForUnknownPartition", "testFetchOffsetNotCoordinatorForGroup", "testFetchAllOffsets",
    "testCommitOffsetInCompletingRebalance", "testCommitOffsetInCompletingRebalanceFromUnknownMemberId",
    "testCommitOffsetInCompletingRebalanceFromIllegalGeneration",
    "testHeartbeatDuringRebalanceCausesRebalanceInProgress", "testGenerationIdIncrementsOnRebalance",
    "testLeaveGroupWrongCoordinator", "testLeaveGroupUnknownGroup", "testLeaveGroupUnknownConsumerExistingGroup",
    "testSingleLeaveDeadGroup", "testBatchLeaveDeadGroup", "testValidLeaveGroup",
    "testLeaveGroupWithFencedInstanceId", "testLeaveGroupStaticMemberWithUnknownMemberId",
    "testStaticMembersValidBatchLeaveGroup", "testStaticMembersWrongCoordinatorBatchLeaveGroup",
    "testStaticMembersUnknownGroupBatchLeaveGroup", "testStaticMembersFencedInstanceBatchLeaveGroup",
    "testStaticMembersUnknownInstanceBatchLeaveGroup", "testPendingMemberBatchLeaveGroup",
    "testListGroupsIncludesStableGroups", "testListGroupsIncludesRebalancingGroups",
    "testDescribeGroupWrongCoordinator", "testDescribeGroupInactiveGroup",
    "testDescribeGroupStableForDynamicMember", "testDescribeGroupStableForStaticMember",
    "testDescribeGroupRebalancing", "testDeleteNonEmptyGroup", "testDeleteGroupWithInvalidGroupId",
    "testDeleteGroupWithWrongCoordinator", "testDeleteEmptyGroup", "testDeleteEmptyGroupWithStoredOffsets",
    "testDeleteOffsetOfNonExistingGroup", "testDeleteOffsetOfNonEmptyNonConsumerGroup",
    "testDeleteOffsetOfEmptyNonConsumerGroup", "testDeleteOffsetOfConsumerGroupWithUnparsableProtocol",
    "testDeleteOffsetOfDeadConsumerGroup", "testDeleteOffsetOfEmptyConsumerGroup",
    "testDeleteOffsetOfStableConsumerGroup", "shouldDelayInitialRebalanceByGroupInitialRebalanceDelayOnEmptyGroup",
    "shouldResetRebalanceDelayWhenNewMemberJoinsGroupInInitialRebalance",
    "shouldDelayRebalanceUptoRebalanceTimeout", "testCompleteHeartbeatWithGroupDead",
    "testCompleteHeartbeatWithMemberAlreadyRemoved",
)

#: at 2.4.1
ONLY_2_4_1 = (
    "staticMemberRejoinWithUnknownMemberIdAndChangeOfProtocol",
)

#: at 2.4.1, 2.7.0
UNTIL_2_7_0 = (
    "staticMemberJoinWithIllegalStateAsPendingMember", "staticMemberLeaveWithIllegalStateAsPendingMember",
    "staticMemberReJoinWithIllegalArgumentAsMissingOldMember", "testheartbeatDeadGroup", "testheartbeatEmptyGroup",
    "testPendingMemberWithUnexpectedInstanceIdBatchLeaveGroup",
)

#: at 2.7.0, 3.9.0
SINCE_2_7_0 = (
    "testDynamicMembersJoinGroupWithMaxSizeAndRequiredKnownMember", "testDynamicMembersJoinGroupWithMaxSize",
    "testStaticMembersJoinGroupWithMaxSize", "testDynamicMembersCanReJoinGroupWithMaxSizeWhileRebalancing",
    "testLastJoiningMembersAreKickedOutWhenReJoiningGroupWithMaxSize",
    "testNewMemberFailureAfterJoinGroupCompletion", "testNewMemberFailureAfterSyncGroupCompletion",
    "staticMemberRejoinWithUnknownMemberIdAndChangeOfProtocolWithSelectedProtocolChanged",
    "staticMemberRejoinWithUnknownMemberIdAndChangeOfProtocolWhileSelectProtocolUnchangedPersistenceFailure",
    "staticMemberRejoinWithUnknownMemberIdAndChangeOfProtocolWhileSelectProtocolUnchanged",
    "testJoinGroupProtocolTypeIsNotProvidedWhenAnErrorOccurs", "testJoinGroupReturnsTheProtocolType",
    "testSyncGroupReturnsAnErrorWhenProtocolTypeIsInconsistent",
    "testSyncGroupReturnsAnErrorWhenProtocolNameIsInconsistent",
    "testSyncGroupSucceedWhenProtocolTypeAndNameAreNotProvided",
    "testSyncGroupSucceedWhenProtocolTypeAndNameAreConsistent", "testFetchPendingTxnOffsetsWithAbort",
    "testFetchPendingTxnOffsetsWithCommit", "testTxnCommitOffsetWithFencedInstanceId",
    "testTxnCommitOffsetWithInvalidMemberId", "testTxnCommitOffsetWithKnownMemberId",
    "testTxnCommitOffsetWithIllegalGeneration", "testTxnCommitOffsetWithLegalGeneration",
    "testListGroupsWithStates",
)

#: at 3.9.0
ONLY_3_9_0 = (
    "staticMemberRejoinWithUpdatedSessionAndRebalanceTimeoutsButCannotPersistChange",
    "staticMemberRejoinWithUpdatedSessionAndRebalanceTimeoutsAndPersistChange", "testHeartbeatDeadGroup",
    "testHeartbeatEmptyGroup", "testRebalanceTimesOutWhenSyncRequestIsNotReceived",
    "testRebalanceTimesOutWhenSyncRequestIsNotReceivedFromFollowers",
    "testRebalanceTimesOutWhenSyncRequestIsNotReceivedFromLeaders",
    "testRebalanceDoesNotTimeOutWhenAllSyncAreReceived",
    "testManualCommitOffsetShouldNotValidateMemberIdAndInstanceId", "testListGroupsWithTypes",
    "testVerificationErrorsForTxnOffsetCommits", "testTxnOffsetMetadataTooLarge",
)

#: why a test does not apply: the reference serves JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit (as far
#: as it touches membership: offsets are not stored, SPEC.md §3.5) and DescribeGroups, with load/unload of a group
OFFSETS_NOT_STORED = ("reads committed offsets back (OffsetFetch) or deletes them; the reference does not store "
                      "offsets: OffsetCommit is served only as far as it touches membership (SPEC.md §3.5)")
NO_TXN_OFFSET_COMMIT = ("TxnOffsetCommit and transaction markers; the reference has no transactional offset commit "
                        "API (only OffsetCommit)")
NO_LIST_GROUPS = "ListGroups; the reference has no ListGroups API"
NO_DELETE_GROUPS = "DeleteGroups; the reference has no DeleteGroups API"
NO_OFFSET_DELETE = "OffsetDelete of stored offsets; the reference stores no offsets and has no OffsetDelete API"
NO_RETENTION_CONFIG = ("the offsets.retention.minutes -> ms arithmetic of OffsetConfig; the reference has no offset "
                       "retention and reads no broker configuration")

NOT_APPLICABLE: dict[str, str] = {
    "testOffsetsRetentionMsIntegerOverflow": NO_RETENTION_CONFIG,
    **dict.fromkeys(("testFetchOffsets", "testFetchOffsetForUnknownPartition", "testFetchOffsetNotCoordinatorForGroup",
                     "testFetchAllOffsets"), OFFSETS_NOT_STORED),
    **dict.fromkeys(("testBasicFetchTxnOffsets", "testFetchTxnOffsetsWithAbort",
                     "testFetchTxnOffsetsIgnoreSpuriousCommit", "testFetchTxnOffsetsOneProducerMultipleGroups",
                     "testFetchTxnOffsetsMultipleProducersOneGroup",
                     "testFetchPendingTxnOffsetsWithAbort", "testFetchPendingTxnOffsetsWithCommit",
                     "testTxnCommitOffsetWithFencedInstanceId", "testTxnCommitOffsetWithInvalidMemberId",
                     "testTxnCommitOffsetWithKnownMemberId", "testTxnCommitOffsetWithIllegalGeneration",
                     "testTxnCommitOffsetWithLegalGeneration", "testVerificationErrorsForTxnOffsetCommits",
                     "testTxnOffsetMetadataTooLarge"), NO_TXN_OFFSET_COMMIT),
    **dict.fromkeys(("testListGroupsIncludesStableGroups", "testListGroupsIncludesRebalancingGroups",
                     "testListGroupsWithStates", "testListGroupsWithTypes"), NO_LIST_GROUPS),
    **dict.fromkeys(("testDeleteNonEmptyGroup", "testDeleteGroupWithInvalidGroupId",
                     "testDeleteGroupWithWrongCoordinator", "testDeleteEmptyGroup",
                     "testDeleteEmptyGroupWithStoredOffsets"), NO_DELETE_GROUPS),
    **dict.fromkeys(("testDeleteOffsetOfNonExistingGroup", "testDeleteOffsetOfNonEmptyNonConsumerGroup",
                     "testDeleteOffsetOfEmptyNonConsumerGroup", "testDeleteOffsetOfConsumerGroupWithUnparsableProtocol",
                     "testDeleteOffsetOfDeadConsumerGroup", "testDeleteOffsetOfEmptyConsumerGroup",
                     "testDeleteOffsetOfStableConsumerGroup"), NO_OFFSET_DELETE),
}

SUITE = Suite(
    kafka_file=KAFKA_FILE,
    tests={"2.4.1": IN_ALL + ONLY_2_4_1 + UNTIL_2_7_0,
           "2.7.0": IN_ALL + UNTIL_2_7_0 + SINCE_2_7_0,
           "3.9.0": IN_ALL + SINCE_2_7_0 + ONLY_3_9_0},
    not_applicable=NOT_APPLICABLE,
)
