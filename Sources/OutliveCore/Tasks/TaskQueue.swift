/// The durable background task queue of one store handle (docs/tasks.md):
/// tasks added by any process to named queues — ordered ones run in order by
/// one runner at a time across all processes, parallel ones by every process
/// that serves them up to its limit — retried with backoff, kept as `dead`
/// when they keep failing. Public calls are thread-safe; runs happen on the
/// store's loop.
public final class TaskQueue {
    public static let schema = TaskSchema.component
    public static let maxBatch = 1_000_000

    let store: Store
    let lock = Lock()
    // Guarded by `lock`.
    var policy = TaskPolicy()
    var triggers = TaskTriggers()
    /// The queues this handle runs, by name. A handle serves the default queue
    /// under its triggers until told otherwise (`serve`).
    var serving: [String: ServedQueue] = [TaskQueueName.default: ServedQueue(kind: .ordered, limit: 1, triggered: true)]
    /// Results of attempts of this process (completions, timeouts, returns), by claim token.
    var results: [String: AttemptResult] = [:]
    /// The attempt whose handler this handle is calling, and the thread
    /// calling it: a completion sent from inside that call ends the attempt
    /// like the call's return (`completeInCall`).
    /// With the count of forks this process had made when the call began.
    var calling: (claim: String, thread: ThreadIdentity, forks: UInt64)?
    /// Attempts that a completion sent during their handler's call ended (in
    /// `results`, not on the row): the first completion, whatever the row says.
    var completedInCall: Set<String> = []
    /// At most how many tasks a run claims, and ends, in one transaction.
    var completionBatch = TaskQueue.defaultCompletionBatch
    /// Whether a trigger evaluation is posted to the loop and not yet run: adds
    /// from a producer that seldom dispatches post one, not one each.
    var triggerEvaluationPosted = false
    /// The seqs this handle's last add left, and the data version its commit
    /// made (SQLite): valid while the store's data version is that one.
    var seqsAfterAdd: (version: UInt64, seqs: TaskSeqs)?
    /// Tasks this handle added since its last fold of the counts
    /// (PostgreSQL, TaskSchema step 12): an add that brings them to
    /// `TaskSchema.foldAfter` folds. Per handle, so no add reads how many
    /// lie above the mark: the tail is at most that many per adding handle.
    /// A new handle folds at its first add: handles that each live for a
    /// few adds (a store opened per request or per job) would otherwise
    /// leave a tail that no fold ever reaches, read by every count.
    var unfoldedAdds: Int64 = TaskSchema.foldAfter

    // Loop thread only.
    /// The data version a run's step committed with, having left no task
    /// out of the ready index (SQLite, TaskSchema step 11): while the store's
    /// is that one, nothing was added since and the next step need not look.
    var tailIndexedAt: UInt64?
    /// The runs under way, one per served queue at most.
    var runs: [String: TaskRun] = [:]
    /// Ordered queues whose runner is another live process: a run starts
    /// here when that one releases the claim.
    var waitingForRunner: Set<String> = []
    /// The run of the default queue under way, if any (loop thread).
    var run: TaskRun? { runs[TaskQueueName.default] }
    /// Whether a run waits for another process's runner to let go (loop thread).
    var wantsRun: Bool { !waitingForRunner.isEmpty }
    var delayTimer: UInt64?
    var dueTimer: (id: UInt64, at: Double)?
    /// Queues this handle found declared (guarded by `lock`): no call removes
    /// a queue, so an add to one of them need not look it up again (on
    /// PostgreSQL a round trip per add).
    var queuesSeen: Set<String> = []
    /// Whether `dueTimer` stands for the earliest waiting task of the served
    /// queues as last read, with no waiting task made since that this handle
    /// knows of (loop thread). A run's step then needs no read to know it:
    /// waiting tasks are made only by delayed adds (`scheduled` on the feed),
    /// by failed attempts (`finished`, and `stepMadeWaiting` here), both of
    /// which read again, and a timer that fired has to look for the next.
    var dueKnown = false
    /// Set by a step's transaction that made a task wait for a retry (its
    /// `finished` entry on the feed says so too, a dispatch later).
    var stepMadeWaiting = false
    var retryTimer: UInt64?
    private var subscription: UInt64?

