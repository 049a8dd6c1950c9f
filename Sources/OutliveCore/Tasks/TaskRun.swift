import COutliveSystem

/// One run of one queue in this process: it walks the queue in priority
/// order (then order of addition) with a cursor, and keeps the attempts in
/// flight. A run of an ordered queue holds the queue's runner claim; a run of
/// a parallel queue claims only its tasks, one by one. Lives on the loop thread.
final class TaskRun {
    let queue: String
    let kind: TaskSchema.QueueKind
    /// Whether this run holds the runner claim of its ordered queue (taken in
    /// the transaction that starts its first task, so that a run with nothing
    /// to do writes nothing).
    var claimed = false
    /// The last task this pass looked at: its priority and `seq` (nil: none yet).
    var cursor: (priority: Int64, seq: Int64)?
    /// Set when tasks became ready that may lie behind the cursor: the next
    /// look starts a pass from the top.
    var rewind = false
    /// Tasks started in this pass; a pass that started some is followed by
    /// another from the start (tasks that came due or were unblocked behind
    /// the cursor), a pass that started none ends the run.
    var startedInPass = 0
    var inFlight: [String: TaskAttempt] = [:]
    /// The claims in `inFlight` whose call armed a timeout: the only attempts
    /// that may be in flight without a result (any other has one when its
    /// call returns).
    var armed: Set<String> = []
    /// Tasks the last step claimed and whose handlers are not called yet, in
    /// order: the rest of a batch, called in the next dispatch when the
    /// budget of this one ran out.
    var claimedAhead: [TaskAttempt] = []
    /// Seconds one handler call of this run takes (a moving average; nil:
    /// none measured yet), from which a step sizes its batch.
    var callSeconds: Double?
    /// Set by a claim without the store's lock (PostgreSQL, parallel queue)
    /// that met, at the cursor, a task only a serialised step may handle: one
    /// dead at its claim (its end posts a result and records a change) or one
    /// whose row names a runner. The next step claims under the lock.
    var lockedClaimNeeded = false
    /// Names that resolved but whose call said otherwise: skipped for the run.
    var unresolvedNames: Set<String> = []
    /// Whether a handler name declares `completion`, as resolved in this run.
    var awaitsCompletion: [String: Bool] = [:]
    /// Whether a handler name declares `result_signal`, as resolved in this run.
    var wantsSignal: [String: Bool] = [:]
    /// Names that declare `completion` and whose last call in this run sent
    /// it during the call (every Python task handler does): their attempts
    /// leave no slot taken after the call, so they are claimed in batches
    /// like handlers without one.
    var completesInCall: Set<String> = []
    /// Names of ready tasks that resolve nowhere in this process: reported
    /// once per run (`reportUnresolved`).
    var reportedNames: Set<String> = []

    init(queue: String, kind: TaskSchema.QueueKind) {
        self.queue = queue
        self.kind = kind
    }
}

/// One attempt of one task. `claim` is the attempt's token: with this run's
/// id it is the attempt claim on the task's row (`runner`, `claim`).
struct TaskAttempt {
    let seq: Int64
    let id: String
    let claim: String
    let number: Int64
    let handler: Handler?
    let decodeError: String?
    /// The task's result signal as its row named it when claimed (it never
    /// changes after the add), for a handler that declares `result_signal`.
    let resultSignal: String?
    /// Whether the task starts a group: its success may unblock members.
    let startsGroup: Bool
    /// Whether its handler declares `completion` and is not known to send it
    /// during the call: the attempt may stay in flight after the call,
    /// holding one of the run's slots.
    let awaitsCompletion: Bool
    /// Whether no task of the run may be claimed after it in the same step:
    /// its members wait for its success (a group start), or it runs alone (a
    /// retry, or one whose handler did not decode).
    let endsBatch: Bool
    var timer: UInt64?
}

/// How an attempt ended, as this process learned it.
enum AttemptResult {
    case succeeded
    /// With the reason kept as the task's last error.
    case failed(String)
    /// A call that can never succeed (the stored arguments do not fit the
    /// handler's signature, the stored handler does not decode or was
    /// invalidated): dead at once, with the reason as its last error, instead
    /// of retried for hours.
    case uncallable(String)
    /// The handler did not resolve here after all: back to ready, not counted.
    case unresolved

    static func completion(success: Bool, error: String?) -> AttemptResult {
        success ? .succeeded : .failed(error ?? "the handler reported a failure")
    }
}

/// What one step of a run did (one write transaction).
private enum RunStep {
    /// Another live run holds the queue's runner claim: this run stops and waits.
    case yielded
    /// Attempts started (a batch, in order); their handlers are called next.
    case started([TaskAttempt])
    /// Nothing to start now; attempts are in flight.
    case waiting
    /// Nothing left: the runner claim was released.
    case released
    /// Nothing to do, and no claim was taken.
    case idle
    /// A claim without the store's lock left the task at the cursor to a
    /// step under the lock (`TaskRun.lockedClaimNeeded`), which comes next.
    case needsLock
}

extension TaskQueue {
    // MARK: - Completions (any thread)

    /// A completion of an attempt of this process, already recorded on the
    /// task's row (`TaskCompletion`, which refuses a second one): hands it to
    /// the run, over a timeout this process may have seen meanwhile.
    func completed(claim: String, _ result: AttemptResult) {
        lock.withLock { results[claim] = result }
        store.loop.post { [weak self] in self?.pumpAll() }
    }

    // MARK: - Starting runs (loop thread)

    /// Starts a run of `name` if this handle serves it, or makes the one under
    /// way look again from the top of the queue.
    func requestRun(_ name: String) {
        guard (try? store.checkUsable()) != nil else { return }
        if let run = runs[name] {
            rewind(run)
            return
        }
        guard let queue = lock.withLock({ serving[name] }), queue.limit > 0 else { return }
        if name == TaskQueueName.default, let timer = delayTimer { store.loop.cancelTimer(timer); delayTimer = nil }
        let run = TaskRun(queue: name, kind: queue.kind)
        runs[name] = run
        pump(run)
    }

    /// A run of every queue this handle serves (`includingTriggered`: the
    /// default queue under triggers too).
    func requestServedRuns(includingTriggered: Bool) {
        for (name, queue) in lock.withLock({ serving }) where includingTriggered || !queue.triggered { requestRun(name) }
    }

