import ArgumentParser
import COutliveSystem
import OutliveCore

struct TasksCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tasks",
        abstract: "List a store's tasks or queues, or retry, delete or cancel a task.",
        subcommands: [TasksListCommand.self, TasksQueuesCommand.self, TasksRetryCommand.self, TasksDeleteCommand.self, TasksCancelCommand.self],
        defaultSubcommand: TasksListCommand.self
    )
}

struct TasksListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Every task with its queue, priority, state, due time, attempts and last error.")

    @OptionGroup var options: StoreOptionsGroup

    func run() throws {
        try reporting {
            let store = try options.open()
            defer { store.close() }
            var tasks: [TaskInfo] = []
            var after: String?
            while true {
                let page = try store.tasks.list(after: after, limit: 1_000)
                tasks += page
                guard page.count == 1_000, let last = page.last else { break }
                after = last.id
            }
            func state(_ task: TaskInfo) -> String {
                switch task.state {
                case .pending: return task.nextAttempt == nil ? "pending" : "waiting"
                case .running: return task.cancelled ? "cancelling" : "running"
                case .dead: return "dead"
                }
            }
            if options.json {
                print(JSON.array(tasks.map { task in
                    .object([
                        ("id", .string(task.id)), ("handler", .string(task.handlerName)), ("queue", .string(task.queue)),
                        ("priority", .integer(task.priority)), ("state", .string(state(task))),
                        ("attempts", .integer(task.attempts)), ("last_error", task.lastError.map(JSON.string) ?? .null),
                        ("next_attempt", task.nextAttempt.map(JSON.number) ?? .null), ("created", .number(task.created)),
                        ("group_start", task.groupStart.map(JSON.string) ?? .null),
                        ("group_members", .array(task.groupMembers.map(JSON.string))),
                        ("unique_key", task.uniqueKey.map(JSON.string) ?? .null), ("cancelled", .bool(task.cancelled)),
                        ("result_signal", task.resultSignal.map(JSON.string) ?? .null),
                    ])
                }).text)
            } else {
                print(table(["ID", "HANDLER", "QUEUE", "PRIORITY", "STATE", "DUE", "ATTEMPTS", "KEY", "LAST ERROR"], tasks.map {
                    [$0.id, $0.handlerName, $0.queue, String($0.priority), state($0), $0.nextAttempt.map(utcTime) ?? "now",
                     String($0.attempts), $0.uniqueKey ?? "-", $0.lastError ?? "-"]
                }))
            }
        }
    }
}

struct TasksQueuesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "queues", abstract: "Every declared task queue with its kind and counts.")

    @OptionGroup var options: StoreOptionsGroup

    func run() throws {
        try reporting {
            let store = try options.open()
            defer { store.close() }
            let queues = try store.tasks.queues()
            func kind(_ queue: TaskQueueInfo) -> String { queue.kind == .parallel ? "parallel" : "ordered" }
            if options.json {
                print(JSON.array(queues.map { queue in
                    .object([("name", .string(queue.name)), ("kind", .string(kind(queue))), ("pending", .integer(queue.pending)),
                             ("running", .integer(queue.running)), ("dead", .integer(queue.dead))])
                }).text)
            } else {
                print(table(["QUEUE", "KIND", "PENDING", "RUNNING", "DEAD"], queues.map {
                    [$0.name, kind($0), String($0.pending), String($0.running), String($0.dead)]
                }))
            }
        }
    }
}

/// Seconds since the epoch as "2026-01-31 12:00:00.000 UTC".
func utcTime(_ seconds: Double) -> String {
    guard seconds.isFinite, abs(seconds) < 1e11 else { return String(seconds) }
    var whole = time_t(seconds.rounded(.down))
    var parts = tm()
    guard gmtime_r(&whole, &parts) != nil else { return String(seconds) }
    let millis = Int((seconds - seconds.rounded(.down)) * 1000)
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    let ms = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
    return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(ms) UTC"
}

struct TasksRetryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "retry", abstract: "Make a dead task pending again, its attempts reset.")

    @OptionGroup var options: StoreOptionsGroup

    @ArgumentParser.Argument(help: "The task's id.")
    var id: String

    func validate() throws { try validateTaskID(id) }

    func run() throws {
        try changeTask(id, options, done: "retried", says: "is pending again") { try $0.tasks.retry(id: id) }
    }
}

struct TasksDeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a task (not a running one).")

    @OptionGroup var options: StoreOptionsGroup

    @ArgumentParser.Argument(help: "The task's id.")
    var id: String

    func validate() throws { try validateTaskID(id) }

    func run() throws {
        try changeTask(id, options, done: "deleted", says: "deleted") { try $0.tasks.delete(id: id) }
    }
}

struct TasksCancelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "cancel",
                                                    abstract: "Cancel a task: a pending one is removed, a running one is told and ends as cancelled.")

    @OptionGroup var options: StoreOptionsGroup

    @ArgumentParser.Argument(help: "The task's id.")
    var id: String

    func validate() throws { try validateTaskID(id) }

    func run() throws {
        try reporting {
            let store = try options.open()
            defer { store.close() }
            let outcome = try store.tasks.cancel(id: id)
            let removed = outcome == .removed
            print(options.json ? JSON.object([("cancelled", .string(id)), ("was_running", .bool(!removed))]).text
                               : "task \(id) \(removed ? "cancelled (it was pending: removed)" : "cancelled (it is running: told, and ends as cancelled)")")
        }
    }
}

extension ParsableCommand {
    /// Opens the store, makes one change to task `id`, and says so: `{"<done>": id}`
    /// with --json, "task <id> <says>" otherwise.
    /// A malformed id is bad usage (exit 64); a well-formed one that names no task is "not found" (3).
    fileprivate func validateTaskID(_ id: String) throws {
        guard Identifier.isValid(id) else { throw ValidationError("\"\(terminalSafe(id))\" is not a task id (a 36-character UUID)") }
    }

    fileprivate func changeTask(_ id: String, _ options: StoreOptionsGroup, done: String, says: String,
                                _ change: (OutliveStore) throws -> Void) throws {
        try reporting {
            let store = try options.open()
            defer { store.close() }
            try change(store)
            print(options.json ? JSON.object([(done, .string(id))]).text : "task \(id) \(says)")
        }
    }
}