    /// The one runner of each ordered queue across processes: a row of
    /// `outlive_task_runner`, keyed by the queue's name.
    let runnerClaim: RunClaim
    /// Each attempt: its task's row held by this run under the attempt's token.
    let attemptClaim: RunClaim

    /// The open queues of this process, for completions.
    private static let openQueues = TokenTable<ObjectIdentifier, WeakReference<TaskQueue>>()
    /// The store's path as completions name it (absolute, taken at open).
    let completionStorePath: String
    /// That path and this handle's run id as the IDs every completion
    /// handler of this handle binds (`TaskCompletion.make`).
    let completionIDs: (store: IDValue, run: IDValue)

    public init(store: Store) throws {
        self.store = store
        completionStorePath = TaskCompletion.absolute(store.path)
        completionIDs = (IDValue(string: completionStorePath), IDValue(string: store.runID))
        runnerClaim = RunClaim(store: store, table: "outlive_task_runner", key: "queue", keyType: .text, run: "run_id",
                               form: .row) { transaction, _, _ in
            try transaction.recordChange(topic: TaskSchema.topic, key: "released")
        }
        attemptClaim = RunClaim(store: store, table: "outlive_tasks", key: "seq", keyType: .integer, run: "runner", token: "claim",
                                form: .columns, freed: TaskQueue.attemptsEnded)
        if store.engine == .postgresql {
            // A claim without the store's lock passes over rows another
            // claimer holds; were that claimer to die before its commit, the
            // rows it held are ready again and no change said so. The end of
            // every run says so: runs that passed them over look again.
            store.onRunEnded { transaction, _ in try transaction.recordChange(topic: TaskSchema.topic, key: "returned") }
        }
        subscription = try store.subscribe(topic: TaskSchema.topic) { [weak self] batch in
            self?.changed(batch)
        }
        TaskQueue.openQueues.insert(ObjectIdentifier(self), WeakReference(self))
        // Tasks left by earlier runs: start the add trigger and the due timer.
        store.loop.post { [weak self] in
            self?.tasksBecameReady()
            self?.scheduleDue()
        }
    }

    deinit {
        if let subscription { store.unsubscribe(subscription) }
        TaskQueue.openQueues.remove(ObjectIdentifier(self))
    }

    /// An open store handle of this process on `path` (absolute), for completions.
    static func openStore(path: String) -> Store? {
        for entry in openQueues.values {
            guard let queue = entry.object, queue.completionStorePath == path, (try? queue.store.checkUsable()) != nil else { continue }
            return queue.store
        }
        return nil
    }

    /// Whether a store at `path` was opened by the process this one was forked
    /// from (its handle is then the parent's, unusable here).
    static func inheritsStore(path: String) -> Bool {
        openQueues.values.contains { entry in
            guard let queue = entry.object, queue.completionStorePath == path else { return false }
            return queue.store.isInheritedFromParent
        }
    }

    // MARK: - Which handlers take a completion

    /// Whether a handler declares a `completion` parameter: then its attempt
    /// ends only when the completion is called (or times out); any other
    /// handler succeeds when it returns, unless it called a completion first.
    static func takesCompletion(_ handlerName: String) -> Bool {
        guard let declaration = try? HandlerRegistry.shared.resolve(handlerName) else { return false }
        return declaration.signature.parameters.contains { $0.name == "completion" }
    }

    // MARK: - Settings

    public func setPolicy(_ policy: TaskPolicy) throws {
        try policy.validate()
        try store.checkUsable()
        lock.withLock { self.policy = policy }
    }

    public var currentPolicy: TaskPolicy { lock.withLock { policy } }

    public func setTriggers(_ triggers: TaskTriggers) throws {
        try triggers.validate()
        try store.checkUsable()
        lock.withLock { self.triggers = triggers }
        store.loop.post { [weak self] in
            guard let self else { return }
            if let timer = self.delayTimer { self.store.loop.cancelTimer(timer); self.delayTimer = nil }
            self.evaluateTriggers()
        }
    }

    public static let maxConcurrency = 1_024

