import COutliveSystem
import XCTest
@testable import OutliveCore

/// One engine under the backend conformance suite: how to open a handle on the
/// test's store and what little differs in the setup (registering a watcher).
/// The tests themselves are in BackendConformance and run unchanged on every
/// engine (SQLiteBackendConformanceTests, PostgreSQLBackendConformanceTests).
protocol ConformanceEngine {
    /// A new handle on the test's store (a connection of its own).
    func open() throws -> StoreBackend
    /// A handle on a second store of the same kind and place (another file
    /// beside it; another schema of the same database).
    func openOther() throws -> StoreBackend
    /// Makes `topic` watched, so that recordChange writes it.
    func watch(_ topic: String, on backend: StoreBackend) throws
    /// Calls `body` with the newest sequence after each commit that recorded changes.
    func onCommit(_ backend: StoreBackend, _ body: @escaping (Int64) -> Void)
    func cleanUp()
    /// The column type of bytes (SQLite BLOB, PostgreSQL bytea): the systems'
    /// table definitions are the one place where the engines' SQL differs.
    var blobType: String { get }
}

struct Rollback: Error {}

/// The shared suite. Each test opens its own handles; no test mocks the store.
struct BackendConformance {
    let engine: ConformanceEngine

    var table: String { "CREATE TABLE IF NOT EXISTS conformance(k TEXT PRIMARY KEY, v BIGINT NOT NULL, b \(engine.blobType), d DOUBLE PRECISION)" }

    func prepared() throws -> StoreBackend {
        let backend = try engine.open()
        try backend.write { try $0.executeScript(self.table) }
        try engine.watch("t", on: backend)
        return backend
    }

    func count(_ backend: StoreBackend) throws -> Int64 {
        try backend.read { try $0.integer("SELECT count(*) FROM conformance") } ?? -1
    }

    func valuesRoundTrip() throws {
        let backend = try prepared()
        let blob: [UInt8] = [0, 1, 0x7f, 0x80, 0xff]
        try backend.write {
            try $0.execute("INSERT INTO conformance(k, v, b, d) VALUES (?, ?, ?, ?)", [.text("é ' ? \""), .integer(Int64.min), .blob(blob), .double(-1.5)])
            try $0.execute("INSERT INTO conformance(k, v, b, d) VALUES (?, ?, ?, ?)", [.text("empty"), .integer(Int64.max), .blob([]), .null])
        }
        var rows: [(String?, Int64, [UInt8]?, Double, Bool)] = []
        try backend.read {
            try $0.query("SELECT k, v, b, d FROM conformance WHERE k <> '?' ORDER BY v") {
                rows.append(($0.text(0), $0.integer(1), $0.blob(2), $0.isNull(3) ? 0 : $0.double(3), $0.isNull(3)))
            }
        }
        XCTAssertEqual(rows.count, 2)
        XCTAssertEqual(rows.first?.0, "é ' ? \"")
        XCTAssertEqual(rows.first?.1, Int64.min)
        XCTAssertEqual(rows.first?.2, blob)
        XCTAssertEqual(rows.first?.3, -1.5)
        XCTAssertEqual(rows.last?.1, Int64.max)
        XCTAssertEqual(rows.last?.2, [])
        XCTAssertEqual(rows.last?.4, true)
    }

    /// Values larger than the connection's buffer for them, and empty ones,
    /// round-trip; a small value after a large one is not the large one's
    /// bytes (the buffer grew, then was given back).
    func largeAndEmptyValuesRoundTrip() throws {
        let backend = try prepared()
        let blob = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let text = String(repeating: "ü", count: 20_000)
        try backend.write {
            try $0.execute("INSERT INTO conformance(k, v, b) VALUES (?, ?, ?)", [.text(text), .integer(1), .blob(blob)])
            try $0.execute("INSERT INTO conformance(k, v, b) VALUES (?, ?, ?)", [.text(""), .integer(2), .blob([])])
        }
        try backend.write { try $0.execute("INSERT INTO conformance(k, v, b) VALUES (?, ?, ?)", [.text("small"), .integer(3), .blob([7])]) }
        var rows: [(String?, [UInt8]?)] = []
        try backend.read { try $0.query("SELECT k, b FROM conformance ORDER BY v") { rows.append(($0.text(0), $0.blob(1))) } }
        XCTAssertEqual(rows.count, 3)
        XCTAssertEqual(rows.first?.0, text)
        XCTAssertEqual(rows.first?.1, blob)
        XCTAssertEqual(rows.dropFirst().first?.0, "")
        XCTAssertEqual(rows.dropFirst().first?.1, [])
        XCTAssertEqual(rows.last?.0, "small")
        XCTAssertEqual(rows.last?.1, [7])
    }

