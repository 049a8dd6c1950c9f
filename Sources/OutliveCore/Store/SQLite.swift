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
    // The caches and the buffer's flag are used under the owner's lock, by
    // one thread at a time, and never across a callback: no run-time
    // exclusivity check (about 75 instructions an access, several a write).
    @exclusivity(unchecked) private var statements: [StatementKey: OpaquePointer] = [:]
    /// Statements found by where their SQL's bytes are (see `prepared`).
    @exclusivity(unchecked) private var placed = PlacedSQLCache<OpaquePointer>(count: 64)
    /// The `KeptStatement`s prepared so far (also in `statements`, which finalizes them).
    @exclusivity(unchecked) private var keptStatements = [OpaquePointer?](repeating: nil, count: KeptStatement.allCases.count)
    private let forkGeneration = COutlive_fork_generation()
    /// Where `run` puts the text and blobs it binds (see there).
    private let bindBuffer = UnsafeMutableRawPointer.allocate(byteCount: SQLiteConnection.bindBufferSize, alignment: 8)
    @exclusivity(unchecked) private var bindBufferInUse = false
    private static let bindBufferSize = 16_384
    /// This connection's checkpoint pacing, once `paceCheckpoints` set it; SQLite
    /// keeps a pointer to it until the connection is closed.
    private var pacing: UnsafeMutablePointer<COutlive_checkpoint_pacing>?

    /// `vfs`: the name of a registered SQLite VFS, or nil for the default.
    init(path: String, flags: Int32, vfs: String? = nil) throws {
        var db: OpaquePointer?
        let result = sqlite3_open_v2(path, &db, flags, vfs)
        guard result == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(result))
            if let db { sqlite3_close_v2(db) }
            throw SQLiteConnection.error(code: result, message: "cannot open database \(path): \(message)")
        }
        sqlite3_extended_result_codes(db, 1)
        // Before the first statement: the file is untrusted input (see SchemaObjects).
        let defended = COutlive_sqlite3_defend(db)
        guard defended == SQLITE_OK else {
            let message = String(cString: sqlite3_errmsg(db))
            sqlite3_close_v2(db)
            throw SQLiteConnection.error(code: defended, message: "cannot set SQLite's defences on \(path): \(message)")
        }
        handle = db
        self.path = path
    }

    deinit {
        // SQLite forbids carrying a connection across fork(): in a child, the
        // parent's connection is left alone (its memory is the child's to lose).
        bindBuffer.deallocate()
        // After the close (a child's copy is never used again: no commit calls the hook).
        defer { pacing?.deallocate() }
        guard COutlive_fork_generation() == forkGeneration else { return }
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    /// Checkpoints once the log holds `first` frames, then each time it has
    /// grown by `step` frames, instead of SQLite's automatic checkpoint after
    /// every commit once it holds 1,000 (shims.c says why).
    func paceCheckpoints(first: Int32, step: Int32) {
        let state = pacing ?? UnsafeMutablePointer<COutlive_checkpoint_pacing>.allocate(capacity: 1)
        state.initialize(to: COutlive_checkpoint_pacing(first: first, step: step, last: 0, started: 0))
        pacing = state
        COutlive_sqlite3_pace_checkpoints(handle, state)
    }

    /// Checkpoints this connection started through its pacing.
    var checkpointsStarted: UInt64 { pacing.map { UInt64($0.pointee.started) } ?? 0 }

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

    /// The statement of `sql`, prepared on first use; found by where its
    /// bytes are (`PlacedSQLCache`), else in the cache.
    func prepared(_ sql: String) throws -> OpaquePointer {
        try placed.value(for: sql) { try cached($0) }
    }

    private func cached(_ sql: String) throws -> OpaquePointer {
        let key = StatementKey(sql: sql)
        if let cached = statements[key] { return cached }
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard result == SQLITE_OK, let statement else { throw fail(result, "database") }
        statements[key] = statement
        return statement
    }

    /// Binds, steps through every row, resets. `row` reads the current row.
    func run(_ sql: String, _ arguments: [SQLValue], row: ((SQLRow) throws -> Void)? = nil) throws {
        try run(prepared(sql), sql, arguments, row: row)
    }

    /// `run` of a statement every write runs, kept in its slot once prepared:
    /// no lookup in the cache (hashing and comparing the SQL cost about 900
    /// instructions a statement, a fiftieth of a signal post).
    func run(_ kept: KeptStatement, _ arguments: [SQLValue], row: ((SQLRow) throws -> Void)? = nil) throws {
        let statement: OpaquePointer
        if let ready = keptStatements[kept.rawValue] {
            statement = ready
        } else {
            statement = try prepared(kept.sql)
            keptStatements[kept.rawValue] = statement
        }
        try run(statement, kept.sql, arguments, row: row)
    }

    private func run(_ statement: OpaquePointer, _ sql: String, _ arguments: [SQLValue], row: ((SQLRow) throws -> Void)?) throws {
        // Text and blobs are copied into a buffer of the connection's and
        // bound there without another copy (SQLITE_STATIC): SQLite's own copy
        // of each (SQLITE_TRANSIENT) cost an allocation and its memory
        // mutex per value, a twentieth of a kv set. Lending each value's own
        // bytes instead needs a closure per value, whose retains and releases
        // cost more than the allocation. The statement is reset and its
        // bindings cleared before the buffer is used again or freed.
        var size = 0
        for value in arguments {
            switch value {
            case .text(let v): size += v.utf8.count
            case .blob(let v): size += v.count
            default: break
            }
        }
        // A statement run from a row callback of another finds the buffer in
        // use (its bytes still bound), and larger values would keep the
        // memory they needed for the connection's life: they take a buffer
        // of their own.
        let buffer: UnsafeMutableRawPointer
        let borrowed = !bindBufferInUse && size <= SQLiteConnection.bindBufferSize
        if borrowed {
            buffer = bindBuffer
            bindBufferInUse = true
        } else {
            buffer = .allocate(byteCount: max(size, 1), alignment: 8)
        }
        defer {
            sqlite3_reset(statement)
            // Every call leaves its statement without bindings (none pointing
            // into the buffer): a parameter a call does not bind is NULL.
            // (A call without arguments bound nothing: BEGIN, COMMIT.)
            if !arguments.isEmpty { sqlite3_clear_bindings(statement) }
            if borrowed { bindBufferInUse = false } else { buffer.deallocate() }
        }
        var offset = 0
        for (index, value) in arguments.enumerated() {
            let position = Int32(index + 1)
            let result: Int32
            switch value {
            // Every parameter is NULL already: each call clears its bindings.
            case .null: result = SQLITE_OK
            case .integer(let v): result = sqlite3_bind_int64(statement, position, v)
            case .double(let v): result = sqlite3_bind_double(statement, position, v)
            case .text(let v):
                let start = buffer + offset
                let count = v.utf8.count
                // A native string's own UTF-8 bytes, without the copy utf8CString makes.
                let copied: Void? = v.utf8.withContiguousStorageIfAvailable {
                    if let base = $0.baseAddress { start.copyMemory(from: base, byteCount: count) }
                }
                if copied == nil { UnsafeMutableRawBufferPointer(start: start, count: count).copyBytes(from: v.utf8) }
                offset += count
                result = COutlive_sqlite3_bind_text_static(statement, position, start.assumingMemoryBound(to: CChar.self), Int32(count))
            case .blob(let v):
                let start = buffer + offset
                v.withUnsafeBytes { if let base = $0.baseAddress { start.copyMemory(from: base, byteCount: $0.count) } }
                offset += v.count
                // A zero-length blob still binds as a blob, never as NULL.
                result = COutlive_sqlite3_bind_blob_static(statement, position, start, Int32(v.count))
            }
            guard result == SQLITE_OK else { throw fail(result, "database bind") }
        }
        try step(statement, sql, row: row)
    }

    /// Steps through every row; `row` reads the current row.
    private func step(_ statement: OpaquePointer, _ sql: String, row: ((SQLRow) throws -> Void)?) throws {
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { return }
            guard step == SQLITE_ROW else { throw fail(step, "database") }
            guard let row else { continue }
            let damage = RowDamage()
            try row(SQLRow(statement: statement, damage: damage))
            if let found = damage.found {
                throw OutliveError.corrupt("the store is damaged: \(found) (\(SQLiteConnection.summary(sql)))")
            }
        }
    }

    /// The start of a statement, for messages.
    static func summary(_ sql: String) -> String {
        let line = sql.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        return line.utf8.count <= 80 ? line : String(line.prefix(77)) + "..."
    }

    var changes: Int { Int(sqlite3_changes(handle)) }
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// SQLite's data version of the main database: it changes whenever the
    /// database does, by a commit of this connection or (seen at the start
    /// of a transaction) of any other. No statement: a call into the pager.
    var dataVersion: UInt64? {
        var version: UInt32 = 0
        guard COutlive_sqlite3_data_version(handle, &version) else { return nil }
        return UInt64(version)
    }
}