    /// How many tasks this process's runs keep in flight at once (default 1:
    /// strictly one after the other). More lets handlers that complete later
    /// overlap; order then holds for starts, not for ends.
    /// The default queue's limit: like `serve(queue: "default", limit:)`, but
    /// keeping the default queue under its triggers while it is.
    public func setConcurrency(_ count: Int) throws {
        guard count >= 1, count <= TaskQueue.maxConcurrency else {
            throw OutliveError.invalidArgument("concurrency must be 1 to \(TaskQueue.maxConcurrency), got \(count)")
        }
        try store.checkUsable()
        lock.withLock {
            let triggered = serving[TaskQueueName.default]?.triggered ?? true
            serving[TaskQueueName.default] = ServedQueue(kind: .ordered, limit: count, triggered: triggered)
        }
        store.loop.post { [weak self] in self?.pumpAll() }
    }

    public static let defaultCompletionBatch = 32
    public static let maxCompletionBatch = 1_024

    /// At most how many tasks this handle's runs claim in one transaction,
    /// ending them all in the next: one commit for up to that many tasks.
    /// Batches are as large as the handlers get through within one
    /// dispatch's budget, so slow handlers run one task per transaction
    /// whatever this says. A crash reruns at most the batch in flight; 1:
    /// at most the one task.
    public func setCompletionBatch(_ count: Int) throws {
        guard count >= 1, count <= TaskQueue.maxCompletionBatch else {
            throw OutliveError.invalidArgument("the completion batch must be 1 to \(TaskQueue.maxCompletionBatch) tasks, got \(count)")
        }
        try store.checkUsable()
        lock.withLock { completionBatch = count }
    }

    // MARK: - Adding

    @discardableResult
    public func add(_ task: NewTask) throws -> String {
        try enqueue(batch: [task])[0].id
    }

    /// Adds every task in one transaction: all are stored, or none.
    public func add(batch tasks: [NewTask]) throws -> [String] {
        try enqueue(batch: tasks).map(\.id)
    }

    public func enqueue(_ task: NewTask) throws -> TaskAdded {
        try enqueue(batch: [task])[0]
    }