    /// A double is stored as the same 64 bits, whatever its form: a deadline
    /// or a backoff compared later must not have moved by a rounding. (Not
    /// -0.0: SQLite stores an integral REAL as an integer, which has no sign
    /// of zero.)
    func doublesRoundTripBitForBit() throws {
        let backend = try prepared()
        let values: [Double] = [0.1, 5e-324, 2.2250738585072014e-308, .greatestFiniteMagnitude, -.pi, 1_764_425_000.123456,
                                Double(Int64.max), 1.0 / 3.0]
        try backend.write { transaction in
            for (index, value) in values.enumerated() {
                try transaction.execute("INSERT INTO conformance(k, v, d) VALUES (?, ?, ?)", [.text("d\(index)"), .integer(Int64(index)), .double(value)])
            }
        }
        var read: [Double] = []
        try backend.read { try $0.query("SELECT d FROM conformance ORDER BY v") { read.append($0.double(0)) } }
        XCTAssertEqual(read.map(\.bitPattern), values.map(\.bitPattern))
    }

    func writeIsAllOrNothing() throws {
        let backend = try prepared()
        XCTAssertThrowsError(try backend.write { transaction -> Void in
            try transaction.execute("INSERT INTO conformance(k, v) VALUES (?, ?)", [.text("a"), .integer(1)])
            try transaction.recordChange(topic: "t", key: "a")
            throw Rollback()
        })
        XCTAssertEqual(try count(backend), 0)
        XCTAssertEqual(try backend.latestSequence(), 0)
        // A failing statement fails the whole transaction, with the status a constraint gets.
        try backend.write { try $0.execute("INSERT INTO conformance(k, v) VALUES ('b', 1)") }
        XCTAssertThrowsError(try backend.write { transaction -> Void in
            try transaction.execute("INSERT INTO conformance(k, v) VALUES ('c', 1)")
            try transaction.execute("INSERT INTO conformance(k, v) VALUES ('b', 2)")
        }) { XCTAssertEqual(($0 as? OutliveError)?.code, .state, "\($0)") }
        XCTAssertEqual(try count(backend), 1)
        // The handle is usable afterwards.
        try backend.write { try $0.execute("INSERT INTO conformance(k, v) VALUES ('d', 1)") }
        XCTAssertEqual(try count(backend), 2)
    }

    /// A statement sent later (PostgreSQL: with the commit) fails the whole
    /// transaction as one run at once does, with the same status, and a body
    /// that throws after it leaves nothing behind.
    func statementsSentLaterAreAllOrNothing() throws {
        let backend = try prepared()
        try backend.write { try $0.execute("INSERT INTO conformance(k, v) VALUES ('b', 1)") }
        XCTAssertThrowsError(try backend.write { transaction -> Void in
            try transaction.executeLater("INSERT INTO conformance(k, v) VALUES (?, 1)", [.text("c")])
            try transaction.executeLater("INSERT INTO conformance(k, v) VALUES (?, 2)", [.text("b")])
            try transaction.recordChange(topic: "t", key: "c")
        }) { XCTAssertEqual(($0 as? OutliveError)?.code, .state, "\($0)") }
        XCTAssertThrowsError(try backend.write { transaction -> Void in
            try transaction.executeLater("INSERT INTO conformance(k, v) VALUES (?, 1)", [.text("d")])
            throw Rollback()
        })
        XCTAssertEqual(try count(backend), 1)
        XCTAssertEqual(try backend.latestSequence(), 0)
        // A failing statement sent later, then one run at once: the first failure is thrown.
        XCTAssertThrowsError(try backend.write { transaction -> Void in
            try transaction.executeLater("INSERT INTO conformance(k, v) VALUES (?, 2)", [.text("b")])
            _ = try transaction.integer("SELECT count(*) FROM conformance")
        }) { XCTAssertEqual(($0 as? OutliveError)?.code, .state, "\($0)") }
        let changed = try backend.write { transaction -> Int64? in
            try transaction.executeLater("INSERT INTO conformance(k, v) VALUES (?, 1)", [.text("e")])
            try transaction.recordChange(topic: "t", key: "e")
            return try transaction.integer("SELECT count(*) FROM conformance")
        }
        XCTAssertEqual(changed, 2)
        XCTAssertEqual(try backend.changes(after: 0, limit: 10).changes.map(\.key), ["e"])
    }

