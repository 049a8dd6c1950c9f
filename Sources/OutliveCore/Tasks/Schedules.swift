/// Periodic tasks (docs/tasks.md, "Periodic tasks"): named schedules stored
/// in the store, each adding a task to its queue once per period.
///
/// Every open handle fires the schedules that come due, on its loop (inside
/// `outlive_loop_dispatch`): firing only adds a task, which the processes
/// serving the schedule's queue run. A firing is one write transaction that
/// reads the schedule's next-fire time, adds the task and advances the time,
/// so that processes racing for the same period fire it once. Periods missed
/// while no process fired (none ran, or all were late) fire once, not one
/// each: the task carries the first missed period as `scheduled_at`, and the
/// next period is the first one after the firing.
///
/// The timer is the earliest next-fire time of the store's schedules; a
/// change by any process (set, remove) comes through the change feed and
/// moves it. Between firings a handle does nothing. Loop-thread state is only
/// touched on the loop; the public calls are thread-safe.
public final class Schedules {
    public static let schema = ScheduleSchema.component
    public static let maxNameSize = TaskQueueName.maxSize
    public static let maxListLimit = 100_000
    /// Schedules one firing transaction takes; more due go on in the next dispatch.
    static let firingBatch = 100

    let store: Store
    private weak var tasks: TaskQueue?
    private var subscription: UInt64?

    // Loop thread only.
    private var timer: (id: UInt64, at: Double)?
    private var retryTimer: UInt64?
    /// Rows that passed the type checks but cannot fire (a cron expression
    /// that does not parse, a handler that does not decode, a queue no longer
    /// declared): logged once, skipped until a change to the schedules.
    private var broken: Set<Int64> = []

    init(store: Store, tasks: TaskQueue) throws {
        self.store = store
        self.tasks = tasks
        subscription = try store.subscribe(topic: ScheduleSchema.topic) { [weak self] _ in
            guard let self else { return }
            self.broken = []
            self.arm()
        }
        // Schedules stored before this handle opened: arm at the first dispatch.
        store.loop.post { [weak self] in self?.arm() }
    }

    deinit {
        if let subscription { store.unsubscribe(subscription) }
    }

    // MARK: - Changing schedules (any thread)

    public static func validate(name: String) throws {
        try TaskQueueName.validate(name, "schedule")
    }

    /// Creates the schedule `name`, or replaces it: its work, period, queue
    /// and priority. An interval counts from now; the first firing is one
    /// period from now (the next matching minute for cron). Returns that time.
    @discardableResult
    public func set(name: String, work: Handler, period: SchedulePeriod, queue: String = TaskQueueName.default,
                    priority: Int32 = 0) throws -> Double {
        try Schedules.validate(name: name)
        var task = NewTask(work: work)
        task.queue = queue
        task.priority = priority
        try task.validate()
        if case .every(let seconds) = period { _ = try SchedulePeriod.interval(seconds) }
        let handler = try work.serializedChecked()
        try store.checkUsable()
        let now = Clock.wall()
        guard let next = period.next(after: now, anchor: now) else {
            throw OutliveError.invalidArgument("the schedule \(name) would never fire again")
        }
        try store.database.write { transaction in
            guard try transaction.integer("SELECT kind FROM outlive_task_queues WHERE name = ?", [.text(queue)]) != nil else {
                throw OutliveError.notFound("no queue named \(queue) (declare it first)")
            }
            try transaction.execute("""
                INSERT INTO outlive_schedules(name, handler_name, handler, queue, priority, interval, cron, anchor, next_fire, created)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(name) DO UPDATE SET handler_name = excluded.handler_name, handler = excluded.handler,
                    queue = excluded.queue, priority = excluded.priority, interval = excluded.interval, cron = excluded.cron,
                    anchor = excluded.anchor, next_fire = excluded.next_fire
                """, [.text(name), .text(work.name), .blob(handler), .text(queue), .integer(Int64(priority)),
                      period.interval.map { .double($0) } ?? .null, period.cronText.map { .text($0) } ?? .null,
                      .double(now), .double(next), .double(now)])
            try transaction.recordChange(topic: ScheduleSchema.topic, key: "set")
        }
        store.loop.post { [weak self] in self?.arm() }
        return next
    }