    /// Adds every task in one transaction, with its result consumer: all are
    /// stored, or none. A task whose unique key is held already is not added:
    /// its entry names the holder (`existing`).
    public func enqueue(batch tasks: [NewTask]) throws -> [TaskAdded] {
        guard !tasks.isEmpty else { throw OutliveError.invalidArgument("the batch holds no tasks") }
        guard tasks.count <= TaskQueue.maxBatch else {
            throw OutliveError.invalidArgument("a batch holds at most \(TaskQueue.maxBatch) tasks, got \(tasks.count)")
        }
        // Serialized (and checked against the size limit) before the transaction.
        var handlers: [[UInt8]] = []
        // Made only when a task has a result consumer (most have none: an
        // array of nils was an allocation on every add).
        var consumers: [[UInt8]?] = []
        handlers.reserveCapacity(tasks.count)
        for (index, task) in tasks.enumerated() {
            do {
                try task.validate()
                handlers.append(try task.encodedWork ?? task.work.serializedChecked())
                if let consumer = task.resultConsumer {
                    if consumers.isEmpty { consumers = Array(repeating: nil, count: tasks.count) }
                    consumers[index] = try consumer.handler.serializedChecked()
                }
            } catch let error as OutliveError {
                throw tasks.count == 1 ? error : OutliveError(error.code, "tasks[\(index)]: \(error.message)")
            }
        }
        try store.checkUsable()
        let now = Clock.wall()
        var added: [TaskAdded] = []
        added.reserveCapacity(tasks.count)
        var dueNow = false, dueLaterAny = false
        try store.database.write { transaction in
            added.removeAll(keepingCapacity: true)
            dueNow = false
            dueLaterAny = false
            // The default queue always exists; others are looked up once per
            // handle (`queuesSeen`). No set made for an add to the default queue (the common one).
            var declared: Set<String> = []
            var addedAny = false
            var seqs = try seqsForAdding(in: transaction)
            // By index: a zip's iterator copied each task (every string and
            // array in it retained and released) three times.
            for index in tasks.indices {
                let task = tasks[index]
                if task.queue != TaskQueueName.default && !declared.contains(task.queue) {
                    if !lock.withLock({ queuesSeen.contains(task.queue) }) {
                        guard try transaction.integer("SELECT kind FROM outlive_task_queues WHERE name = ?", [.text(task.queue)]) != nil else {
                            throw OutliveError.notFound("no queue named \(task.queue) (declare it first)")
                        }
                        lock.withLock { _ = queuesSeen.insert(task.queue) }
                    }
                    declared.insert(task.queue)
                }
                var entry: TaskAdded
                var consumedSignal = task.resultSignal?.lowercased()
                let unindexed = seqs.map { TaskSchema.leavesUnindexed(seq: $0.next, mark: $0.mark) } ?? false
                if let id = try TaskQueue.insert(task, handler: handlers[index], now: now, later: true, seq: seqs?.next,
                                                 unindexed: unindexed, in: transaction) {
                    seqs?.taken()
                    entry = TaskAdded(id: id, existing: false)
                    addedAny = true
                    if task.due.map({ $0 > now }) ?? false { dueLaterAny = true } else { dueNow = true }
                } else {
                    // The key is held (the insert did nothing): the holder is the answer.
                    guard let key = task.uniqueKey, let holder = try TaskUniqueKey.holder(queue: task.queue, key: key, in: transaction) else {
                        throw OutliveError(.busy, "the unique key of a task conflicted, but no task holds it; try again")
                    }
                    entry = TaskAdded(id: holder.id, existing: true)
                    consumedSignal = holder.resultSignal
                }
                if let consumer = task.resultConsumer, let encoded = consumers[index], let consumedSignal {
                    try Signals.insertConsumer(of: consumedSignal, handler: encoded, named: consumer.handler.name, delivery: consumer.delivery,
                                               lifetime: consumer.lifetime, scope: consumer.scope, by: store, in: transaction)
                }
                added.append(entry)
            }
            guard addedAny else { return }
            try TaskSchema.addPending(seqs: &seqs, foldDue: foldDue(adding: Int64(added.count), in: transaction),
                                      in: transaction)
            // Runners wake for tasks due now; a task due later moves their due
            // timers only. This handle learns of its adds below, not from the
            // feed: an entry (a page written, a doorbell rung) only when a run
            // other than this one (another process, or another handle of this
            // one) watches; one that subscribes after this transaction reads
            // the queue when it opens. On PostgreSQL the look is part of the
            // commit's feed statement: with the inserts sent later, a task add
            // is one round trip.
            // SQLite looked with the seqs, in the same statement.
            func record(_ key: String) throws {
                guard let seqs else {
                    return try transaction.recordChange(topic: TaskSchema.topic, key: key, watchedByOtherThan: store.runID)
                }
                if seqs.watched { try transaction.recordChange(topic: TaskSchema.topic, key: key) }
            }
            if dueNow { try record("added") }
            if dueLaterAny { try record("scheduled") }
            if let seqs { keepSeqs(seqs, after: transaction) }
        }
        if dueNow { postTriggerEvaluation() }
        if dueLaterAny { store.loop.post { [weak self] in self?.scheduleDue() } }
        return added
    }

    /// Whether this add folds the counts (PostgreSQL): after it commits,
    /// the handle's tally of unfolded adds is counted on, or back to none.
    private func foldDue(adding count: Int64, in transaction: StoreTransaction) -> Bool {
        guard transaction.engine == .postgresql else { return false }
        let due = lock.withLock { unfoldedAdds } + count >= TaskSchema.foldAfter
        transaction.afterCommit { [weak self] in
            guard let self else { return }
            self.lock.withLock { self.unfoldedAdds = due ? 0 : self.unfoldedAdds + count }
        }
        return due
    }

    /// The seqs of an add's transaction (SQLite; nil on PostgreSQL): those
    /// the last add of this handle left, if nothing was committed since, by
    /// any connection (the data version is the one it committed with); else
    /// read. A stream of adds from one handle reads them once.
    private func seqsForAdding(in transaction: StoreTransaction) throws -> TaskSeqs? {
        guard transaction.engine == .sqlite else { return nil }
        if let version = transaction.dataVersion, let kept = lock.withLock({ seqsAfterAdd }), kept.version == version {
            return kept.seqs
        }
        return try TaskSeqs(watchedByOtherThan: store.runID, in: transaction)
    }

