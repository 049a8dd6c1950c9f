import COutliveSystem

/// The PostgreSQL store: one connection per open handle for transactions, the
/// store's tables in a schema of its own (PostgreSQLSchema).
///
/// Write transactions keep StoreBackend's promise, "serialised with every other
/// writer of every process": each first takes the store's transaction advisory
/// lock. That is also what keeps the change feed gap-free in commit order: a
/// `bigserial` feed read by `seq > cursor` loses rows committed out of sequence
/// order (measured: 1,982 of 6,481), none when each writer first takes
/// `pg_advisory_xact_lock`. Under the lock, a transaction's feed entries are
/// numbered max(seq) + 1, …, so a rolled-back transaction leaves no hole either.
///
/// A write transaction that recorded changes another run watches is followed,
/// once its COMMIT's reply is read, by one NOTIFY on the store's channel (its
/// name is the schema's) with the newest sequence, in a transaction of its
/// own (`notifyAfterCommit`): never after a rollback, and not on the
/// writer's way (inside the transaction it delayed the COMMIT's reply by
/// 40 µs and more). It is a wake-up hint only: a woken handle reads the feed
/// from its cursor. Changes only this handle's run watches send none: the
/// handle's own loop is woken after the commit (`onOwnChangesCommitted`),
/// as on SQLite.
///
/// Reads are REPEATABLE READ, READ ONLY transactions: one snapshot, like an
/// SQLite read transaction.
///
/// Not done yet (see docs/postgresql.md): a failing statement aborts the whole
/// PostgreSQL transaction, where SQLite lets the transaction go on.
final class PostgreSQLBackend: StoreBackend {
    let schema: String
    /// The NOTIFY channel of this store.
    let channel: String
    /// The schema's OID, unique in the database: the first key of the store's
    /// advisory locks (two-key form), as a signed 32-bit value.
    let storeKey: Int32
    let schemaOID: Int64
    let conninfo: String
    /// The statements that open a write, made once: the same strings every
    /// time, found by where their bytes are (PostgreSQLConnection's
    /// translations), where made at each write they were formatted, hashed
    /// and looked up each time. A write's holds no BEGIN: it runs as the
    /// pipeline's implicit transaction until it reads (`PostgreSQLConnection.open`).
    private let writeOpening: [String]
    private let unsyncedWriteOpening: [String]
    private let quotedSchema: String
    private let connection: PostgreSQLConnection
    private let lock = Lock()
    /// Called after a commit that recorded changes, with the newest sequence.
    var onChangesCommitted: ((Int64) -> Void)?
    /// Called after a commit whose feed entries no other run watches (no
    /// NOTIFY was sent, which would have woken this handle too).
    var onOwnChangesCommitted: (() -> Void)?
    /// This handle's run: entries only it watches send no NOTIFY.
    private var ownRun = ""
    /// The topics this handle's run watches (guarded by `lock`).
    private var ownTopics: Set<String> = []
    let ownChanges = OwnChanges()

    var engine: StoreEngine { .postgresql }

    static let feedRetention: Int64 = 65_536
    static let pruneEvery: Int64 = 4_096

    /// Connects to `conninfo` (a postgresql:// URI or libpq conninfo string)
    /// and opens (creating, unless `creating` is false, or upgrading) the
    /// store named `store` there.
    init(conninfo: String, store: String, components: [SchemaComponent] = [], creating: Bool = true) throws {
        schema = try PostgreSQLSchema.schemaName(store: store)
        channel = schema
        self.conninfo = conninfo
        // A child forked while a write transaction is under way must not keep
        // that transaction, and the store's write lock, alive after this process.
        connection = try PostgreSQLConnection(conninfo: conninfo, defaults: [("application_name", "outlive")],
                                              closeInForkedChildren: true)
        try connection.exec(Self.sessionSetup)
        try PostgreSQLSchema.migrate(connection, schema: schema, components: [PostgreSQLSchema.store] + components, creating: creating)
        quotedSchema = try connection.quoteIdentifier(schema)
        guard let oid = try connection.integer("SELECT oid::bigint FROM pg_namespace WHERE nspname = ?", [.text(schema)]) else {
            throw OutliveError(.io, "the schema \(schema) vanished right after it was created")
        }
        schemaOID = oid
        storeKey = Int32(truncatingIfNeeded: oid)
        // storeKey is our own integer: inlined, the lock statement is the same text every time.
        writeOpening = ["SELECT pg_advisory_xact_lock(\(storeKey), 0)"]
        // SET LOCAL needs a transaction block: this one begins explicitly.
        unsyncedWriteOpening = ["BEGIN"] + writeOpening + ["SET LOCAL synchronous_commit = off"]
    }