    /// Tasks may have become ready behind the run's cursor: look from the top.
    func rewind(_ run: TaskRun) {
        run.rewind = true
        if run.inFlight.count < limit(of: run) { pump(run) }
    }

    func limit(of run: TaskRun) -> Int {
        lock.withLock { serving[run.queue]?.limit ?? 0 }
    }

    func pumpAll() {
        for run in Array(runs.values) where runs[run.queue] === run { pump(run) }
    }

    /// After a database failure (busy, I/O): try again in a second.
    func retryLater() {
        guard retryTimer == nil else { return }
        retryTimer = store.loop.schedule(after: 1) { [weak self] in
            guard let self else { return }
            self.retryTimer = nil
            // The run that failed is still under way: it tries its step again.
            self.pumpAll()
        }
    }

    // MARK: - The run (loop thread)

    /// How long one pump may go on starting tasks before it hands the loop
    /// back to its host: a run through a long queue, or one whose tasks keep
    /// adding tasks, must not hold a single outlive_loop_dispatch() for ever.
    static let dispatchBudget = 0.005

    /// Ends finished attempts, starts the next tasks up to the concurrency,
    /// and releases the claim when nothing is left. Each step is one
    /// transaction: the end of the attempts that finished and the start of the
    /// next batch, whose handlers are then called one after another. After
    /// `dispatchBudget` it goes on in the next dispatch.
    func pump(_ run: TaskRun) {
        guard runs[run.queue] === run else { return }
        let began = Clock.monotonic()
        var calledAny = false
        while true {
            let policy = lock.withLock { self.policy }
            // The batch the last step claimed: its handlers, in order, within
            // the budget (at least one per dispatch); the rest stays claimed
            // for the next dispatch.
            while !run.claimedAhead.isEmpty {
                if calledAny && Clock.monotonic() - began >= TaskQueue.dispatchBudget {
                    store.loop.post { [weak self] in self?.pump(run) }
                    return
                }
                // An attempt expected to complete during its call may not
                // have: the next waits for a slot (the completion pumps again).
                let slots = limit(of: run)
                if slots > 0 && awaitingCompletion(run) >= slots { return }
                let attempt = run.claimedAhead.removeFirst()
                let start = Clock.monotonic()
                call(attempt, run: run, policy: policy)
                calledAny = true
                let took = Clock.monotonic() - start
                run.callSeconds = run.callSeconds.map { $0 * 0.75 + took * 0.25 } ?? took
                guard runs[run.queue] === run, (try? store.checkUsable()) != nil else { return }
            }
            if calledAny && Clock.monotonic() - began >= TaskQueue.dispatchBudget {
                store.loop.post { [weak self] in self?.pump(run) }
                return
            }
            let finished = takeFinished(run)
            let limit = lock.withLock { serving[run.queue]?.limit ?? 0 }
            // On PostgreSQL a parallel queue's claims take no store lock
            // (claimers on many hosts skip each other's rows instead of
            // waiting in turn): the finished attempts end in a transaction
            // under the lock, the claims follow in one without it.
            let claimsApart = store.engine == .postgresql && run.kind == .parallel && !run.lockedClaimNeeded
            var serialisedStep: RunStep?
            do {
                try store.checkUsable()
                if !claimsApart || !finished.isEmpty {
                    let body = { (transaction: StoreTransaction) throws -> RunStep? in
                        try self.finish(finished, policy: policy, in: transaction)
                        guard !claimsApart else { return nil }
                        return try self.next(run, slots: limit - run.inFlight.count, policy: policy, serialised: true, in: transaction)
                    }
                    if finished.isEmpty {
                        // Claims only, not synced (docs/store.md, "Claims are
                        // not synced"): the completions that follow the
                        // handlers are. A step that ends a dead run or
                        // dead-letters a task requires the sync and runs
                        // again, its cursor rewound and its reports undone.
                        let reported = run.reportedNames
                        serialisedStep = try store.database.unsyncedWrite(beforeRetry: {
                            run.rewind = true
                            run.reportedNames = reported
                        }, body)
                    } else {
                        serialisedStep = try store.database.write(body)
                    }
                }
            } catch {
                // Put the results back to be written on the next try.
                lock.withLock { for (attempt, result) in finished { results[attempt.claim] = result } }
                for (attempt, _) in finished { run.inFlight[attempt.claim] = attempt }
                // The cursor moved past rows the rollback left ready.
                run.rewind = true
                stepFailed(run, error)
                return
            }
            if !claimsApart { run.lockedClaimNeeded = false }
            lock.withLock {
                for (attempt, _) in finished {
                    results.removeValue(forKey: attempt.claim)
                    completedInCall.remove(attempt.claim)
                }
            }
            for (attempt, _) in finished { TaskCompletion.ended(claim: attempt.claim) }
            if !finished.isEmpty { scheduleDueUnlessKnown() }
            // A group start that ended may have unblocked members behind the cursor.
            if finished.contains(where: { $0.0.startsGroup }) { run.rewind = true }
            let step: RunStep
            if let serialisedStep {
                step = serialisedStep
            } else {
                do {
                    try store.checkUsable()
                    step = try store.database.unserialisedWrite { transaction in
                        try next(run, slots: limit - run.inFlight.count, policy: policy, serialised: false, in: transaction)
                    }
                } catch {
                    // The cursor moved past rows the rollback left ready.
                    run.rewind = true
                    stepFailed(run, error)
                    return
                }
            }
            switch step {
            case .yielded:
                runs.removeValue(forKey: run.queue)
                waitingForRunner.insert(run.queue)
                return
            case .idle:
                runs.removeValue(forKey: run.queue)
                waitingForRunner.remove(run.queue)
                scheduleDueUnlessKnown()
                return
            case .released:
                runs.removeValue(forKey: run.queue)
                scheduleDueUnlessKnown()
                return
            case .started(let batch):
                if run.kind == .ordered && !run.claimed { run.claimed = true }
                waitingForRunner.remove(run.queue)
                run.claimedAhead = batch
            case .waiting:
                if finished.isEmpty { return }  // waiting for completions in flight
            case .needsLock:
                continue
            }
        }
    }

