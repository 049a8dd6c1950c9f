import COutliveSystem
import XCTest
@testable import OutliveCore

/// The backend conformance suite (BackendConformance) on SQLite.
final class SQLiteBackendConformanceTests: XCTestCase {
    final class Engine: ConformanceEngine {
        let directory: String

        init() {
            var template = Array("/tmp/outlive-conformance-XXXXXX".utf8CString)
            directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        }

        private func open(_ name: String) throws -> StoreBackend {
            let backend = try SQLiteBackend(path: directory + "/" + name, durability: .normal, busyTimeoutMilliseconds: 30_000)
            // The suite's table is part of the schema this store verifies at
            // open (a table Outlive did not make is refused as foreign).
            let suite = SchemaComponent(name: "conformance", migrations: [
                "CREATE TABLE IF NOT EXISTS conformance(k TEXT PRIMARY KEY, v BIGINT NOT NULL, b \(blobType), d DOUBLE PRECISION)",
            ])
            try Schema.migrate(backend, components: [Schema.store, suite])
            return backend
        }

        func open() throws -> StoreBackend { try open("store.db") }
        func openOther() throws -> StoreBackend { try open("other.db") }

        func watch(_ topic: String, on backend: StoreBackend) throws {
            try backend.write {
                try $0.execute("INSERT INTO outlive_runs(run_id, process, pid, started) VALUES ('conformance', 'test', 0, 0) ON CONFLICT DO NOTHING")
                try $0.execute("INSERT INTO outlive_watchers(topic, run_id) VALUES (?, 'conformance') ON CONFLICT DO NOTHING", [.text(topic)])
            }
        }

        func onCommit(_ backend: StoreBackend, _ body: @escaping (Int64) -> Void) {
            (backend as! SQLiteBackend).onChangesCommitted = body
        }

        var blobType: String { "BLOB" }

        func cleanUp() {
            _ = system("rm -rf '\(directory)'")
        }
    }

    var engine: Engine!
    var suite: BackendConformance { BackendConformance(engine: engine) }

    override func setUp() { engine = Engine() }
    override func tearDown() { engine.cleanUp() }

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

    // SQLiteConnection.run binds text and blobs from a buffer of the
    // connection's (SQLITE_STATIC): these prove what that must keep.

    /// A statement run from a row callback of another binds its values
    /// elsewhere: the first one's, still bound while it steps, are intact.
    func testAStatementRunWhileAnotherStepsLeavesTheOthersValuesBound() throws {
        let backend = try engine.open()
        try backend.write { transaction in
            for (key, value) in [("a", 1), ("b", 2), ("c", 3)] {
                try transaction.execute("INSERT INTO conformance(k, v) VALUES (?, ?)", [.text(key), .integer(Int64(value))])
            }
        }
        var keys: [String] = []
        var looked: [Int64] = []
        try backend.read { transaction in
            // NOT INDEXED: `k <> ?` is compared on every row, after each callback.
            try transaction.query("SELECT k FROM conformance NOT INDEXED WHERE k <> ? ORDER BY rowid", [.text("c")]) { row in
                keys.append(row.text(0) ?? "")
                try transaction.query("SELECT v FROM conformance WHERE k = ?", [.text("b")]) { looked.append($0.integer(0)) }
            }
        }
        XCTAssertEqual(keys, ["a", "b"])
        XCTAssertEqual(looked, [2, 2])
    }

    /// A parameter a call leaves unbound is NULL, never the value an earlier
    /// call of the same statement bound (nor bytes of its buffer).
    func testAParameterLeftUnboundIsNullNotAnEarlierCallsValue() throws {
        let backend = try engine.open()
        let insert = "INSERT INTO conformance(k, v, b, d) VALUES (?, ?, ?, ?)"
        try backend.write {
            try $0.execute(insert, [.text("first"), .integer(1), .blob([1, 2, 3]), .double(2.5)])
            try $0.execute(insert, [.text("second"), .integer(2)])
        }
        var nulls: [Bool] = []
        try backend.read { try $0.query("SELECT b IS NULL AND d IS NULL FROM conformance ORDER BY v") { nulls.append($0.integer(0) == 1) } }
        XCTAssertEqual(nulls, [false, true])
    }
}
