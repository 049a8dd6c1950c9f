/// One run of this process: it holds the runner claim, walks the queue in
/// order with a cursor (tasks added during the run lie ahead of it and are
/// taken), and keeps the attempts in flight. Lives on the loop thread.
final class TaskRun {
    /// Whether this run holds the runner claim (taken in the transaction that
    /// starts its first task, so that a run with nothing to do writes nothing).
    var claimed = false
    /// The `seq` of the last task this pass looked at.
    var cursor: Int64 = 0
    /// Tasks started in this pass; a pass that started some is followed by
    /// another from the start (tasks that came due or were unblocked behind
    /// the cursor), a pass that started none ends the run.
    var startedInPass = 0
    var inFlight: [String: TaskAttempt] = [:]
    /// Names that resolved but whose call said otherwise: skipped for the run.
    var unresolvedNames: Set<String> = []
}

/// One attempt of one task.
struct TaskAttempt {
    let seq: Int64
    let id: String
    let claim: String
    let number: Int64
    let handler: Handler?
    let decodeError: String?
    var timer: UInt64?
}

extension TaskQueue {
    // MARK: - Completions (any thread)

    /// A completion of an attempt of this process.
    func completed(claim: String, success: Bool, error: String?) throws {
        let accepted = lock.withLock { () -> Bool in
            guard results[claim] == nil else { return false }
            results[claim] = (success, error)
            return true
        }
        guard accepted else { throw OutliveError.state("the completion of attempt \(claim) was called already") }
        store.loop.post { [weak self] in self?.pump() }
    }

    // MARK: - Claiming the runner (loop thread)

    func requestRun() {
        guard run == nil, (try? store.checkUsable()) != nil else { return }
        do {
            // A dead holder's run is ended first, so that its hooks return its task.
            var holder: String?
            try store.database.read { transaction in
                try transaction.query("SELECT run_id FROM outlive_task_runner WHERE slot = 0") { holder = $0.text(0) }
            }
            if let holder, holder != store.runID, !store.isAlive(run: holder) {
                try store.reapEndedRuns(candidates: [holder])
            }
        } catch {
            retryLater()
            return
        }
        if let timer = delayTimer { store.loop.cancelTimer(timer); delayTimer = nil }
        run = TaskRun()
        pump()
    }

    /// Takes the runner claim inside `transaction`; false while another live run holds it.
    private func claim(in transaction: StoreTransaction) throws -> Bool {
        let me = store.runID
        var current: String?
        try transaction.query("SELECT run_id FROM outlive_task_runner WHERE slot = 0") { current = $0.text(0) }
        if let current, current != me {
            if store.isAlive(run: current) { return false }
            try TaskQueue.runEnded(EndedRun(runID: current, processName: "(unknown)", died: true), in: transaction)
        }
        try transaction.execute("INSERT INTO outlive_task_runner(slot, run_id, started) VALUES (0, ?, ?) ON CONFLICT(slot) DO UPDATE SET run_id = excluded.run_id, started = excluded.started",
                                [.text(me), .double(Clock.wall())])
        return true
    }

    /// After a database failure (busy, I/O): try again in a second.
    func retryLater() {
        guard retryTimer == nil else { return }
        retryTimer = store.loop.schedule(after: 1) { [weak self] in
            guard let self else { return }
            self.retryTimer = nil
            if self.run != nil { self.pump() } else { self.requestRun() }
        }
    }

    // MARK: - The run (loop thread)

    /// How long one pump may go on starting tasks before it hands the loop
    /// back to its host: a run through a long queue, or one whose tasks keep
    /// adding tasks, must not hold a single outlive_loop_dispatch() for ever.
    static let dispatchBudget = 0.005