    /// A step's transaction failed: the run stops when the store is closed or
    /// refused it a claim, else it tries again later.
    private func stepFailed(_ run: TaskRun, _ error: Error) {
        if (try? store.checkUsable()) == nil { runs.removeValue(forKey: run.queue); return }
        if let refused = error as? OutliveError, refused.code == .state {
            // The store refused this run a claim: others ended it (its
            // lock file was deleted). Trying again would only fail again.
            Log.emit(.error, "the task runner of run \(store.runID) stops: \(refused.message)")
            runs.removeValue(forKey: run.queue)
            return
        }
        retryLater()
    }

    /// How many tasks a step claims at most: as many as this run's handlers
    /// are expected to get through within one dispatch's budget, up to the
    /// handle's batch limit. Before a call was measured, and for handlers that
    /// take the budget, one.
    private func batchSize(_ run: TaskRun) -> Int {
        let most = lock.withLock { completionBatch }
        guard most > 1, let seconds = run.callSeconds else { return 1 }
        let fits = TaskQueue.dispatchBudget / max(seconds, 1e-6)
        return fits >= Double(most) ? most : max(1, Int(fits))
    }

    /// Inside the step's transaction, after the finished attempts were
    /// written: starts the next task (taking the runner claim with the first),
    /// or releases the claim when nothing is left. Changes nothing of `run`
    /// but its cursor (and `lockedClaimNeeded`): the transaction may still
    /// roll back. Not `serialised` (a parallel queue's claims on PostgreSQL,
    /// without the store's lock), it writes no feed entry and waits for no
    /// row: it claims only rows it could lock at once.
    private func next(_ run: TaskRun, slots: Int, policy: TaskPolicy, serialised: Bool, in transaction: StoreTransaction) throws -> RunStep {
        let serves = limit(of: run) > 0
        guard slots > 0, serves else {
            // No longer served: the run ends once its attempts have.
            guard !serves, run.inFlight.isEmpty else { return .waiting }
            return try end(run, in: transaction)
        }
        if run.kind == .parallel {
            let started = try startBatch(run, slots: slots, policy: policy, serialised: serialised, in: transaction)
            if !started.isEmpty { return .started(started) }
            if !serialised && run.lockedClaimNeeded { return .needsLock }
            return run.inFlight.isEmpty ? .idle : .waiting
        }
        let key: SQLValue = .text(run.queue)
        var holding = run.claimed
        if !holding {
            switch try runnerClaim.holder(of: key, in: transaction) {
            case .live:
                return .yielded
            case .dead:
                // Taken before looking at a task: ending the dead runner returns
                // its task, which comes first in queue order.
                holding = try takeRunnerClaim(key, in: transaction)
                if !holding { return .yielded }
            case .free, .ours:
                break
            }
        }
        let started = try startBatch(run, slots: slots, policy: policy, serialised: true, in: transaction)
        if !started.isEmpty {
            if !holding, !(try takeRunnerClaim(key, in: transaction)) {
                throw OutliveError(.busy, "the runner claim was taken meanwhile")
            }
            return .started(started)
        }
        if !run.inFlight.isEmpty { return .waiting }
        return try end(run, in: transaction)
    }

    /// The end of a run with nothing in flight: an ordered queue's claim is released.
    private func end(_ run: TaskRun, in transaction: StoreTransaction) throws -> RunStep {
        guard run.kind == .ordered, run.claimed else { return .idle }
        try runnerClaim.release(.text(run.queue), in: transaction)
        try transaction.recordChange(topic: TaskSchema.topic, key: "released")
        return .released
    }

    private func takeRunnerClaim(_ key: SQLValue, in transaction: StoreTransaction) throws -> Bool {
        try runnerClaim.take(key, setting: [("started", .double(Clock.wall()))], in: transaction)
    }

    /// Attempts that have a result: from a completion, or timed out.
    private func takeFinished(_ run: TaskRun) -> [(TaskAttempt, AttemptResult)] {
        var done: [(TaskAttempt, AttemptResult)] = []
        lock.withLock {
            for (claim, attempt) in run.inFlight {
                if let result = results.removeValue(forKey: claim) { done.append((attempt, result)) }
            }
        }
        for (attempt, _) in done {
            run.inFlight.removeValue(forKey: attempt.claim)
            run.armed.remove(attempt.claim)
            if let timer = attempt.timer { store.loop.cancelTimer(timer) }
        }
        return done.sorted { $0.0.seq < $1.0.seq }
    }

    /// Calls the task's handler on this (the loop) thread.
    private func call(_ started: TaskAttempt, run: TaskRun, policy: TaskPolicy) {
        var attempt = started
        run.inFlight[attempt.claim] = attempt
        TaskCompletion.began(claim: attempt.claim, queue: self)
        guard let handler = attempt.handler else {
            deliver(attempt.claim, .uncallable(attempt.decodeError ?? "the stored handler does not decode"))
            return
        }
        let taskID = IDValue(string: attempt.id)
        var arguments = Arguments([("task_id", .id(taskID)), ("attempt", .integer(attempt.number))])
        // A handler takes the call-time arguments it declares: the others are
        // not made (a completion handler, a read of the task's signal).
        let takesCompletion = awaitsCompletion(handler.name, run: run)
        if takesCompletion {
            let completion = TaskCompletion.make(store: completionIDs.store, taskID: taskID, claim: attempt.claim, run: completionIDs.run)
            arguments.set("completion", .handler(completion))
        }
        if wantsSignal(handler.name, run: run), let signal = TaskResult.callArgument(attempt.resultSignal) {
            arguments.set("result_signal", signal)
        }
        let forks = COutlive_parent_forks()
        lock.withLock { calling = (attempt.claim, ThreadIdentity.current, forks) }
        defer { lock.withLock { calling = nil } }
        do {
            try HandlerRegistry.shared.call(storedWork: handler, with: arguments)
        } catch let error as OutliveError where error.code == .unresolved {
            // Not this process's to run after all: back to ready, attempt not counted.
            run.unresolvedNames.insert(handler.name)
            deliver(attempt.claim, .unresolved)
            return
        } catch let error as OutliveError where [.missingArgument, .typeMismatch, .invalidated, .invalidArgument].contains(error.code) {
            // The same stored task would fail the same way on every attempt.
            deliver(attempt.claim, .uncallable("the handler \(handler.name) cannot be called with this task's arguments: \(error)"))
            return
        } catch {
            deliver(attempt.claim, .failed("the handler \(handler.name) could not be called: \(error)"))
            return
        }
        let answered = lock.withLock { results[attempt.claim] != nil }
        if takesCompletion {
            if answered { run.completesInCall.insert(handler.name) } else { run.completesInCall.remove(handler.name) }
        }
        if answered || !takesCompletion {
            deliver(attempt.claim, .succeeded)
            return
        }
        let claim = attempt.claim
        attempt.timer = store.loop.schedule(after: policy.timeout) { [weak self] in
            self?.deliver(claim, .failed("no completion within \(policy.timeout) s (timeout)"))
            self?.pump(run)
        }
        run.inFlight[claim] = attempt
        run.armed.insert(claim)
    }