/// Statements nearly every write runs, which a connection keeps in a slot of
/// their own once prepared (prepared on first use: the feed's table exists
/// only after the store's migration).
enum KeptStatement: Int, CaseIterable {
    case beginImmediate
    case commit
    /// A feed entry, written only when a live run watches the topic: one
    /// statement for the look and the entry; OR ROLLBACK spares it the
    /// statement journal of an INSERT ... SELECT (a failure rolls the whole
    /// transaction back anyway).
    case feedEntry
    /// The entry when a live run other than ?3 (this handle's) watches the
    /// topic: only then does the commit ring the doorbell, which wakes every
    /// process of the store.
    case feedEntryForOthers

    var sql: String {
        switch self {
        case .beginImmediate: "BEGIN IMMEDIATE"
        case .commit: "COMMIT"
        case .feedEntry:
            "INSERT OR ROLLBACK INTO outlive_feed(topic, key) SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM outlive_watchers WHERE topic = ?1)"
        case .feedEntryForOthers:
            "INSERT OR ROLLBACK INTO outlive_feed(topic, key) SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM outlive_watchers WHERE topic = ?1 AND run_id <> ?3)"
        }
    }
}

/// The statement cache's key. A String key is hashed with SipHash over every
/// byte of the SQL on each lookup — about 700 instructions a statement, 9% of
/// a whole signal post; the SQL is nearly always a literal, whose == compares
/// two pointers, so hashing the length and a few bytes and comparing in full
/// costs far less. (Any String works: a collision only costs a comparison.)
struct StatementKey: Hashable {
    let sql: String

