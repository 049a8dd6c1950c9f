import COutliveSystem
import Foundation
import XCTest
@testable import OutliveCore

/// Checkpoints paced by the log's growth (SQLiteConnection.paceCheckpoints):
/// a lone writer's log starts over as with SQLite's own pacing, and while a
/// reader keeps it from starting over, a checkpoint runs once per step of
/// growth instead of after every commit.
final class CheckpointPacingTests: XCTestCase {
    var directory = ""
    var backend: SQLiteBackend!

    override func setUpWithError() throws {
        var template = Array("/tmp/outlive-checkpoint-XXXXXX".utf8CString)
        directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        backend = try SQLiteBackend(path: directory + "/store.db", durability: .normal, busyTimeoutMilliseconds: 30_000)
        let table = SchemaComponent(name: "rows", migrations: ["CREATE TABLE rows(n INTEGER PRIMARY KEY, b BLOB NOT NULL)"])
        try Schema.migrate(backend, components: [Schema.store, table])
    }

    override func tearDown() {
        backend = nil
        _ = directory.withCString { path in system("rm -rf '\(String(cString: path))'") }
    }

    /// Commits `count` rows, one transaction each: about one frame a commit
    /// (the table's last page; a new page every thirty-odd rows).
    func commitRows(_ count: Int, from first: Int) throws {
        let bytes = [UInt8](repeating: 7, count: 100)
        for n in first..<(first + count) {
            try backend.write { try $0.execute("INSERT INTO rows(n, b) VALUES (?, ?)", [.integer(Int64(n)), .blob(bytes)]) }
        }
    }

    /// The log header's checkpoint sequence number, which SQLite raises each
    /// time the log starts over (the WAL file format, offset 12, big-endian).
    func logRestarts() throws -> UInt32 {
        let header = try XCTUnwrap(FileManager.default.contents(atPath: directory + "/store.db-wal"))
        XCTAssertGreaterThanOrEqual(header.count, 32)
        return header[12..<16].reduce(0) { $0 << 8 | UInt32($1) }
    }

    func rowCount() throws -> Int64 {
        var count: Int64 = -1
        try backend.read { count = try $0.integer("SELECT count(*) FROM rows") ?? -1 }
        return count
    }

    func testALoneWritersLogStartsOverAfterEachCheckpointAsWithSQLitesOwn() throws {
        let restartsBefore = try logRestarts()
        try commitRows(2_600, from: 0)
        // About 2,700 frames: a checkpoint each time the log reached 1,000, and
        // a new start of the log after each (no reader held it).
        XCTAssertGreaterThanOrEqual(backend.checkpointsStarted, 2)
        XCTAssertLessThanOrEqual(backend.checkpointsStarted, 3)
        XCTAssertGreaterThanOrEqual(try logRestarts() - restartsBefore, 2)
        let frameSize = 4_096 + 24
        let logSize = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: directory + "/store.db-wal")[.size] as? Int)
        XCTAssertLessThanOrEqual(logSize, 32 + (Int(SQLiteBackend.checkpointFirst) + 16) * frameSize)
        XCTAssertEqual(try rowCount(), 2_600)
    }

    func testWhileAReaderHoldsTheLogACheckpointRunsPerStepOfGrowthNotPerCommit() throws {
        // A reader of another connection keeps its snapshot: no checkpoint can
        // copy the frames after it, so the log cannot start over.
        var reader: OpaquePointer?
        XCTAssertEqual(sqlite3_open_v2(directory + "/store.db", &reader, SQLITE_OPEN_READONLY, nil), SQLITE_OK)
        defer { sqlite3_close_v2(reader) }
        XCTAssertEqual(sqlite3_exec(reader, "BEGIN; SELECT count(*) FROM rows", nil, nil, nil), SQLITE_OK)
        let restartsBefore = try logRestarts()
        try commitRows(2_300, from: 0)
        // About 2,400 frames. SQLite's own pacing would have checkpointed after
        // each of the ~1,300 commits past 1,000 frames; this one at 1,000 and
        // then once per 256 frames.
        let started = backend.checkpointsStarted
        XCTAssertGreaterThanOrEqual(started, 4)
        XCTAssertLessThanOrEqual(started, 8)
        XCTAssertEqual(try logRestarts(), restartsBefore, "the reader's snapshot kept the log from starting over")

        // Once the reader ends, the next paced checkpoint copies everything and
        // the log starts over.
        XCTAssertEqual(sqlite3_exec(reader, "COMMIT", nil, nil, nil), SQLITE_OK)
        try commitRows(600, from: 2_300)
        XCTAssertGreaterThan(try logRestarts(), restartsBefore)
        XCTAssertEqual(try rowCount(), 2_900)
    }
}