    private final class Transaction: StoreTransaction {
        let connection: PostgreSQLConnection
        /// Committed without waiting for the WAL's flush (`unsyncedWrite`,
        /// `unserialisedWrite`: in the latter, with no retry, `requireSync`
        /// fails the transaction rather than leave an outcome unsynced).
        var unsynced = false

        func requireSync() throws {
            if unsynced { throw SyncRequired() }
        }
        var newestSequence: Int64?
        var commitActions: [() -> Void] = []
        /// Feed entries recorded, written with the commit (see `sendChanges`):
        /// each only when a run other than `excluded` ("": any run) watches its topic.
        var changes: [(topic: String, key: String, excluded: String)] = []
        /// How many of them were written (their topic watched).
        var writtenChanges: Int64 = 0
        /// A run other than this handle's watches an entry written: a NOTIFY
        /// follows the commit (`notifyAfterCommit`).
        var notified = false
        /// This handle's run ("": none yet, every entry notifies).
        let ownRun: String
        /// The topics this handle's run watches: a change of one that no
        /// other run watches is handed over in memory, not written.
        let ownTopics: Set<String>
        /// Such changes, known once the feed statements' replies are read.
        var ownChanges: [(topic: String, key: String)] = []
        /// A statement was sent whose change, not written, would be handed
        /// over: a COMMIT whose reply is lost leaves it unknown (see `transaction`).
        var mayHandOver = false
        /// Without the store's write lock (`unserialisedWrite`): no feed entry.
        let serialised: Bool
        /// Nothing the body did read a result: every statement was sent with
        /// `executeLater`, kept in `later` to be sent again as it was
        /// (PostgreSQLWatchKnowledge).
        private(set) var blind = true
        private(set) var later: [(sql: String, arguments: [SQLValue], change: (topic: String, key: String)?)] = []
        /// The transaction's feed statements were left out for the check of
        /// the watchers' count (`PostgreSQLWatchKnowledge.checkSQL`).
        var checkedWatchers = false
        /// What the transaction read of the watchers (`PostgreSQLWatchKnowledge.readSQL`).
        var watchReading: PostgreSQLWatchKnowledge.Reading?
        /// What the handle knew of the other runs' watchers when the
        /// transaction began (its lock held throughout, it stays so).
        let knowledge: PostgreSQLWatchKnowledge?
        /// Statements sent for `executeLater(_:_:recordingChangeOf:key:)`
        /// without their feed entry (no other run watched the topic), and
        /// whether each changed a row, known once its result is read.
        private(set) var plainChanges: [(topic: String, key: String, changed: Bool)] = []
        /// A statement with its feed entry was sent (`executeLater(_:_:recordingChangeOf:key:)`):
        /// worth reading the watchers for the next, when the handle has not.
        private(set) var sentChangingStatement = false
        /// PostgreSQL keeps no data version.
        var dataVersion: UInt64? { nil }
        var committedDataVersion: UInt64? { nil }
        func keepCommittedDataVersion() {}

        init(connection: PostgreSQLConnection, ownRun: String, ownTopics: Set<String>, serialised: Bool,
             knowledge: PostgreSQLWatchKnowledge?) {
            self.connection = connection
            self.ownRun = ownRun
            self.ownTopics = ownTopics
            self.serialised = serialised
            self.knowledge = knowledge
        }

        private func requireSerialised(_ topic: String, _ key: String) throws {
            guard serialised else {
                throw OutliveError.state("a change (\(topic) \(key)) was recorded in a transaction without the store's write lock, which the feed's order needs")
            }
        }

        var engine: StoreEngine { .postgresql }

        func execute(_ sql: String, _ arguments: [SQLValue], row: ((SQLRow) throws -> Void)?) throws {
            readSomething()
            try connection.run(sql, arguments, row: row)
        }

        private func readSomething() {
            blind = false
            later = []
        }

        func executeLater(_ sql: String, _ arguments: [SQLValue]) throws {
            if blind { try keep((sql, arguments, nil)) }
            try connection.send(sql, arguments)
        }

        /// Most blind transactions send a statement or three (a kv set, a
        /// task add, a signal post); one that sends more (a batch) is not
        /// kept to be sent again, its arguments held in memory till its
        /// end: it reads the results sent so far, as a read would, and goes
        /// with its feed statements.
        static let replayableStatements = 16

        private func keep(_ statement: (sql: String, arguments: [SQLValue], change: (topic: String, key: String)?)) throws {
            guard later.count < Self.replayableStatements else {
                // The plain statements' results, for their changes to be recorded.
                if !plainChanges.isEmpty { try connection.sync() }
                return readSomething()
            }
            later.append(statement)
        }