    static func == (a: StatementKey, b: StatementKey) -> Bool { a.sql == b.sql }

    func hash(into hasher: inout Hasher) {
        let sampled: Bool? = sql.utf8.withContiguousStorageIfAvailable { bytes in
            let raw = UnsafeRawBufferPointer(bytes)
            hasher.combine(raw.count)
            if raw.count >= 8 {
                hasher.combine(raw.loadUnaligned(fromByteOffset: raw.count / 2 - 4, as: UInt64.self))
                hasher.combine(raw.loadUnaligned(fromByteOffset: raw.count - 8, as: UInt64.self))
            } else {
                for byte in raw { hasher.combine(byte) }
            }
            return true
        }
        if sampled == nil { hasher.combine(sql) }
    }
}

/// The current row of a statement, valid only inside the row callback: an
/// SQLite statement's, or a PostgreSQL result's (`postgres`).
///
/// The database file is untrusted input: every accessor checks that the stored
/// value has the type Outlive writes (text is also valid UTF-8 without NUL, a
/// double is finite). A value of another type does not reach the caller as
/// data: the accessor returns an inert default (nil, 0, empty) and the
/// statement fails with `.corrupt` as soon as the row callback returns, so a
/// damaged row ends the operation with OUTLIVE_E_CORRUPT instead of being used.
/// `isNull` and `textIfValid` never fail: they are for callers that skip or
/// tell apart such values themselves. (PostgreSQL's columns are typed by the
/// schema, which is checked at open; its rows are read as the server typed them.)
public struct SQLRow {
    let statement: OpaquePointer?
    let damage: RowDamage?
    let postgres: PostgreSQLRow?

    init(statement: OpaquePointer, damage: RowDamage) {
        self.statement = statement
        self.damage = damage
        postgres = nil
    }

    init(postgres: PostgreSQLRow) {
        statement = nil
        damage = nil
        self.postgres = postgres
    }

    public func isNull(_ column: Int32) -> Bool {
        if let postgres { return postgres.isNull(column) }
        return sqlite3_column_type(statement, column) == SQLITE_NULL
    }

    /// An INTEGER value (NULL or another type is corrupt).
    public func integer(_ column: Int32) -> Int64 {
        if let postgres { return postgres.integer(column) }
        return integerIfValid(column) ?? note(column, expected: "an integer", 0)
    }

