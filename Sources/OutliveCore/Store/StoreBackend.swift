/// What the systems need from storage, kept small so that a second backend
/// (PostgreSQL, for users who outgrow one machine) can follow SQLite. SQL is the
/// common language: systems write portable SQL (no SQLite-only syntax beyond
/// `INSERT ... ON CONFLICT`, which PostgreSQL shares).
public protocol StoreTransaction: AnyObject {
    /// The engine running it: for SQL that differs, where a function is given
    /// a transaction but no store (a post inside a task's end).
    var engine: StoreEngine { get }
    /// Runs a statement; `row` is called for each result row.
    func execute(_ sql: String, _ arguments: [SQLValue], row: ((SQLRow) throws -> Void)?) throws
    /// Runs a statement whose outcome the caller does not look at (no rows, no
    /// `changedRows`): a backend may send it with the next statement or with
    /// the commit (PostgreSQL: no round trip of its own). Its failure fails
    /// the transaction, thrown here, by a later statement or by the commit.
    func executeLater(_ sql: String, _ arguments: [SQLValue]) throws
    /// `executeLater` for an INSERT, UPDATE or DELETE (no RETURNING clause)
    /// whose only consequence the caller needs is a change of `topic`/`key`
    /// recorded when it changed a row: as `execute`, then `recordChange` when
    /// `changedRows` > 0. PostgreSQL makes the feed's entry part of the same
    /// statement, decided by the server, sent with the next statement or the
    /// commit: no round trip to learn whether the row changed.
    func executeLater(_ sql: String, _ arguments: [SQLValue], recordingChangeOf topic: String, key: String) throws
    /// Runs several statements (a migration), none of them returning rows.
    func executeScript(_ sql: String) throws
    /// Rows changed by the last statement.
    var changedRows: Int { get }
    /// Appends an entry to the change feed; watchers are woken after commit.
    /// A topic no live run subscribes to is not written at all.
    func recordChange(topic: String, key: String) throws
    /// `recordChange`, written only when a live run other than `run` watches
    /// the topic (a writer that learns of its own changes without the feed).
    func recordChange(topic: String, key: String, watchedByOtherThan run: String) throws
    /// Runs `body` once the transaction has committed (on the committing thread).
    func afterCommit(_ body: @escaping () -> Void)
    /// A number that changes whenever the database does (SQLite's data
    /// version): equal at the start of this transaction to the one a
    /// transaction committed with (`committedDataVersion`), nothing was
    /// committed in between, by any connection. nil where the engine keeps
    /// none (PostgreSQL): then nothing can be known unchanged.
    var dataVersion: UInt64? { get }
    /// The data version right after this transaction's commit, read before
    /// any other transaction of the handle starts (for `afterCommit` actions,
    /// or once the write returned when `keepCommittedDataVersion` was called;
    /// nil before the commit, and where the engine keeps none).
    var committedDataVersion: UInt64? { get }
    /// Reads `committedDataVersion` at the commit for a caller that looks
    /// at it once the write returned, without an `afterCommit` action (a
    /// closure and an array allocated, a message post's hundredth).
    func keepCommittedDataVersion()
    /// What this transaction is about to change must reach the disk with its
    /// commit (the end of a dead run, a task dead-lettered: outcomes a caller
    /// reads, not only claims). In an `unsyncedWrite` it throws
    /// `SyncRequired`: the transaction is rolled back and its body run again
    /// in a `write`. Elsewhere it does nothing.
    func requireSync() throws
}

/// Thrown by `requireSync` inside an `unsyncedWrite` (see there).
public struct SyncRequired: Error {}

extension StoreTransaction {
    /// A transaction that is never unsynced.
    public func requireSync() throws {}

    /// The look, then the entry (PostgreSQL makes both one part of the commit).
    public func recordChange(topic: String, key: String, watchedByOtherThan run: String) throws {
        guard try integer("SELECT 1 FROM outlive_watchers WHERE topic = ? AND run_id <> ? LIMIT 1", [.text(topic), .text(run)]) != nil else {
            return
        }
        try recordChange(topic: topic, key: key)
    }

    /// SQLite runs it at once: it has no round trips to save.
    public func executeLater(_ sql: String, _ arguments: [SQLValue]) throws {
        try execute(sql, arguments, row: nil)
    }

    public func executeLater(_ sql: String, _ arguments: [SQLValue], recordingChangeOf topic: String, key: String) throws {
        try execute(sql, arguments, row: nil)
        if changedRows > 0 { try recordChange(topic: topic, key: key) }
    }

    public func execute(_ sql: String, _ arguments: [SQLValue] = []) throws {
        try execute(sql, arguments, row: nil)
    }

    public func query(_ sql: String, _ arguments: [SQLValue] = [], _ row: (SQLRow) throws -> Void) throws {
        try withoutActuallyEscaping(row) { try execute(sql, arguments, row: $0) }
    }

    /// The first column of the first row, as an integer.
    public func integer(_ sql: String, _ arguments: [SQLValue] = []) throws -> Int64? {
        var value: Int64?
        try query(sql, arguments) { if value == nil && !$0.isNull(0) { value = $0.integer(0) } }
        return value
    }
}

/// One entry of the change feed.
public struct Change: Equatable {
    public let sequence: Int64
    public let topic: String
    public let key: String
}