    /// A completion of the attempt whose handler is being called on this
    /// thread, sent from inside that call and carrying no result: the
    /// attempt ends like the call's return, with its batch — in memory now,
    /// on the row in the step that ends the batch — instead of in a
    /// transaction (and, at FULL, an fsync) of its own per task. A crash
    /// before that step reruns it, as it reruns a handler that returned.
    /// False when this is not such a completion (the caller records it on
    /// the row); `.state` when the attempt has an outcome already.
    func completeInCall(claim: String, taskID: String, success: Bool, error: String?) throws -> Bool {
        let call = lock.withLock { calling.flatMap { $0.claim == claim && $0.thread == ThreadIdentity.current ? $0 : nil } }
        guard let call else { return false }
        // Made only when thrown: its text was some 2,500 instructions of every completion.
        func refusal() -> OutliveError {
            OutliveError.state("attempt \(claim) of task \(taskID) was completed already, or has ended (timed out, or its runner ended); this completion is ignored")
        }
        if lock.withLock({ results[claim] != nil }) { throw refusal() }
        // Another completion may have come first only if this one left the
        // call (HandedOutCompletions): its bytes or parts to another process,
        // a fork, another thread. Then the row says; otherwise no read (on
        // PostgreSQL a round trip per task).
        if HandedOutCompletions.shared.contains(claim) || COutlive_parent_forks() != call.forks {
            let (fence, fenced) = attemptClaim.fence(token: .text(claim))
            let open = try store.database.read { transaction in
                let task = TaskID.row(taskID, transaction.engine)
                return try transaction.integer("SELECT count(*) FROM outlive_tasks WHERE \(task.condition) AND \(fence) AND state = 1 AND outcome IS NULL",
                                               task.arguments + fenced)
            }
            guard open == 1 else { throw refusal() }
        }
        lock.withLock {
            results[claim] = .completion(success: success, error: error)
            completedInCall.insert(claim)
        }
        return true
    }

    /// Attempts called and in flight without a result: waiting for their
    /// completion. Only those whose call armed a timeout can be (looked up
    /// alone, as this is asked before every call of a batch).
    private func awaitingCompletion(_ run: TaskRun) -> Int {
        guard !run.armed.isEmpty else { return 0 }
        return lock.withLock { run.armed.reduce(0) { $0 + (results[$1] == nil ? 1 : 0) } }
    }

    /// Records a result unless one is there already (the first one wins).
    private func deliver(_ claim: String, _ result: AttemptResult) {
        lock.withLock {
            guard results[claim] == nil else { return }
            results[claim] = result
        }
    }

    /// Outcomes written by completions in other processes.
    func collectRemoteOutcomes() {
        let attempts = runs.values.flatMap { $0.inFlight }
        guard !attempts.isEmpty else { return }
        var found: [(String, AttemptResult)] = []
        _ = try? store.database.read { transaction in
            for (claim, attempt) in attempts {
                let (fence, fenced) = attemptClaim.fence(token: .text(claim))
                try transaction.query("SELECT outcome, last_error FROM outlive_tasks WHERE seq = ? AND \(fence) AND outcome IS NOT NULL",
                                      [.integer(attempt.seq)] + fenced) { row in
                    found.append((claim, .completion(success: row.integer(0) == TaskSchema.Outcome.success.rawValue, error: row.text(1))))
                }
            }
        }
        guard !found.isEmpty else { return }
        for (claim, result) in found { deliver(claim, result) }
        pumpAll()
    }

    // MARK: - Steps inside the write transaction

    /// Ends the attempts that finished, in one step's transaction.
    private func finish(_ finished: [(TaskAttempt, AttemptResult)], policy: TaskPolicy, in transaction: StoreTransaction) throws {
        // The common end, a success that nothing else waits on, in one
        // statement per chunk of the batch instead of a read and a delete
        // per task; the others one by one, and the whole chunk so when the
        // statement did not match every row of it (`finish` finds the rows it
        // deleted gone, and ends the others).
        var succeeded: [TaskAttempt] = []
        for (attempt, result) in finished { if case .succeeded = result { succeeded.append(attempt) } }
        var ended: Set<Int64> = []
        var start = 0
        for size in TaskBatchSQL.chunks(succeeded.count) {
            let chunk = succeeded[start..<start + size]
            start += size
            var arguments: [SQLValue] = []
            arguments.reserveCapacity(1 + 5 * size)
            for attempt in chunk { arguments.append(.integer(attempt.seq)) }
            arguments.append(.text(store.runID))
            for attempt in chunk { arguments.append(.integer(attempt.seq)); arguments.append(.text(attempt.claim)) }
            for attempt in chunk { arguments.append(.integer(attempt.seq)); arguments.append(.integer(attempt.number)) }
            try transaction.execute(TaskBatchSQL.deleteSucceeded(size), arguments)
            guard transaction.changedRows == size else { continue }
            for attempt in chunk {
                ended.insert(attempt.seq)
                Log.emit(.info, "task \(attempt.id) succeeded (attempt \(attempt.number))")
            }
        }
        for (attempt, result) in finished where !ended.contains(attempt.seq) {
            try finish(attempt, result, policy: policy, in: transaction)
        }
    }