    /// The value if it is an INTEGER, else nil; never corrupt.
    public func integerIfValid(_ column: Int32) -> Int64? {
        if let postgres { return postgres.isNull(column) ? nil : postgres.integer(column) }
        guard sqlite3_column_type(statement, column) == SQLITE_INTEGER else { return nil }
        return sqlite3_column_int64(statement, column)
    }

    /// A finite REAL or an INTEGER value (NULL, another type or not finite is corrupt).
    public func double(_ column: Int32) -> Double {
        if let postgres { return postgres.double(column) }
        if let value = doubleIfValid(column) { return value }
        let type = sqlite3_column_type(statement, column)
        return note(column, expected: type == SQLITE_FLOAT || type == SQLITE_INTEGER ? "a finite number" : "a number", 0)
    }

    /// The value if it is a finite number, else nil; never corrupt.
    public func doubleIfValid(_ column: Int32) -> Double? {
        let value: Double
        if let postgres {
            if postgres.isNull(column) { return nil }
            value = postgres.double(column)
        } else {
            let type = sqlite3_column_type(statement, column)
            guard type == SQLITE_FLOAT || type == SQLITE_INTEGER else { return nil }
            value = sqlite3_column_double(statement, column)
        }
        return value.isFinite ? value : nil
    }

    /// TEXT that is UTF-8 without NUL; nil for NULL.
    public func text(_ column: Int32) -> String? {
        if let postgres { return postgres.text(column) }
        if isNull(column) { return nil }
        guard let value = textIfValid(column) else { return note(column, expected: "UTF-8 text without NUL", nil) }
        return value
    }

    /// The value if it is TEXT that is UTF-8 without NUL, else nil; never corrupt.
    public func textIfValid(_ column: Int32) -> String? {
        if let postgres { return postgres.text(column) }
        guard sqlite3_column_type(statement, column) == SQLITE_TEXT, let pointer = sqlite3_column_text(statement, column) else { return nil }
        // Checked and decoded where SQLite keeps them: a copy into an array
        // first cost an allocation per column read (every feed entry, every row).
        let bytes = UnsafeBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(statement, column)))
        guard memchr(pointer, 0, bytes.count) == nil else { return nil }
        return UTF8Text.string(UnsafeRawBufferPointer(bytes))
    }

    /// The stored bytes of a TEXT value, unchecked; nil for any other type.
    public func textBytes(_ column: Int32) -> [UInt8]? {
        if let postgres { return postgres.text(column).map { Array($0.utf8) } }
        guard sqlite3_column_type(statement, column) == SQLITE_TEXT else { return nil }
        guard let pointer = sqlite3_column_text(statement, column) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        return Array(UnsafeBufferPointer(start: pointer, count: count))
    }

    /// A BLOB value; nil for NULL (another type is corrupt).
    public func blob(_ column: Int32) -> [UInt8]? {
        if let postgres { return postgres.blob(column) }
        if let bytes = blobIfValid(column) { return bytes }
        return isNull(column) ? nil : note(column, expected: "a blob", nil)
    }

    /// The value if it is a BLOB, else nil; never corrupt.
    public func blobIfValid(_ column: Int32) -> [UInt8]? {
        if let postgres { return postgres.isNull(column) ? nil : postgres.blob(column) }
        guard sqlite3_column_type(statement, column) == SQLITE_BLOB else { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let pointer = sqlite3_column_blob(statement, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    private func note<T>(_ column: Int32, expected: String, _ fallback: T) -> T {
        damage?.note(self, column, expected: expected, fallback) ?? fallback
    }

    var columnName: (Int32) -> String {
        { String(cString: sqlite3_column_name(statement, $0) ?? sqlite3_errstr(SQLITE_MISUSE)) }
    }
}

/// What a row callback found wrong in the row, checked by `SQLiteConnection.run`
/// after each callback: the first damage found is what the error names.
final class RowDamage {
    private(set) var found: String?

    func note<T>(_ row: SQLRow, _ column: Int32, expected: String, _ fallback: T) -> T {
        if found == nil {
            let kinds = [SQLITE_INTEGER: "an integer", SQLITE_FLOAT: "a real", SQLITE_TEXT: "text", SQLITE_BLOB: "a blob", SQLITE_NULL: "NULL"]
            let stored = kinds[sqlite3_column_type(row.statement, column)] ?? "an unknown type"
            found = "column \(row.columnName(column)) holds \(stored) where Outlive stores \(expected)"
        }
        return fallback
    }
}
