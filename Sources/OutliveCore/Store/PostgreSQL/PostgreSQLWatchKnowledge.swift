/// What a PostgreSQL handle knows of the other runs' watchers, so that a
/// write whose changes no other run watches need not send its feed
/// statement: the PostgreSQL side of SQLite's `UnwatchedTopics` (docs/store.md,
/// "No look at the watchers while nothing changed").
///
/// The feed statement opens the feed and the watchers for an insert that
/// does not happen when nobody watches: 20–25 µs of a kv set's wall time over
/// a raw INSERT of about 40 (docs/postgresql.md, "Watchers known"). Instead a
/// handle reads, once, the topics other runs watch and the count of the
/// watchers' changes (`outlive_watcher_changes`, raised by a trigger on every
/// statement that adds, changes or removes a watcher); a later write whose
/// changes are all of topics no other run watched at that count sends, in
/// place of the feed statement, a check that the count is the same — no
/// relation opened, a failure when it moved.
///
/// Why the check is enough: the read and the check both run under the store's
/// write lock, in statements after the one that took it, and every change of
/// the watchers is made by a write under that lock too, its count raised
/// before its commit. So a new watcher either committed before the read (the
/// read sees it) or raises the count before the check runs and fails it,
/// or comes after the writer's commit — and then its run reads the state
/// when it subscribes (`Store.subscribe`), as on SQLite. A count raised by a
/// statement rolled back later moves the count all the same: a needless
/// failure, never a missed watcher.
///
/// A failed check rolls the transaction back and sends its statements again
/// with the feed statements (`PostgreSQLBackend.attempt`). Only a transaction
/// whose body read nothing ("blind": every statement sent with
/// `executeLater`, as a kv set, a task add and a signal post from C are) is
/// sent without its feed statement, since its statements can be sent again
/// as they were without running the body a second time.
struct PostgreSQLWatchKnowledge {
    /// The count of the watchers' changes the topics were read at.
    let changes: Int64
    /// The topics a run other than `run` watched then.
    let watchedByOthers: Set<String>
    /// The handle's run when the topics were read ("": every run's watchers count).
    let run: String

    /// Whether every change is of a topic no run other than `ownRun` watched
    /// (each change excluding no run or this handle's, as the feed statements'
    /// `excluded` does): then no entry of them would be written.
    func coversAll(_ changes: [(topic: String, key: String, excluded: String)], ownRun: String) -> Bool {
        guard run == ownRun else { return false }
        for change in changes {
            guard change.excluded.isEmpty || change.excluded == ownRun, !watchedByOthers.contains(change.topic) else { return false }
        }
        return true
    }

    /// The count, then one row per topic a run other than the parameter's
    /// watches (the count's row has no topic). Sent in a write transaction,
    /// after its lock.
    static let readSQL = """
        SELECT coalesce(pg_sequence_last_value('outlive_watcher_changes'), 0), NULL::text
        UNION ALL
        SELECT DISTINCT NULL::bigint, topic FROM outlive_watchers WHERE run_id <> ?
        """

    /// Fails (division by zero) unless the count is still the parameter.
    static let checkSQL = "SELECT 1 / (coalesce(pg_sequence_last_value('outlive_watcher_changes'), 0) = ?)::integer"

    /// Collects the rows of `readSQL`.
    struct Reading {
        var changes: Int64?
        var topics: Set<String> = []

        mutating func add(_ row: SQLRow) {
            if let topic = row.text(1) {
                topics.insert(topic)
            } else if !row.isNull(0) {
                changes = row.integer(0)
            }
        }

        func knowledge(run: String) -> PostgreSQLWatchKnowledge? {
            changes.map { PostgreSQLWatchKnowledge(changes: $0, watchedByOthers: topics, run: run) }
        }
    }
}