    /// Keeps `seqs` as the add's commit leaves them, with the data version it committed with.
    private func keepSeqs(_ seqs: TaskSeqs, after transaction: StoreTransaction) {
        // Unowned: the actions run while their transaction is held (a weak
        // reference made a side table, an allocation, on every add).
        transaction.afterCommit { [weak self, unowned transaction] in
            guard let self, let version = transaction.committedDataVersion else { return }
            self.lock.withLock { self.seqsAfterAdd = (version, seqs) }
        }
    }

    /// Stores one validated task whose queue is declared, inside
    /// `transaction`; the caller updates the counts (`TaskSchema.addPending`,
    /// once per transaction) and records the change.
    /// Shared by adds and by schedules' firings. With a unique key held by
    /// another task, a conflict on the unique index adds nothing (see
    /// TaskUniqueKey) and the result is nil.
    @discardableResult
    /// `later`: a task without a unique key is sent with `executeLater` (its
    /// failure then fails the transaction at a later statement or the commit:
    /// not for a caller that catches it, as schedules' firings do).
    /// `seq` (SQLite): the task's, from the transaction's `TaskSeqs`; nil
    /// reads it here. `unindexed` (SQLite, a task given its seq): a ready
    /// task is left out of the ready index (TaskSchema step 11,
    /// `leavesUnindexed`).
    static func insert(_ task: NewTask, handler: [UInt8], now: Double, later: Bool = false, seq given: Int64? = nil,
                       unindexed: Bool = false, in transaction: StoreTransaction) throws -> String? {
        // SQLite: the seq is taken before the insert, for the id to carry it (TaskID).
        var seq: Int64?
        if transaction.engine == .sqlite { seq = try given ?? TaskSeqs(watchedByOtherThan: "", in: transaction).next }
        let id = seq.map(TaskID.make(seq:)) ?? Identifier.makeTimeOrdered()
        // A task due later waits like one in backoff: the due timer starts it.
        let dueLater = task.due.flatMap { $0 > now ? $0 : nil }
        let sql = insertSQL(transaction.engine, unique: task.uniqueKey != nil)
        // The seq in the literal, dropped where there is none: appended, it
        // grew the array (a second allocation and a copy on every add).
        var arguments: [SQLValue] = [.text(id), .text(task.work.name), .blob(handler),
                  task.groupStart.map { .text($0) } ?? .null,
                  TaskSchema.encode(members: task.groupMembers).map { .blob($0) } ?? .null,
                  .double(now), .double(now), .text(task.queue), .integer(Int64(task.priority)),
                  .integer((dueLater == nil ? TaskSchema.State.ready : TaskSchema.State.waiting).rawValue),
                  dueLater.map { .double($0) } ?? .null,
                  task.uniqueKey.map { .text($0) } ?? .null, task.resultSignal.map { .text($0.lowercased()) } ?? .null,
                  unindexed && dueLater == nil && given != nil ? .integer(1) : .null,
                  seq.map { .integer($0) } ?? .null]
        if seq == nil { arguments.removeLast(2) }
        if later && task.uniqueKey == nil {
            // Nothing is read back: sent with the commit on PostgreSQL.
            try transaction.executeLater(sql, arguments)
            return id
        }
        try transaction.execute(sql, arguments)
        return transaction.changedRows == 0 ? nil : id
    }

    /// On SQLite the seq is the caller's (`TaskSeqs`). Kept as constants: a
    /// literal's statement is found in the cache by its address.
    private static func insertSQL(_ engine: StoreEngine, unique: Bool) -> String {
        switch (engine, unique) {
        case (.sqlite, false): insertSQLite
        case (.sqlite, true): insertSQLiteUnique
        case (.postgresql, false): insertPostgreSQL
        case (.postgresql, true): insertPostgreSQLUnique
        }
    }

