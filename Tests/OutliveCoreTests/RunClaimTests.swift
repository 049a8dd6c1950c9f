import COutliveSystem
import XCTest
@testable import OutliveCore

/// The run-bound claim of the store, on a table of its own, in both forms,
/// between real store handles (each its own run with its own liveness lock).
final class RunClaimTests: XCTestCase {
    var directory = ""
    let loop = try! Loop()

    static let schema = SchemaComponent(name: "claim_tests", migrations: [
        """
        CREATE TABLE work(key TEXT PRIMARY KEY, holder TEXT, token TEXT, by TEXT, done INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE slots(slot TEXT PRIMARY KEY, holder TEXT NOT NULL, token TEXT, note TEXT);
        """,
    ])

    override func setUpWithError() throws {
        var template = Array("/tmp/outlive-claim-XXXXXX".utf8CString)
        directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    override func tearDown() {
        _ = directory.withCString { path in system("rm -rf '\(String(cString: path))'") }
    }

    private func open(_ name: String) throws -> Store {
        try Store(path: directory, processName: name, loop: loop, components: [RunClaimTests.schema])
    }

    private func columnsClaim(_ store: Store, freed: RunClaim.Freed? = nil) -> RunClaim {
        RunClaim(store: store, table: "work", key: "key", run: "holder", token: "token", form: .columns, describing: ["by"], freed: freed)
    }

    /// A run registered in the store whose liveness lock nobody holds: a run
    /// that died before anyone reaped it.
    private func registerDeadRun(in store: Store) throws -> String {
        let run = Identifier.make()
        try store.database.write {
            try $0.execute("INSERT INTO outlive_runs(run_id, process, pid, started) VALUES (?, 'dead', 0, 0)", [.text(run)])
        }
        return run
    }

    func testTakeFenceAndReleaseBetweenTwoLiveRuns() throws {
        let a = try open("a"), b = try open("b")
        defer { a.close(); b.close() }
        let claimA = columnsClaim(a), claimB = columnsClaim(b)
        try a.database.write { try $0.execute("INSERT INTO work(key) VALUES ('k')") }
        XCTAssertTrue(try a.database.write { try claimA.take(.text("k"), token: .text("t1"), setting: [("by", .text("a"))], in: $0) })
        XCTAssertFalse(try b.database.write { try claimB.take(.text("k"), token: .text("t2"), in: $0) })
        XCTAssertEqual(try b.database.read { try claimB.holder(of: .text("k"), token: .text("t2"), in: $0) }, .live(run: a.runID))
        // The fence: a write that names another token changes nothing.
        let (fence, fenced) = claimA.fence(token: .text("other"))
        try a.database.write { try $0.execute("UPDATE work SET done = 1 WHERE key = 'k' AND \(fence)", fenced) }
        XCTAssertEqual(try a.database.read { try $0.integer("SELECT done FROM work") }, 0)
        XCTAssertFalse(try a.database.write { try claimA.release(.text("k"), token: .text("other"), in: $0) })
        XCTAssertTrue(try a.database.write { try claimA.release(.text("k"), token: .text("t1"), setting: [("done", .integer(1))], in: $0) })
        XCTAssertEqual(try a.database.read { try $0.integer("SELECT count(*) FROM work WHERE holder IS NULL AND token IS NULL AND by IS NULL AND done = 1") }, 1)
        XCTAssertTrue(try b.database.write { try claimB.take(.text("k"), token: .text("t2"), in: $0) })
    }

    func testAClaimOfADeadRunIsBrokenByEndingTheRunInTheSameTransaction() throws {
        let store = try open("app")
        defer { store.close() }
        var freed: [(String, [SQLValue])] = []
        let claim = columnsClaim(store) { _, run, keys in freed.append((run.runID, keys)) }
        let dead = try registerDeadRun(in: store)
        try store.database.write {
            try $0.execute("INSERT INTO work(key, holder, token, by) VALUES ('x', ?, 'old', 'dead'), ('y', ?, 'old', 'dead')", [.text(dead), .text(dead)])
        }
        XCTAssertEqual(try store.database.read { try claim.holder(of: .text("x"), in: $0) }, .dead(run: dead))
        XCTAssertTrue(try store.database.write { try claim.take(.text("x"), token: .text("new"), in: $0) })
        // The whole run ended: both of its claims were handed to the hook and freed, the run is gone.
        XCTAssertEqual(freed.map(\.0), [dead])
        XCTAssertEqual(freed.first?.1, [.text("x"), .text("y")])
        XCTAssertEqual(try store.database.read { try $0.integer("SELECT count(*) FROM outlive_runs WHERE run_id = ?", [.text(dead)]) }, 0)
        XCTAssertEqual(try store.database.read { try $0.integer("SELECT count(*) FROM work WHERE key = 'y' AND holder IS NULL") }, 1)
        XCTAssertTrue(try store.database.read { try claim.holds(.text("x"), token: .text("new"), in: $0) })
    }

    func testARowClaimIsTakenOverFromADeadRunAndGoesWhenItsRunCloses() throws {
        let a = try open("a")
        var released: [SQLValue] = []
        let claimA = RunClaim(store: a, table: "slots", key: "slot", run: "holder", token: "token", form: .row) { _, _, keys in released += keys }
        let dead = try registerDeadRun(in: a)
        try a.database.write { try $0.execute("INSERT INTO slots(slot, holder, token) VALUES ('s', ?, '1')", [.text(dead)]) }
        XCTAssertTrue(try a.database.write { try claimA.take(.text("s"), token: .text("2"), setting: [("note", .text("mine"))], in: $0) })
        // Taken again by the same claimant: its values change, it stays one row.
        XCTAssertTrue(try a.database.write { try claimA.take(.text("s"), token: .text("2"), setting: [("note", .text("again"))], in: $0) })
        XCTAssertEqual(try a.database.read { try $0.integer("SELECT count(*) FROM slots WHERE holder = ? AND note = 'again'", [.text(a.runID)]) }, 1)
        let b = try open("b")
        defer { b.close() }
        let claimB = RunClaim(store: b, table: "slots", key: "slot", run: "holder", token: "token", form: .row)
        XCTAssertFalse(try b.database.write { try claimB.take(.text("s"), token: .text("3"), in: $0) })
        released = []
        a.close()  // its end-of-run hook frees what it held
        XCTAssertEqual(released, [.text("s")])
        XCTAssertEqual(try b.database.read { try $0.integer("SELECT count(*) FROM slots") }, 0)
        XCTAssertTrue(try b.database.write { try claimB.take(.text("s"), token: .text("3"), in: $0) })
    }
}
