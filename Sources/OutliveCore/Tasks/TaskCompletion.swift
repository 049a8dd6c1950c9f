import COutliveSystem

/// The completion handler a task handler receives as `completion`: a library
/// built-in bound with the store directory, the task id and the attempt's
/// claim token, so that calling it works from any thread and any process.
///
/// Call-time arguments: `success` (BOOL), optional `error` (ID). In the process
/// that runs the attempt it hands the result to the runner directly; elsewhere
/// it opens the store, records the outcome on the task row (only if that
/// attempt is still running) and the runner learns of it through the change
/// feed. A completion for an attempt that already ended (timed out, completed,
/// its runner died) changes nothing and throws `.state`.
public enum TaskCompletion {
    public static let handlerName = "outlive.task_completion"
    static let signature = "ID store, ID task_id, ID claim, BOOL success, ID? error"

    private static let lock = Lock()
    // Guarded by `lock`: attempts running in this process, by claim token.
    nonisolated(unsafe) private static var running: [String: Weak] = [:]
    nonisolated(unsafe) private static var registered = false

    private struct Weak {
        weak var queue: TaskQueue?
    }

    /// Registers the built-in (once per process). Called when a store opens;
    /// a process that never opens a store needs it registered at library load.
    public static func register() {
        let already = lock.withLock { () -> Bool in
            defer { registered = true }
            return registered
        }
        guard !already else { return }
        try? HandlerRegistry.shared.registerBuiltin(name: handlerName, signature: signature) { arguments in
            try complete(arguments)
        }
    }

    static func make(storePath: String, taskID: String, claim: String) -> Handler? {
        try? Handler(name: handlerName, bound: Arguments([
            ("store", .id(IDValue(string: absolute(storePath)))),
            ("task_id", .id(IDValue(string: taskID))),
            ("claim", .id(IDValue(string: claim))),
        ]))
    }

    /// The store path as another process (with another working directory) finds it.
    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        var buffer = [CChar](repeating: 0, count: 4_096)
        guard getcwd(&buffer, buffer.count) != nil else { return path }
        let directory = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return directory + "/" + path
    }

    static func began(claim: String, queue: TaskQueue) {
        lock.withLock { running[claim] = Weak(queue: queue) }
    }

    static func ended(claim: String) {
        _ = lock.withLock { running.removeValue(forKey: claim) }
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

    static func complete(_ arguments: Arguments) throws {
        let path = try text(arguments, "store")
        let taskID = try text(arguments, "task_id")
        let claim = try text(arguments, "claim")
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
        if let queue = lock.withLock({ running[claim]?.queue }) {
            try queue.completed(claim: claim, success: success, error: error)
            return
        }
        try recordRemotely(path: path, taskID: taskID, claim: claim, success: success, error: error)
    }

    /// In a process that does not run the attempt: write the outcome on the row.
    private static func recordRemotely(path: String, taskID: String, claim: String, success: Bool, error: String?) throws {
        let write: (Store) throws -> Void = { store in
            try store.database.write { transaction in
                try transaction.execute("UPDATE outlive_tasks SET outcome = ?, last_error = coalesce(?, last_error) WHERE id = ? AND claim = ? AND state = 1 AND outcome IS NULL",
                                        [.integer((success ? TaskSchema.Outcome.success : .failure).rawValue),
                                         success ? .null : .text(error ?? "the handler reported a failure"),
                                         .text(taskID), .text(claim)])
                guard transaction.changedRows == 1 else {
                    throw OutliveError.state("attempt \(claim) of task \(taskID) has ended already (completed, timed out, or its runner ended); the completion is ignored")
                }
                try transaction.recordChange(topic: TaskSchema.topic, key: "completed")
            }
        }
        if let store = TaskQueue.openStore(path: path) {
            try write(store)
            return
        }
        let store = try Store(path: path, processName: "outlive-completion", loop: try Loop(), components: OutliveStore.components)
        defer { store.close() }
        try write(store)
    }
}