    /// Ends an attempt: success deletes the task; failure keeps it with
    /// backoff, or makes it dead. Only while this attempt still holds the
    /// task (the attempt claim: this run and the attempt's token). A
    /// completion recorded on the row is the attempt's outcome, whatever this
    /// process saw (a timeout that fired meanwhile, say).
    private func finish(_ attempt: TaskAttempt, _ result: AttemptResult, policy: TaskPolicy,
                        in transaction: StoreTransaction) throws {
        let token: SQLValue = .text(attempt.claim)
        let (fence, fenced) = attemptClaim.fence(token: token)
        var row: (attempts: Int64, ageFrom: Double, groupStart: Bool, outcome: Int64?, error: String?, cancelled: Bool, posts: Bool)?
        try transaction.query("SELECT attempts, age_from, group_start IS NOT NULL, outcome, last_error, cancelled, result_signal IS NOT NULL FROM outlive_tasks WHERE seq = ? AND \(fence) AND state = 1",
                              [.integer(attempt.seq)] + fenced) {
            row = ($0.integer(0), $0.double(1), $0.integer(2) != 0, $0.isNull(3) ? nil : $0.integer(3), $0.text(4), $0.integer(5) != 0, $0.integer(6) != 0)
        }
        guard let row else { return }
        if row.cancelled { return try TaskCancellation.end(taskID: attempt.id, in: transaction) }
        var result = result
        // A completion sent during the handler's call came first: it was
        // refused had the row held an outcome then (`completeInCall`).
        if let outcome = row.outcome, !lock.withLock({ completedInCall.contains(attempt.claim) }) {
            result = .completion(success: outcome == TaskSchema.Outcome.success.rawValue, error: row.error)
        }
        let key: SQLValue = .integer(attempt.seq)
        switch result {
        case .unresolved:
            try attemptClaim.release(key, token: token, setting: [("state", .integer(TaskSchema.State.ready.rawValue)), ("outcome", .null),
                                                                  ("attempts", .integer(max(0, row.attempts - 1)))], in: transaction)
            try transaction.recordChange(topic: TaskSchema.topic, key: "returned")
        case .succeeded:
            Log.emit(.info, "task \(attempt.id) succeeded (attempt \(row.attempts))")
            if row.posts { try TaskResult.post(.succeeded, taskID: attempt.id, in: transaction) }
            try transaction.execute("DELETE FROM outlive_tasks WHERE seq = ? AND \(fence)", [key] + fenced)
            // Nothing waits for a success but the members of a group it started.
            if row.groupStart { try transaction.recordChange(topic: TaskSchema.topic, key: "unblocked") }
        case .failed(let why), .uncallable(let why):
            let now = Clock.wall()
            let tooOld = !row.groupStart && now - row.ageFrom >= policy.maxAge
            let uncallable: Bool
            if case .uncallable = result { uncallable = true } else { uncallable = false }
            if row.attempts >= Int64(policy.maxAttempts) || tooOld || uncallable {
                Log.emit(.warning, "task \(attempt.id) is dead after attempt \(row.attempts)\(tooOld ? " (past its maximum age)" : uncallable ? " (it can never be called)" : ""): \(why)")
                try attemptClaim.release(key, token: token, setting: [("state", .integer(TaskSchema.State.dead.rawValue)), ("outcome", .null),
                                                                      ("waiting_until", .null), ("last_error", .text(why))], in: transaction)
                if row.posts { try TaskResult.post(.died, taskID: attempt.id, in: transaction) }
            } else {
                Log.emit(.info, "task \(attempt.id) failed attempt \(row.attempts) and will be retried: \(why)")
                stepMadeWaiting = true
                try attemptClaim.release(key, token: token, setting: [("state", .integer(TaskSchema.State.waiting.rawValue)), ("outcome", .null),
                                                                      ("waiting_until", .double(now + policy.backoff(afterAttempt: row.attempts))),
                                                                      ("last_error", .text(why))], in: transaction)
            }
            try transaction.recordChange(topic: TaskSchema.topic, key: "finished")
        }
    }

    private struct Candidate {
        let seq: Int64
        let priority: Int64
        let id: String
        /// An id that is not `runnable` (`TaskSchema.runnableID`): the row is
        /// passed over, as if the read had not found it.
        let damaged: Bool
        let handlerName: String
        let handler: [UInt8]
        let groupStart: Bool
        let members: [String]
        let ageFrom: Double
        let attempts: Int64
        /// Whether the row names no runner: claimed with the batch's others
        /// in one statement (else alone, by `RunClaim`, which ends a dead
        /// holder first).
        let runnerFree: Bool
        let resultSignal: String?

        /// Whether it comes after `cursor` in queue order.
        func isAfter(_ cursor: (priority: Int64, seq: Int64)?) -> Bool {
            guard let cursor else { return true }
            return priority < cursor.priority || (priority == cursor.priority && seq > cursor.seq)
        }
    }

    /// The candidates of one step, read ahead: for each handler name, the
    /// next ready tasks after the cursor, in queue order, up to the batch
    /// size in one query instead of one query per task claimed. Lives for one
    /// step's transaction, in which nothing but this step changes the rows
    /// it holds (SQLite: the write lock; PostgreSQL: the rows are locked as
    /// read, FOR UPDATE), and only rows before the cursor at that.
    private final class CandidateWindow {
        let limit: Int
        /// The rows read for each name, the index of the first not yet
        /// passed, and whether the read was cut by the limit (more may follow).
        var rows: [String: (list: [Candidate], next: Int, cut: Bool)] = [:]

        init(limit: Int) { self.limit = max(1, limit) }

        /// After a rewind of the cursor to the start of the queue.
        func reset() { rows.removeAll(keepingCapacity: true) }

        /// The first ready task of `name` after the cursor, read when none
        /// is left of the last read that may still have more.
        func first(_ name: String, after cursor: (priority: Int64, seq: Int64)?, read: () throws -> (list: [Candidate], cut: Bool)) rethrows -> Candidate? {
            if var entry = rows[name] {
                while entry.next < entry.list.count, !entry.list[entry.next].isAfter(cursor) { entry.next += 1 }
                rows[name] = entry
                if entry.next < entry.list.count { return entry.list[entry.next] }
                if !entry.cut { return nil }
            }
            let fresh = try read()
            var next = 0
            while next < fresh.list.count, !fresh.list[next].isAfter(cursor) { next += 1 }
            rows[name] = (fresh.list, next, fresh.cut)
            return next < fresh.list.count ? fresh.list[next] : nil
        }
    }

    /// A claim decided in a step and written with the batch's others
    /// (`claimTogether`): the row, its token.
    private struct PendingClaim {
        let seq: Int64
        let token: String
    }