    private static let insertSQLite = """
        INSERT INTO outlive_tasks(id, handler_name, handler, group_start, group_members, created, age_from,
                                  queue, priority, state, waiting_until, unique_key, result_signal, unindexed, seq)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    private static let insertSQLiteUnique = insertSQLite + " ON CONFLICT DO NOTHING"
    private static let insertPostgreSQL = """
        INSERT INTO outlive_tasks(id, handler_name, handler, group_start, group_members, created, age_from,
                                  queue, priority, state, waiting_until, unique_key, result_signal)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    private static let insertPostgreSQLUnique = insertPostgreSQL + " ON CONFLICT DO NOTHING"

    // MARK: - Inspection and repair

    /// Tasks not yet done, dead ones excluded (running and in backoff included).
    public func pendingCount() throws -> Int {
        try store.checkUsable()
        return Int(try store.database.read {
            try $0.integer("SELECT coalesce((SELECT sum(pending + running) FROM outlive_task_queues), 0)\(TaskSchema.uncounted("state <> 2"))")
        } ?? 0)
    }

    public func deadCount() throws -> Int {
        try store.checkUsable()
        return Int(try store.database.read {
            try $0.integer("SELECT coalesce((SELECT sum(dead) FROM outlive_task_queues), 0)\(TaskSchema.uncounted("state = 2"))")
        } ?? 0)
    }

    public static let maxListLimit = 100_000

    /// Tasks in queue order, starting after the task `after` (nil: from the
    /// first), at most `limit`. Pages through any queue in bounded memory.
    public func list(after: String? = nil, limit: Int = 1_000) throws -> [TaskInfo] {
        guard limit >= 0, limit <= TaskQueue.maxListLimit else {
            throw OutliveError.invalidArgument("limit must be 0 to \(TaskQueue.maxListLimit), got \(limit)")
        }
        if let after { try TaskQueue.validate(taskID: after, "after_id") }
        try store.checkUsable()
        return try store.database.read { transaction in
            var start: Int64 = 0
            if let after {
                let byID = TaskID.row(after, transaction.engine)
                guard let seq = try transaction.integer("SELECT seq FROM outlive_tasks WHERE \(byID.condition)", byID.arguments) else {
                    throw OutliveError.notFound("no task with id \(after)")
                }
                start = seq
            }
            var tasks: [TaskInfo] = []
            try transaction.query("""
                SELECT id, handler_name, state, attempts, last_error, waiting_until, created, group_start, group_members,
                       queue, priority, unique_key, cancelled, result_signal
                FROM outlive_tasks WHERE seq > ? ORDER BY seq LIMIT ?
                """, [.integer(start), .integer(Int64(limit))]) { row in
                let state = TaskSchema.State(rawValue: row.integer(2)) ?? .ready
                let shown: TaskInfo.State = state == .running ? .running : state == .dead ? .dead : .pending
                var task = TaskInfo(id: row.text(0) ?? "", handlerName: row.text(1) ?? "", state: shown,
                                    attempts: row.integer(3), lastError: row.text(4),
                                    nextAttempt: state == .waiting && !row.isNull(5) ? row.double(5) : nil,
                                    created: row.double(6), groupStart: row.text(7),
                                    groupMembers: TaskSchema.decode(members: row.blob(8)),
                                    queue: row.text(9) ?? TaskQueueName.default, priority: row.integer(10))
                task.uniqueKey = row.text(11)
                task.cancelled = row.integer(12) != 0
                task.resultSignal = row.text(13)
                tasks.append(task)
            }
            return tasks
        }
    }

    static func validate(taskID: String, _ what: String = "task id") throws {
        guard Identifier.isValid(taskID) else { throw OutliveError.invalidArgument("\(what) \"\(taskID.prefix(64))\" is not a task id (36-character UUID)") }
    }