/// The database engine under a store: what a system consults where the two
/// engines' SQL differs (see docs/postgresql.md, "Porting a system").
public enum StoreEngine: Equatable {
    case sqlite
    case postgresql
}

public protocol StoreBackend: AnyObject {
    var engine: StoreEngine { get }
    /// A write transaction (SQLite: BEGIN IMMEDIATE): serialised with every
    /// other writer of every process; all or nothing.
    func write<T>(_ body: (StoreTransaction) throws -> T) throws -> T
    /// A write transaction that may share its commit with the grouped writes
    /// other threads of this process make on the same handle at the same time
    /// (group commit: one fsync for all). It returns once its own change is
    /// committed (durable as a `write`'s); its failure rolls back its own part
    /// only. `body` may run on another caller's thread, and more than once
    /// when another member's failure undid its first run: it must do store
    /// work alone (no user callback, no lock its caller holds).
    func groupedWrite<T>(_ body: (StoreTransaction) throws -> T) throws -> T
    /// A write transaction that is not serialised with the other writers:
    /// PostgreSQL's task claims, which lock the rows they claim (`FOR UPDATE
    /// SKIP LOCKED`) instead of taking the store's write lock. It may record
    /// no change (`recordChange` throws): the feed's order needs the lock, and
    /// a transaction holding row locks must never wait for the lock after
    /// them (a writer holding the lock may be waiting for those rows). A
    /// backend without such claims makes it a `write`.
    func unserialisedWrite<T>(_ body: (StoreTransaction) throws -> T) throws -> T
    /// A `write` whose commit the call does not wait to reach the disk: a
    /// claim taken before a handler runs, which a power loss may take back.
    /// Other processes see it at once, and a `kill -9` keeps it, as any
    /// commit; a power loss before a later commit reached the disk frees it,
    /// as the death of its run would have, and the work is done again
    /// (at-least-once, as after a crash inside the handler). Only for a
    /// transaction whose loss is that: nothing a caller was told is stored.
    /// SQLite at `full`: committed as at `normal` (the log written, not
    /// synced); the next sync of the log, by any connection, covers it.
    /// PostgreSQL: `synchronous_commit` off for the transaction.
    /// A body whose transaction turns out to change more than claims calls
    /// `requireSync`: it is rolled back, `beforeRetry` runs (to reset what
    /// the body changed outside the store), and the body runs again in a
    /// `write`.
    func unsyncedWrite<T>(beforeRetry: () -> Void, _ body: (StoreTransaction) throws -> T) throws -> T
    /// A consistent read.
    func read<T>(_ body: (StoreTransaction) throws -> T) throws -> T
    /// Feed entries after `sequence`, oldest first, at most `limit`, and the
    /// oldest sequence still kept (older entries were pruned; nil when no
    /// entry follows `sequence`, or the feed is empty).
    func changes(after sequence: Int64, limit: Int) throws -> (changes: [Change], oldestKept: Int64?)
    /// The newest feed sequence (0 when empty).
    func latestSequence() throws -> Int64
    /// Changes only this handle's run watches, committed without a feed entry.
    var ownChanges: OwnChanges { get }
    /// This handle's run watches `topic` (called before its watcher row is
    /// written: an entry written meanwhile is one more, never one missing).
    func noteOwnWatch(topic: String)
}

extension StoreBackend {
    /// `changes(after:limit:)` inside the caller's read transaction (the
    /// feed and what it names, read in one snapshot: see `Store.readFeed`).
    /// The same SQL on both engines.
    public func changes(after sequence: Int64, limit: Int, in transaction: StoreTransaction) throws
        -> (changes: [Change], oldestKept: Int64?) {
        var changes: [Change] = []
        try transaction.query("SELECT seq, topic, key FROM outlive_feed WHERE seq > ? ORDER BY seq LIMIT ?",
                              [.integer(sequence), .integer(Int64(limit))]) {
            // A damaged entry is passed on under no topic: the cursor moves past it.
            changes.append(Change(sequence: $0.integer(0), topic: $0.textIfValid(1) ?? "", key: $0.textIfValid(2) ?? ""))
        }
        // Only a gap after the cursor can mean pruned entries: then look for the oldest kept.
        // None after it: none was pruned unread either (pruning keeps the newest entries), and
        // no look (many wake-ups find nothing new — a liveness check's read, a doorbell whose
        // change was read already —; on PostgreSQL the look was a round trip of its own).
        guard let first = changes.first else { return (changes, nil) }
        if first.sequence == sequence &+ 1 { return (changes, first.sequence) }
        let oldest = try transaction.integer("SELECT min(seq) FROM outlive_feed")
        return (changes, oldest)
    }

    public func unserialisedWrite<T>(_ body: (StoreTransaction) throws -> T) throws -> T {
        try write(body)
    }

    /// A backend that cannot relax one commit makes it a `write`.
    public func unsyncedWrite<T>(beforeRetry: () -> Void, _ body: (StoreTransaction) throws -> T) throws -> T {
        try write(body)
    }

    /// `unsyncedWrite` of a body that changes nothing outside the store.
    public func unsyncedWrite<T>(_ body: (StoreTransaction) throws -> T) throws -> T {
        try unsyncedWrite(beforeRetry: {}, body)
    }

    /// A backend without group commit writes each alone.
    public func groupedWrite<T>(_ body: (StoreTransaction) throws -> T) throws -> T {
        try write(body)
    }
}