    /// Writes the claims of a step's batch, a chunk per statement. Every row
    /// was read ready and free in this transaction: one that no longer is
    /// means a store this run cannot rely on, and the step rolls back.
    private func claimTogether(_ claims: inout [PendingClaim], in transaction: StoreTransaction) throws {
        var start = 0
        for size in TaskBatchSQL.chunks(claims.count) {
            let chunk = claims[start..<start + size]
            start += size
            var arguments: [SQLValue] = [.text(store.runID)]
            arguments.reserveCapacity(1 + 3 * size)
            for claim in chunk { arguments.append(.integer(claim.seq)); arguments.append(.text(claim.token)) }
            for claim in chunk { arguments.append(.integer(claim.seq)) }
            try transaction.execute(TaskBatchSQL.claim(size), arguments)
            guard transaction.changedRows == size else {
                throw OutliveError(.busy, "\(size - transaction.changedRows) of \(size) tasks read as ready changed before their claim; the step is tried again")
            }
        }
        claims.removeAll(keepingCapacity: true)
    }

    /// Claims the next tasks of the run's queue in order, in this step's
    /// transaction: up to the batch size, only as many as `slots` lets run at
    /// once (a handler that takes a completion may keep its slot after its
    /// call), and none after a task that ends a batch. A crash before the
    /// next step commits reruns at most these.
    private func startBatch(_ run: TaskRun, slots: Int, policy: TaskPolicy, serialised: Bool,
                            in transaction: StoreTransaction) throws -> [TaskAttempt] {
        var batch: [TaskAttempt] = []
        var slots = slots
        let size = batchSize(run)
        let names = try readyNames(run, in: transaction)
        guard !names.isEmpty else { return [] }
        // The claim tokens of the batch from one read of random bytes.
        var claims = Identifier.make(count: size)[...]
        // Without the store's lock (PostgreSQL, a parallel queue) every row
        // read ahead is locked until the commit and passed over by the other
        // claimers, which may then go idle: no more rows than this step can
        // start at once — its whole batch when no handler of its names keeps
        // a slot past its call (one that takes no completion, or sends it
        // during the call), which one read then finds instead of one a task.
        let keepsNoSlot = names.allSatisfy { !awaitsCompletion($0, run: run) || run.completesInCall.contains($0) }
        let window = CandidateWindow(limit: min(size, TaskBatchSQL.largestChunk, serialised || keepsNoSlot ? size : slots))
        var pending: [PendingClaim] = []
        while batch.count < size, slots > 0,
              let attempt = try startNext(run, names: names, first: batch.isEmpty, policy: policy, serialised: serialised,
                                          claims: &claims, window: window, pending: &pending, in: transaction) {
            batch.append(attempt)
            if attempt.endsBatch { break }
            if attempt.awaitsCompletion { slots -= 1 }
        }
        try claimTogether(&pending, in: transaction)
        return batch
    }

    /// The tasks that came due made ready, a rewind applied, and the
    /// distinct handler names of the queue's ready tasks this process
    /// resolves (an indexed lookup each): what a step's claims look among.
    private func readyNames(_ run: TaskRun, in transaction: StoreTransaction) throws -> [String] {
        let queue: SQLValue = .text(run.queue)
        // Nothing is read back: on PostgreSQL it goes with the next statement.
        try transaction.executeLater(CandidateSQL.of(transaction.engine).comeDue, [queue, .double(Clock.wall())])
        // The ready tasks adds left out of the index (SQLite, TaskSchema step
        // 11) go in before the lookups below, which see the index only —
        // unless nothing was committed since a step did so (the statement,
        // with nothing to do, cost a step some 10,000 instructions).
        if transaction.engine == .sqlite {
            if transaction.dataVersion == nil || transaction.dataVersion != tailIndexedAt {
                try TaskSchema.indexTail(in: transaction)
            }
            // Unowned: the actions run while their transaction is held.
            transaction.afterCommit { [weak self, unowned transaction] in
                self?.tailIndexedAt = transaction.committedDataVersion
            }
        }
        if run.rewind {
            run.rewind = false
            run.cursor = nil
            run.startedInPass = 0
        }
        var names: [String] = []
        // The walk compares the stored bytes, not their decoding: a damaged
        // name that is not UTF-8 would decode to something that sorts before
        // it and be found again for ever. Such a name resolves nowhere.
        var last: [UInt8] = []
        let sql = CandidateSQL.of(transaction.engine)
        var found: [[UInt8]] = []
        while true {
            found.removeAll(keepingCapacity: true)
            // PostgreSQL's text is always UTF-8 (no cast of bytes needed there).
            let arguments: [SQLValue] = transaction.engine == .sqlite
                ? [queue, .blob(last)] : [queue, .text(String(decoding: last, as: UTF8.self)), queue]
            try transaction.query(sql.nextNames, arguments) { if let bytes = $0.textBytes(0) { found.append(bytes) } }
            for bytes in found {
                guard let name = String(validating: bytes, as: UTF8.self), !run.unresolvedNames.contains(name) else { continue }
                if HandlerRegistry.shared.canResolve(name) { names.append(name) } else { try reportUnresolved(name, run, in: transaction) }
            }
            guard found.count == sql.namesAtOnce, let end = found.last else { break }
            last = end
        }
        return names
    }

