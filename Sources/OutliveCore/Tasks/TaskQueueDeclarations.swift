/// Named queues: declaring them in the store, saying which ones this handle
/// serves, listing them with their counts (docs/tasks.md, "Queues").
extension TaskQueue {
    /// Declares a queue of `kind`; declaring it again with the same kind does
    /// nothing. `.state` when it exists with the other kind.
    public func declare(queue name: String, kind: TaskQueueInfo.Kind) throws {
        try TaskQueueName.validate(name)
        try store.checkUsable()
        try store.database.write { transaction in
            if let stored = try transaction.integer("SELECT kind FROM outlive_task_queues WHERE name = ?", [.text(name)]) {
                guard stored == Int64(kind.rawValue) else {
                    let was = TaskQueueInfo.Kind(rawValue: Int32(clamping: stored)).map { "\($0)" } ?? "of kind \(stored)"
                    throw OutliveError.state("the queue \(name) is declared already, as \(was); a queue's kind never changes")
                }
                return
            }
            try transaction.execute("INSERT INTO outlive_task_queues(name, kind, created) VALUES (?, ?, ?)",
                                    [.text(name), .integer(Int64(kind.rawValue)), .double(Clock.wall())])
        }
    }

    /// Makes this handle run up to `limit` tasks of the queue at once, as soon
    /// as they are due (the default queue's triggers no longer apply); 0 stops
    /// it (attempts under way end as usual). `.notFound` for a queue never declared.
    public func serve(queue name: String, limit: Int) throws {
        try TaskQueueName.validate(name)
        guard limit >= 0, limit <= TaskQueue.maxConcurrency else {
            throw OutliveError.invalidArgument("limit must be 0 to \(TaskQueue.maxConcurrency), got \(limit)")
        }
        try store.checkUsable()
        let stored = try store.database.read { transaction in
            try transaction.integer("SELECT kind FROM outlive_task_queues WHERE name = ?", [.text(name)])
        }
        guard let stored else { throw OutliveError.notFound("no queue named \(name) (declare it first)") }
        guard let kind = TaskSchema.QueueKind(rawValue: stored) else {
            throw OutliveError.corrupt("the queue \(name) is stored with the unknown kind \(stored)")
        }
        lock.withLock {
            if limit == 0 {
                serving.removeValue(forKey: name)
            } else {
                serving[name] = ServedQueue(kind: kind, limit: limit, triggered: false)
            }
        }
        store.loop.post { [weak self] in
            guard let self else { return }
            if limit == 0 {
                if let run = self.runs[name] { self.pump(run) }
                self.waitingForRunner.remove(name)
            } else {
                self.requestRun(name)
                self.scheduleDue()
            }
        }
    }

    /// The queues this handle serves, with their limits.
    public var servedQueues: [(name: String, limit: Int)] {
        lock.withLock { serving.map { ($0.key, $0.value.limit) }.sorted { $0.name < $1.name } }
    }

    /// Declared queues in name order, those after `after` (nil: from the
    /// first), at most `limit` (0: all). Counts are read from counters.
    public func queues(after: String? = nil, limit: Int = 0) throws -> [TaskQueueInfo] {
        guard limit >= 0, limit <= TaskQueue.maxListLimit else {
            throw OutliveError.invalidArgument("limit must be 0 to \(TaskQueue.maxListLimit), got \(limit)")
        }
        if let after { try TaskQueueName.validate(after, "after") }
        try store.checkUsable()
        return try store.database.read { transaction in
            var queues: [TaskQueueInfo] = []
            // Neither engine keeps a running count (a claim writes no
            // counter: TaskSchema step 7 on PostgreSQL, 13 on SQLite): their
            // `pending` counts the running tasks too. On SQLite `running`
            // holds what an older library's fold put there (step 13).
            let sql = store.engine == .sqlite ? """
                SELECT name, kind, pending - running, running, dead FROM (
                    SELECT q.name AS name, q.kind AS kind,
                        q.pending + q.running\(TaskSchema.uncounted("queue = q.name AND state IN (0, 1, 3)")) AS pending,
                        q.dead\(TaskSchema.uncounted("queue = q.name AND state = 2")) AS dead, ifnull(r.running, 0) AS running
                    FROM outlive_task_queues q LEFT JOIN (\(TaskSchema.runningByQueue)) r ON r.queue = q.name
                    WHERE q.name > ? AND typeof(q.name) = 'text' ORDER BY q.name LIMIT ?) ORDER BY name
                """ : """
                SELECT name, kind, pending - running, running, dead FROM (
                    SELECT name, kind, pending\(TaskSchema.uncounted("queue = q.name AND state <> 2")) AS pending,
                        dead\(TaskSchema.uncounted("queue = q.name AND state = 2")) AS dead,
                        (SELECT count(*) FROM outlive_tasks t WHERE t.queue = q.name AND t.state = 1) AS running
                    FROM outlive_task_queues q WHERE name > ? ORDER BY name LIMIT ?) AS counted ORDER BY name
                """
            try transaction.query(sql, [.text(after ?? ""), .integer(limit == 0 ? Int64(TaskQueue.maxListLimit) : Int64(limit))]) { row in
                queues.append(TaskQueueInfo(name: row.text(0) ?? "", kind: TaskQueueInfo.Kind(rawValue: Int32(clamping: row.integer(1))) ?? .ordered,
                                            pending: max(0, row.integer(2)), running: max(0, row.integer(3)), dead: max(0, row.integer(4))))
            }
            return queues
        }
    }
}