    /// A statement that cannot be prepared fails each time with its own
    /// error, and the handle goes on (PostgreSQL prepares statements once per
    /// connection: a failed preparation must not be remembered as done).
    func aStatementThatFailsToPrepareFailsAloneEachTime() throws {
        let backend = try prepared()
        for _ in 0..<2 {
            XCTAssertThrowsError(try backend.write { try $0.execute("INSERT INTO no_such_table(k) VALUES (?)", [.text("x")]) }) {
                XCTAssertTrue(String(describing: $0).contains("no_such_table"), "\($0)")
            }
        }
        try backend.write { try $0.executeScript("CREATE TABLE no_such_table(k TEXT)") }
        try backend.write { try $0.execute("INSERT INTO no_such_table(k) VALUES (?)", [.text("x")]) }
        XCTAssertEqual(try backend.read { try $0.integer("SELECT count(*) FROM no_such_table") }, 1)
    }

    /// More changes than one feed statement takes (PostgreSQL: 100) in one
    /// transaction: numbered in order, no gap, the commit hook told the newest.
    func manyChangesInOneTransactionAreNumberedInOrder() throws {
        let backend = try prepared()
        var rung: [Int64] = []
        engine.onCommit(backend) { rung.append($0) }
        try backend.write { try $0.recordChange(topic: "t", key: "before") }
        try backend.write { transaction in
            for index in 0..<250 {
                try transaction.recordChange(topic: index % 7 == 3 ? "nobody" : "t", key: "k\(index)")
            }
        }
        let written = (0..<250).filter { $0 % 7 != 3 }.map { "k\($0)" }
        let changes = try backend.changes(after: 1, limit: 1000).changes
        XCTAssertEqual(changes.map(\.key), written)
        XCTAssertEqual(changes.map(\.sequence), Array(2...Int64(written.count + 1)))
        XCTAssertEqual(rung, [1, Int64(written.count + 1)])
    }

    /// An entry recorded for the others is written only when a run other
    /// than the one named watches its topic, alone or among other entries.
    func changeForOtherRunsIsWrittenOnlyWhenAnotherRunWatches() throws {
        let backend = try prepared()
        guard let watcher = try backend.read({ transaction -> String? in
            var run: String?
            try transaction.query("SELECT run_id FROM outlive_watchers WHERE topic = 't'") { run = $0.text(0) }
            return run
        }) else { return XCTFail("the watch registered no run") }
        try backend.write { try $0.recordChange(topic: "t", key: "self", watchedByOtherThan: watcher) }
        XCTAssertEqual(try backend.latestSequence(), 0)
        try backend.write { transaction in
            try transaction.recordChange(topic: "t", key: "a", watchedByOtherThan: watcher)
            try transaction.recordChange(topic: "t", key: "b", watchedByOtherThan: "another run")
            try transaction.recordChange(topic: "t", key: "c")
        }
        try backend.write { try $0.recordChange(topic: "t", key: "d", watchedByOtherThan: "another run") }
        XCTAssertEqual(try backend.changes(after: 0, limit: 10).changes.map(\.key), ["b", "c", "d"])
    }

    func changedRowsCountsTheLastStatement() throws {
        let backend = try prepared()
        let changed = try backend.write { transaction -> Int in
            for key in ["a", "b", "c"] { try transaction.execute("INSERT INTO conformance(k, v) VALUES (?, 1)", [.text(key)]) }
            try transaction.execute("UPDATE conformance SET v = 2 WHERE k <> ?", [.text("a")])
            return transaction.changedRows
        }
        XCTAssertEqual(changed, 2)
    }

    func unwatchedTopicIsNotWritten() throws {
        let backend = try prepared()
        try backend.write { try $0.recordChange(topic: "nobody", key: "x") }
        XCTAssertEqual(try backend.latestSequence(), 0)
        try backend.write { try $0.recordChange(topic: "t", key: "y") }
        XCTAssertEqual(try backend.changes(after: 0, limit: 10).changes, [Change(sequence: 1, topic: "t", key: "y")])
    }

    func rollbackLeavesNoGapThatBlocksReaders() throws {
        let backend = try prepared()
        try backend.write { try $0.recordChange(topic: "t", key: "first") }
        XCTAssertThrowsError(try backend.write { transaction -> Void in
            try transaction.recordChange(topic: "t", key: "lost")
            throw Rollback()
        })
        try backend.write { try $0.recordChange(topic: "t", key: "second") }
        let (changes, oldest) = try backend.changes(after: 1, limit: 10)
        XCTAssertEqual(changes.map(\.key), ["second"])
        // Nothing reads as pruned: a reader at 1 is told no resync.
        XCTAssertLessThanOrEqual(oldest ?? 0, 2)
        XCTAssertEqual(try backend.changes(after: 0, limit: 10).changes.map(\.key), ["first", "second"])
    }

