import COutliveSystem

/// One libpq connection. Not thread-safe by itself: its owner serialises use
/// (PostgreSQLBackend under its lock; PostgreSQLRunLock from one thread).
/// Statements go as PQexecParams with text parameters (bytea in binary) and
/// text results; SQL with `?` placeholders is translated once and cached.
final class PostgreSQLConnection {
    let handle: OpaquePointer
    private var translated: [String: (sql: String, count: Int)] = [:]
    /// Rows changed by the last statement (PQcmdTuples).
    private(set) var changes = 0

    static let integerType: COutlive_Oid = 20   // int8
    static let doubleType: COutlive_Oid = 701   // float8
    static let textType: COutlive_Oid = 25
    static let byteaType: COutlive_Oid = 17

    /// Connects with `conninfo` (a postgresql:// URI or "key=value" string, as
    /// libpq takes it). `defaults` come before it, so that the user's own values
    /// in conninfo win; `overrides` come after and win over conninfo.
    ///
    /// `closeInForkedChildren`: a forked child closes its copy of the socket
    /// (as it closes lock files, COutlive_register_lock_fd), so that a child
    /// that outlives this process cannot keep the session — and a transaction
    /// or a lock it holds — alive. The socket is made and registered with no
    /// fork in between; it stays registered across reconnects.
    init(conninfo: String, defaults: [(String, String)] = [], overrides: [(String, String)] = [],
         closeInForkedChildren: Bool = false) throws {
        try PostgreSQLLibrary.load()
        if closeInForkedChildren { COutlive_lock_fds_begin() }
        defer { if closeInForkedChildren { COutlive_lock_fds_end() } }
        // libpq waits for an unreachable server as long as the kernel does
        // (minutes) unless told otherwise; a URI's own connect_timeout wins.
        let parameters = [("connect_timeout", "10")] + defaults + [("dbname", conninfo)] + overrides
        var keys = parameters.map { strdup($0.0) }
        var values = parameters.map { strdup($0.1) }
        defer {
            keys.forEach { free($0) }
            values.forEach { free($0) }
        }
        keys.append(nil)
        values.append(nil)
        let connection = keys.withUnsafeBufferPointer { keyBuffer in
            values.withUnsafeBufferPointer { valueBuffer in
                keyBuffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: keys.count) { k in
                    valueBuffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: values.count) { v in
                        // expand_dbname: the dbname value may be a whole URI or conninfo string.
                        COutlive_PQconnectdbParams(k, v, 1)
                    }
                }
            }
        }
        guard let connection else { throw OutliveError(.noMemory, "cannot allocate a PostgreSQL connection") }
        guard COutlive_PQstatus(connection) == Int32(COUTLIVE_CONNECTION_OK) else {
            // libpq's message names host and port but never the password.
            let message = PostgreSQLErrors.redacted(PostgreSQLErrors.message(COutlive_PQerrorMessage(connection)), conninfo: conninfo)
            COutlive_PQfinish(connection)
            throw OutliveError(PostgreSQLErrors.connectionStatus(message), "cannot connect to the PostgreSQL server: \(message)")
        }
        handle = connection
        COutlive_pq_silence_notices(connection)
        if closeInForkedChildren {
            registeredSocket = COutlive_PQsocket(connection)
            if registeredSocket >= 0 { COutlive_register_lock_fd(registeredSocket) }
        }
    }

    deinit {
        // In a forked child the socket is the parent's: PQfinish would send
        // the parent's session a goodbye. The connection's memory is left.
        guard COutlive_fork_generation() == forkGeneration else { return }
        COutlive_lock_fds_begin()
        if registeredSocket >= 0 { COutlive_unregister_lock_fd(registeredSocket) }
        COutlive_PQfinish(handle)
        COutlive_lock_fds_end()
    }

    private let forkGeneration = COutlive_fork_generation()
    private var registeredSocket: Int32 = -1


    var isBroken: Bool { COutlive_PQstatus(handle) != Int32(COUTLIVE_CONNECTION_OK) }
    var transactionStatus: Int32 { COutlive_PQtransactionStatus(handle) }
    var socket: Int32 { COutlive_PQsocket(handle) }
    var backendPID: Int32 { COutlive_PQbackendPID(handle) }

    /// Reconnects with the same parameters (after the server restarted or the
    /// link dropped). Throws `.io` when the server still cannot be reached.
    func reconnect() throws {
        if registeredSocket >= 0 {
            // The old socket is closed and a new one made under the fork lock.
            COutlive_lock_fds_begin()
            COutlive_unregister_lock_fd(registeredSocket)
            COutlive_PQreset(handle)
            registeredSocket = socket
            if registeredSocket >= 0 { COutlive_register_lock_fd(registeredSocket) }
            COutlive_lock_fds_end()
        } else {
            COutlive_PQreset(handle)
        }
        guard !isBroken else {
            throw OutliveError(.io, "the connection to the PostgreSQL server was lost and cannot be made again: \(PostgreSQLErrors.message(COutlive_PQerrorMessage(handle)))")
        }
        COutlive_pq_silence_notices(handle)
    }

    /// Runs statements without parameters or results (a migration script, BEGIN).
    func exec(_ sql: String) throws {
        let result = COutlive_PQexec(handle, sql)
        defer { if let result { COutlive_PQclear(result) } }
        try check(result, sql: sql)
    }

    /// Runs one statement; `row` is called for each result row.
    func run(_ sql: String, _ arguments: [SQLValue], row: ((SQLRow) throws -> Void)? = nil) throws {
        let statement: (sql: String, count: Int)
        if let cached = translated[sql] {
            statement = cached
        } else {
            statement = PostgreSQLPlaceholders.translate(sql)
            if translated.count > 512 { translated.removeAll() }  // dynamic SQL must not grow it forever
            translated[sql] = statement
        }
        guard statement.count == arguments.count else {
            throw OutliveError.invalidArgument("the statement has \(statement.count) placeholders but \(arguments.count) arguments were given")
        }
        var types: [COutlive_Oid] = []
        var values: [UnsafeMutablePointer<CChar>?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        defer { values.forEach { free($0) } }
        for argument in arguments {
            switch argument {
            case .null:
                types.append(0); values.append(nil); lengths.append(0); formats.append(0)
            case .integer(let value):
                types.append(Self.integerType); values.append(strdup(String(value))); lengths.append(0); formats.append(0)
            case .double(let value):
                let text = value.isNaN ? "NaN" : value == .infinity ? "Infinity" : value == -.infinity ? "-Infinity" : "\(value)"
                types.append(Self.doubleType); values.append(strdup(text)); lengths.append(0); formats.append(0)
            case .text(let value):
                guard !value.utf8.contains(0) else {
                    throw OutliveError.invalidArgument("PostgreSQL text cannot hold a NUL character")
                }
                types.append(Self.textType); values.append(strdup(value)); lengths.append(0); formats.append(0)
            case .blob(let value):
                // Binary format: the bytes as they are, any length (0 included).
                let buffer = malloc(max(value.count, 1))!.assumingMemoryBound(to: CChar.self)
                value.withUnsafeBytes { if $0.count > 0 { memcpy(buffer, $0.baseAddress!, $0.count) } }
                types.append(Self.byteaType); values.append(buffer); lengths.append(Int32(value.count)); formats.append(1)
            }
        }
        let result = values.withUnsafeBufferPointer { valueBuffer in
            valueBuffer.withMemoryRebound(to: UnsafePointer<CChar>?.self) { v in
                COutlive_PQexecParams(handle, statement.sql, Int32(arguments.count), types, v.baseAddress, lengths, formats, 0)
            }
        }
        defer { if let result { COutlive_PQclear(result) } }
        try check(result, sql: sql)
        guard let result else { return }
        changes = Int(String(cString: COutlive_PQcmdTuples(result))) ?? 0
        if let row {
            let count = COutlive_PQntuples(result)
            for index in 0..<count {
                try row(SQLRow(postgres: PostgreSQLRow(result: result, row: index)))
            }
        }
    }

    private func check(_ result: OpaquePointer?, sql: String) throws {
        if let result {
            let status = COutlive_PQresultStatus(result)
            if status == Int32(COUTLIVE_PGRES_COMMAND_OK) || status == Int32(COUTLIVE_PGRES_TUPLES_OK)
                || status == Int32(COUTLIVE_PGRES_EMPTY_QUERY) { return }
        }
        throw PostgreSQLErrors.error(result: result, connection: handle, context: "database")
    }

    /// The first column of the first row, as an integer.
    func integer(_ sql: String, _ arguments: [SQLValue] = []) throws -> Int64? {
        var value: Int64?
        try run(sql, arguments) { if value == nil && !$0.isNull(0) { value = $0.integer(0) } }
        return value
    }

    /// `text` quoted as an identifier ("…"), for names that cannot be parameters.
    func quoteIdentifier(_ text: String) throws -> String {
        guard let quoted = COutlive_PQescapeIdentifier(handle, text, text.utf8.count) else {
            throw OutliveError.invalidArgument("cannot quote \(text) as a PostgreSQL identifier: \(PostgreSQLErrors.message(COutlive_PQerrorMessage(handle)))")
        }
        defer { COutlive_PQfreemem(quoted) }
        return String(cString: quoted)
    }

    /// Reads what the server sent without blocking. Returns the notifications
    /// received (channel, payload), or nil when the connection is gone.
    func drainNotifications() -> [(channel: String, payload: String)]? {
        if COutlive_PQconsumeInput(handle) == 0 || isBroken { return nil }
        var received: [(String, String)] = []
        var channel = [CChar](repeating: 0, count: 128)
        var payload = [CChar](repeating: 0, count: 256)
        while COutlive_pq_next_notification(handle, &channel, channel.count, &payload, payload.count) != 0 {
            received.append((String(cString: channel), String(cString: payload)))
        }
        return received
    }
}