    /// Ends finished attempts, starts the next tasks up to the concurrency,
    /// and releases the claim when nothing is left. Each step is one
    /// transaction: the end of one attempt and the start of the next. After
    /// `dispatchBudget` it goes on in the next dispatch.
    func pump() {
        guard let run else { return }
        let began = Clock.monotonic()
        while true {
            let finished = takeFinished(run)
            let (limit, policy) = lock.withLock { (concurrency, self.policy) }
            let wantStart = run.inFlight.count < limit
            var started: TaskAttempt?
            var released = false
            var claimedNow = false
            var lostClaim = false
            do {
                try store.checkUsable()
                try store.database.write { transaction in
                    for (attempt, result) in finished {
                        try finish(attempt, result, policy: policy, in: transaction)
                    }
                    guard wantStart else { return }
                    if !run.claimed {
                        // Another live runner: leave before looking at a task.
                        var current: String?
                        try transaction.query("SELECT run_id FROM outlive_task_runner WHERE slot = 0") { current = $0.text(0) }
                        if let current, current != store.runID, store.isAlive(run: current) {
                            lostClaim = true
                            return
                        }
                    }
                    started = try startNext(run, policy: policy, in: transaction)
                    if started != nil && !run.claimed {
                        guard try claim(in: transaction) else { throw OutliveError(.busy, "the runner claim was taken meanwhile") }
                        claimedNow = true
                    }
                    if started == nil && run.inFlight.isEmpty && run.claimed {
                        try transaction.execute("DELETE FROM outlive_task_runner WHERE slot = 0 AND run_id = ?", [.text(store.runID)])
                        try transaction.recordChange(topic: TaskSchema.topic, key: "released")
                        released = true
                    }
                }
            } catch {
                // Put the results back to be written on the next try.
                lock.withLock { for (attempt, result) in finished { results[attempt.claim] = result } }
                for (attempt, _) in finished { run.inFlight[attempt.claim] = attempt }
                if (try? store.checkUsable()) == nil { self.run = nil; return }
                if let refused = error as? OutliveError, refused.code == .state {
                    // The store refused this run a claim: others ended it (its
                    // lock file was deleted). Trying again would only fail again.
                    Log.emit(.error, "the task runner of run \(store.runID) stops: \(refused.message)")
                    self.run = nil
                    return
                }
                retryLater()
                return
            }
            for (attempt, _) in finished { TaskCompletion.ended(claim: attempt.claim) }
            if claimedNow { run.claimed = true; wantsRun = false }
            if lostClaim {
                self.run = nil
                wantsRun = true
                return
            }
            if !finished.isEmpty { scheduleDue() }
            if started == nil && run.inFlight.isEmpty && !run.claimed {
                self.run = nil  // nothing to do: no claim was taken, nothing to release
                wantsRun = false
                scheduleDue()
                return
            }
            if released {
                self.run = nil
                scheduleDue()
                return
            }
            if let started {
                call(started, run: run, policy: policy)
                if Clock.monotonic() - began >= TaskQueue.dispatchBudget {
                    store.loop.post { [weak self] in self?.pump() }
                    return
                }
                continue
            }
            if finished.isEmpty { return }  // waiting for completions in flight
        }
    }

    /// Attempts that have a result: from a completion, or timed out.
    private func takeFinished(_ run: TaskRun) -> [(TaskAttempt, (success: Bool, error: String?))] {
        var done: [(TaskAttempt, (success: Bool, error: String?))] = []
        lock.withLock {
            for (claim, attempt) in run.inFlight {
                if let result = results.removeValue(forKey: claim) { done.append((attempt, result)) }
            }
        }
        for (attempt, _) in done {
            run.inFlight.removeValue(forKey: attempt.claim)
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
            deliver(attempt.claim, success: false, error: attempt.decodeError ?? "the stored handler does not decode")
            return
        }
        var arguments = Arguments([("task_id", .id(IDValue(string: attempt.id))), ("attempt", .integer(attempt.number))])
        if let completion = TaskCompletion.make(storePath: store.path, taskID: attempt.id, claim: attempt.claim) {
            arguments.set("completion", .handler(completion))
        }
        do {
            try HandlerRegistry.shared.call(handler, with: arguments)
        } catch let error as OutliveError where error.code == .unresolved {
            // Not this process's to run after all: back to ready, attempt not counted.
            run.unresolvedNames.insert(handler.name)
            deliver(attempt.claim, success: false, error: nil, unresolved: true)
            return
        } catch {
            deliver(attempt.claim, success: false, error: "the handler \(handler.name) could not be called: \(error)")
            return
        }
        let answered = lock.withLock { results[attempt.claim] != nil }
        if answered || !TaskQueue.takesCompletion(handler.name) {
            deliver(attempt.claim, success: true, error: nil)
            return
        }
        let claim = attempt.claim
        attempt.timer = store.loop.schedule(after: policy.timeout) { [weak self] in
            self?.deliver(claim, success: false, error: "no completion within \(policy.timeout) s (timeout)")
            self?.pump()
        }
        run.inFlight[claim] = attempt
    }