        func executeLater(_ sql: String, _ arguments: [SQLValue], recordingChangeOf topic: String, key: String) throws {
            try requireSerialised(topic, key)
            sentChangingStatement = true
            if blind { try keep((sql, arguments, (topic, key))) }
            if blind, let knowledge, knowledge.coversAll([(topic, key, "")], ownRun: ownRun) {
                // No other run watched the topic: the statement alone, its
                // feed entry left to the check of the watchers at the commit.
                let index = plainChanges.count
                plainChanges.append((topic, key, false))
                if handsOver(topic) { mayHandOver = true }
                // Read before the changes are recorded or handed over (every read syncs first).
                return try connection.send(sql + " RETURNING 1", arguments) { _ in
                    if index < self.plainChanges.count { self.plainChanges[index].changed = true }
                }
            }
            guard handsOver(topic) else {
                return try connection.send(PostgreSQLBackend.changingStatement(sql),
                                           arguments + [.text(topic), .text(key), .text(topic), .text(topic), .text(ownRun)], row: noteEntries)
            }
            mayHandOver = true
            try connection.send(PostgreSQLBackend.changingStatementForOthers(sql),
                                arguments + [.text(topic), .text(key), .text(topic), .text(ownRun)]) { row in
                self.noteEntryForOthers(row, topic: topic, key: key)
            }
        }

        /// Whether a change of `topic` is this run's to read in memory when
        /// no other run watches it.
        func handsOver(_ topic: String) -> Bool {
            !ownRun.isEmpty && ownTopics.contains(topic)
        }

        /// The reply of a statement that writes an entry only when a run
        /// other than this handle's watches (then notified): the entry's
        /// sequence, or NULL and whether the change happened (then this
        /// run's, in memory).
        func noteEntryForOthers(_ row: SQLRow, topic: String, key: String) {
            if row.isNull(0) {
                if row.integer(1) != 0 { ownChanges.append((topic, key)) }
                return
            }
            newestSequence = max(newestSequence ?? row.integer(0), row.integer(0))
            writtenChanges += 1
            notified = true
        }

        /// The entries a feed statement wrote (a row: the newest, how many,
        /// whether a run other than this handle's watches one), read with its result.
        func noteEntries(_ row: SQLRow) {
            guard !row.isNull(0) else { return }
            newestSequence = max(newestSequence ?? row.integer(0), row.integer(0))
            writtenChanges += row.integer(1)
            if row.integer(2) != 0 { notified = true }
        }

        func executeScript(_ sql: String) throws {
            readSomething()
            try connection.exec(sql)
        }

        /// Before the commit of a transaction that read something after a
        /// statement sent without its feed entry (its result read then): the
        /// changes such statements made, recorded as any other, so that the
        /// feed statements decide their entries. A blind transaction keeps
        /// them for the check of the watchers.
        func recordPlainChangesUnlessBlind() {
            guard !blind else { return }
            for change in plainChanges where change.changed { changes.append((change.topic, change.key, "")) }
            plainChanges = []
        }

        /// The feed statements wrote no entry for a change whose topic the
        /// handle knew as watched by another run: that watcher went (its
        /// removal moves the count, but only a write that checks sees it).
        /// Known watched, a topic never gets the check, so without this the
        /// handle would send its feed statements for good.
        var foundWatchersGone: Bool {
            guard let knowledge, !checkedWatchers, writtenChanges == 0 else { return false }
            return changes.contains { ($0.excluded.isEmpty || $0.excluded == ownRun) && knowledge.watchedByOthers.contains($0.topic) }
        }

        /// Once a blind transaction committed: the changes its plain
        /// statements made that this handle's run watches, handed over in memory.
        func handOverPlainChanges() {
            for change in plainChanges where change.changed && handsOver(change.topic) {
                ownChanges.append((change.topic, change.key))
            }
        }

        /// Sends again what `blind` sent, and records its changes: the body's
        /// transaction as it was, after its check of the watchers failed.
        func replay(_ original: Transaction) throws {
            for statement in original.later {
                if let change = statement.change {
                    try executeLater(statement.sql, statement.arguments, recordingChangeOf: change.topic, key: change.key)
                } else {
                    try executeLater(statement.sql, statement.arguments)
                }
            }
            changes = original.changes
        }

        var changedRows: Int { connection.changes }

        func recordChange(topic: String, key: String) throws {
            try requireSerialised(topic, key)
            changes.append((topic, key, ""))
        }

        func recordChange(topic: String, key: String, watchedByOtherThan run: String) throws {
            try requireSerialised(topic, key)
            changes.append((topic, key, run))
        }

        func afterCommit(_ body: @escaping () -> Void) { commitActions.append(body) }
    }