    /// Picks the next eligible task of the run's queue after the cursor (in
    /// priority order, then `seq`) among the tasks of `names`, and marks it
    /// running. Every lookup is indexed: the first ready task of each name
    /// after the cursor, and whether a member's group start is stored.
    /// A task that runs alone (a retry), not `first`, is left for the next
    /// step, the cursor before it.
    /// Not `serialised`, a task that only a step under the lock may handle
    /// (dead at its claim, or naming a runner) ends the batch before it, the
    /// cursor before it, for such a step (`lockedClaimNeeded`).
    private func startNext(_ run: TaskRun, names: [String], first: Bool, policy: TaskPolicy, serialised: Bool,
                           claims: inout ArraySlice<String>, window: CandidateWindow, pending: inout [PendingClaim],
                           in transaction: StoreTransaction) throws -> TaskAttempt? {
        let now = Clock.wall()
        let queue: SQLValue = .text(run.queue)
        var passes = 0
        let sql = CandidateSQL.of(transaction.engine)
        while true {
            var best: Candidate?
            for name in names {
                let read = { () throws -> (list: [Candidate], cut: Bool) in
                    // Claims decided but not written would read as ready
                    // still (a pass from the top reads them again).
                    try self.claimTogether(&pending, in: transaction)
                    var list: [Candidate] = []
                    let limit = window.limit
                    let collect: (SQLRow) -> Void = { row in
                        let id = TaskSchema.runnableID(row, 2)
                        list.append(Candidate(seq: row.integer(0), priority: row.integer(1), id: id ?? "", damaged: id == nil, handlerName: name,
                                              handler: row.blob(3) ?? [], groupStart: row.integer(4) != 0,
                                              members: TaskSchema.decode(members: row.blob(5)),
                                              ageFrom: row.double(6), attempts: row.integer(7), runnerFree: row.integer(8) != 0,
                                              resultSignal: row.textIfValid(9)))
                    }
                    guard let cursor = run.cursor else {
                        try transaction.query(sql.first, [queue, .text(name), .integer(Int64(limit))], collect)
                        return (list, list.count >= limit)
                    }
                    // After the cursor: the same priority with a later seq, then the lower priorities.
                    try transaction.query(sql.samePriorityAfter,
                                          [queue, .text(name), .integer(cursor.priority), .integer(cursor.seq), .integer(Int64(limit))], collect)
                    if list.count < limit {
                        try transaction.query(sql.lowerPriority,
                                              [queue, .text(name), .integer(cursor.priority), .integer(Int64(limit - list.count))], collect)
                    }
                    return (list, list.count >= limit)
                }
                guard let candidate = try window.first(name, after: run.cursor, read: read) else { continue }
                // The stored numbers are untrusted: compared, never negated (Int64.min).
                if let current = best, current.priority > candidate.priority
                    || (current.priority == candidate.priority && current.seq <= candidate.seq) { continue }
                best = candidate
            }
            guard let task = best else {
                // The end of a pass: another from the start if this one did something.
                passes += 1
                guard run.startedInPass > 0, passes < 2 else { return nil }
                run.cursor = nil
                run.startedInPass = 0
                window.reset()
                continue
            }
            let before = run.cursor
            run.cursor = (task.priority, task.seq)
            if task.damaged { continue }
            if try isBlocked(task, in: transaction) { continue }
            // A retry (an earlier attempt failed, or was interrupted by its
            // runner's end: perhaps by this very task) runs in a step of its
            // own, so that a task that crashes its process costs the tasks
            // claimed with it an attempt once, not at every crash.
            if task.attempts > 0 && !first {
                run.cursor = before
                return nil
            }
            if task.attempts >= Int64(policy.maxAttempts) || (!task.groupStart && now - task.ageFrom >= policy.maxAge) {
                guard serialised else {
                    run.cursor = before
                    run.lockedClaimNeeded = true
                    return nil
                }
                let why = task.attempts >= Int64(policy.maxAttempts)
                    ? "\(task.attempts) attempts made (the maximum is \(policy.maxAttempts))"
                    : "older than the maximum age of \(policy.maxAge) s"
                // An outcome (its result is posted): never left unsynced with claims.
                try transaction.requireSync()
                try transaction.execute("UPDATE outlive_tasks SET state = 2, last_error = coalesce(last_error || '; ', '') || ? WHERE seq = ?",
                                        [.text(why), .integer(task.seq)])
                try TaskResult.post(.died, taskID: task.id, in: transaction)
                try transaction.recordChange(topic: TaskSchema.topic, key: "finished")
                continue
            }
            let claim = claims.popFirst() ?? Identifier.make()
            let setting: [(column: String, value: SQLValue)] = [("state", .integer(TaskSchema.State.running.rawValue)), ("outcome", .null),
                                                                ("attempts", .integer(task.attempts + 1))]
            let ready = [SQLValue.integer(TaskSchema.State.ready.rawValue)]
            if task.runnerFree {
                // Ready and free as read in this transaction (and, on
                // PostgreSQL, locked by it since): claimed with the batch.
                pending.append(PendingClaim(seq: task.seq, token: claim))
            } else if !serialised {
                // The row is locked by this transaction (FOR UPDATE): only a
                // runner named on it (a run to end first) can refuse the claim.
                guard try attemptClaim.takeIfFree(.integer(task.seq), token: .text(claim), setting: setting,
                                                  where: "state = ?", ready, in: transaction) else {
                    run.cursor = before
                    run.lockedClaimNeeded = true
                    return nil
                }
            } else {
                let taken = try attemptClaim.take(.integer(task.seq), token: .text(claim), setting: setting,
                                                  where: "state = ?", ready, in: transaction)
                // Taking it over may have ended a dead run, whose tasks are
                // ready again: the rows read ahead are read again.
                window.reset()
                guard taken else { continue }
            }
            run.startedInPass += 1
            var handler: Handler?
            var decodeError: String?
            do { handler = try Handler(serialized: task.handler) } catch { decodeError = "the stored handler does not decode: \(error)" }
            if let decoded = handler, decoded.name != task.handlerName {
                // A damaged row: run by its column's name, it would come back
                // unresolved and be picked again at once.
                handler = nil
                decodeError = "the stored handler is \(decoded.name), but the task's row says \(task.handlerName)"
            }
            let awaits = handler.map { awaitsCompletion($0.name, run: run) && !run.completesInCall.contains($0.name) } ?? false
            return TaskAttempt(seq: task.seq, id: task.id, claim: claim, number: task.attempts + 1,
                               handler: handler, decodeError: decodeError, resultSignal: task.resultSignal, startsGroup: task.groupStart,
                               awaitsCompletion: awaits, endsBatch: task.groupStart || task.attempts > 0 || handler == nil, timer: nil)
        }
    }

    private func awaitsCompletion(_ name: String, run: TaskRun) -> Bool {
        if let known = run.awaitsCompletion[name] { return known }
        let awaits = TaskQueue.takesCompletion(name)
        run.awaitsCompletion[name] = awaits
        return awaits
    }

    private func wantsSignal(_ name: String, run: TaskRun) -> Bool {
        if let known = run.wantsSignal[name] { return known }
        let wants = TaskResult.wantsSignal(name)
        run.wantsSignal[name] = wants
        return wants
    }