    /// A reader told what pruning took from after its cursor, and nothing when
    /// nothing follows the cursor: no look at the oldest entry then (a
    /// dispatch woken by its own handle's changes reads no entry).
    func prunedEntriesAfterTheCursorReadAsPrunedAndNothingNewAsNothing() throws {
        let backend = try prepared()
        try backend.write { transaction in
            for index in 0..<5 { try transaction.recordChange(topic: "t", key: "k\(index)") }
        }
        let newest = try backend.latestSequence()
        let none = try backend.changes(after: newest, limit: 10)
        XCTAssertEqual(none.changes, [])
        XCTAssertNil(none.oldestKept)
        // The three oldest pruned, as the backends prune: the newest stay.
        try backend.write { try $0.execute("DELETE FROM outlive_feed WHERE seq <= ?", [.integer(newest - 2)]) }
        let behind = try backend.changes(after: newest - 4, limit: 10)
        XCTAssertEqual(behind.changes.map(\.key), ["k3", "k4"])
        XCTAssertEqual(behind.oldestKept, newest - 1, "a reader behind the pruning is told the oldest kept (it resyncs)")
        let caughtUp = try backend.changes(after: newest - 2, limit: 10)
        XCTAssertEqual(caughtUp.changes.map(\.key), ["k3", "k4"])
        XCTAssertEqual(caughtUp.oldestKept, newest - 1)
        XCTAssertNil(try backend.changes(after: newest, limit: 10).oldestKept)
    }

    func changesAreOldestFirstAndLimited() throws {
        let backend = try prepared()
        try backend.write { transaction in
            for index in 0..<5 { try transaction.recordChange(topic: "t", key: "k\(index)") }
        }
        let first = try backend.changes(after: 0, limit: 3).changes
        XCTAssertEqual(first.map(\.key), ["k0", "k1", "k2"])
        let rest = try backend.changes(after: first.last!.sequence, limit: 3).changes
        XCTAssertEqual(rest.map(\.key), ["k3", "k4"])
        XCTAssertEqual(try backend.latestSequence(), rest.last!.sequence)
    }

    func commitHookRunsOncePerTransactionThatRecordedChanges() throws {
        let backend = try prepared()
        var rung: [Int64] = []
        engine.onCommit(backend) { rung.append($0) }
        try backend.write { transaction in
            for key in ["a", "b", "c"] { try transaction.recordChange(topic: "t", key: key) }
        }
        XCTAssertThrowsError(try backend.write { transaction -> Void in
            try transaction.recordChange(topic: "t", key: "d")
            throw Rollback()
        })
        try backend.write { try $0.execute("INSERT INTO conformance(k, v) VALUES ('quiet', 1)") }
        try backend.write { try $0.recordChange(topic: "t", key: "e") }
        XCTAssertEqual(rung, [3, 4])
    }

    func afterCommitRunsOnlyAfterACommit() throws {
        let backend = try prepared()
        var ran: [String] = []
        try backend.write { $0.afterCommit { ran.append("committed") } }
        XCTAssertThrowsError(try backend.write { transaction -> Void in
            transaction.afterCommit { ran.append("rolled back") }
            throw Rollback()
        })
        XCTAssertEqual(ran, ["committed"])
    }

    func storeUsedFromItsOwnTransactionFailsInsteadOfDeadlocking() throws {
        let backend = try prepared()
        try backend.write { _ in
            XCTAssertThrowsError(try backend.read { _ in }) { XCTAssertEqual(($0 as? OutliveError)?.code, .state) }
        }
    }

    func storesBesideEachOtherDoNotSeeEachOther() throws {
        let backend = try prepared()
        let other = try engine.openOther()
        try other.write { try $0.executeScript(self.table) }
        try backend.write { try $0.execute("INSERT INTO conformance(k, v) VALUES ('mine', 1)") }
        XCTAssertEqual(try count(backend), 1)
        XCTAssertEqual(try count(other), 0)
    }

    /// A read transaction sees one snapshot: a commit by another handle in the
    /// middle of it is not seen until the next transaction.
    func readSeesOneSnapshot() throws {
        let backend = try prepared()
        let other = try engine.open()
        let (before, during) = try backend.read { transaction -> (Int64?, Int64?) in
            let before = try transaction.integer("SELECT count(*) FROM conformance")
            try other.write { try $0.execute("INSERT INTO conformance(k, v) VALUES ('new', 1)") }
            return (before, try transaction.integer("SELECT count(*) FROM conformance"))
        }
        XCTAssertEqual(before, 0)
        XCTAssertEqual(during, 0)
        XCTAssertEqual(try count(backend), 1)
    }