    private func enter() throws {
        let marker = Unmanaged.passUnretained(self).toOpaque()
        if COutlive_current_transaction() == marker {
            throw OutliveError.state("the store was used from inside its own transaction (a kv_update modifier or another callback that runs in a transaction); use the value passed to the callback instead")
        }
    }

    /// A lost connection (server restarted, link dropped) is made again before
    /// the next transaction; a transaction under way when it was lost failed.
    private func ensureConnected() throws {
        guard connection.isBroken else { return }
        try connection.reconnect()
        try connection.exec("\(Self.sessionSetup); SET search_path = \(quotedSchema)")
    }

    /// What every session of the handle's transactions starts with. The
    /// second statement is for the server process's memory: PostgreSQL 15
    /// allocates about 27 kB for each B-tree scan (with malloc, above its
    /// contexts' chunk limit), and a post's statement runs four at once.
    /// glibc's malloc gives memory at the heap's top back to the system
    /// above 128 kB free, and took it again on the next statement: two brk
    /// calls and several page faults per post (measured: 6,003 brk calls in
    /// 3,000 posts, none in 3,000 kv sets or task adds). A block freed above
    /// the mmap threshold raises both thresholds for the session's life
    /// (glibc's dynamic thresholds: mmap 1 MB, trim 2 MB), after which the
    /// server keeps the memory it reuses. Harmless where the server's
    /// malloc is another one or its thresholds were set.
    static let sessionSetup = "SET bytea_output = 'hex'; SELECT length(repeat('x', 1048576))"

    /// Round trips: BEGIN and the store's lock go with the transaction's first
    /// statement, statements sent with `executeLater` with the next one, and
    /// the feed entries and COMMIT together (the NOTIFY after, unread): a write of statements
    /// whose results it does not read (a kv set) is one round trip, as an
    /// autocommit INSERT is. A transaction that ran no statement sends nothing.
    private enum Kind {
        case read, write, unsyncedWrite, unserialisedWrite
    }

    private func transaction<T>(_ kind: Kind, _ body: (StoreTransaction) throws -> T) throws -> (T, Transaction) {
        try enter()
        return try lock.withLock {
            let marker = Unmanaged.passUnretained(self).toOpaque()
            COutlive_set_current_transaction(marker)
            defer { COutlive_set_current_transaction(nil) }
            try ensureConnected()
            return try attempt(kind, body)
        }
    }

    /// One transaction (the caller holds `lock`); when its check of the
    /// watchers' count failed, its statements again with their feed statements.
    private func attempt<T>(_ kind: Kind, _ body: (Transaction) throws -> T) throws -> (T, Transaction) {
        let write = kind != .read
        let transaction = Transaction(connection: connection, ownRun: ownRun, ownTopics: ownTopics, serialised: kind != .unserialisedWrite,
                                      knowledge: watchKnowledge?.run == ownRun ? watchKnowledge : nil)
        transaction.unsynced = kind == .unsyncedWrite || kind == .unserialisedWrite
        var commitSent = false
        var produced: T?
        switch kind {
        case .write:
            connection.open(writeOpening, implicit: true)
        case .unsyncedWrite:
            // A claim before a handler (StoreBackend.unsyncedWrite): as
            // `.unserialisedWrite` below, under the store's lock.
            connection.open(unsyncedWriteOpening)
        case .unserialisedWrite:
            // Its commit need not wait for the disk: what it writes (a
            // claim) a later durable commit (the end of the attempt) makes
            // durable with it, the WAL being one sequence; a claim lost
            // with the server returns its task to ready, its attempt
            // uncounted, and the task runs again.
            connection.open(["BEGIN", "SET LOCAL synchronous_commit = off"])
        case .read:
            connection.open(["BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"])
        }
        do {
            let result = try body(transaction)
            produced = result
            guard connection.lastStatus != Int32(COUTLIVE_PQTRANS_INERROR) else {
                throw OutliveError.state("a statement failed inside the transaction, which PostgreSQL then rolls back as a whole")
            }
            if !write && connection.opened {
                // What was read stands whatever the COMMIT of a read-only
                // transaction says: its reply is read at the next use.
                try connection.send("COMMIT", [])
                connection.syncLater()
            } else if connection.opened || !transaction.changes.isEmpty {
                transaction.recordPlainChangesUnlessBlind()
                if !transaction.changes.isEmpty || !transaction.plainChanges.isEmpty
                    || (transaction.knowledge == nil && transaction.sentChangingStatement) {
                    try sendChanges(transaction)
                }
                commitSent = true
                try connection.commit()
                transaction.handOverPlainChanges()
                if let reading = transaction.watchReading {
                    watchKnowledge = reading.knowledge(run: transaction.ownRun)
                } else if transaction.foundWatchersGone {
                    watchKnowledge = nil  // the next write reads them again
                }
                notifyAfterCommit(transaction)
                pruneIfDue(transaction)
            } else {
                connection.discardOpening()
            }
            return (result, transaction)
        } catch {
            connection.rollback()
            // The watchers changed since this handle read them: the
            // transaction, rolled back, goes again with its feed statements
            // (its body read nothing, so its statements are what it did).
            if let produced, transaction.checkedWatchers, !connection.isBroken,
               connection.lastFailedSQL == PostgreSQLWatchKnowledge.checkSQL {
                watchKnowledge = nil
                let (_, again) = try attempt(kind) { try $0.replay(transaction) }
                again.commitActions = transaction.commitActions
                return (produced, again)
            }
            // The COMMIT went out and the connection died before its
            // reply: the transaction may have committed, and a change it
            // would have handed over is unknown (the reply that says
            // whether its entry was written was lost too). Its feed
            // entry, when written, is read as any other.
            if commitSent && connection.isBroken && transaction.mayHandOver { ownChanges.requestResync() }
            throw error
        }
    }