    /// Removes the schedule `name`; the tasks it added stay.
    public func remove(name: String) throws {
        try Schedules.validate(name: name)
        try store.checkUsable()
        try store.database.write { transaction in
            try transaction.execute("DELETE FROM outlive_schedules WHERE name = ?", [.text(name)])
            guard transaction.changedRows == 1 else { throw OutliveError.notFound("no schedule named \(name)") }
            try transaction.recordChange(topic: ScheduleSchema.topic, key: "removed")
        }
        store.loop.post { [weak self] in self?.arm() }
    }

    /// Schedules in name order after the one named `after` (nil: from the
    /// first; it need not exist), at most `limit`.
    public func list(after: String? = nil, limit: Int = 1_000) throws -> [ScheduleInfo] {
        guard limit >= 0, limit <= Schedules.maxListLimit else {
            throw OutliveError.invalidArgument("limit must be 0 to \(Schedules.maxListLimit), got \(limit)")
        }
        if let after { try Schedules.validate(name: after) }
        try store.checkUsable()
        return try store.database.read { transaction in
            var found: [ScheduleInfo] = []
            try transaction.query("""
                SELECT name, handler_name, queue, priority, interval, cron, next_fire, last_fired, created
                FROM outlive_schedules WHERE name > ? ORDER BY name LIMIT ?
                """, [.text(after ?? ""), .integer(Int64(limit))]) { row in
                found.append(ScheduleInfo(name: row.text(0) ?? "", handlerName: row.text(1) ?? "", queue: row.text(2) ?? "",
                                          priority: Int32(clamping: row.integer(3)),
                                          interval: row.isNull(4) ? nil : row.double(4), cron: row.text(5),
                                          nextFire: row.double(6), lastFired: row.isNull(7) ? nil : row.double(7),
                                          created: row.double(8)))
            }
            return found
        }
    }

    // MARK: - The timer (loop thread)

    /// The earliest next-fire time of the schedules that can fire.
    private func earliest() throws -> Double? {
        var found: Double?
        let skipped = broken
        try store.database.read { transaction in
            try transaction.query("SELECT rowid, next_fire FROM outlive_schedules WHERE \(ScheduleSchema.usable(store.engine)) ORDER BY next_fire LIMIT ?",
                                  [.integer(Int64(skipped.count + 1))]) { row in
                if found == nil && !skipped.contains(row.integer(0)) { found = row.double(1) }
            }
        }
        return found
    }

    /// Sets the timer to the earliest next-fire time (none: no timer).
    func arm() {
        guard store.isOpen else { return }
        let next: Double?
        do {
            next = try earliest()
        } catch {
            failed(error)
            return
        }
        if let timer, timer.at == next { return }
        if let timer { store.loop.cancelTimer(timer.id) }
        timer = nil
        guard let next else { return }
        let id = store.loop.schedule(after: max(0, next - Clock.wall()) + 0.001) { [weak self] in
            guard let self else { return }
            self.timer = nil
            self.fireDue()
        }
        timer = (id, next)
    }

    /// After a database failure (busy, I/O): arm again in a second.
    private func failed(_ error: Error) {
        Log.emit(.warning, "store \(store.label): schedules could not fire (trying again in 1 s): \(error)")
        guard retryTimer == nil else { return }
        retryTimer = store.loop.schedule(after: 1) { [weak self] in
            self?.retryTimer = nil
            self?.arm()
        }
    }

    // MARK: - Firing (loop thread)

    private struct DueRow {
        let rowid: Int64
        let name: String
        let handler: [UInt8]
        let queue: String
        let priority: Int64
        let interval: Double?
        let cron: String?
        let anchor: Double
        let nextFire: Double
    }

