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
    func testWriteIsAllOrNothing() throws { try suite.writeIsAllOrNothing() }
    func testStatementsSentLaterAreAllOrNothing() throws { try suite.statementsSentLaterAreAllOrNothing() }
    func testAStatementThatFailsToPrepareFailsAloneEachTime() throws { try suite.aStatementThatFailsToPrepareFailsAloneEachTime() }
    func testManyChangesInOneTransactionAreNumberedInOrder() throws { try suite.manyChangesInOneTransactionAreNumberedInOrder() }
    func testChangeForOtherRunsIsWrittenOnlyWhenAnotherRunWatches() throws { try suite.changeForOtherRunsIsWrittenOnlyWhenAnotherRunWatches() }
    func testChangedRowsCountsTheLastStatement() throws { try suite.changedRowsCountsTheLastStatement() }
    func testUnwatchedTopicIsNotWritten() throws { try suite.unwatchedTopicIsNotWritten() }
    func testRollbackLeavesNoGapThatBlocksReaders() throws { try suite.rollbackLeavesNoGapThatBlocksReaders() }
    func testChangesAreOldestFirstAndLimited() throws { try suite.changesAreOldestFirstAndLimited() }
    func testCommitHookRunsOncePerTransactionThatRecordedChanges() throws { try suite.commitHookRunsOncePerTransactionThatRecordedChanges() }
    func testAfterCommitRunsOnlyAfterACommit() throws { try suite.afterCommitRunsOnlyAfterACommit() }
    func testStoreUsedFromItsOwnTransactionFailsInsteadOfDeadlocking() throws { try suite.storeUsedFromItsOwnTransactionFailsInsteadOfDeadlocking() }
    func testStoresBesideEachOtherDoNotSeeEachOther() throws { try suite.storesBesideEachOtherDoNotSeeEachOther() }
    func testFeedNeverSkipsACommittedEntryUnderConcurrentWriters() throws { try suite.feedNeverSkipsACommittedEntryUnderConcurrentWriters() }
    func testReadSeesOneSnapshot() throws { try suite.readSeesOneSnapshot() }
    func testWritersInSeveralProcessesAreSerialised() throws { try suite.writersInSeveralProcessesAreSerialised() }
}