    /// Makes a dead task (or one waiting for its backoff) pending and due now,
    /// with a fresh budget of attempts and age.
    public func retry(id: String) throws {
        try TaskQueue.validate(taskID: id)
        try store.checkUsable()
        let now = Clock.wall()
        try store.database.write { transaction in
            let byID = TaskID.row(id, transaction.engine)
            // Locked as read: see TaskSchema.lockingRead.
            guard let raw = try transaction.integer("SELECT state FROM outlive_tasks WHERE \(byID.condition)\(TaskSchema.lockingRead(transaction.engine))",
                                                    byID.arguments) else {
                throw OutliveError.notFound("no task with id \(id)")
            }
            let state = TaskSchema.State(rawValue: raw) ?? .ready
            switch state {
            case .running: throw OutliveError.state("task \(id) is running; it can be retried once its attempt ends")
            case .ready: throw OutliveError.state("task \(id) is pending and due already")
            case .dead, .waiting: break
            }
            if state == .dead { try TaskUniqueKey.checkFree(forRetryOf: id, in: transaction) }
            try transaction.execute("UPDATE outlive_tasks SET state = 0, attempts = 0, waiting_until = NULL, age_from = ? WHERE \(byID.condition)",
                                    [.double(now)] + byID.arguments)
            try transaction.recordChange(topic: TaskSchema.topic, key: "added")
        }
        postTriggerEvaluation()
    }

    /// Removes a task that is not running.
    public func delete(id: String) throws {
        try TaskQueue.validate(taskID: id)
        try store.checkUsable()
        try store.database.write { transaction in
            let byID = TaskID.row(id, transaction.engine)
            // Locked as read: see TaskSchema.lockingRead.
            guard let raw = try transaction.integer("SELECT state FROM outlive_tasks WHERE \(byID.condition)\(TaskSchema.lockingRead(transaction.engine))",
                                                    byID.arguments) else {
                throw OutliveError.notFound("no task with id \(id)")
            }
            let state = TaskSchema.State(rawValue: raw) ?? .ready
            if state == .running { throw OutliveError.state("task \(id) is running; it can be deleted once its attempt ends") }
            // A dead task's result (its death) was posted; a pending one's consumers learn it will never run.
            if state != .dead { try TaskResult.post(.cancelled, taskID: id, in: transaction) }
            try transaction.execute("DELETE FROM outlive_tasks WHERE \(byID.condition)", byID.arguments)
            // A deleted group start may unblock members: like an add for triggers.
            try transaction.recordChange(topic: TaskSchema.topic, key: "added")
        }
    }

    /// Asks for a run now: it starts on the loop's thread at its next dispatch,
    /// or, while another process runs, as soon as that run ends.
    /// Runs of every queue this handle serves; nothing when it serves none.
    public func runNow() throws {
        try store.checkUsable()
        store.loop.post { [weak self] in self?.requestServedRuns(includingTriggered: true) }
    }

    // MARK: - Triggers (loop thread)

    private func changed(_ batch: ChangeBatch) {
        let keys = Set(batch.keys)
        if batch.resync || keys.contains("added") || keys.contains("returned") || keys.contains("unblocked") { tasksBecameReady() }
        if batch.resync || keys.contains("released") || keys.contains("returned") {
            for name in waitingForRunner where runs[name] == nil { requestRun(name) }
        }
        if batch.resync || keys.contains("completed") { collectRemoteOutcomes() }
        if batch.resync || keys.contains("finished") || keys.contains("returned") || keys.contains("scheduled") { scheduleDue() }
    }

    /// Evaluates the triggers in a later dispatch, once however many calls ask
    /// before it runs (any thread).
    func postTriggerEvaluation() {
        let first = lock.withLock { () -> Bool in
            defer { triggerEvaluationPosted = true }
            return !triggerEvaluationPosted
        }
        guard first else { return }
        store.loop.post { [weak self] in
            guard let self else { return }
            self.lock.withLock { self.triggerEvaluationPosted = false }
            self.tasksBecameReady()
        }
    }

    /// Tasks became ready (added, returned, unblocked, by any process): runs
    /// under way look again from the start of their queue (a task of a higher
    /// priority lies behind their cursor), every queue served at once gets a
    /// run, and the default queue under triggers evaluates them.
    func tasksBecameReady() {
        guard (try? store.checkUsable()) != nil else { return }
        for run in runs.values { rewind(run) }
        for (name, queue) in lock.withLock({ serving }) where runs[name] == nil && queue.limit > 0 {
            if queue.triggered { evaluateTriggers() } else { requestRun(name) }
        }
    }