    /// Ready tasks whose handler no declaration of this process resolves wait
    /// for a process that declares it; a misspelled name waits for ever. So
    /// each run says so once per name (a warning), and the first such task
    /// keeps it as its last error until it runs, for `outlive tasks` (one
    /// indexed row: the cost does not grow with the queue).
    private func reportUnresolved(_ name: String, _ run: TaskRun, in transaction: StoreTransaction) throws {
        guard run.reportedNames.insert(name).inserted else { return }
        let why = "no handler named \(name) is declared in process \(store.processName) (run \(store.runID)), which skipped the task; it waits for a process that declares it"
        Log.emit(.warning, "tasks of handler \(name) are pending, but no handler of that name is declared in this process: they wait for a process that declares it (a misspelled name waits for ever)")
        // On PostgreSQL a row another claimer holds is skipped, not waited
        // for, and only this queue's rows are locked: an ordered queue's
        // runner passes no row of its queue over for a claimer of another.
        if transaction.engine == .postgresql {
            try transaction.execute("""
                UPDATE outlive_tasks SET last_error = ? WHERE seq = (SELECT seq FROM outlive_tasks WHERE state = 0 AND queue = ? AND handler_name = ?
                    ORDER BY priority DESC, seq LIMIT 1 FOR UPDATE SKIP LOCKED)
                AND last_error IS NULL AND attempts = 0
                """, [.text(why), .text(run.queue), .text(name)])
            return
        }
        try transaction.execute("""
            UPDATE outlive_tasks SET last_error = ? WHERE seq = (SELECT seq FROM outlive_tasks WHERE state = 0 AND unindexed IS NULL AND handler_name = ? ORDER BY seq LIMIT 1)
            AND last_error IS NULL AND attempts = 0
            """, [.text(why), .text(name)])
    }

    /// A member never runs while a task that starts one of its groups is stored.
    private func isBlocked(_ task: Candidate, in transaction: StoreTransaction) throws -> Bool {
        for group in task.members {
            let start = try transaction.integer("SELECT seq FROM outlive_tasks WHERE group_start = ? AND seq != ? LIMIT 1",
                                                [.text(group), .integer(task.seq)])
            if start != nil { return true }
        }
        return false
    }
}

/// The lookups of a run's next task, built once per engine: a step makes
/// them for every task it claims.
private struct CandidateSQL {
    static let sqlite = CandidateSQL(.sqlite)
    static let postgresql = CandidateSQL(.postgresql)

    static func of(_ engine: StoreEngine) -> CandidateSQL {
        switch engine {
        case .sqlite: sqlite
        case .postgresql: postgresql
        }
    }

    let first: String
    /// After the cursor: the same priority with a later seq...
    let samePriorityAfter: String
    /// ...else the next lower priority.
    let lowerPriority: String
    /// The next `namesAtOnce` handler names of the queue's ready tasks after
    /// one (by bytes). SQLite: one, a statement each (no round trip).
    /// PostgreSQL: 32, in one statement (the same indexed lookup repeated by
    /// a recursive query): a step learns its names in one round trip instead
    /// of one per name and one more.
    let nextNames: String
    let namesAtOnce: Int
    /// Makes the queue's waiting tasks that came due ready.
    let comeDue: String

    private init(_ engine: StoreEngine) {
        // result_signal: read with the claim, so that a handler declaring
        // `result_signal` costs no read of its own (on PostgreSQL a round trip).
        let columns = "seq, priority, id, handler, group_start IS NOT NULL, group_members, age_from, attempts, runner IS NULL, result_signal"
        // The id's characters are checked as each row is read (`Candidate.damaged`).
        // SQLite: `unindexed IS NULL` lets the planner use the ready index
        // (TaskSchema step 11); the step indexed every ready task first.
        let filter = "state = 0 AND \(engine == .sqlite ? "unindexed IS NULL AND " : "")queue = ? AND handler_name = ? AND \(engine == .sqlite ? "typeof(priority) = 'integer' AND " : "")\(TaskSchema.runnable(engine, idCharacters: false))"
        // PostgreSQL: a candidate is locked as it is read, and one another
        // claimer holds is passed over (SKIP LOCKED) rather than waited for;
        // claims without the store's lock rely on it (`TaskQueue.next`).
        let lock = engine == .postgresql ? " FOR UPDATE SKIP LOCKED" : ""
        first = "SELECT \(columns) FROM outlive_tasks WHERE \(filter) ORDER BY priority DESC, seq LIMIT ?\(lock)"
        samePriorityAfter = "SELECT \(columns) FROM outlive_tasks WHERE \(filter) AND priority = ? AND seq > ? ORDER BY seq LIMIT ?\(lock)"
        lowerPriority = "SELECT \(columns) FROM outlive_tasks WHERE \(filter) AND priority < ? ORDER BY priority DESC, seq LIMIT ?\(lock)"
        comeDue = engine == .sqlite
            ? "UPDATE outlive_tasks SET state = 0, waiting_until = NULL WHERE state = 3 AND queue = ? AND waiting_until <= ?"
            : """
              UPDATE outlive_tasks SET state = 0, waiting_until = NULL WHERE seq IN (
                  SELECT seq FROM outlive_tasks WHERE state = 3 AND queue = ? AND waiting_until <= ? FOR UPDATE SKIP LOCKED)
              """
        namesAtOnce = engine == .sqlite ? 1 : 32
        // The recursion stops at the first NULL (no name after) or when the
        // outer LIMIT has its rows: PostgreSQL evaluates it only that far.
        nextNames = engine == .sqlite ? """
            SELECT handler_name FROM outlive_tasks WHERE state = 0 AND unindexed IS NULL AND queue = ? \
            AND handler_name > CAST(? AS TEXT) AND \(TaskSchema.runnable(engine)) ORDER BY handler_name LIMIT 1
            """ : """
            WITH RECURSIVE names(name) AS (
                (SELECT handler_name FROM outlive_tasks WHERE state = 0 AND queue = ? AND handler_name > ? \
                 AND \(TaskSchema.runnable(engine)) ORDER BY handler_name LIMIT 1)
                UNION ALL
                SELECT (SELECT handler_name FROM outlive_tasks WHERE state = 0 AND queue = ? AND handler_name > names.name \
                        AND \(TaskSchema.runnable(engine)) ORDER BY handler_name LIMIT 1)
                FROM names WHERE names.name IS NOT NULL)
            SELECT name FROM names WHERE name IS NOT NULL LIMIT \(namesAtOnce)
            """
    }
}