    /// Read-modify-write in write transactions of several processes loses no
    /// update: writers are serialised, as StoreBackend promises and the systems
    /// rely on (they read, then write, without SELECT … FOR UPDATE).
    func writersInSeveralProcessesAreSerialised() throws {
        let backend = try prepared()
        try backend.write { try $0.execute("INSERT INTO conformance(k, v) VALUES ('counter', 0)") }
        let writers = 4, increments = 100
        var children: [pid_t] = []
        for _ in 0..<writers {
            let child = fork()
            if child == 0 {
                do {
                    let mine = try engine.open()
                    for _ in 0..<increments {
                        try mine.write { transaction in
                            let value = try transaction.integer("SELECT v FROM conformance WHERE k = 'counter'") ?? -1
                            try transaction.execute("UPDATE conformance SET v = ? WHERE k = 'counter'", [.integer(value + 1)])
                        }
                    }
                } catch {
                    fputs("incrementer: \(error)\n", stderr)
                    _exit(1)
                }
                _exit(0)
            }
            children.append(child)
        }
        for child in children {
            var status: Int32 = 0
            waitpid(child, &status, 0)
            XCTAssertEqual(status, 0)
        }
        XCTAssertEqual(try backend.read { try $0.integer("SELECT v FROM conformance WHERE k = 'counter'") }, Int64(writers * increments))
    }

    /// Writers in several processes commit feed entries (some transactions
    /// rolled back) while this process reads the feed from its cursor: every
    /// committed entry is read exactly once, in sequence order.
    func feedNeverSkipsACommittedEntryUnderConcurrentWriters() throws {
        let backend = try prepared()
        let writers = 4, transactions = 120
        var children: [pid_t] = []
        for writer in 0..<writers {
            let child = fork()
            if child == 0 {
                var code: Int32 = 0
                do {
                    let mine = try engine.open()
                    for index in 0..<transactions {
                        do {
                            try mine.write { transaction in
                                try transaction.execute("INSERT INTO conformance(k, v) VALUES (?, ?)", [.text("\(writer)-\(index)"), .integer(Int64(index))])
                                try transaction.recordChange(topic: "t", key: "\(writer)-\(index)")
                                if index % 3 == 0 { try transaction.recordChange(topic: "t", key: "\(writer)-\(index)-again") }
                                if index % 7 == 0 { throw Rollback() }
                            }
                        } catch is Rollback {}
                    }
                } catch {
                    fputs("writer \(writer): \(error)\n", stderr)
                    code = 1
                }
                _exit(code)
            }
            XCTAssertGreaterThan(child, 0)
            children.append(child)
        }
        var read: [Change] = []
        var cursor: Int64 = 0
        var running = Set(children)
        var failures = 0
        while true {
            let (changes, oldest) = try backend.changes(after: cursor, limit: 50)
            if let oldest { XCTAssertLessThanOrEqual(oldest, cursor + 1, "entries read as pruned") }
            read += changes
            cursor = changes.last?.sequence ?? cursor
            if !changes.isEmpty { continue }
            if running.isEmpty { break }
            for child in running {
                var status: Int32 = 0
                if waitpid(child, &status, WNOHANG) == child {
                    running.remove(child)
                    if status != 0 { failures += 1 }
                }
            }
            usleep(2_000)
        }
        XCTAssertEqual(failures, 0, "a writer process failed")
        var expected: Set<String> = []
        for writer in 0..<writers {
            for index in 0..<transactions where index % 7 != 0 {
                expected.insert("\(writer)-\(index)")
                if index % 3 == 0 { expected.insert("\(writer)-\(index)-again") }
            }
        }
        XCTAssertEqual(read.count, expected.count, "entries read once each")
        let keys = Set(read.map(\.key))
        XCTAssertEqual(expected.subtracting(keys).sorted().prefix(10), [], "committed entries the reader skipped")
        XCTAssertEqual(keys.subtracting(expected).sorted().prefix(10), [], "entries of rolled-back transactions")
        XCTAssertEqual(read.map(\.sequence), read.map(\.sequence).sorted())
        // The feed as stored now holds exactly what the cursor read on the way.
        XCTAssertEqual(try backend.changes(after: 0, limit: 10_000).changes, read)
    }
}