    /// Records a result unless one is there already (the first one wins).
    private func deliver(_ claim: String, success: Bool, error: String?, unresolved: Bool = false) {
        lock.withLock {
            guard results[claim] == nil else { return }
            results[claim] = (success, unresolved ? TaskQueue.unresolvedMarker : error)
        }
    }

    static let unresolvedMarker = "\u{0}unresolved"

    /// Outcomes written by completions in other processes.
    func collectRemoteOutcomes() {
        guard let run, !run.inFlight.isEmpty else { return }
        var found: [(String, Bool, String?)] = []
        _ = try? store.database.read { transaction in
            for (claim, attempt) in run.inFlight {
                try transaction.query("SELECT outcome, last_error FROM outlive_tasks WHERE seq = ? AND claim = ? AND outcome IS NOT NULL",
                                      [.integer(attempt.seq), .text(claim)]) { row in
                    found.append((claim, row.integer(0) == TaskSchema.Outcome.success.rawValue, row.text(1)))
                }
            }
        }
        guard !found.isEmpty else { return }
        for (claim, success, error) in found { deliver(claim, success: success, error: error) }
        pump()
    }

    // MARK: - Steps inside the write transaction

    /// Ends an attempt: success deletes the task; failure keeps it with
    /// backoff, or makes it dead. Only if this attempt still holds the task.
    private func finish(_ attempt: TaskAttempt, _ result: (success: Bool, error: String?), policy: TaskPolicy,
                        in transaction: StoreTransaction) throws {
        var row: (attempts: Int64, ageFrom: Double, groupStart: Bool, outcome: Int64?, error: String?)?
        try transaction.query("SELECT attempts, age_from, group_start IS NOT NULL, outcome, last_error FROM outlive_tasks WHERE seq = ? AND claim = ? AND state = 1",
                              [.integer(attempt.seq), .text(attempt.claim)]) {
            row = ($0.integer(0), $0.double(1), $0.integer(2) != 0, $0.isNull(3) ? nil : $0.integer(3), $0.text(4))
        }
        guard let row else { return }
        var success = result.success
        var error = result.error
        if let outcome = row.outcome {  // a completion from another process came first
            success = outcome == TaskSchema.Outcome.success.rawValue
            error = row.error
        }
        if error == TaskQueue.unresolvedMarker {
            try transaction.execute("UPDATE outlive_tasks SET state = 0, runner = NULL, claim = NULL, outcome = NULL, attempts = attempts - 1 WHERE seq = ?",
                                    [.integer(attempt.seq)])
            try transaction.recordChange(topic: TaskSchema.topic, key: "returned")
            return
        }
        if success {
            Log.emit(.info, "task \(attempt.id) succeeded (attempt \(row.attempts))")
            try transaction.execute("DELETE FROM outlive_tasks WHERE seq = ?", [.integer(attempt.seq)])
            try TaskSchema.addCounts(pending: -1, dead: 0, in: transaction)
            try transaction.recordChange(topic: TaskSchema.topic, key: "finished")
            return
        }
        let now = Clock.wall()
        let why = error ?? "the handler reported a failure"
        let tooOld = !row.groupStart && now - row.ageFrom >= policy.maxAge
        if row.attempts >= Int64(policy.maxAttempts) || tooOld {
            Log.emit(.warning, "task \(attempt.id) is dead after attempt \(row.attempts)\(tooOld ? " (past its maximum age)" : ""): \(why)")
            try transaction.execute("UPDATE outlive_tasks SET state = 2, runner = NULL, claim = NULL, outcome = NULL, waiting_until = NULL, last_error = ? WHERE seq = ?",
                                    [.text(why), .integer(attempt.seq)])
            try TaskSchema.addCounts(pending: -1, dead: 1, in: transaction)
        } else {
            Log.emit(.info, "task \(attempt.id) failed attempt \(row.attempts) and will be retried: \(why)")
            try transaction.execute("UPDATE outlive_tasks SET state = 3, runner = NULL, claim = NULL, outcome = NULL, waiting_until = ?, last_error = ? WHERE seq = ?",
                                    [.double(now + policy.backoff(afterAttempt: row.attempts)), .text(why), .integer(attempt.seq)])
        }
        try transaction.recordChange(topic: TaskSchema.topic, key: "finished")
    }