    func evaluateTriggers() {
        guard (try? store.checkUsable()) != nil else { return }
        guard let queue = lock.withLock({ serving[TaskQueueName.default] }), queue.triggered, queue.limit > 0,
              runs[TaskQueueName.default] == nil else { return }
        // Counted as before queues existed: every task not yet done, running ones too.
        let pending = (try? store.database.read { transaction in
            try transaction.integer("""
                SELECT pending + running\(TaskSchema.uncounted("queue = '\(TaskQueueName.default)' AND state <> 2")) \
                FROM outlive_task_queues WHERE name = ?
                """, [.text(TaskQueueName.default)])
        }) ?? nil
        guard let pending, pending > 0 else { return }
        let settings = lock.withLock { triggers }
        if settings.pendingCount > 0 && pending >= Int64(clamping: settings.pendingCount) {
            requestRun(TaskQueueName.default)
        } else if delayTimer == nil {
            delayTimer = store.loop.schedule(after: settings.delay) { [weak self] in
                self?.delayTimer = nil
                self?.requestRun(TaskQueueName.default)
            }
        }
    }

    /// Arms one timer for the earliest waiting task (due later, or in
    /// backoff) of the queues this handle serves, whichever process added it.
    /// `scheduleDue` unless what it would read is known (`dueKnown`): after
    /// each step of a run, which on PostgreSQL spares a round trip per step.
    func scheduleDueUnlessKnown() {
        if stepMadeWaiting { dueKnown = false }
        stepMadeWaiting = false
        if !dueKnown { scheduleDue() }
    }

    func scheduleDue() {
        guard (try? store.checkUsable()) != nil else { return }
        let names = lock.withLock { serving.filter { $0.value.limit > 0 }.map(\.key) }
        var earliest: Double?
        dueKnown = false
        let read: Void? = try? store.database.read { transaction in
            for name in names {
                // Numbers only: a damaged row (text, NULL) would arm a timer that starts nothing, for ever.
                try transaction.query("""
                    SELECT waiting_until FROM outlive_tasks WHERE state = 3 AND queue = ? AND waiting_until BETWEEN -1e300 AND 1e300
                    ORDER BY waiting_until LIMIT 1
                    """, [.text(name)]) { row in
                    let at = row.double(0)
                    if earliest.map({ at < $0 }) ?? true { earliest = at }
                }
            }
        }
        guard read != nil else { return }
        dueKnown = true
        guard let earliest else { return }
        if let due = dueTimer {
            if due.at <= earliest { return }
            store.loop.cancelTimer(due.id)
        }
        let id = store.loop.schedule(after: min(1e9, max(0, earliest - Clock.wall())) + 0.001) { [weak self] in
            self?.dueTimer = nil
            self?.dueKnown = false
            self?.requestServedRuns(includingTriggered: true)
        }
        dueTimer = (id, earliest)
    }

    // MARK: - Ended runs (inside the transaction that removes the run)

    /// The attempt claims of an ended run: a task whose completion recorded
    /// a success before the runner ended succeeded; any other goes back to
    /// pending (at-least-once).
    static func attemptsEnded(_ transaction: StoreTransaction, _ ended: EndedRun, _ keys: [SQLValue]) throws {
        var held: [(seq: Int64, outcome: Int64?, id: String)] = []
        try transaction.query("SELECT seq, outcome, id FROM outlive_tasks WHERE state = 1 AND runner = ?", [.text(ended.runID)]) { row in
            held.append((row.integer(0), row.isNull(1) ? nil : row.integer(1), row.text(2) ?? ""))
        }
        for task in held {
            if try TaskCancellation.endIfCancelled(taskID: task.id, in: transaction) { continue }
            if task.outcome == TaskSchema.Outcome.success.rawValue {
                try TaskResult.post(.succeeded, taskID: task.id, in: transaction)
                try transaction.execute("DELETE FROM outlive_tasks WHERE seq = ?", [.integer(task.seq)])
            } else {
                let why = "the runner (process \(ended.processName), run \(ended.runID)) \(ended.died ? "died" : "closed") during the attempt"
                try transaction.execute("""
                    UPDATE outlive_tasks SET state = 0, runner = NULL, claim = NULL, outcome = NULL,
                    last_error = CASE WHEN outcome IS NULL THEN ? ELSE last_error END WHERE seq = ?
                    """, [.text(why), .integer(task.seq)])
            }
        }
        try transaction.recordChange(topic: TaskSchema.topic, key: "returned")
    }
}
