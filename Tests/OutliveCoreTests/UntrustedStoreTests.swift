import COutliveSystem
import XCTest
@testable import OutliveCore

/// The database file is untrusted input: the row accessors, the run id shape
/// and the schema check, in the core. (The generator in
/// Tests/api/test_untrusted_store.py damages a real store in every way.)
final class UntrustedStoreTests: XCTestCase {
    var directory = ""

    override func setUpWithError() throws {
        var template = Array("/tmp/outlive-swift-XXXXXX".utf8CString)
        directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    override func tearDown() {
        _ = directory.withCString { path in system("rm -rf '\(String(cString: path))'") }
    }

    func testAValueOfAnotherTypeIsCorruptAndNeverData() throws {
        let store = try Store(path: directory, processName: "app", loop: try Loop(), components: [KeyValueStore.schema])
        defer { store.close() }
        let cases: [(String, (SQLRow) -> Void)] = [
            ("SELECT x'00'", { _ = $0.text(0) }),
            ("SELECT CAST(x'ff' AS TEXT)", { _ = $0.text(0) }),
            ("SELECT CAST(x'610062' AS TEXT)", { _ = $0.text(0) }),
            ("SELECT 'x'", { _ = $0.integer(0) }),
            ("SELECT 1.5", { _ = $0.integer(0) }),
            ("SELECT NULL", { _ = $0.integer(0) }),
            ("SELECT 'x'", { _ = $0.blob(0) }),
            ("SELECT 'x'", { _ = $0.double(0) }),
            ("SELECT 1e999", { _ = $0.double(0) }),
        ]
        for (sql, read) in cases {
            XCTAssertThrowsError(try store.database.read { try $0.query(sql) { read($0) } }, sql) {
                XCTAssertEqual(($0 as? OutliveError)?.code, .corrupt, sql)
            }
        }
        // What Outlive writes reads back; NULL is nil where a column may hold it.
        try store.database.read { transaction in
            try transaction.query("SELECT 'a', 7, 2.5, x'01', NULL, NULL, 3") { row in
                XCTAssertEqual(row.text(0), "a")
                XCTAssertEqual(row.integer(1), 7)
                XCTAssertEqual(row.double(2), 2.5)
                XCTAssertEqual(row.blob(3), [1])
                XCTAssertNil(row.text(4))
                XCTAssertNil(row.blob(5))
                XCTAssertEqual(row.double(6), 3)
            }
            // The lenient readers never fail: they tell the damage apart.
            try transaction.query("SELECT CAST(x'ff' AS TEXT), x'00'") { row in
                XCTAssertNil(row.textIfValid(0))
                XCTAssertEqual(row.textBytes(0), [0xFF])
                XCTAssertNil(row.textIfValid(1))
                XCTAssertNil(row.textBytes(1))
            }
        }
    }

    func testOnlyLowercaseUUIDsAreRunIDs() {
        XCTAssertTrue(Store.isRunID(Identifier.make()))
        for text in ["../../victim/x", "2FCA755F-4C1B-4A2B-852D-FA96A8D35271", "", "2fca755f-4c1b-4a2b-852d-fa96a8d3527",
                     "2fca755f-4c1b-4a2b-852d-fa96a8d35271\u{0}", "2fca755f/4c1b-4a2b-852d-fa96a8d35271"] {
            XCTAssertFalse(Store.isRunID(text), text)
        }
    }

    func testATriggerOutliveDidNotMakeIsRefusedAtOpenAndNeverFires() throws {
        try Store(path: directory, processName: "app", loop: try Loop(), components: [KeyValueStore.schema]).close()
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open(directory + "/outlive.db", &db), SQLITE_OK)
        XCTAssertEqual(sqlite3_exec(db, "CREATE TABLE fired(x); CREATE TRIGGER evil BEFORE INSERT ON outlive_runs BEGIN INSERT INTO fired VALUES (1); END",
                                    nil, nil, nil), SQLITE_OK)
        sqlite3_close(db)
        XCTAssertThrowsError(try Store(path: directory, processName: "app", loop: try Loop(), components: [KeyValueStore.schema])) {
            XCTAssertEqual(($0 as? OutliveError)?.code, .corrupt)
            XCTAssertTrue(($0 as? OutliveError)?.message.contains("trigger evil") ?? false, "\($0)")
        }
        XCTAssertEqual(sqlite3_open(directory + "/outlive.db", &db), SQLITE_OK)
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, "SELECT count(*) FROM fired", -1, &statement, nil)
        XCTAssertEqual(sqlite3_step(statement), SQLITE_ROW)
        XCTAssertEqual(sqlite3_column_int(statement, 0), 0)
        sqlite3_finalize(statement)
    }
}
