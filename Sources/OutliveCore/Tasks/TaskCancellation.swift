/// Cancelling a task (docs/tasks.md, "Cancellation"). A pending task —
/// ready, or waiting for its due time or backoff — is removed at once: it
/// never runs. A running one is marked: its handler can ask
/// (`isCancelled`), its attempt goes on until it completes, times out or its
/// runner ends, and that end is the task's end whatever the handler said: the
/// task is removed and its result is "cancelled". Either way the cancellation
/// is posted to the task's result signal, and the task no longer holds its
/// unique key from the moment it is cancelled.
extension TaskQueue {
    public enum Cancellation: Equatable {
        /// The task was pending: it is gone and will never run.
        case removed
        /// The task was running: its handler is told; its end will be "cancelled".
        case told
    }

    public func cancel(id: String) throws -> Cancellation {
        try TaskQueue.validate(taskID: id)
        let task = id.lowercased()
        try store.checkUsable()
        let outcome = try store.database.write { transaction -> Cancellation in
            var found: (state: Int64, cancelled: Bool)?
            let byID = TaskID.row(task, transaction.engine)
            // Locked as read (PostgreSQL): a claim without the store's lock
            // may be starting it; the state decided on is the committed one.
            try transaction.query("SELECT state, cancelled FROM outlive_tasks WHERE \(byID.condition)\(TaskSchema.lockingRead(transaction.engine))",
                                  byID.arguments) { row in
                found = (row.integer(0), row.integer(1) != 0)
            }
            guard let found else {
                throw OutliveError.notFound("no task with id \(task) (a task that succeeded, or was cancelled while pending, is removed)")
            }
            switch TaskSchema.State(rawValue: found.state) ?? .ready {
            case .dead:
                throw OutliveError.state("task \(task) is dead: it runs no more (its death was its result); retry or delete it")
            case .running:
                if found.cancelled {
                    throw OutliveError.state("task \(task) was cancelled already; its running attempt will end as cancelled")
                }
                try transaction.execute("UPDATE outlive_tasks SET cancelled = 1 WHERE \(byID.condition)", byID.arguments)
                try transaction.recordChange(topic: TaskSchema.topic, key: "cancelled")
                return .told
            case .ready, .waiting:
                try TaskResult.post(.cancelled, taskID: task, in: transaction)
                try transaction.execute("DELETE FROM outlive_tasks WHERE \(byID.condition)", byID.arguments)
                // A removed group start may unblock members: like an add for triggers.
                try transaction.recordChange(topic: TaskSchema.topic, key: "added")
                return .removed
            }
        }
        Log.emit(.info, outcome == .removed ? "task \(task) was cancelled before it ran; removed" : "task \(task) was cancelled while running")
        return outcome
    }

    /// Whether task `id` was cancelled while running: what its handler asks
    /// during its attempt. `.notFound` once the task is gone (it ended, or
    /// was cancelled while pending).
    public func isCancelled(id: String) throws -> Bool {
        try TaskQueue.validate(taskID: id)
        let task = id.lowercased()
        try store.checkUsable()
        return try store.database.read { transaction in
            let byID = TaskID.row(task, transaction.engine)
            guard let cancelled = try transaction.integer("SELECT cancelled FROM outlive_tasks WHERE \(byID.condition)", byID.arguments) else {
                throw OutliveError.notFound("no task with id \(task) (it ended, or was cancelled while pending)")
            }
            return cancelled != 0
        }
    }
}

enum TaskCancellation {
    /// Inside the transaction that ends an attempt of `taskID` (held by the
    /// ending run: the caller checked the fence): if the task was cancelled
    /// meanwhile, the attempt's outcome is "cancelled" whatever it was — the
    /// task is removed and the cancellation posted. True when it was.
    static func endIfCancelled(taskID: String, in transaction: StoreTransaction) throws -> Bool {
        let byID = TaskID.row(taskID, transaction.engine)
        guard try transaction.integer("SELECT cancelled FROM outlive_tasks WHERE \(byID.condition)", byID.arguments) == 1 else { return false }
        try end(taskID: taskID, in: transaction)
        return true
    }

    /// Ends cancelled task `taskID` whose attempt ended: removed, the cancellation posted.
    static func end(taskID: String, in transaction: StoreTransaction) throws {
        Log.emit(.info, "task \(taskID) was cancelled; its attempt's outcome is ignored and the task removed")
        try TaskResult.post(.cancelled, taskID: taskID, in: transaction)
        let byID = TaskID.row(taskID, transaction.engine)
        try transaction.execute("DELETE FROM outlive_tasks WHERE \(byID.condition)", byID.arguments)
        try transaction.recordChange(topic: TaskSchema.topic, key: "finished")
    }
}
