import COutliveSystem
import XCTest
@testable import OutliveCore

/// What only the PostgreSQL backend has: its doorbell (NOTIFY), its schema per
/// store and migrations, libpq loaded at run time, and hostile input.
final class PostgreSQLBackendTests: XCTestCase {
    var uri = ""
    var stores: [String] = []

    override func setUpWithError() throws {
        uri = try TestServer.uri()
    }

    override func tearDown() {
        for store in stores { try? PostgreSQLBackend(conninfo: uri, store: store).dropStore() }
    }

    func newStore(_ prefix: String = "backend") -> String {
        let name = TestServer.storeName(prefix)
        stores.append(name)
        return name
    }

    func testAtMostOneNotifyPerWriteTransaction() throws {
        let backend = try PostgreSQLBackend(conninfo: uri, store: newStore())
        try backend.write {
            try $0.execute("INSERT INTO outlive_runs(run_id, process, pid, started, lock_key) VALUES ('r', 'test', 0, 0, 0)")
            try $0.execute("INSERT INTO outlive_watchers(topic, run_id) VALUES ('t', 'r')")
        }
        let listener = try PostgreSQLConnection(conninfo: uri)
        try listener.exec("LISTEN \(backend.channel)")
        try backend.write { transaction in
            for key in ["a", "b", "c"] { try transaction.recordChange(topic: "t", key: key) }
        }
        XCTAssertThrowsError(try backend.write { transaction -> Void in
            try transaction.recordChange(topic: "t", key: "d")
            throw Rollback()
        })
        try backend.write { try $0.execute("UPDATE outlive_runs SET pid = 1") }
        try backend.write { try $0.recordChange(topic: "t", key: "e") }
        // The NOTIFY follows a commit in a transaction of its own, sent
        // without waiting: the connection's next use reads its reply.
        _ = try backend.latestSequence()
        // Notifications arrive in commit order: a marker sent last closes the count.
        let marker = try PostgreSQLConnection(conninfo: uri)
        try marker.exec("NOTIFY \(backend.channel), 'end'")
        var payloads: [String] = []
        let deadline = Clock.monotonic() + 10
        while payloads.last != "end" && Clock.monotonic() < deadline {
            var descriptor = pollfd(fd: listener.socket, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 100)
            for notification in listener.drainNotifications() ?? [] where notification.channel == backend.channel {
                payloads.append(notification.payload)
            }
        }
        XCTAssertEqual(payloads, ["3", "4", "end"])
    }

    /// The feed is pruned after the commit whose entry reaches a multiple of
    /// `pruneEvery`: entries older than `feedRetention` go, the newer stay.
    func testFeedIsPrunedWhenAnEntryReachesAMultipleOfPruneEvery() throws {
        let backend = try PostgreSQLBackend(conninfo: uri, store: newStore())
        let due = PostgreSQLBackend.pruneEvery * (PostgreSQLBackend.feedRetention / PostgreSQLBackend.pruneEvery + 2)
        try backend.write {
            try $0.execute("INSERT INTO outlive_runs(run_id, process, pid, started, lock_key) VALUES ('r', 'test', 0, 0, 0)")
            try $0.execute("INSERT INTO outlive_watchers(topic, run_id) VALUES ('t', 'r')")
            try $0.execute("INSERT INTO outlive_feed(seq, topic, key) SELECT n, 't', 'old' FROM generate_series(1, ?) n", [.integer(due - 2)])
        }
        try backend.write { try $0.recordChange(topic: "t", key: "before") }
        XCTAssertEqual(try backend.read { try $0.integer("SELECT min(seq) FROM outlive_feed") }, 1)
        try backend.write { try $0.recordChange(topic: "t", key: "due") }
        XCTAssertEqual(try backend.latestSequence(), due)
        XCTAssertEqual(try backend.read { try $0.integer("SELECT min(seq) FROM outlive_feed") }, due - PostgreSQLBackend.feedRetention + 1)
    }

