import COutliveSystem

/// How a commit reaches the disk. `full` (the default): every acknowledged
/// change survives power loss. `normal`: survives a crash of the process, and
/// may lose the last transactions on power loss, for several times the speed.
public enum Durability: Int32 {
    case full = 1
    case normal = 2
}

/// The SQLite store: one connection per open store handle, WAL mode, writers
/// serialised by BEGIN IMMEDIATE across processes and by a mutex in-process.
final class SQLiteBackend: StoreBackend {
    private let connection: SQLiteConnection
    private let lock = Lock()
    private let group = GroupCommit()
    /// Called after a commit that recorded changes a run other than this
    /// handle's watches, with the newest sequence (rings the doorbell).
    var onChangesCommitted: ((Int64) -> Void)?
    /// Called after a commit whose changes only this handle's run watches:
    /// no other process needs waking, only this handle's loop.
    var onOwnChangesCommitted: (() -> Void)?
    let ownChanges = OwnChanges()
    /// This handle's run, set once it is registered (before that, every entry
    /// rings the doorbell), and the topics it watches (guarded by `lock`).
    @exclusivity(unchecked) private var ownRun: String?
    @exclusivity(unchecked) private var ownTopics: Set<String> = []
    /// What this handle's last write or group left known (guarded by `lock`).
    @exclusivity(unchecked) private var unwatched = UnwatchedTopics()

    var engine: StoreEngine { .sqlite }

    static let feedRetention: Int64 = 65_536
    /// The checkpoint pacing (SQLiteConnection.paceCheckpoints): each connection
    /// checkpoints at SQLite's own 1,000 frames, then once per 256 frames the
    /// log has grown by since its last checkpoint while readers keep the log
    /// from starting over. Larger steps gained a little more throughput for a
    /// much larger log (docs/store.md, "Checkpoints paced by the log's growth",
    /// has the figures).
    static let checkpointFirst: Int32 = 1_000
    static let checkpointStep: Int32 = 256
    static let pruneEvery: Int64 = 4_096
    /// The log's size kept between opens and filled ahead (kept_log.c): the
    /// frames a lone writer reaches before its first checkpoint lets the log
    /// start over, and a margin for the transaction that crosses it. Within
    /// it, a commit's sync writes over blocks already written (docs/store.md,
    /// "The log is kept and filled ahead").
    static let keptLogBytes: Int64 = 32 + Int64(checkpointFirst + 64) * (4_096 + 24)

    private let logPath: String
    /// `full`: a commit syncs the log (but `unsyncedWrite`'s).
    private let syncsCommits: Bool
    /// An `unsyncedWrite` could not set `synchronous` back to FULL: the next
    /// transaction sets it first (guarded by `lock`).
    @exclusivity(unchecked) private var syncToRestore = false