    private struct Candidate {
        let seq: Int64
        let id: String
        let handlerName: String
        let handler: [UInt8]
        let groupStart: Bool
        let members: [String]
        let ageFrom: Double
        let attempts: Int64
    }

    /// Picks the next eligible task after the cursor and marks it running.
    /// Every lookup is indexed: the distinct handler names of ready tasks
    /// (skipping names this process cannot resolve), the first ready task of
    /// each after the cursor, and whether a member's group start is stored.
    private func startNext(_ run: TaskRun, policy: TaskPolicy, in transaction: StoreTransaction) throws -> TaskAttempt? {
        let now = Clock.wall()
        try transaction.execute("UPDATE outlive_tasks SET state = 0, waiting_until = NULL WHERE state = 3 AND waiting_until <= ?", [.double(now)])
        var names: [String] = []
        // The walk compares the stored bytes, not their decoding: a damaged
        // name that is not UTF-8 would decode to something that sorts before
        // it and be found again for ever. Such a name resolves nowhere.
        var last: [UInt8] = []
        while true {
            var next: [UInt8]?
            try transaction.query("SELECT handler_name FROM outlive_tasks WHERE state = 0 AND handler_name > CAST(? AS TEXT) AND \(TaskSchema.runnable) ORDER BY handler_name LIMIT 1",
                                  [.blob(last)]) { next = $0.textBytes(0) }
            guard let bytes = next else { break }
            last = bytes
            guard let name = String(validating: bytes, as: UTF8.self) else { continue }
            if !run.unresolvedNames.contains(name) && HandlerRegistry.shared.canResolve(name) { names.append(name) }
        }
        guard !names.isEmpty else { return nil }
        var passes = 0
        while true {
            var best: Candidate?
            for name in names {
                try transaction.query("""
                    SELECT seq, id, handler, group_start IS NOT NULL, group_members, age_from, attempts FROM outlive_tasks
                    WHERE state = 0 AND handler_name = ? AND seq > ? AND \(TaskSchema.runnable) ORDER BY seq LIMIT 1
                    """, [.text(name), .integer(run.cursor)]) { row in
                    let seq = row.integer(0)
                    if let current = best, current.seq <= seq { return }
                    do {
                        best = Candidate(seq: seq, id: row.text(1) ?? "", handlerName: name, handler: row.blob(2) ?? [], groupStart: row.integer(3) != 0,
                                         members: TaskSchema.decode(members: row.blob(4)), ageFrom: row.double(5), attempts: row.integer(6))
                    }
                }
            }
            guard let task = best else {
                // The end of a pass: another from the start if this one did something.
                passes += 1
                guard run.startedInPass > 0, passes < 2 else { return nil }
                run.cursor = 0
                run.startedInPass = 0
                continue
            }
            run.cursor = task.seq
            if try isBlocked(task, in: transaction) { continue }
            if task.attempts >= Int64(policy.maxAttempts) || (!task.groupStart && now - task.ageFrom >= policy.maxAge) {
                let why = task.attempts >= Int64(policy.maxAttempts)
                    ? "\(task.attempts) attempts made (the maximum is \(policy.maxAttempts))"
                    : "older than the maximum age of \(policy.maxAge) s"
                try transaction.execute("UPDATE outlive_tasks SET state = 2, last_error = coalesce(last_error || '; ', '') || ? WHERE seq = ?",
                                        [.text(why), .integer(task.seq)])
                try TaskSchema.addCounts(pending: -1, dead: 1, in: transaction)
                try transaction.recordChange(topic: TaskSchema.topic, key: "finished")
                continue
            }
            let claim = Identifier.make()
            try transaction.execute("UPDATE outlive_tasks SET state = 1, runner = ?, claim = ?, outcome = NULL, attempts = attempts + 1 WHERE seq = ?",
                                    [.text(store.runID), .text(claim), .integer(task.seq)])
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
            return TaskAttempt(seq: task.seq, id: task.id, claim: claim, number: task.attempts + 1,
                               handler: handler, decodeError: decodeError, timer: nil)
        }
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