    /// What this handle read of the other runs' watchers (guarded by `lock`;
    /// read by the tests).
    private(set) var watchKnowledge: PostgreSQLWatchKnowledge?

    /// Feed entries a statement writes at most (its parameters: three each).
    static let feedBatch = 100
    private var feedStatements: [Int: String] = [:]

    /// Sends the transaction's feed entries in front of its COMMIT, in one
    /// statement: each entry numbered after the newest (the store's lock is
    /// held), written only when a live run watches its topic; the statement
    /// says whether a run other than this handle's watches one that was
    /// (then a NOTIFY follows the commit: `notifyAfterCommit`). A transaction
    /// of more than `feedBatch` entries writes the others first, a round trip
    /// per batch.
    private func sendChanges(_ transaction: Transaction) throws {
        if let knowledge = transaction.knowledge {
            if transaction.blind && knowledge.coversAll(transaction.changes, ownRun: transaction.ownRun) {
                return try checkWatchers(knowledge, instead: transaction)
            }
            // Statements sent without their entries need the check all the same.
            if !transaction.plainChanges.isEmpty {
                try connection.send(PostgreSQLWatchKnowledge.checkSQL, [.integer(knowledge.changes)])
                transaction.checkedWatchers = true
            }
        } else {
            var reading = PostgreSQLWatchKnowledge.Reading()
            transaction.watchReading = reading
            try connection.send(PostgreSQLWatchKnowledge.readSQL, [.text(transaction.ownRun)]) { row in
                reading.add(row)
                transaction.watchReading = reading
            }
        }
        guard !transaction.changes.isEmpty else { return }
        func arguments(_ changes: ArraySlice<(topic: String, key: String, excluded: String)>) -> [SQLValue] {
            guard changes.count > 1 else {
                return changes.flatMap { [.text($0.topic), .text($0.key), .text($0.topic), .text($0.excluded), .text($0.topic), .text(transaction.ownRun)] }
            }
            return changes.flatMap { [.text($0.topic), .text($0.key), .text($0.excluded)] } + [.text(transaction.ownRun)]
        }
        var rest = transaction.changes[...]
        while rest.count > Self.feedBatch {
            let batch = rest.prefix(Self.feedBatch)
            rest = rest.dropFirst(Self.feedBatch)
            try connection.run(feedStatement(batch.count), arguments(batch), row: transaction.noteEntries)
        }
        if rest.count == 1, let change = rest.first, !transaction.ownRun.isEmpty, change.excluded == transaction.ownRun {
            try connection.send(entryForOthers, [.text(change.topic), .text(change.key), .text(change.topic), .text(change.excluded)],
                                row: transaction.noteEntries)
        } else if rest.count == 1, let change = rest.first, change.excluded.isEmpty, transaction.handsOver(change.topic) {
            transaction.mayHandOver = true
            try connection.send(entryForOthersOrOwn, [.text(change.topic), .text(change.key), .text(change.topic), .text(transaction.ownRun)]) {
                transaction.noteEntryForOthers($0, topic: change.topic, key: change.key)
            }
        } else {
            try connection.send(feedStatement(rest.count), arguments(rest), row: transaction.noteEntries)
        }
    }

    /// No other run watched the changes' topics when this handle read the
    /// watchers: the check that none came since, in place of the feed
    /// statements; the changes this handle's run watches are handed over in
    /// memory, as `entryForOthersOrOwn` does when it writes no entry (a
    /// change that excludes this run, as a task add's, is not its to read).
    private func checkWatchers(_ knowledge: PostgreSQLWatchKnowledge, instead transaction: Transaction) throws {
        try connection.send(PostgreSQLWatchKnowledge.checkSQL, [.integer(knowledge.changes)])
        transaction.checkedWatchers = true
        for change in transaction.changes where change.excluded.isEmpty && transaction.handsOver(change.topic) {
            transaction.mayHandOver = true
            transaction.ownChanges.append((change.topic, change.key))
        }
    }