    init(path: String, durability: Durability, busyTimeoutMilliseconds: Int32) throws {
        let registered = COutlive_sqlite3_register_kept_log(SQLiteBackend.keptLogBytes)
        guard registered == SQLITE_OK else {
            throw OutliveError(.io, "cannot register the store's SQLite VFS: \(String(cString: sqlite3_errstr(registered)))")
        }
        logPath = path + "-wal"
        connection = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX,
                                          vfs: COUTLIVE_KEPT_LOG_VFS)
        COutlive_sqlite3_busy_wait(connection.handle, busyTimeoutMilliseconds)
        // Switching a new database to WAL needs an exclusive lock, and SQLite
        // returns SQLITE_BUSY at once — without its busy handler — while another
        // process opens the same new store: retry until the busy timeout.
        var mode = ""
        let deadline = Clock.monotonic() + Double(busyTimeoutMilliseconds) / 1000
        var pause: UInt32 = 500
        while true {
            do {
                try connection.run("PRAGMA journal_mode=WAL", []) { mode = $0.text(0) ?? "" }
                break
            } catch let error as OutliveError where error.code == .busy && Clock.monotonic() < deadline {
                usleep(pause)
                pause = min(pause * 2, 20_000)
            }
        }
        guard mode.lowercased() == "wal" else { throw OutliveError(.io, "database \(path) cannot use WAL mode (journal mode is \(mode))") }
        // Statement journals in memory: a statement that changes many rows
        // (a batch of tasks claimed or ended in one) keeps the pages it may
        // have to undo; past 64 KiB SQLite spilled them to a temporary file
        // of its own, created, written and unlinked for each such statement.
        try connection.exec("PRAGMA synchronous=\(durability == .full ? "FULL" : "NORMAL"); PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY")
        syncsCommits = durability == .full
        connection.paceCheckpoints(first: SQLiteBackend.checkpointFirst, step: SQLiteBackend.checkpointStep)
    }

    /// Fills the log ahead to `keptLogBytes` when it is shorter: at a store's
    /// first open, and after a program that is not Outlive (the sqlite3 shell)
    /// closed the store last and deleted its log. Best effort: a log that
    /// cannot be filled (a full disk) grows as SQLite writes it, as before.
    func fillLog() {
        var info = stat()
        if stat(logPath, &info) == 0 && Int64(info.st_size) >= SQLiteBackend.keptLogBytes { return }
        // Under the write lock: no other connection writes the log meanwhile.
        try? write { _ in
            var info = stat()
            guard stat(logPath, &info) == 0, Int64(info.st_size) < SQLiteBackend.keptLogBytes else { return }
            _ = COutlive_sqlite3_fill_log(logPath, SQLiteBackend.keptLogBytes)
        }
    }

    /// Checkpoints this handle's connection started (tests).
    var checkpointsStarted: UInt64 { lock.withLock { connection.checkpointsStarted } }

    /// BEGIN IMMEDIATE for a write, BEGIN for a read.
    private func begin(writing: Bool) throws {
        if writing { try connection.run(.beginImmediate, []) } else { try connection.run("BEGIN", []) }
    }

    private func commit() throws {
        try connection.run(.commit, [])
    }

    /// This handle's run from now on: entries only it watches no longer ring the doorbell.
    func setOwnRun(_ run: String) {
        lock.withLock { ownRun = run }
    }

    /// This handle's run watches `topic` (called before its watcher row is
    /// written: an entry written meanwhile is one more, never one missing).
    func noteOwnWatch(topic: String) {
        lock.withLock { _ = ownTopics.insert(topic) }
    }

    private final class Transaction: StoreTransaction {
        let connection: SQLiteConnection
        let ownRun: String?
        let ownTopics: Set<String>
        /// Topics no other run watches, known from this handle's last commit
        /// (or from the members of its group before this one).
        var unwatched: UnwatchedTopics
        var newestSequence: Int64?
        /// An entry was written that a run other than this handle's watches.
        var ringsDoorbell = false
        /// Changes only this handle's run watches: no entry (see OwnChanges).
        var ownChanges: [(topic: String, key: String)] = []
        // One thread uses a transaction, and its commit actions run after it
        // (no run-time exclusivity check).
        @exclusivity(unchecked) var commitActions: [() -> Void] = []
        @exclusivity(unchecked) var committedDataVersion: UInt64?
        @exclusivity(unchecked) var keepsCommittedDataVersion = false

        /// Committed without a sync (`unsyncedWrite`).
        let unsynced: Bool

        init(connection: SQLiteConnection, ownRun: String?, ownTopics: Set<String>, unwatched: UnwatchedTopics = UnwatchedTopics(),
             unsynced: Bool = false) {
            self.connection = connection
            self.ownRun = ownRun
            self.ownTopics = ownTopics
            self.unwatched = unwatched
            self.unsynced = unsynced
        }

        func requireSync() throws {
            if unsynced { throw SyncRequired() }
        }

        var engine: StoreEngine { .sqlite }

        func execute(_ sql: String, _ arguments: [SQLValue], row: ((SQLRow) throws -> Void)?) throws {
            try connection.run(sql, arguments, row: row)
        }

        func executeScript(_ sql: String) throws {
            try connection.exec(sql)
        }

        var changedRows: Int { connection.changes }

        var dataVersion: UInt64? { connection.dataVersion }

        func recordChange(topic: String, key: String) throws {
            try recordEntry(topic: topic, key: key, forThisRun: true)
        }

        func recordChange(topic: String, key: String, watchedByOtherThan run: String) throws {
            if run == ownRun {
                try recordEntry(topic: topic, key: key, forThisRun: false)
                return
            }
            // The look and the entry in one statement (the protocol's default
            // runs the look, then `recordChange`).
            try connection.run(.feedEntryForOthers, [.text(topic), .text(key), .text(run)])
            guard connection.changes == 1 else { return }
            ringsDoorbell = true
            try entryWritten()
        }

        /// Written only when a live run other than this handle's reads this
        /// topic: otherwise the entry would only cost a page write (see
        /// KeptStatement.feedEntry). One that another run reads rings the
        /// doorbell after the commit (a write waking every process watching
        /// it, 5-7 µs at NORMAL when one sleeps); a change only this handle's
        /// run reads is handed to it in memory (OwnChanges) and wakes its own loop.
        private func recordEntry(topic: String, key: String, forThisRun: Bool) throws {
            if let ownRun {
                var written = false
                if !unwatched.isUnwatched(topic, dataVersion: { connection.dataVersion }) {
                    try connection.run(.feedEntryForOthers, [.text(topic), .text(key), .text(ownRun)])
                    written = connection.changes == 1
                    if !written { unwatched.learn(topic) }
                }
                if written {
                    ringsDoorbell = true
                } else {
                    if forThisRun, ownTopics.contains(topic) { ownChanges.append((topic, key)) }
                    return
                }
            } else {
                try connection.run(.feedEntry, [.text(topic), .text(key)])
                guard connection.changes == 1 else { return }
                ringsDoorbell = true
            }
            try entryWritten()
        }

        /// After a feed entry statement that wrote its entry.
        private func entryWritten() throws {
            let sequence = connection.lastInsertRowID
            newestSequence = sequence
            // A crafted feed may hold any sequence, negative ones too: never subtract past Int64.min.
            if sequence % SQLiteBackend.pruneEvery == 0 && sequence > SQLiteBackend.feedRetention {
                try connection.run("DELETE FROM outlive_feed WHERE seq <= ?", [.integer(sequence - SQLiteBackend.feedRetention)])
            }
        }

        func afterCommit(_ body: @escaping () -> Void) { commitActions.append(body) }

        func keepCommittedDataVersion() { keepsCommittedDataVersion = true }
    }

    private func enter() throws {
        let marker = Unmanaged.passUnretained(self).toOpaque()
        if COutlive_current_transaction() == marker {
            throw OutliveError.state("the store was used from inside its own transaction (a kv_update modifier or another callback that runs in a transaction); use the value passed to the callback instead")
        }
    }

    /// `committed`: the transaction, once committed. Not returned with the
    /// result: a tuple of a generic caller's type is looked up at run time,
    /// twice a write.
    private func transaction<T>(writing: Bool, synced: Bool = true, committed: inout Transaction?,
                                _ body: (StoreTransaction) throws -> T) throws -> T {
        try enter()
        return try lock.withLock {
            let marker = Unmanaged.passUnretained(self).toOpaque()
            COutlive_set_current_transaction(marker)
            defer { COutlive_set_current_transaction(nil) }
            try restoreSyncIfNeeded()
            let unsynced = !synced && syncsCommits
            if unsynced { try connection.exec("PRAGMA synchronous=NORMAL") }
            defer { if unsynced { restoreSync() } }
            let transaction = Transaction(connection: connection, ownRun: ownRun, ownTopics: ownTopics, unwatched: unwatched,
                                          unsynced: unsynced)
            // Cached statements: parsing BEGIN and COMMIT anew costs more than they do.
            try begin(writing: writing)
            do {
                let result = try body(transaction)
                try commit()
                // Under the lock: no other transaction of this handle in between.
                if transaction.keepsCommittedDataVersion || !transaction.commitActions.isEmpty || transaction.unwatched.used {
                    transaction.committedDataVersion = connection.dataVersion
                }
                // A write that looked at no topic leaves what was known at a
                // data version its commit moved past: the next write looks again.
                if transaction.unwatched.used { unwatched = transaction.unwatched.committed(at: transaction.committedDataVersion) }
                committed = transaction
                return result
            } catch {
                if sqlite3_get_autocommit(connection.handle) == 0 { try? connection.run("ROLLBACK", []) }
                throw error
            }
        }
    }

    func write<T>(_ body: (StoreTransaction) throws -> T) throws -> T {
        try write(synced: true, body)
    }

    /// SQLite applies `PRAGMA synchronous` when it compiles the statement,
    /// and only outside a transaction: it is set before BEGIN and back after
    /// the commit or rollback (the two `sqlite3_exec` 1.9 µs, measured in a
    /// loop, where a sync takes 100 µs and more).
    func unsyncedWrite<T>(beforeRetry: () -> Void, _ body: (StoreTransaction) throws -> T) throws -> T {
        guard syncsCommits else { return try write(body) }
        do {
            return try write(synced: false, body)
        } catch is SyncRequired {
            beforeRetry()
            return try write(synced: true, body)
        }
    }

    /// Sets `synchronous` back to FULL after an unsynced write; when that
    /// fails (SQLite out of memory), the next transaction does it first.
    private func restoreSync() {
        syncToRestore = (try? connection.exec("PRAGMA synchronous=FULL")) == nil
    }

    private func restoreSyncIfNeeded() throws {
        guard syncToRestore else { return }
        try connection.exec("PRAGMA synchronous=FULL")
        syncToRestore = false
    }

    private func write<T>(synced: Bool, _ body: (StoreTransaction) throws -> T) throws -> T {
        var committed: Transaction?
        let result = try transaction(writing: true, synced: synced, committed: &committed, body)
        if let transaction = committed {
            changesCommitted(transaction.newestSequence, ringing: transaction.ringsDoorbell, own: transaction.ownChanges)
            for action in transaction.commitActions { action() }
        }
        return result
    }

    /// Concurrent grouped writes of this handle share one transaction and one
    /// commit (see GroupCommit). A member that fails having changed nothing
    /// (a delete of a missing key, a refused argument; SQLite undoes a failed
    /// statement's own rows) fails alone, and the group commits the rest.
    /// When a member fails after it changed rows, or a failure ends the whole
    /// transaction (SQLite rolls back everything on a full disk, an I/O error,
    /// no memory, or an `OR ROLLBACK` conflict), or the commit fails, nothing of the group
    /// was stored: every member then runs again alone, in a transaction of its
    /// own, and gets the status it gets there.
    func groupedWrite<T>(_ body: (StoreTransaction) throws -> T) throws -> T {
        try enter()
        // Alone: a transaction of its own on this thread, as `commit(group:)`
        // makes for a group of one (no savepoint, its failure its own).
        if group.beginAlone() {
            defer { group.endAlone() }
            return try write(body)
        }
        return try writeInGroup(body)
    }

    /// A function of its own, so that a lone write does not look up the
    /// metadata of `T?` (a generic caller's type) that only a member needs.
    private func writeInGroup<T>(_ body: (StoreTransaction) throws -> T) throws -> T {
        var result: T?
        try withoutActuallyEscaping(body) { body in
            let member = GroupCommit.Member { result = try body($0) }
            group.submit(member) { commit(group: $0, more: $1) }
            if let failure = member.failure { throw failure }
        }
        guard let result else { throw OutliveError(.io, "a grouped write was committed without its result") }
        return result
    }

    /// Grouped writes waiting for the group under way (for tests).
    var queuedGroupedWrites: Int { group.queuedCount }

    private struct GroupUndone: Error {}

    /// Commits a group, and those `more` adds to it while it runs (see
    /// GroupCommit.submit); returns how long its COMMIT took (0 when there was none).
    private func commit(group first: [GroupCommit.Member], more: (() -> [GroupCommit.Member])?) -> Int64 {
        var members = first
        var committed: [Transaction?] = Array(repeating: nil, count: members.count)
        let alone = members.count == 1 && more == nil
        var took: Int64 = 0
        let undone: Bool = lock.withLock {
            // The members share one transaction, so what one found unwatched
            // holds for the next (see UnwatchedTopics).
            var unwatched = self.unwatched
            let marker = Unmanaged.passUnretained(self).toOpaque()
            COutlive_set_current_transaction(marker)
            defer { COutlive_set_current_transaction(nil) }
            do {
                try restoreSyncIfNeeded()
                try begin(writing: true)
            } catch {
                // Waited the busy timeout (or could not start): each member would have alone.
                for member in members { member.failure = error }
                return false
            }
            do {
                var index = 0
                while true {
                    if index == members.count {
                        guard let more else { break }
                        let arrived = more()
                        if arrived.isEmpty { break }
                        members += arrived
                        committed += Array(repeating: nil, count: arrived.count)
                    }
                    let member = members[index]
                    let transaction = Transaction(connection: connection, ownRun: ownRun, ownTopics: ownTopics, unwatched: unwatched)
                    // No savepoint per member: one cost about 3k instructions
                    // (SAVEPOINT, RELEASE and the pages it journals), an eighth
                    // of a kv set, and members rarely fail after a change.
                    let changesBefore = sqlite3_total_changes64(connection.handle)
                    do {
                        try member.run(transaction)
                        unwatched = transaction.unwatched
                        committed[index] = transaction
                        member.failure = nil
                    } catch {
                        member.failure = error
                        if alone { throw error }
                        guard sqlite3_get_autocommit(connection.handle) == 0 else { throw GroupUndone() }
                        // Rows it changed cannot be taken back alone: every
                        // member runs again, each in a transaction of its own.
                        guard sqlite3_total_changes64(connection.handle) == changesBefore else { throw GroupUndone() }
                    }
                    index += 1
                }
                let started = Clock.monotonicNanoseconds()
                try commit()
                took = Clock.monotonicNanoseconds() - started
                if unwatched.used { self.unwatched = unwatched.committed(at: connection.dataVersion) }
                return false
            } catch {
                if sqlite3_get_autocommit(connection.handle) == 0 { try? connection.run("ROLLBACK", []) }
                if alone {
                    if !(error is GroupUndone) { members[0].failure = error }
                    committed[0] = nil
                    return false
                }
                return true
            }
        }
        if undone {
            for (index, member) in members.enumerated() {
                do {
                    var again: Transaction?
                    try transaction(writing: true, committed: &again) { try member.run($0) }
                    committed[index] = again
                    member.failure = nil
                } catch {
                    committed[index] = nil
                    member.failure = error
                }
            }
        }
        changesCommitted(committed.compactMap({ $0?.newestSequence }).max(), ringing: committed.contains { $0?.ringsDoorbell == true },
                         own: committed.contains { $0?.ownChanges.isEmpty == false } ? committed.flatMap { $0?.ownChanges ?? [] } : [])
        for transaction in committed { for action in transaction?.commitActions ?? [] { action() } }
        return took
    }

    /// The doorbell wakes this handle's loop too: its own changes are read with the feed.
    private func changesCommitted(_ sequence: Int64?, ringing: Bool, own: [(topic: String, key: String)]) {
        if !own.isEmpty { ownChanges.append(own) }
        if ringing, let sequence {
            onChangesCommitted?(sequence)
        } else if sequence != nil || !own.isEmpty {
            onOwnChangesCommitted?()
        }
    }

    func read<T>(_ body: (StoreTransaction) throws -> T) throws -> T {
        var committed: Transaction?
        return try transaction(writing: false, committed: &committed, body)
    }

    func changes(after sequence: Int64, limit: Int) throws -> (changes: [Change], oldestKept: Int64?) {
        try read { try changes(after: sequence, limit: limit, in: $0) }
    }

    func latestSequence() throws -> Int64 {
        try read { try $0.integer("SELECT max(seq) FROM outlive_feed") ?? 0 }
    }
}
