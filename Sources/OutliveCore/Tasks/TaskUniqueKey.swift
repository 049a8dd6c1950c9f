/// Unique tasks (docs/tasks.md, "Unique keys"): at most one task of a queue
/// that is pending (ready, waiting) or running and not cancelled holds a key.
/// The unique partial index `outlive_tasks_unique_key` enforces it, so that
/// adders in any number of processes cannot both add: the insert does nothing
/// on a conflict, and the add then reads the holder in the same transaction.
/// Dead and cancelled tasks hold no key.
enum TaskUniqueKey {
    /// What an add learns of the task holding a key.
    struct Holder {
        let id: String
        let resultSignal: String?
    }

    /// The holder's lookup, with the index's own condition: SQLite's planner
    /// uses a partial index for a query whose WHERE holds the index's terms.
    private static let holderSQLite = """
        SELECT id, result_signal FROM outlive_tasks
        WHERE queue = ? AND unique_key = ? AND cancelled = 0 AND (state = 0 OR state = 1 OR state = 3) LIMIT 1
        """
    private static let holderPostgreSQL = """
        SELECT id, result_signal FROM outlive_tasks
        WHERE queue = ? AND unique_key = ? AND cancelled = 0 AND state IN (0, 1, 3) LIMIT 1
        """

    static func holder(queue: String, key: String, in transaction: StoreTransaction) throws -> Holder? {
        var found: Holder?
        try transaction.query(transaction.engine == .sqlite ? holderSQLite : holderPostgreSQL, [.text(queue), .text(key)]) { row in
            found = Holder(id: row.text(0) ?? "", resultSignal: row.text(1).flatMap { Identifier.isValid($0) ? $0.lowercased() : nil })
        }
        return found
    }

    /// Inside a retry of dead task `id`: it may not take back a key another
    /// task holds now (`.state`, naming the holder).
    static func checkFree(forRetryOf id: String, in transaction: StoreTransaction) throws {
        var key: (queue: String, key: String)?
        let task = TaskID.row(id, transaction.engine)
        try transaction.query("SELECT queue, unique_key FROM outlive_tasks WHERE \(task.condition) AND unique_key IS NOT NULL", task.arguments) { row in
            if let queue = row.text(0), let unique = row.text(1) { key = (queue, unique) }
        }
        guard let key, let holder = try holder(queue: key.queue, key: key.key, in: transaction), holder.id != id else { return }
        throw OutliveError.state("task \(id) cannot be retried: its unique key is held by task \(holder.id) now")
    }
}

/// What adding one task did: its id, or the id of the task that holds its
/// unique key already (`existing`: nothing was added).
public struct TaskAdded: Equatable {
    public let id: String
    public let existing: Bool
}