    /// The doorbell, rung once the commit's reply is read: a NOTIFY in its
    /// own transaction, sent without waiting (its reply is read with the
    /// connection's next results). Inside the writing transaction it cost the
    /// writer's COMMIT about 40 µs with one listening session and 18 µs more
    /// for each other one (measured: PostgreSQL signals every listening
    /// session of the database at commit, before it replies, and their
    /// wake-ups take the CPU the reply needs); after the reply the writer
    /// pays only the send. It is a hint: one lost with the connection or
    /// the process in between costs a watcher latency (its handle reads
    /// the feed after each liveness check in any case). Its transaction
    /// writes no WAL but its commit record, so it does not wait for the disk.
    private func notifyAfterCommit(_ transaction: Transaction) {
        guard transaction.notified, let newest = transaction.newestSequence else { return }
        do {
            try connection.send(notifyStatement, [.text(String(newest))])
            connection.syncLater()
        } catch {
            Log.emit(.warning, "store \(schema): the doorbell after a commit could not be sent; watchers will read the change at their next check: \((error as? OutliveError)?.message ?? "\(error)")")
        }
    }

    private lazy var notifyStatement = "SELECT pg_notify('\(channel)', ?)"

    /// One entry written only when a run other than this handle's watches
    /// its topic (`recordChange(topic:key:watchedByOtherThan:)`, a task
    /// add): then it is watched by another, with no second look at the
    /// watchers. Without that look's subquery (initialised whether it runs
    /// or not) the server spends 2–6 µs less on an add that writes no entry
    /// (measured beside the general statement).
    private let entryForOthers = PostgreSQLBackend.entryIfOthersWatch + "SELECT seq, 1, 1 FROM entries"

    /// `entryForOthers` for a change this handle's run also watches: its
    /// reply is a row either way (NULL: not written, the change is this
    /// run's alone, handed over in memory).
    private let entryForOthersOrOwn = PostgreSQLBackend.entryIfOthersWatch + "SELECT (SELECT seq FROM entries), 1"

    /// The entry (topic, key) when a run other than the last parameter's watches its topic.
    private static let entryIfOthersWatch = """
        WITH entries AS (
            INSERT INTO outlive_feed(seq, topic, key)
            SELECT coalesce((SELECT max(seq) FROM outlive_feed), 0) + 1, ?, ?
            WHERE EXISTS (SELECT 1 FROM outlive_watchers WHERE topic = ? AND run_id <> ?)
            RETURNING seq)

        """

    /// The feed's statement for `count` entries: its rows' newest sequence,
    /// how many were written and whether a run other than this handle's
    /// (the last parameter) watches one of them (none written: no row). One
    /// entry, the usual case, has a plainer statement (a fifth of the
    /// server's work for a kv set less, measured).
    private func feedStatement(_ count: Int) -> String {
        if let cached = feedStatements[count] { return cached }
        let sql: String
        if count == 1 {
            sql = """
                WITH entries AS (
                    INSERT INTO outlive_feed(seq, topic, key)
                    SELECT coalesce((SELECT max(seq) FROM outlive_feed), 0) + 1, ?, ?
                    WHERE EXISTS (SELECT 1 FROM outlive_watchers WHERE topic = ? AND run_id <> ?)
                    RETURNING seq)
                SELECT seq, 1, watched::integer
                FROM entries, \(Self.othersWatching)
                """
        } else {
            let rows = (1...count).map { "(\($0), ?, ?, ?)" }.joined(separator: ", ")
            sql = """
                WITH changes(n, topic, key, excluded) AS (VALUES \(rows)),
                entries AS (
                    INSERT INTO outlive_feed(seq, topic, key)
                    SELECT coalesce((SELECT max(seq) FROM outlive_feed), 0) + row_number() OVER (ORDER BY n), topic, key
                    FROM changes WHERE EXISTS (SELECT 1 FROM outlive_watchers w WHERE w.topic = changes.topic AND w.run_id <> changes.excluded)
                    RETURNING seq, topic),
                flagged AS (
                    SELECT seq, EXISTS (SELECT 1 FROM outlive_watchers w WHERE w.topic = entries.topic AND w.run_id <> ?) AS watched
                    FROM entries)
                SELECT max(seq), count(*), bool_or(watched)::integer
                FROM flagged HAVING count(*) > 0
                """
        }
        feedStatements[count] = sql
        return sql
    }

