/// A task's result, delivered as a signal (docs/tasks.md, "Results and
/// progress"): a task added with a result signal has its final outcome posted
/// there, terminating, in the transaction that ends the task — success, death
/// or cancellation; a failed attempt that will be retried is not final. The
/// payload: `task_id` (ID), `outcome` (ID: "success", "dead" or "cancelled";
/// an optional ID, so that a consumer that also receives progress can declare
/// it, which it cannot do with a BOOL), `success` (BOOL), `cancelled` (BOOL),
/// `error` (ID, the last error, on death), and on success the extra arguments
/// the completion was called with (beyond `success` and `error`).
///
/// A post reaches the consumers the signal has at that moment (docs/signals.md:
/// a post with no consumer stores nothing). So that no result is lost to a
/// consumer registered too late, the consumer is registered with the add, in
/// its transaction (`TaskResultConsumer`): from then on the signal's record
/// exists, and the final post waits in it for the consumer's process — also
/// one started after the task finished, for `process` and `any_process`
/// lifetimes.
public enum TaskResult {
    /// Names the library puts in a result's payload: a completion's extra
    /// arguments must not use them (nor those signals bind).
    public static let payloadNames = ["task_id", "outcome", "success", "cancelled", "error"]
    /// A completion's own arguments: never part of the result.
    static let completionNames: Set<String> = ["store", "task_id", "claim", "run_id", "success", "error"]

    enum Final: String {
        case succeeded = "success", died = "dead", cancelled
    }

    /// The extra arguments of a completion: what a success's result carries.
    /// `.invalidArgument` for one that the payload reserves.
    static func extras(of arguments: Arguments) throws -> Arguments {
        var extras = Arguments()
        for entry in arguments.entries where !completionNames.contains(entry.name) {
            if payloadNames.contains(entry.name) || Signals.reservedArgumentNames.contains(entry.name) {
                throw OutliveError.invalidArgument("a task completion's extra argument may not be named \"\(entry.name)\": the result's payload binds task_id, outcome, success, cancelled, error, signal_id, version and terminated")
            }
            extras.set(entry.name, entry.value)
        }
        return extras
    }

    /// Posts the final outcome of task `taskID` to its result signal, if it
    /// has one, inside the transaction that ends it (before the row goes).
    /// The row is untrusted: a result signal that is not an id, or extras
    /// that do not decode, are logged and left out, never a failed end.
    static func post(_ final: Final, taskID: String, in transaction: StoreTransaction) throws {
        var found: (signal: String?, extras: [UInt8]?, error: String?)?
        let task = TaskID.row(taskID, transaction.engine)
        try transaction.query("SELECT result_signal, result, last_error FROM outlive_tasks WHERE \(task.condition)", task.arguments) { row in
            found = (row.text(0), row.blob(1), row.text(2))
        }
        guard let found, let stored = found.signal else { return }
        guard Identifier.isValid(stored) else {
            Log.emit(.error, "task \(taskID): its stored result signal is not a signal id; its result is not posted")
            return
        }
        var payload = Arguments()
        if final == .succeeded, let bytes = found.extras {
            do { payload = try Arguments(serialized: bytes) } catch {
                Log.emit(.error, "task \(taskID): the stored result does not decode (\(error)); posted without it")
            }
        }
        payload.set("task_id", .id(IDValue(string: taskID)))
        payload.set("outcome", .id(IDValue(string: final.rawValue)))
        payload.set("success", .bool(final == .succeeded))
        payload.set("cancelled", .bool(final == .cancelled))
        if final == .died { payload.set("error", .id(IDValue(string: found.error ?? "the task is dead"))) }
        for name in Signals.reservedArgumentNames { payload.remove(name) }
        try Signals.post(stored.lowercased(), payload: try payload.serialized(), terminates: true, readingVersion: false, in: transaction)
    }

    // MARK: - The call-time argument

    /// Whether a handler declares `result_signal`: then its call reads the
    /// task's signal (one indexed read), so that it can post progress.
    static func wantsSignal(_ handlerName: String) -> Bool {
        guard let declaration = try? HandlerRegistry.shared.resolve(handlerName) else { return false }
        return declaration.signature.parameters.contains { $0.name == "result_signal" }
    }

    /// The `result_signal` call-time argument for a task whose row names
    /// `stored` (read with its claim), if that is a valid id.
    static func callArgument(_ stored: String?) -> Value? {
        guard let stored, Identifier.isValid(stored) else { return nil }
        return .id(IDValue(string: stored.lowercased()))
    }
}

/// A consumer of a task's result signal registered in the transaction that
/// adds the task: it exists if and only if the task was added (or, for a
/// unique key held already, if the task holding it has a result signal).
public struct TaskResultConsumer {
    public let handler: Handler
    public let delivery: SignalDelivery
    public let lifetime: SignalLifetime
    public let scope: String?

    public init(handler: Handler, delivery: SignalDelivery = .untilTerminated, lifetime: SignalLifetime, scope: String? = nil) {
        self.handler = handler
        self.delivery = delivery
        self.lifetime = lifetime
        self.scope = scope
    }

    func validate() throws {
        try Signals.validate(scope: scope)
        if handler.isInvalidated { throw OutliveError(.invalidated, "the result consumer's handler \(handler.name) was invalidated") }
        try HandlerRegistry.checkStorable(handler, as: "a task's result consumer")
    }
}
