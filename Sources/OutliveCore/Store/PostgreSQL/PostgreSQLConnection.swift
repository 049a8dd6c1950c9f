import COutliveSystem

/// One libpq connection. Not thread-safe by itself: its owner serialises use
/// (PostgreSQLBackend under its lock; PostgreSQLRunLock from one thread).
/// Statements go in libpq's pipeline mode, each prepared once per session
/// (the Parse sent with its first use: no round trip of its own), with
/// parameters in binary format (`PostgreSQLParameters`) and text results; several statements can be
/// sent before their results are read (`send`, then `sync`): one round trip
/// for all. SQL with `?` placeholders is translated once and cached.
final class PostgreSQLConnection {
    let handle: OpaquePointer
    // The caches and the pipeline's state are used under the owner's lock,
    // by one thread at a time, and a row callback never sends (the backend
    // refuses a re-entered transaction): no run-time exclusivity check
    // (some 80 instructions an access, 35 accesses a task add).
    @exclusivity(unchecked) private var translated: [String: Translation] = [:]

    /// A statement's PostgreSQL text, its placeholders, and the text's hash,
    /// computed once: the prepared statement's key is looked up by it on
    /// every send (hashing the text there each time was some 3,000
    /// instructions a statement, callgrind).
    private struct Translation {
        let sql: String
        let count: Int
        let hash: Int
    }
    /// Translations found by where their SQL's bytes are, before `translated`.
    @exclusivity(unchecked) private var placedTranslations = PlacedSQLCache<Translation>(count: 64)
    /// The parameters of the statement being sent.
    private let parameters = PostgreSQLParameters()
    /// Rows changed by the last statement (PQcmdTuples).
    @exclusivity(unchecked) private(set) var changes = 0

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
        // A new session: nothing is prepared or pending there.
        implicitTransaction = false
        pending = []
        unread = []
        opening = []
        prepared = [:]
        ready = []
        lastStatus = transactionStatus
        guard !isBroken else {
            throw OutliveError(.io, "the connection to the PostgreSQL server was lost and cannot be made again: \(PostgreSQLErrors.message(COutlive_PQerrorMessage(handle)))")
        }
        COutlive_pq_silence_notices(handle)
    }

    /// Runs statements without parameters or results (a migration script).
    /// Statements sent before it are read first, and the transaction's opening
    /// statements, if not sent yet, go in front of `sql`.
    func exec(_ sql: String) throws {
        settle()
        if !pending.isEmpty { try sync() }
        // A script of several statements in one message would otherwise be
        // an implicit transaction of its own, committed at its end.
        try beginExplicitly()
        let script = opening.isEmpty ? sql : (opening + [sql]).joined(separator: "; ")
        opening = []
        let result = COutlive_PQexec(handle, script)
        defer { if let result { COutlive_PQclear(result) } }
        lastStatus = transactionStatus
        try check(result, sql: sql)
    }

    /// Runs one statement and waits for it (with every statement sent before
    /// it: one round trip for all); `row` is called for each result row.
    func run(_ sql: String, _ arguments: [SQLValue], row: ((SQLRow) throws -> Void)? = nil) throws {
        // Before the statement: one that needs a transaction block
        // (SAVEPOINT) must find it begun.
        try beginExplicitly()
        try send(sql, arguments, row: row)
        try sync()
    }

    // MARK: - Pipelining

    /// Statements that open a transaction (BEGIN, the store's lock): sent in
    /// front of the transaction's first statement, with it, rather than on
    /// their own round trip; never sent when the transaction runs no statement.
    ///
    /// `implicit` (the statements hold no BEGIN): the transaction runs as the
    /// pipeline's implicit one, which the server commits at the sync point
    /// that ends it (`commit`): no BEGIN and no COMMIT to send, parse and
    /// answer (6–8 µs of a task add's 30 over a raw INSERT, measured with
    /// libpq on the durable bench cluster). A transaction that reads a
    /// result before its end needs a sync point inside it, which would
    /// commit what was sent: first a BEGIN goes (`beginExplicitly`), which
    /// makes the implicit transaction, and what it did so far, an explicit
    /// one; `commit` then sends its COMMIT.
    func open(_ statements: [String], implicit: Bool = false) {
        opening = statements
        implicitTransaction = implicit
    }

    /// Whether anything of the transaction opened by `open` reached the server.
    var opened: Bool { opening.isEmpty }

    /// Forgets opening statements that were never sent (a transaction that ran none).
    func discardOpening() {
        opening = []
        implicitTransaction = false
    }

    /// The transaction opened by `open` is implicit (no BEGIN sent).
    @exclusivity(unchecked) private var implicitTransaction = false

    /// Makes the transaction opened implicit an explicit one, before a sync
    /// point inside it: BEGIN goes first when nothing was sent yet, else
    /// after what was (the server then counts that in the explicit transaction).
    private func beginExplicitly() throws {
        guard implicitTransaction else { return }
        if pending.isEmpty {
            opening.insert("BEGIN", at: 0)
        } else {
            // Sent while still implicit: a send that fails rolls it back
            // (`abandonPipeline`), where its sync point would commit it.
            try send("BEGIN", [])
        }
        implicitTransaction = false
    }

    /// Commits the transaction opened by `open`: an implicit one at the
    /// sync point that ends it (a failure of the commit itself, such as a
    /// deferred foreign key's, comes as a result after the last statement's:
    /// `readResults`), an explicit one with COMMIT, which fails when the
    /// server answers it with ROLLBACK.
    func commit() throws {
        if implicitTransaction {
            implicitTransaction = false
            guard !pending.isEmpty else { return opening = [] }
            return try sync()
        }
        try send("COMMIT", [], expecting: "COMMIT")
        try sync()
    }

    /// Ends the transaction opened by `open` without committing it, whatever
    /// was sent of it: a ROLLBACK, and the statements' results read (their
    /// failures dropped: `lastFailedSQL` says which failed).
    func rollback() {
        opening = []
        if implicitTransaction {
            // Inside the implicit transaction ROLLBACK ends it, undone (the
            // server warns that no transaction block is in progress); sent
            // while still implicit, as BEGIN is (`beginExplicitly`).
            if !pending.isEmpty { try? send("ROLLBACK", []) }
            implicitTransaction = false
        }
        try? sync()
        if !isBroken && transactionStatus != Int32(COUTLIVE_PQTRANS_IDLE) { try? exec("ROLLBACK") }
    }

    /// The transaction status the server reported with its last reply: unlike
    /// `transactionStatus`, known while statements are sent and not yet read.
    @exclusivity(unchecked) private(set) var lastStatus: Int32 = Int32(COUTLIVE_PQTRANS_IDLE)

    /// Sends a statement without waiting for it (libpq's pipeline mode): its
    /// result is read by the next `sync` (or `run`, or `exec`), which throws the
    /// first failure among the statements sent; the server skips the rest of
    /// them after a failure. `row` is called then, for each result row;
    /// `expecting`, when given, is the command tag it must report (a COMMIT that
    /// the server turned into a ROLLBACK fails).
    func send(_ sql: String, _ arguments: [SQLValue], row: ((SQLRow) throws -> Void)? = nil,
              expecting tag: String? = nil) throws {
        let statement = translation(of: sql)
        guard statement.count == arguments.count else {
            throw OutliveError.invalidArgument("the statement has \(statement.count) placeholders but \(arguments.count) arguments were given")
        }
        try parameters.bind(arguments)
        try enterPipeline()
        if !opening.isEmpty {
            let statements = opening
            opening = []
            for text in statements {
                // No placeholders: the translation is the text, its hash kept.
                let opening = translation(of: text)
                try sendPrepared(text, opening.sql, hash: opening.hash, types: [], values: nil, lengths: nil, formats: nil, row: nil, tag: nil)
            }
        }
        try parameters.withPointers { types, values, lengths, formats in
            try sendPrepared(sql, statement.sql, hash: statement.hash, types: types, values: values, lengths: lengths,
                             formats: formats, row: row, tag: tag)
        }
    }

    /// `sql` with PostgreSQL's placeholders, translated once.
    private func translation(of sql: String) -> Translation {
        placedTranslations.value(for: sql) { sql in
            if let cached = translated[sql] { return cached }
            let (text, count) = PostgreSQLPlaceholders.translate(sql)
            let statement = Translation(sql: text, count: count, hash: text.hashValue)
            if translated.count > 512 { translated.removeAll() }  // dynamic SQL must not grow it forever
            translated[sql] = statement
            return statement
        }
    }

    /// Reads the results of every statement sent, in order, up to the server's
    /// reply to the sync point; throws the first failure (a statement's, or a
    /// row callback's) once all were read. What `syncLater` left unread is
    /// read first, after the new statements were sent: the server works on
    /// them meanwhile.
    func sync() throws {
        guard !pending.isEmpty else { return }
        try beginExplicitly()
        guard COutlive_PQpipelineSync(handle) == 1 else {
            abandonPipeline()
            throw PostgreSQLErrors.error(result: nil, connection: handle, context: "database")
        }
        readUnread()
        let failure = readResults(pending, failedSQL: &lastFailedSQL)
        finishPipeline()
        if let failure { throw failure }
    }

    /// The statement (its SQL as sent) whose failure the last `sync` threw;
    /// nil when it threw none, or a failure of no statement's (the connection's).
    private(set) var lastFailedSQL: String?

    /// Sends the statements sent so far without waiting for their results:
    /// they are read, and their failures dropped, with the results of the
    /// connection's next statements (`sync`), or by `settle`. For a read-only
    /// transaction's COMMIT, whose failure changes nothing (the server ends
    /// the transaction as soon as it arrives), and the doorbell's NOTIFY.
    func syncLater() {
        guard !pending.isEmpty else { return }
        guard COutlive_PQpipelineSync(handle) == 1 else {
            abandonPipeline()
            return
        }
        unread.append(pending)
        pending = []
    }

    /// Reads what `syncLater` left unread (normally there already: no wait),
    /// before a use of the connection outside the pipeline.
    func settle() {
        guard !unread.isEmpty else { return }
        readUnread()
        if pending.isEmpty { finishPipeline() }
    }

    private func readUnread() {
        let batches = unread
        unread = []
        for batch in batches {
            var dropped: String?
            _ = readResults(batch, failedSQL: &dropped)
            forgetUnconfirmed(batch)
        }
    }

    /// Reads the results of `items` (sent in this order) up to their sync
    /// point: the first failure, a statement's or a row callback's.
    private func readResults(_ items: [Pending], failedSQL: inout String?) -> Error? {
        var failure: Error?
        failedSQL = nil
        var index = 0
        var idle = 0
        var synced = false
        while true {
            guard let result = COutlive_PQgetResult(handle) else {
                // Each statement's results end with a NULL; two in a row: nothing more will come.
                idle += 1
                if idle > 1 || isBroken { break }
                continue
            }
            idle = 0
            defer { COutlive_PQclear(result) }
            let status = COutlive_PQresultStatus(result)
            if status == Int32(COUTLIVE_PGRES_PIPELINE_SYNC) {
                synced = true
                break
            }
            guard index < items.count else {
                // After the last statement's result: the failure of the
                // implicit transaction's commit at this sync point.
                if failure == nil && status == Int32(COUTLIVE_PGRES_FATAL_ERROR) {
                    failure = PostgreSQLErrors.error(result: result, connection: handle, context: "database")
                }
                continue
            }
            let item = items[index]
            index += 1
            if status == Int32(COUTLIVE_PGRES_PIPELINE_ABORTED) { continue }
            do {
                try check(result, sql: item.sql)
                if let name = item.preparing {
                    ready.insert(name)
                    continue
                }
                changes = Self.count(COutlive_PQcmdTuples(result))
                if let tag = item.tag, String(cString: COutlive_PQcmdStatus(result)) != tag {
                    throw OutliveError.state("the server answered \(item.sql) with \(String(cString: COutlive_PQcmdStatus(result))): the transaction was rolled back")
                }
                if let row = item.row, failure == nil {
                    for rowIndex in 0..<COutlive_PQntuples(result) {
                        try row(SQLRow(postgres: PostgreSQLRow(result: result, row: rowIndex)))
                    }
                }
            } catch {
                if failure == nil {
                    failure = error
                    failedSQL = item.sql
                }
            }
        }
        // Without the sync point's reply, an implicit transaction's commit
        // (every statement's result read) is not known to have happened.
        if (index < items.count || !synced) && failure == nil {
            failure = PostgreSQLErrors.error(result: nil, connection: handle, context: "database")
        }
        return failure
    }

    /// A statement sent and not yet read.
    private struct Pending {
        let sql: String
        /// The name of a statement being prepared (this is its Parse).
        let preparing: String?
        let row: ((SQLRow) throws -> Void)?
        let tag: String?
    }

    private struct StatementKey: Hashable {
        let sql: String
        /// `sql.hashValue`, computed once per text (`Translation`).
        let hash: Int
        let types: [COutlive_Oid]

        func hash(into hasher: inout Hasher) {
            hasher.combine(hash)
            hasher.combine(types)
        }

        static func == (a: StatementKey, b: StatementKey) -> Bool {
            a.hash == b.hash && a.types == b.types && a.sql == b.sql
        }
    }

    @exclusivity(unchecked) private var pending: [Pending] = []
    /// Statements up to a sync point whose results were not read yet (`syncLater`), oldest first.
    @exclusivity(unchecked) private var unread: [[Pending]] = []
    @exclusivity(unchecked) private var opening: [String] = []
    /// Prepared statements of this session, by SQL and parameter types
    /// (a NULL's type is inferred when it is prepared, so it is part of the key).
    @exclusivity(unchecked) private var prepared: [StatementKey: String] = [:]
    /// The prepared statements the server confirmed.
    @exclusivity(unchecked) private var ready: Set<String> = []
    private var preparedCount = 0
    /// Beyond this many, statements are sent unprepared (dynamic SQL must not
    /// fill the server session's memory).
    static let preparedLimit = 256

    private func enterPipeline() throws {
        guard COutlive_PQpipelineStatus(handle) == 0 else { return }
        guard COutlive_PQenterPipelineMode(handle) == 1 else {
            throw PostgreSQLErrors.error(result: nil, connection: handle, context: "database")
        }
    }

    /// Sends `sql` (its PostgreSQL text `text`) as a prepared statement of
    /// this session, preparing it first (in the same round trip) when new.
    private func sendPrepared(_ sql: String, _ text: String, hash: Int, types: [COutlive_Oid], values: UnsafePointer<UnsafePointer<CChar>?>?,
                              lengths: UnsafePointer<Int32>?, formats: UnsafePointer<Int32>?, row: ((SQLRow) throws -> Void)?,
                              tag: String?) throws {
        let key = StatementKey(sql: text, hash: hash, types: types)
        var name = prepared[key]
        if name == nil && prepared.count < Self.preparedLimit {
            preparedCount += 1
            let fresh = "outlive_\(preparedCount)"
            guard COutlive_PQsendPrepare(handle, fresh, text, Int32(types.count), types) == 1 else {
                abandonPipeline()
                throw PostgreSQLErrors.error(result: nil, connection: handle, context: "database")
            }
            pending.append(Pending(sql: sql, preparing: fresh, row: nil, tag: nil))
            prepared[key] = fresh
            name = fresh
        }
        let sent: Int32
        if let name {
            // withCString lends a native string's own bytes; passed as is, the
            // name was copied into a new array at every statement.
            sent = name.withCString { COutlive_PQsendQueryPrepared(handle, $0, Int32(types.count), values, lengths, formats, 0) }
        } else {
            sent = COutlive_PQsendQueryParams(handle, text, Int32(types.count), types, values, lengths, formats, 0)
        }
        guard sent == 1 else {
            abandonPipeline()
            throw PostgreSQLErrors.error(result: nil, connection: handle, context: "database")
        }
        pending.append(Pending(sql: sql, preparing: nil, row: row, tag: tag))
    }

    /// After the results were read (or could not be): statements whose
    /// preparation the server did not confirm are prepared again next time.
    private func finishPipeline() {
        forgetUnconfirmed(pending)
        // Kept: the next transaction's statements go in the same storage.
        pending.removeAll(keepingCapacity: true)
        if COutlive_PQpipelineStatus(handle) != 0 { _ = COutlive_PQexitPipelineMode(handle) }
        lastStatus = transactionStatus
    }

    /// PQcmdTuples' digits as a number (0 for none): no String made for them.
    private static func count(_ digits: UnsafePointer<CChar>?) -> Int {
        guard var next = digits else { return 0 }
        var value = 0
        while next.pointee >= 48 && next.pointee <= 57 && value < Int.max / 10 - 9 {
            value = value * 10 + Int(next.pointee - 48)
            next += 1
        }
        return value
    }

    private func forgetUnconfirmed(_ items: [Pending]) {
        for item in items {
            if let name = item.preparing, !ready.contains(name) {
                prepared = prepared.filter { $0.value != name }
            }
        }
    }

    /// After a send failed: whatever was sent is read and dropped (when the
    /// connection still works), so that the next statement starts clean.
    private func abandonPipeline() {
        if implicitTransaction {
            // The sync point below would commit the implicit transaction's
            // statements: it is ended undone first, or else with the session.
            implicitTransaction = false
            if !pending.isEmpty && !isBroken && COutlive_PQsendQueryParams(handle, "ROLLBACK", 0, nil, nil, nil, nil, 0) != 1 {
                try? reconnect()
                return
            }
        }
        if !isBroken && COutlive_PQpipelineSync(handle) == 1 {
            // Each batch left unread ends at a sync point of its own, then this one.
            for _ in 0...unread.count {
                var idle = 0
                while idle < 2 && !isBroken {
                    guard let result = COutlive_PQgetResult(handle) else { idle += 1; continue }
                    idle = 0
                    let status = COutlive_PQresultStatus(result)
                    COutlive_PQclear(result)
                    if status == Int32(COUTLIVE_PGRES_PIPELINE_SYNC) { break }
                }
            }
        }
        unread = []
        ready = []
        prepared = [:]  // which of them the server has is not known: prepare again
        finishPipeline()
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