    /// `sql` (an INSERT, UPDATE or DELETE) with the feed entry it makes when
    /// it changes a row, in one statement: the entry numbered after the
    /// newest (the store's lock is held; the statement sees the entries of
    /// the transaction's earlier statements, and later ones see its entry),
    /// written only when a live run watches the topic, and whether a run
    /// other than this handle's does (then the commit is followed by a
    /// NOTIFY). Its parameters: `sql`'s, then topic, key, topic, topic, this
    /// handle's run. The connection caches the statement it prepares from
    /// this text.
    static func changingStatement(_ sql: String) -> String {
        changeAndEntry(sql, watcherOtherThan: "''") + """
            SELECT seq, 1, watched::integer
            FROM entries, \(othersWatching)
            """
    }

    /// `changingStatement` for a topic this handle's run watches: the entry
    /// written only when a run other than this handle's watches (then a
    /// NOTIFY follows), and a row either way: the entry's sequence or NULL,
    /// and whether `sql` changed a row (then, not written, the change is
    /// handed to this run in memory: see OwnChanges). Its parameters:
    /// `sql`'s, then topic, key, topic, this handle's run.
    static func changingStatementForOthers(_ sql: String) -> String {
        changeAndEntry(sql, watcherOtherThan: "?") + """
            SELECT (SELECT seq FROM entries), EXISTS (SELECT 1 FROM changed)::integer
            """
    }

    /// The two statements' CTEs: `sql`, and its entry when it changed a row
    /// and a run other than `watcherOtherThan` (SQL) watches the topic.
    private static func changeAndEntry(_ sql: String, watcherOtherThan run: String) -> String {
        """
        WITH changed AS (\(sql) RETURNING 1),
        entries AS (
            INSERT INTO outlive_feed(seq, topic, key)
            SELECT coalesce((SELECT max(seq) FROM outlive_feed), 0) + 1, ?, ?
            WHERE EXISTS (SELECT 1 FROM changed)
              AND EXISTS (SELECT 1 FROM outlive_watchers WHERE topic = ? AND run_id <> \(run))
            RETURNING seq)

        """
    }

    /// Whether a run other than this handle's watches the entry's topic
    /// (parameters: topic, run), read once per entry written. As a plain CTE
    /// the planner copied its EXISTS into each of the two expressions that
    /// use it: two scans of the watchers where an entry is written (a
    /// signal post), about 3 µs of the server's CPU of its ~45 over a raw
    /// INSERT (measured). OFFSET 0 keeps it one subquery.
    static let othersWatching = """
        LATERAL (SELECT EXISTS (SELECT 1 FROM outlive_watchers WHERE topic = ? AND run_id <> ?) AS watched OFFSET 0) AS others
        """

    /// After a commit whose entries passed a multiple of `pruneEvery`: entries
    /// older than `feedRetention` go, in a statement of their own (old entries
    /// are never read as current, so it needs neither the lock nor the
    /// writer's transaction). A failure is left to the next multiple.
    private func pruneIfDue(_ transaction: Transaction) {
        // A crafted feed may hold any sequence, negative ones too: never subtract past Int64.min.
        guard let newest = transaction.newestSequence, newest > Self.feedRetention,
              newest / Self.pruneEvery != (newest - transaction.writtenChanges) / Self.pruneEvery else { return }
        try? connection.run("DELETE FROM outlive_feed WHERE seq <= ?", [.integer(newest - Self.feedRetention)])
    }

    /// This handle's run from now on: entries only it watches send no NOTIFY.
    func setOwnRun(_ run: String) {
        lock.withLock {
            ownRun = run
            watchKnowledge = nil
        }
    }

    func noteOwnWatch(topic: String) {
        lock.withLock { _ = ownTopics.insert(topic) }
    }

    func write<T>(_ body: (StoreTransaction) throws -> T) throws -> T {
        try serialisedWrite(.write, body)
    }

    private func serialisedWrite<T>(_ kind: Kind, _ body: (StoreTransaction) throws -> T) throws -> T {
        let (result, transaction) = try self.transaction(kind, body)
        if !transaction.ownChanges.isEmpty { ownChanges.append(transaction.ownChanges) }
        if let sequence = transaction.newestSequence { onChangesCommitted?(sequence) }
        // A NOTIFY wakes this handle too: its own changes are read with the feed.
        if !transaction.notified && (transaction.newestSequence != nil || !transaction.ownChanges.isEmpty) {
            onOwnChangesCommitted?()
        }
        for action in transaction.commitActions { action() }
        return result
    }