    func testDoorbellWakesTheRunLockConnection() throws {
        let backend = try PostgreSQLBackend(conninfo: uri, store: newStore())
        let lock = try PostgreSQLRunLock(conninfo: uri, backend: backend, bound: PostgreSQLLivenessBound())
        try backend.registerRun("r", process: "test", pid: Int64(getpid()), host: "", lockKey: lock.lockKey)
        try backend.write { try $0.execute("INSERT INTO outlive_watchers(topic, run_id) VALUES ('t', 'r')") }
        XCTAssertEqual(lock.poll(), .quiet)
        let writer = try PostgreSQLBackend(conninfo: uri, store: stores.last!)
        try writer.write { try $0.recordChange(topic: "t", key: "k") }
        var event = PostgreSQLRunLock.Event.quiet
        for _ in 0..<100 where event == .quiet {
            var descriptor = pollfd(fd: lock.fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 100)
            event = lock.poll()
        }
        XCTAssertEqual(event, .woken)
        XCTAssertEqual(lock.poll(), .quiet)
    }

    func testSchemaIsNamedAfterTheStoreAndTheConnectionUsesIt() throws {
        let name = newStore()
        let backend = try PostgreSQLBackend(conninfo: uri, store: name)
        XCTAssertEqual(backend.schema, "outlive_" + name)
        var path = ""
        try backend.read { try $0.query("SHOW search_path") { path = $0.text(0) ?? "" } }
        XCTAssertEqual(path, "outlive_" + name)
    }

    func testBadStoreNamesAreRefused() {
        for name in ["", "Upper", "1digit", "semi;colon", "a-b", "quote\"", String(repeating: "a", count: 41)] {
            XCTAssertThrowsError(try PostgreSQLBackend(conninfo: uri, store: name), name) {
                XCTAssertEqual(($0 as? OutliveError)?.code, .invalidArgument)
            }
        }
    }

