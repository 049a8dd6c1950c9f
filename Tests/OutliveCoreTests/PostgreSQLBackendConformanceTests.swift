import COutliveSystem
import XCTest
@testable import OutliveCore

/// The PostgreSQL server of the tests: scripts/run_tests.py (make test) starts
/// one and sets OUTLIVE_TEST_PG; without it these tests are skipped, saying so.
enum TestServer {
    static func uri() throws -> String {
        guard let value = getenv("OUTLIVE_TEST_PG").map({ String(cString: $0) }), !value.isEmpty else {
            throw XCTSkip("OUTLIVE_TEST_PG is not set: start a server with scripts/pg-cluster.sh start (make test does)")
        }
        return value
    }

    /// A store name no other test uses.
    static func storeName(_ prefix: String) -> String {
        var bytes = [UInt8](repeating: 0, count: 6)
        _ = getrandom(&bytes, bytes.count, 0)
        return prefix + "_" + bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}

/// The backend conformance suite (BackendConformance) on PostgreSQL.
final class PostgreSQLBackendConformanceTests: XCTestCase {
    final class Engine: ConformanceEngine {
        let uri: String
        let store = TestServer.storeName("conformance")
        let other = TestServer.storeName("other")

        init(uri: String) { self.uri = uri }

        func open() throws -> StoreBackend { try PostgreSQLBackend(conninfo: uri, store: store) }
        func openOther() throws -> StoreBackend { try PostgreSQLBackend(conninfo: uri, store: other) }

        func watch(_ topic: String, on backend: StoreBackend) throws {
            try backend.write {
                // A run without a liveness lock (key 0 is never handed out).
                try $0.execute("INSERT INTO outlive_runs(run_id, process, pid, started, lock_key) VALUES ('conformance', 'test', 0, 0, 0) ON CONFLICT DO NOTHING")
                try $0.execute("INSERT INTO outlive_watchers(topic, run_id) VALUES (?, 'conformance') ON CONFLICT DO NOTHING", [.text(topic)])
            }
        }

        func onCommit(_ backend: StoreBackend, _ body: @escaping (Int64) -> Void) {
            (backend as! PostgreSQLBackend).onChangesCommitted = body
        }

        var blobType: String { "bytea" }

        func cleanUp() {
            for name in [store, other] { try? PostgreSQLBackend(conninfo: uri, store: name).dropStore() }
        }
    }

    var engine: Engine!
    var suite: BackendConformance { BackendConformance(engine: engine) }

    override func setUpWithError() throws { engine = Engine(uri: try TestServer.uri()) }
    override func tearDown() { engine?.cleanUp() }

    func testValuesRoundTrip() throws { try suite.valuesRoundTrip() }
    func testLargeAndEmptyValuesRoundTrip() throws { try suite.largeAndEmptyValuesRoundTrip() }
    func testDoublesRoundTripBitForBit() throws { try suite.doublesRoundTripBitForBit() }
    func testWriteIsAllOrNothing() throws { try suite.writeIsAllOrNothing() }
    func testStatementsSentLaterAreAllOrNothing() throws { try suite.statementsSentLaterAreAllOrNothing() }
    func testAStatementThatFailsToPrepareFailsAloneEachTime() throws { try suite.aStatementThatFailsToPrepareFailsAloneEachTime() }
    func testManyChangesInOneTransactionAreNumberedInOrder() throws { try suite.manyChangesInOneTransactionAreNumberedInOrder() }
    func testChangeForOtherRunsIsWrittenOnlyWhenAnotherRunWatches() throws { try suite.changeForOtherRunsIsWrittenOnlyWhenAnotherRunWatches() }
    func testChangedRowsCountsTheLastStatement() throws { try suite.changedRowsCountsTheLastStatement() }
    func testUnwatchedTopicIsNotWritten() throws { try suite.unwatchedTopicIsNotWritten() }
    func testRollbackLeavesNoGapThatBlocksReaders() throws { try suite.rollbackLeavesNoGapThatBlocksReaders() }
    func testChangesAreOldestFirstAndLimited() throws { try suite.changesAreOldestFirstAndLimited() }
    func testPrunedEntriesAfterTheCursorReadAsPrunedAndNothingNewAsNothing() throws {
        try suite.prunedEntriesAfterTheCursorReadAsPrunedAndNothingNewAsNothing()
    }
    func testCommitHookRunsOncePerTransactionThatRecordedChanges() throws { try suite.commitHookRunsOncePerTransactionThatRecordedChanges() }
    func testAfterCommitRunsOnlyAfterACommit() throws { try suite.afterCommitRunsOnlyAfterACommit() }
    func testStoreUsedFromItsOwnTransactionFailsInsteadOfDeadlocking() throws { try suite.storeUsedFromItsOwnTransactionFailsInsteadOfDeadlocking() }
    func testStoresBesideEachOtherDoNotSeeEachOther() throws { try suite.storesBesideEachOtherDoNotSeeEachOther() }
    func testFeedNeverSkipsACommittedEntryUnderConcurrentWriters() throws { try suite.feedNeverSkipsACommittedEntryUnderConcurrentWriters() }
    func testReadSeesOneSnapshot() throws { try suite.readSeesOneSnapshot() }
    func testWritersInSeveralProcessesAreSerialised() throws { try suite.writersInSeveralProcessesAreSerialised() }
}