    /// The server's asynchronous commit for this transaction alone: its
    /// COMMIT returns before the WAL's flush (the server flushes it within
    /// `wal_writer_delay`, or with the next synchronous commit); a server
    /// crash before then loses it and nothing else.
    func unsyncedWrite<T>(beforeRetry: () -> Void, _ body: (StoreTransaction) throws -> T) throws -> T {
        do {
            return try serialisedWrite(.unsyncedWrite, body)
        } catch is SyncRequired {
            beforeRetry()
            return try write(body)
        }
    }

    /// Read committed, as every write: each statement sees what committed
    /// before it, and a row another claimer locked is skipped, not waited for.
    func unserialisedWrite<T>(_ body: (StoreTransaction) throws -> T) throws -> T {
        let (result, transaction) = try self.transaction(.unserialisedWrite, body)
        for action in transaction.commitActions { action() }
        return result
    }

    func read<T>(_ body: (StoreTransaction) throws -> T) throws -> T {
        try transaction(.read, body).0
    }

    func changes(after sequence: Int64, limit: Int) throws -> (changes: [Change], oldestKept: Int64?) {
        try read { try changes(after: sequence, limit: limit, in: $0) }
    }

    func latestSequence() throws -> Int64 {
        try read { try $0.integer("SELECT max(seq) FROM outlive_feed") ?? 0 }
    }

    // MARK: - Runs and their liveness locks

    /// Registers a run whose liveness lock (PostgreSQLRunLock) holds `lockKey`.
    func registerRun(_ runID: String, process: String, pid: Int64, host: String, lockKey: Int32) throws {
        try write {
            try $0.execute("INSERT INTO outlive_runs(run_id, process, pid, started, host, lock_key) VALUES (?, ?, ?, extract(epoch from clock_timestamp()), ?, ?)",
                           [.text(runID), .text(process), .integer(pid), .text(host), .integer(Int64(lockKey))])
        }
    }

    /// The lock keys of this store's runs whose session lock is held now (key 0
    /// is the store's write lock, never a run's). A run
    /// is alive exactly while its key is in here: the server frees a session
    /// lock when the session ends, at the holder's death or after the
    /// keepalive/tcp_user_timeout bound when its host is cut off.
    func heldRunKeys() throws -> Set<Int32> {
        var keys: Set<Int32> = []
        try read { transaction in
            try transaction.query("""
                SELECT objid::bigint FROM pg_locks
                WHERE locktype = 'advisory' AND objsubid = 2 AND granted AND objid <> 0
                  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                  AND classid = ?::bigint::oid
                """, [.integer(schemaOID)]) { keys.insert(Int32(truncatingIfNeeded: $0.integer(0))) }
        }
        return keys
    }

    /// The ids of this store's registered runs whose lock is held now: one
    /// statement. Inside a transaction of this backend (a claim that meets a
    /// holder) it runs in that transaction; pg_locks shows the locks as they
    /// are now, whatever the transaction's snapshot.
    func liveRunIDs() throws -> Set<String> {
        let sql = """
            SELECT r.run_id FROM outlive_runs r
            JOIN pg_locks l ON l.locktype = 'advisory' AND l.objsubid = 2 AND l.granted
                AND l.classid = ?::bigint::oid AND l.objid = r.lock_key::bigint::oid
                AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
            """
        var runs: Set<String> = []
        let collect: (SQLRow) throws -> Void = { if let run = $0.text(0) { runs.insert(run) } }
        if COutlive_current_transaction() == Unmanaged.passUnretained(self).toOpaque() {
            try connection.run(sql, [.integer(schemaOID)], row: collect)
        } else {
            try read { try $0.query(sql, [.integer(schemaOID)], collect) }
        }
        return runs
    }

    func isAlive(lockKey: Int32) throws -> Bool {
        try heldRunKeys().contains(lockKey)
    }

    /// Registered runs whose lock is free: ended (closed or dead).
    /// The runs are read before the locks: a run takes its lock before it
    /// registers, so a run registered in between cannot look ended.
    func endedRuns() throws -> [(runID: String, processName: String)] {
        var runs: [(String, String, Int32)] = []
        try read { transaction in
            try transaction.query("SELECT run_id, process, lock_key FROM outlive_runs ORDER BY started") { row in
                runs.append((row.text(0) ?? "", row.text(1) ?? "", Int32(truncatingIfNeeded: row.integer(2))))
            }
        }
        let held = try heldRunKeys()
        return runs.filter { !held.contains($0.2) }.map { ($0.0, $0.1) }
    }

    /// Drops the store's schema and everything in it (tests; a future
    /// `outlive` command). Other handles of the store fail afterwards.
    func dropStore() throws {
        try lock.withLock { try connection.exec("DROP SCHEMA IF EXISTS \(quotedSchema) CASCADE") }
    }
}