    func testConcurrentOpenersOfANewStoreMigrateItOnce() throws {
        let name = newStore("migrate")
        var children: [pid_t] = []
        for _ in 0..<3 {
            let child = fork()
            if child == 0 {
                do { _ = try PostgreSQLBackend(conninfo: uri, store: name) } catch {
                    fputs("opener: \(error)\n", stderr)
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
        let backend = try PostgreSQLBackend(conninfo: uri, store: name)
        var versions: [String: Int64] = [:]
        try backend.read { try $0.query("SELECT component, version FROM outlive_schema") { versions[$0.text(0) ?? ""] = $0.integer(1) } }
        XCTAssertEqual(versions, ["format": PostgreSQLSchema.formatVersion, "store": Int64(PostgreSQLSchema.store.migrations.count)])
    }

    func testNewerFormatOrComponentIsRefusedWithVersion() throws {
        let name = newStore()
        let backend = try PostgreSQLBackend(conninfo: uri, store: name)
        try backend.write { try $0.execute("UPDATE outlive_schema SET version = 99 WHERE component = 'store'") }
        XCTAssertThrowsError(try PostgreSQLBackend(conninfo: uri, store: name)) { XCTAssertEqual(($0 as? OutliveError)?.code, .version) }
        try backend.write {
            try $0.execute("UPDATE outlive_schema SET version = 1 WHERE component = 'store'")
            try $0.execute("UPDATE outlive_schema SET version = 2 WHERE component = 'format'")
        }
        XCTAssertThrowsError(try PostgreSQLBackend(conninfo: uri, store: name)) { XCTAssertEqual(($0 as? OutliveError)?.code, .version) }
    }

    func testSchemaWithForeignTablesIsRefusedAndLeftAlone() throws {
        let name = newStore()
        let admin = try PostgreSQLConnection(conninfo: uri)
        try admin.exec("CREATE SCHEMA outlive_\(name); CREATE TABLE outlive_\(name).theirs(x integer)")
        XCTAssertThrowsError(try PostgreSQLBackend(conninfo: uri, store: name)) { XCTAssertEqual(($0 as? OutliveError)?.code, .corrupt) }
        XCTAssertEqual(try admin.integer("SELECT count(*) FROM pg_tables WHERE schemaname = ?", [.text("outlive_" + name)]), 1)
    }

    func testTamperedTablesGiveAStatusNotACrash() throws {
        let name = newStore()
        let backend = try PostgreSQLBackend(conninfo: uri, store: name)
        try backend.write { try $0.executeScript("DROP TABLE outlive_feed") }
        XCTAssertThrowsError(try backend.latestSequence()) { XCTAssertEqual(($0 as? OutliveError)?.code, .io) }
        XCTAssertThrowsError(try backend.write { try $0.recordChange(topic: "t", key: "k") })
    }

    func testUnreachableServerAndMalformedURIsGiveAStatus() {
        let cases: [(String, OutliveError.Code)] = [
            ("postgresql://127.0.0.1:1/nothing?connect_timeout=2", .io),
            // What libpq refuses before it tries is the caller's mistake.
            ("postgresql://[nonsense", .invalidArgument),
            ("postgresql://127.0.0.1/db?unknown_parameter=1", .invalidArgument),
        ]
        for (conninfo, code) in cases {
            XCTAssertThrowsError(try PostgreSQLBackend(conninfo: conninfo, store: "x"), conninfo) {
                XCTAssertEqual(($0 as? OutliveError)?.code, code, "\($0)")
                XCTAssertTrue(($0 as? OutliveError)?.message.contains("cannot connect") ?? false, "\($0)")
            }
        }
        // libpq's parse errors quote the URI or the token: never the password.
        XCTAssertThrowsError(try PostgreSQLBackend(conninfo: "postgresql://u:pa%2Fss-word@[::1/db", store: "x")) {
            let message = ($0 as? OutliveError)?.message ?? ""
            XCTAssertFalse(message.contains("pa%2Fss-word") || message.contains("pa/ss-word"), message)
        }
    }

    func testTextWithANulCharacterIsRefusedAndChangesNothing() throws {
        let backend = try PostgreSQLBackend(conninfo: uri, store: newStore())
        try backend.write { try $0.executeScript("CREATE TABLE t(x text)") }
        XCTAssertThrowsError(try backend.write { try $0.execute("INSERT INTO t VALUES (?)", [.text("a\u{0}b")]) }) {
            XCTAssertEqual(($0 as? OutliveError)?.code, .invalidArgument)
        }
        XCTAssertThrowsError(try backend.write { try $0.execute("INSERT INTO t VALUES (?)", []) }) {
            XCTAssertEqual(($0 as? OutliveError)?.code, .invalidArgument)
        }
        XCTAssertEqual(try backend.read { try $0.integer("SELECT count(*) FROM t") }, 0)
    }

    /// A value larger than PostgreSQL takes (1 GiB, `MaxAllocSize`) is
    /// refused before anything is sent, in our words: sent, it makes the
    /// server close the connection (seen with the check removed), and above
    /// 2 GiB its length does not fit libpq's 32-bit one, whose conversion
    /// trapped before. What the write
    /// sent before it is undone, and the connection serves the next write.
    /// About 1 GiB of memory for a moment.
    func testAValueOverOneGiBIsRefusedAndTheWriteUndone() throws {
        let backend = try PostgreSQLBackend(conninfo: uri, store: newStore())
        try backend.write { try $0.executeScript("CREATE TABLE t(x bytea)") }
        let tooLarge = [UInt8](repeating: 7, count: PostgreSQLParameters.largestValue + 1)
        XCTAssertThrowsError(try backend.write { transaction in
            try transaction.executeLater("INSERT INTO t VALUES (?)", [.blob([1])])
            try transaction.executeLater("INSERT INTO t VALUES (?)", [.blob(tooLarge)])
        }) {
            XCTAssertEqual(($0 as? OutliveError)?.code, .invalidArgument)
            XCTAssertTrue("\($0)".contains("1 GiB"), "\($0)")
        }
        XCTAssertEqual(try backend.read { try $0.integer("SELECT count(*) FROM t") }, 0)
        try backend.write { try $0.executeLater("INSERT INTO t VALUES (?)", [.blob([2])]) }
        XCTAssertEqual(try backend.read { try $0.integer("SELECT count(*) FROM t") }, 1)
    }

    /// A write runs as the pipeline's implicit transaction (no BEGIN sent)
    /// until it reads: a statement that needs a transaction block, sent
    /// without reading, is refused there; sent to be read, it finds the
    /// block begun, with what was sent before it inside.
    func testAWriteBeginsItsTransactionBlockOnlyWhenItReads() throws {
        let backend = try PostgreSQLBackend(conninfo: uri, store: newStore())
        try backend.write { try $0.executeScript("CREATE TABLE t(x text)") }
        XCTAssertThrowsError(try backend.write { try $0.executeLater("SAVEPOINT s", []) }) {
            XCTAssertTrue("\($0)".contains("transaction block"), "\($0)")
        }
        try backend.write { transaction in
            try transaction.executeLater("INSERT INTO t VALUES (?)", [.text("before")])
            try transaction.execute("SAVEPOINT s", [])
            try transaction.executeLater("INSERT INTO t VALUES (?)", [.text("undone")])
            try transaction.execute("ROLLBACK TO SAVEPOINT s", [])
            try transaction.executeLater("INSERT INTO t VALUES (?)", [.text("after")])
        }
        var rows: [String] = []
        try backend.read { try $0.query("SELECT x FROM t ORDER BY x") { rows.append($0.text(0) ?? "") } }
        XCTAssertEqual(rows, ["after", "before"])
    }

    /// What a write sent before it read, and after, is undone as a whole when
    /// its body fails: the read made the implicit transaction an explicit
    /// one, not a commit of what came before it.
    func testAWriteThatFailsAfterItReadUndoesWhatItSentBeforeTheRead() throws {
        let backend = try PostgreSQLBackend(conninfo: uri, store: newStore())
        try backend.write { try $0.executeScript("CREATE TABLE t(x text)") }
        XCTAssertThrowsError(try backend.write { transaction -> Void in
            try transaction.executeLater("INSERT INTO t VALUES (?)", [.text("sent")])
            XCTAssertEqual(try transaction.integer("SELECT count(*) FROM t"), 1)
            try transaction.executeLater("INSERT INTO t VALUES (?)", [.text("sent after")])
            throw Rollback()
        })
        XCTAssertThrowsError(try backend.write { transaction -> Void in
            try transaction.executeLater("INSERT INTO t VALUES (?)", [.text("sent")])
            try transaction.executeScript("INSERT INTO t VALUES ('scripted'); INSERT INTO t VALUES ('scripted too')")
            throw Rollback()
        })
        XCTAssertEqual(try backend.read { try $0.integer("SELECT count(*) FROM t") }, 0)
    }

    /// An implicit transaction commits at its sync point, after its last
    /// statement's reply: a failure there (a deferred foreign key's) fails
    /// the write, which leaves nothing, and the handle goes on.
    func testACommitThatFailsAtItsSyncPointFailsTheWriteAndLeavesNothing() throws {
        let backend = try PostgreSQLBackend(conninfo: uri, store: newStore())
        try backend.write {
            try $0.executeScript("""
                CREATE TABLE parent(id bigint PRIMARY KEY);
                CREATE TABLE child(parent bigint REFERENCES parent DEFERRABLE INITIALLY DEFERRED)
                """)
        }
        XCTAssertThrowsError(try backend.write { try $0.executeLater("INSERT INTO child VALUES (?)", [.integer(7)]) }) {
            XCTAssertEqual(($0 as? OutliveError)?.code, .state, "\($0)")
            XCTAssertTrue("\($0)".contains("foreign key"), "\($0)")
        }
        XCTAssertEqual(try backend.read { try $0.integer("SELECT count(*) FROM child") }, 0)
        try backend.write {
            try $0.executeLater("INSERT INTO parent VALUES (?)", [.integer(7)])
            try $0.executeLater("INSERT INTO child VALUES (?)", [.integer(7)])
        }
        XCTAssertEqual(try backend.read { try $0.integer("SELECT count(*) FROM child") }, 1)
    }

    /// A statement libpq refuses to send (more parameters than its protocol
    /// carries) inside a write that sent others: what was sent is rolled
    /// back, not committed by the sync point that clears the pipeline, and
    /// the handle goes on.
    func testAStatementThatCannotBeSentRollsBackWhatTheWriteSentBeforeIt() throws {
        let backend = try PostgreSQLBackend(conninfo: uri, store: newStore())
        try backend.write { try $0.executeScript("CREATE TABLE t(x text)") }
        let tooMany = 65_536
        let sql = "SELECT " + Array(repeating: "?", count: tooMany).joined(separator: ", ")
        XCTAssertThrowsError(try backend.write { transaction in
            try transaction.executeLater("INSERT INTO t VALUES (?)", [.text("sent first")])
            try transaction.executeLater(sql, Array(repeating: .integer(1), count: tooMany))
        })
        XCTAssertEqual(try backend.read { try $0.integer("SELECT count(*) FROM t") }, 0)
        try backend.write { try $0.executeLater("INSERT INTO t VALUES (?)", [.text("after")]) }
        XCTAssertEqual(try backend.read { try $0.integer("SELECT count(*) FROM t") }, 1)
    }

    /// A change only this handle's run watches is handed over in memory, its
    /// feed entry not written. When the connection dies after the COMMIT was
    /// sent, the commit's outcome is unknown, and so is the change: the
    /// handle's next reading of the feed resyncs instead.
    func testAHandedOverChangeWhoseCommitLostItsConnectionAsksForAResync() throws {
        let backend = try PostgreSQLBackend(conninfo: uri, store: newStore())
        try backend.write {
            try $0.execute("INSERT INTO outlive_runs(run_id, process, pid, started, lock_key) VALUES ('r', 'test', 0, 0, 0)")
            try $0.execute("INSERT INTO outlive_watchers(topic, run_id) VALUES ('t', 'r')")
        }
        backend.setOwnRun("r")
        backend.noteOwnWatch(topic: "t")
        let bump = "UPDATE outlive_runs SET pid = pid + 1 WHERE run_id = 'r'"
        try backend.write { try $0.executeLater(bump, [], recordingChangeOf: "t", key: "a") }
        let handed = backend.ownChanges.take()
        XCTAssertEqual(handed.changes.map(\.key), ["a"])
        XCTAssertFalse(handed.overflowed)
        XCTAssertEqual(try backend.latestSequence(), 0, "no entry for a change only this run watches")
        // The server process ends itself at the COMMIT (a deferred trigger),
        // as a restart or a cut would after the COMMIT went out.
        try backend.write {
            try $0.execute("""
                CREATE FUNCTION die() RETURNS trigger LANGUAGE plpgsql AS
                $$ BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NULL; END $$
                """)
            try $0.execute("""
                CREATE CONSTRAINT TRIGGER die AFTER UPDATE ON outlive_runs
                DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION die()
                """)
        }
        XCTAssertThrowsError(try backend.write { try $0.executeLater(bump, [], recordingChangeOf: "t", key: "b") })
        XCTAssertTrue(backend.ownChanges.take().overflowed)
    }

    /// A writer that read the watchers when nobody watched topic "t" (its
    /// first change of "t"), and a run "r" that watches "t" since, added
    /// through another handle; run "r"'s row is the one the tests update.
    private func writerThatLookedBeforeAWatcherCame() throws -> PostgreSQLBackend {
        let store = newStore()
        let writer = try PostgreSQLBackend(conninfo: uri, store: store)
        let other = try PostgreSQLBackend(conninfo: uri, store: store)
        try writer.write { try $0.execute("INSERT INTO outlive_runs(run_id, process, pid, started, lock_key) VALUES ('r', 'test', 0, 0, 0)") }
        try writer.write { try $0.recordChange(topic: "t", key: "learns") }
        try writer.write { try $0.recordChange(topic: "t", key: "skipped") }
        XCTAssertEqual(try writer.latestSequence(), 0, "nobody watches: no entry")
        try other.write { try $0.execute("INSERT INTO outlive_watchers(topic, run_id) VALUES ('t', 'r')") }
        return writer
    }

    private func feedKeys(_ backend: PostgreSQLBackend) throws -> [String] {
        try backend.read { transaction -> [String] in
            var keys: [String] = []
            try transaction.query("SELECT key FROM outlive_feed ORDER BY seq", []) { keys.append($0.text(0) ?? "") }
            return keys
        }
    }

    private func bumps(_ backend: PostgreSQLBackend) throws -> Int64? {
        try backend.read { try $0.integer("SELECT pid FROM outlive_runs WHERE run_id = 'r'") }
    }

    /// A handle that read that no other run watches a topic sends no feed
    /// statement for it, only the check of the watchers' count. A watcher
    /// that came since fails the check: the blind transaction goes again with
    /// its feed statement, its body not run again, its commit actions run once.
    func testABlindWriteIsSentAgainWithItsEntryWhenAWatcherCameSinceTheHandleLooked() throws {
        let writer = try writerThatLookedBeforeAWatcherCame()
        var bodies = 0, actions = 0
        try writer.write { transaction in
            bodies += 1
            try transaction.executeLater("UPDATE outlive_runs SET pid = pid + 1 WHERE run_id = 'r'", [])
            try transaction.recordChange(topic: "t", key: "reaches r")
            transaction.afterCommit { actions += 1 }
        }
        XCTAssertEqual(bodies, 1)
        XCTAssertEqual(actions, 1)
        XCTAssertEqual(try bumps(writer), 1, "sent again once")
        XCTAssertEqual(try feedKeys(writer), ["reaches r"])
    }

    /// A statement sent without its entry (no other run watched its topic
    /// when the handle looked), then a read in the same transaction: the
    /// transaction is no longer one that can be sent again, so its change
    /// goes to the feed statements, which find the watcher that came since.
    func testAChangeSentWithoutItsEntryBeforeAReadIsWrittenForAWatcherThatCame() throws {
        let writer = try writerThatLookedBeforeAWatcherCame()
        let bump = "UPDATE outlive_runs SET pid = pid + 1 WHERE run_id = ?"
        try writer.write { transaction in
            try transaction.executeLater(bump, [.text("r")], recordingChangeOf: "t", key: "changed")
            try transaction.executeLater(bump, [.text("nobody")], recordingChangeOf: "t", key: "unchanged")
            XCTAssertEqual(try transaction.integer("SELECT pid FROM outlive_runs WHERE run_id = 'r'"), 1)
        }
        XCTAssertEqual(try feedKeys(writer), ["changed"])
    }

    /// A topic the handle knew as watched by another run, whose watcher went:
    /// the next write's feed statement writes no entry, the handle drops
    /// what it knew, and the write after reads the watchers again, then
    /// leaves the topic's feed statements out.
    func testAWriterReadsTheWatchersAgainOnceAKnownWatcherWent() throws {
        let store = newStore()
        let writer = try PostgreSQLBackend(conninfo: uri, store: store)
        let other = try PostgreSQLBackend(conninfo: uri, store: store)
        try other.write {
            try $0.execute("INSERT INTO outlive_runs(run_id, process, pid, started, lock_key) VALUES ('r', 'test', 0, 0, 0)")
            try $0.execute("INSERT INTO outlive_watchers(topic, run_id) VALUES ('t', 'r')")
        }
        try writer.write { try $0.recordChange(topic: "t", key: "watched") }
        XCTAssertEqual(writer.watchKnowledge?.watchedByOthers, ["t"])
        try other.write { try $0.execute("DELETE FROM outlive_watchers WHERE run_id = 'r'") }
        try writer.write { try $0.recordChange(topic: "t", key: "nobody any more") }
        XCTAssertNil(writer.watchKnowledge, "no entry written for a topic known as watched: dropped")
        try writer.write { try $0.recordChange(topic: "t", key: "reads again") }
        XCTAssertEqual(writer.watchKnowledge?.watchedByOthers, [])
        XCTAssertEqual(try feedKeys(writer), ["watched"])
    }

    /// A blind transaction of more statements than are kept to be sent
    /// again (a batch) reads what it sent so far and goes with its feed
    /// statements: every change is written for a watcher that came since.
    func testABatchPastTheKeptStatementsIsWrittenForAWatcherThatCame() throws {
        let writer = try writerThatLookedBeforeAWatcherCame()
        let count = 2 * 16 + 3
        var bodies = 0
        try writer.write { transaction in
            bodies += 1
            for n in 0..<count {
                try transaction.executeLater("UPDATE outlive_runs SET pid = pid + 1 WHERE run_id = 'r'", [], recordingChangeOf: "t", key: "post \(n)")
                try transaction.recordChange(topic: "t", key: "set \(n)")
            }
        }
        XCTAssertEqual(bodies, 1)
        XCTAssertEqual(try bumps(writer), Int64(count))
        XCTAssertEqual(Set(try feedKeys(writer)), Set((0..<count).flatMap { ["post \($0)", "set \($0)"] }))
    }

    func testHandleCarriesOnAfterItsConnectionWasEnded() throws {
        let backend = try PostgreSQLBackend(conninfo: uri, store: newStore())
        var pid: Int64 = 0
        try backend.read { pid = try $0.integer("SELECT pg_backend_pid()") ?? 0 }
        let admin = try PostgreSQLConnection(conninfo: uri)
        try admin.run("SELECT pg_terminate_backend(?::integer)", [.integer(pid)])
        // The transaction that meets the dead connection fails; the next one reconnects.
        var attempts = 0
        var sequence: Int64?
        while sequence == nil && attempts < 5 {
            attempts += 1
            sequence = try? backend.latestSequence()
        }
        XCTAssertEqual(sequence, 0)
        var newPID: Int64 = 0
        try backend.read { newPID = try $0.integer("SELECT pg_backend_pid()") ?? 0 }
        XCTAssertNotEqual(newPID, pid)
    }
}

/// Without a PostgreSQL server.
final class PostgreSQLLibraryTests: XCTestCase {
    func testMissingLibpqFailsWithAStatusNamingThePackage() {
        XCTAssertThrowsError(try PostgreSQLLibrary.load(path: "/nonexistent/libpq.so.5")) {
            let error = $0 as? OutliveError
            XCTAssertEqual(error?.code, .io)
            XCTAssertTrue(error?.message.contains("libpq5") ?? false, "\($0)")
            XCTAssertTrue(error?.message.contains("/nonexistent/libpq.so.5") ?? false, "\($0)")
        }
    }

    func testLibraryWithoutLibpqsFunctionsIsRefused() {
        // libc is a shared library, but not libpq.
        XCTAssertThrowsError(try PostgreSQLLibrary.load(path: "libc.so.6")) {
            XCTAssertEqual(($0 as? OutliveError)?.code, .io)
            XCTAssertTrue(($0 as? OutliveError)?.message.contains("lacks the function PQconnectdbParams") ?? false, "\($0)")
        }
    }

    func testPlaceholdersAreNumberedOutsideLiteralsAndComments() {
        let cases: [(String, String, Int)] = [
            ("SELECT ?", "SELECT $1", 1),
            ("INSERT INTO t VALUES (?, ?, ?)", "INSERT INTO t VALUES ($1, $2, $3)", 3),
            ("SELECT '?', \"?\", ? -- ?\n, ?", "SELECT '?', \"?\", $1 -- ?\n, $2", 2),
            ("SELECT 'it''s ?', ?", "SELECT 'it''s ?', $1", 1),
            ("SELECT /* ? */ ?", "SELECT /* ? */ $1", 1),
            ("SELECT $$ ? $$, $tag$ ? $tag$, ?", "SELECT $$ ? $$, $tag$ ? $tag$, $1", 1),
            ("SELECT $1", "SELECT $1", 0),
            ("SELECT 'unterminated ?", "SELECT 'unterminated ?", 0),
            ("SELECT 'é', ?", "SELECT 'é', $1", 1),
        ]
        for (sql, expected, count) in cases {
            let translated = PostgreSQLPlaceholders.translate(sql)
            XCTAssertEqual(translated.sql, expected, sql)
            XCTAssertEqual(translated.count, count, sql)
        }
    }
}

/// The test-only OUTLIVE_TEST_LIBPQ, in a process of its own: libpq is loaded
/// once per process, so this test runs itself again in a fresh test process
/// whose environment names a library that does not exist.
final class PostgreSQLLibraryEnvironmentTests: XCTestCase {
    static let missing = "/nonexistent/outlive-test/libpq.so.5"

    func testEnvironmentNamedLibraryThatIsMissingFailsOpening() throws {
        if let named = getenv("OUTLIVE_TEST_LIBPQ").map({ String(cString: $0) }) {
            // The fresh process: nothing loaded libpq here before.
            XCTAssertEqual(named, PostgreSQLLibraryEnvironmentTests.missing)
            XCTAssertThrowsError(try PostgreSQLConnection(conninfo: "postgresql://127.0.0.1:1/x")) {
                XCTAssertEqual(($0 as? OutliveError)?.code, .io)
                XCTAssertTrue(($0 as? OutliveError)?.message.contains("libpq5") ?? false, "\($0)")
                XCTAssertTrue(($0 as? OutliveError)?.message.contains(PostgreSQLLibraryEnvironmentTests.missing) ?? false, "\($0)")
            }
            XCTAssertEqual(COutlive_pq_loaded(), 0)
            return
        }
        let binary = CommandLine.arguments[0]
        guard binary.hasSuffix(".xctest") else {
            throw XCTSkip("the test binary \(binary) cannot be run again with one test selected")
        }
        let selector = "OutliveCoreTests.PostgreSQLLibraryEnvironmentTests/testEnvironmentNamedLibraryThatIsMissingFailsOpening"
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let child = fork()
        if child == 0 {
            dup2(fds[1], 1)
            dup2(fds[1], 2)
            close(fds[0])
            setenv("OUTLIVE_TEST_LIBPQ", PostgreSQLLibraryEnvironmentTests.missing, 1)
            execv(binary, [strdup(binary), strdup(selector), nil])
            _exit(127)
        }
        close(fds[1])
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fds[0], &buffer, buffer.count)
            if count <= 0 { break }
            output += buffer[0..<count]
        }
        close(fds[0])
        var status: Int32 = 0
        waitpid(child, &status, 0)
        let text = String(decoding: output, as: UTF8.self)
        XCTAssertEqual(status, 0, text)
        XCTAssertTrue(text.contains("Executed 1 test, with 0 failures"), text)
    }
}

extension PostgreSQLBackendTests {
    func testWrongPasswordIsAPermissionErrorThatNeverShowsThePassword() throws {
        // scripts/pg_cluster.py makes outlive_password authenticate with a password.
        let admin = try PostgreSQLConnection(conninfo: uri)
        try admin.exec("DROP ROLE IF EXISTS outlive_password; CREATE ROLE outlive_password LOGIN PASSWORD 'right-secret'")
        defer { try? admin.exec("DROP ROLE IF EXISTS outlive_password") }
        let wrong = uri.replacingOccurrences(of: "postgres@", with: "outlive_password:wrong-secret@")
        XCTAssertThrowsError(try PostgreSQLBackend(conninfo: wrong, store: newStore())) {
            let error = $0 as? OutliveError
            XCTAssertEqual(error?.code, .permission, "\($0)")
            XCTAssertTrue(error?.message.contains("password authentication failed") ?? false, "\($0)")
            XCTAssertFalse(error?.message.contains("wrong-secret") ?? true, "\($0)")
        }
        // The right password gets in; the role may not create a schema in the
        // database (PostgreSQL 15 grants no CREATE to PUBLIC): a status, nothing made.
        let right = uri.replacingOccurrences(of: "postgres@", with: "outlive_password:right-secret@")
        XCTAssertNoThrow(try PostgreSQLConnection(conninfo: right))
        let name = newStore()
        XCTAssertThrowsError(try PostgreSQLBackend(conninfo: right, store: name)) {
            XCTAssertEqual(($0 as? OutliveError)?.code, .permission, "\($0)")
        }
        XCTAssertEqual(try admin.integer("SELECT count(*) FROM pg_namespace WHERE nspname = ?", [.text("outlive_" + name)]), 0)
    }
}

extension PostgreSQLBackendTests {
    func testLocationFromAURIOpensItsStoreWithItsBound() throws {
        let name = newStore()
        let location = try PostgreSQLLocation(uri: uri + "?application_name=located&outlive_store=\(name)&outlive_liveness=3")
        let backend = try PostgreSQLBackend(conninfo: location.conninfo, store: location.store)
        XCTAssertEqual(backend.schema, "outlive_" + name)
        let lock = try PostgreSQLRunLock(conninfo: location.conninfo, backend: backend, bound: location.bound)
        XCTAssertTrue(try backend.isAlive(lockKey: lock.lockKey))
        var found: [String] = []
        try backend.read {
            try $0.query("SELECT application_name FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'located'") {
                found.append($0.text(0) ?? "")
            }
        }
        // Both connections of the handle (transactions, liveness) kept the URI's own parameter.
        XCTAssertEqual(found, ["located", "located"])
    }
}
