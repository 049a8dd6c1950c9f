import COutliveSystem

/// A value bound to or read from an SQL statement.
public enum SQLValue: Equatable {
    case null
    case integer(Int64)
    case double(Double)
    case text(String)
    case blob([UInt8])
}

/// One SQLite connection with a statement cache. Not thread-safe by itself: the
/// owner (SQLiteBackend) serialises its use.
final class SQLiteConnection {
    let handle: OpaquePointer
    let path: String
    private var statements: [String: OpaquePointer] = [:]

    init(path: String, flags: Int32) throws {
        var db: OpaquePointer?
        let result = sqlite3_open_v2(path, &db, flags, nil)
        guard result == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(result))
            if let db { sqlite3_close_v2(db) }
            throw SQLiteConnection.error(code: result, message: "cannot open database \(path): \(message)")
        }
        handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    static func error(code: Int32, message: String) -> OutliveError {
        switch code & 0xFF {
        case SQLITE_BUSY, SQLITE_LOCKED: return OutliveError(.busy, message)
        case SQLITE_CORRUPT, SQLITE_NOTADB: return OutliveError(.corrupt, message)
        case SQLITE_NOMEM: return OutliveError(.noMemory, message)
        case SQLITE_PERM, SQLITE_AUTH: return OutliveError(.permission, message)
        case SQLITE_TOOBIG, SQLITE_RANGE, SQLITE_MISMATCH: return OutliveError(.invalidArgument, message)
        case SQLITE_CONSTRAINT: return OutliveError(.state, message)
        default: return OutliveError(.io, message)
        }
    }

    func fail(_ code: Int32, _ context: String) -> OutliveError {
        SQLiteConnection.error(code: code, message: "\(context): \(String(cString: sqlite3_errmsg(handle)))")
    }

    /// Runs SQL without results (several statements allowed).
    func exec(_ sql: String) throws {
        let result = sqlite3_exec(handle, sql, nil, nil, nil)
        guard result == SQLITE_OK else { throw fail(result, "database") }
    }

    func prepared(_ sql: String) throws -> OpaquePointer {
        if let cached = statements[sql] { return cached }
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard result == SQLITE_OK, let statement else { throw fail(result, "database") }
        statements[sql] = statement
        return statement
    }

    /// Binds, steps through every row, resets. `row` reads the current row.
    func run(_ sql: String, _ arguments: [SQLValue], row: ((SQLRow) throws -> Void)? = nil) throws {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, value) in arguments.enumerated() {
            let position = Int32(index + 1)
            let result: Int32
            switch value {
            case .null: result = sqlite3_bind_null(statement, position)
            case .integer(let v): result = sqlite3_bind_int64(statement, position, v)
            case .double(let v): result = sqlite3_bind_double(statement, position, v)
            case .text(let v):
                result = v.utf8CString.withUnsafeBufferPointer {
                    COutlive_sqlite3_bind_text_transient(statement, position, $0.baseAddress, Int32($0.count - 1))
                }
            case .blob(let v):
                result = v.withUnsafeBytes {
                    // A zero-length blob still binds as a blob, never as NULL.
                    COutlive_sqlite3_bind_blob_transient(statement, position, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(v.count))
                }
            }
            guard result == SQLITE_OK else { throw fail(result, "database bind") }
        }
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { return }
            guard step == SQLITE_ROW else { throw fail(step, "database") }
            try row?(SQLRow(statement: statement))
        }
    }

    var changes: Int { Int(sqlite3_changes(handle)) }
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
}

/// The current row of a statement, valid only inside the row callback: an
/// SQLite statement's, or a PostgreSQL result's (`postgres`).
public struct SQLRow {
    let statement: OpaquePointer?
    let postgres: PostgreSQLRow?

    init(statement: OpaquePointer) {
        self.statement = statement
        postgres = nil
    }

    init(postgres: PostgreSQLRow) {
        statement = nil
        self.postgres = postgres
    }

    public func isNull(_ column: Int32) -> Bool {
        if let postgres { return postgres.isNull(column) }
        return sqlite3_column_type(statement, column) == SQLITE_NULL
    }
    public func integer(_ column: Int32) -> Int64 { postgres?.integer(column) ?? sqlite3_column_int64(statement, column) }
    public func double(_ column: Int32) -> Double { postgres?.double(column) ?? sqlite3_column_double(statement, column) }

    public func text(_ column: Int32) -> String? {
        if let postgres { return postgres.text(column) }
        guard let pointer = sqlite3_column_text(statement, column) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    public func blob(_ column: Int32) -> [UInt8]? {
        if let postgres { return postgres.blob(column) }
        if isNull(column) { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let pointer = sqlite3_column_blob(statement, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}