    /// Fires every due schedule, in one transaction per `firingBatch`.
    func fireDue() {
        guard store.isOpen else { return }
        let now = Clock.wall()
        var added = 0
        var more = false
        var newlyBroken: [(Int64, String)] = []
        let skipped = broken
        do {
            try store.database.write { transaction in
                added = 0
                more = false
                newlyBroken = []
                var due: [DueRow] = []
                try transaction.query("""
                    SELECT rowid, name, handler, queue, priority, interval, cron, anchor, next_fire FROM outlive_schedules
                    WHERE \(ScheduleSchema.usable(store.engine)) AND next_fire <= ? ORDER BY next_fire LIMIT ?
                    """, [.double(now), .integer(Int64(skipped.count + Schedules.firingBatch))]) { row in
                    let rowid = row.integer(0)
                    guard !skipped.contains(rowid) else { return }
                    guard let name = row.textIfValid(1), let queue = row.textIfValid(3) else {
                        newlyBroken.append((rowid, "its name or queue is not UTF-8 text"))
                        return
                    }
                    due.append(DueRow(rowid: rowid, name: name, handler: row.blob(2) ?? [], queue: queue, priority: row.integer(4),
                                      interval: row.isNull(5) ? nil : row.double(5), cron: row.textIfValid(6),
                                      anchor: row.double(7), nextFire: row.double(8)))
                }
                more = due.count > Schedules.firingBatch
                for schedule in due.prefix(Schedules.firingBatch) {
                    do {
                        try Schedules.alone(in: transaction) { try fire(schedule, now: now, in: $0) }
                        added += 1
                    } catch let error as OutliveError where error.code != .busy && error.code != .io {
                        newlyBroken.append((schedule.rowid, "schedule \(schedule.name): \(error.message)"))
                    }
                }
                if added > 0 {
                    var seqs: TaskSeqs?
                    // PostgreSQL folds at every firing: firings are few beside adds.
                    try TaskSchema.addPending(seqs: &seqs, foldDue: true, in: transaction)
                    try transaction.recordChange(topic: TaskSchema.topic, key: "added")
                }
            }
        } catch {
            failed(error)
            return
        }
        for (rowid, why) in newlyBroken {
            broken.insert(rowid)
            Log.emit(.error, "store \(store.label): a schedule cannot fire and is skipped until the schedules change: \(why)")
        }
        if added > 0 { tasks?.postTriggerEvaluation() }
        if more { store.loop.post { [weak self] in self?.fireDue() } }
        arm()
    }

    /// Runs `body` so that its failure undoes its own statements only and the
    /// transaction goes on (a row that cannot fire is skipped, the others
    /// fire): on PostgreSQL, where a failing statement aborts the whole
    /// transaction, inside a savepoint; SQLite's transaction goes on anyway.
    private static func alone(in transaction: StoreTransaction, _ body: (StoreTransaction) throws -> Void) throws {
        guard transaction.engine == .postgresql else { return try body(transaction) }
        try transaction.execute("SAVEPOINT outlive_firing")
        do {
            try body(transaction)
        } catch {
            try transaction.execute("ROLLBACK TO SAVEPOINT outlive_firing")
            try transaction.execute("RELEASE SAVEPOINT outlive_firing")
            throw error
        }
        try transaction.execute("RELEASE SAVEPOINT outlive_firing")
    }

    /// One firing inside the transaction: the task (its work with
    /// `scheduled_at` bound to the period it stands for), and the schedule
    /// advanced to the first period after now. Throws (adding nothing) for a
    /// row that cannot fire.
    private func fire(_ schedule: DueRow, now: Double, in transaction: StoreTransaction) throws {
        let period: SchedulePeriod
        if let cron = schedule.cron {
            period = .cron(try CronExpression(cron))
        } else {
            period = try SchedulePeriod.interval(schedule.interval ?? 0)
        }
        guard let next = period.next(after: now, anchor: schedule.anchor) else {
            throw OutliveError.corrupt("its period has no time left")
        }
        var work = try Handler(serialized: schedule.handler)
        try work.bind(Arguments([("scheduled_at", .double(schedule.nextFire))]))
        var task = NewTask(work: work)
        task.queue = schedule.queue
        task.priority = Int32(clamping: schedule.priority)
        try task.validate()
        guard try transaction.integer("SELECT kind FROM outlive_task_queues WHERE name = ?", [.text(schedule.queue)]) != nil else {
            throw OutliveError.notFound("its queue \(schedule.queue) is not declared")
        }
        try TaskQueue.insert(task, handler: try work.serializedChecked(), now: now, in: transaction)
        try transaction.execute("UPDATE outlive_schedules SET next_fire = ?, last_fired = ? WHERE rowid = ?",
                                [.double(next), .double(schedule.nextFire), .integer(schedule.rowid)])
    }
}
