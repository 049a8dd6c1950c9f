import COutliveSystem

/// The completion handler a task handler receives as `completion`: a library
/// built-in bound with the store directory, the task id, the attempt's claim
/// token and the running run's id, so that calling it works from any thread
/// and from any process.
///
/// Call-time arguments: `success` (BOOL), optional `error` (ID), and any
/// others: a success's result (`TaskResult`), kept on the row. Exactly one
/// completion per attempt, whichever process sends it: the outcome is written
/// on the task's row, fenced by the attempt claim (this task, this attempt's
/// token, its run) and only while no outcome is there, in one transaction; a
/// completion for an attempt that already has an outcome or has ended (timed
/// out and recorded, its runner ended) changes nothing and throws `.state`.
/// The runner learns of it directly in its own process, through the change
/// feed in another. One sent from inside the handler's own call, on the
/// runner's thread, without a result, is not written on its own: the run ends
/// it with its batch, as it ends a handler that returned
/// (`TaskQueue.completeInCall`).
///
/// Where this process has the store open, the outcome is written through that
/// handle. Elsewhere (another process, or a forked child whose inherited handle
/// is its parent's) it is written through a short-lived handle of this
/// process's own, and only on a store that exists: a completion never creates
/// one. Stored data cannot choose the path: the library's own handlers cannot
/// be stored work (`HandlerRegistry.call(storedWork:)`).
public enum TaskCompletion {
    public static let handlerName = HandedOutCompletions.handlerName
    static let signature = "ID store, ID task_id, ID claim, ID? run_id, BOOL success, ID? error"

    /// Attempts running in this process, by claim token.
    private static let running = TokenTable<String, WeakReference<TaskQueue>>()

    /// The completion handler of one attempt. `store` and `run` are the
    /// handle's, made once per handle (`TaskQueue.completionIDs`), and
    /// `taskID` the one the handler's own `task_id` holds: only the claim is
    /// new bytes. The name is the library's own, valid: not checked again at
    /// every attempt (a check, four IDs and their copies were some 8,000
    /// instructions of each attempt whose handler takes a completion).
    static func make(store: IDValue, taskID: IDValue, claim: String, run: IDValue) -> Handler {
        Handler(decodedName: handlerName, invalidationName: nil, bound: Arguments([
            ("store", .id(store)),
            ("task_id", .id(taskID)),
            ("claim", .id(IDValue(string: claim))),
            ("run_id", .id(run)),
        ]), isInvalidated: false)
    }

    /// The store path as another process (with another working directory)
    /// finds it; a PostgreSQL URI as it is.
    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") || PostgreSQLLocation.isURI(path) { return path }
        var buffer = [CChar](repeating: 0, count: 4_096)
        guard getcwd(&buffer, buffer.count) != nil else { return path }
        let directory = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return directory + "/" + path
    }

    static func began(claim: String, queue: TaskQueue) {
        HandedOutCompletions.shared.track(claim)
        running.insert(claim, WeakReference(queue))
    }

    static func ended(claim: String) {
        running.remove(claim)
        HandedOutCompletions.shared.forget(claim)
    }

    private static func text(_ arguments: Arguments, _ name: String) throws -> String {
        guard let value = arguments[name] else {
            throw OutliveError(.missingArgument, "the task completion handler needs the argument \(name)")
        }
        guard case .id(let id) = value, let text = id.string else {
            throw OutliveError(.typeMismatch, "the task completion argument \(name) must be an ID holding UTF-8 text")
        }
        return text
    }

    /// The body of the built-in.
    static func complete(_ arguments: Arguments) throws {
        let path = try text(arguments, "store")
        let taskID = try text(arguments, "task_id")
        let claim = try text(arguments, "claim")
        let runID = arguments["run_id"] == nil ? nil : try text(arguments, "run_id")
        guard let successValue = arguments["success"] else {
            throw OutliveError(.missingArgument, "the task completion handler needs the argument success (BOOL)")
        }
        guard case .bool(let success) = successValue else {
            throw OutliveError(.typeMismatch, "the task completion argument success must be a BOOL")
        }
        var error: String?
        if let value = arguments["error"] {
            guard case .id(let id) = value else {
                throw OutliveError(.typeMismatch, "the task completion argument error must be an ID")
            }
            error = id.string ?? "(\(id.bytes.count) bytes that are not UTF-8 text)"
        }
        // A success's extra arguments are its result (TaskResult), kept on the row until the runner posts it.
        let extras = try TaskResult.extras(of: arguments)
        let result = success && !extras.isEmpty ? try extras.serialized() : nil
        guard let store = TaskQueue.openStore(path: path) else {
            let uri = PostgreSQLLocation.isURI(path)
            let nowhere = "the completion of task \(taskID) names the store \(uri ? (try? PostgreSQLLocation(uri: path).label) ?? "at a PostgreSQL URI" : path), where there is no store (a completion never creates one)"
            guard uri || TaskQueue.inheritsStore(path: path) || StoreDirectory.holdsStore(path) else { throw OutliveError.state(nowhere) }
            var options = StoreOptions()
            options.createsStore = false
            let own: Store
            do {
                own = try Store(path: path, processName: "outlive-completion", loop: try Loop(), options: options, components: OutliveStore.components)
            } catch let error as OutliveError where error.code == .notFound {
                throw OutliveError.state(nowhere)
            }
            defer { own.close() }
            try record(in: own, taskID: taskID, claim: claim, runID: runID, success: success, error: error, result: result, announce: true)
            return
        }
        let local = running.value(for: claim)?.object
        if result == nil, let local, try local.completeInCall(claim: claim, taskID: taskID, success: success, error: error) { return }
        // Before the row is written: a completion in the handler's call from
        // now on reads the row first (`completeInCall`).
        if local != nil { HandedOutCompletions.shared.note(claim: claim) }
        try record(in: store, taskID: taskID, claim: claim, runID: runID, success: success, error: error, result: result, announce: local == nil)
        local?.completed(claim: claim, .completion(success: success, error: error))
    }

    /// Writes the outcome on the task's row while the attempt holds it and
    /// has none: the one completion of the attempt.
    private static func record(in store: Store, taskID: String, claim: String, runID: String?, success: Bool, error: String?,
                               result: [UInt8]?, announce: Bool) throws {
        var fence = "claim = ?", fenced: [SQLValue] = [.text(claim)]
        if let runID {
            fence = "runner = ? AND " + fence
            fenced.insert(.text(runID), at: 0)
        }
        try store.database.write { transaction in
            let task = TaskID.row(taskID, transaction.engine)
            try transaction.execute("UPDATE outlive_tasks SET outcome = ?, last_error = coalesce(?, last_error), result = ? WHERE \(task.condition) AND \(fence) AND state = 1 AND outcome IS NULL",
                                    [.integer((success ? TaskSchema.Outcome.success : .failure).rawValue),
                                     success ? .null : .text(error ?? "the handler reported a failure"),
                                     result.map { .blob($0) } ?? .null] + task.arguments + fenced)
            guard transaction.changedRows == 1 else {
                throw OutliveError.state("attempt \(claim) of task \(taskID) was completed already, or has ended (timed out, or its runner ended); this completion is ignored")
            }
            if announce { try transaction.recordChange(topic: TaskSchema.topic, key: "completed") }
        }
    }
}
