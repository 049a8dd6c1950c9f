/// What a task looks like to someone inspecting or repairing the queue.
public struct TaskInfo: Equatable {
    public enum State: Int32 {
        case pending = 1, running, dead
    }

    public let id: String
    public let handlerName: String
    public let state: State
    public let attempts: Int64
    public let lastError: String?
    /// Wall-clock seconds of the next attempt; nil when due now (or running, or dead).
    public let nextAttempt: Double?
    public let created: Double
    public let groupStart: String?
    public let groupMembers: [String]
    /// The queue it belongs to.
    public var queue: String = TaskQueueName.default
    /// Higher starts first within its queue.
    public var priority: Int64 = 0
    public var uniqueKey: String?
    /// Cancelled while running: its attempt's end will be the task's end, "cancelled".
    public var cancelled = false
    public var resultSignal: String?

    public init(id: String, handlerName: String, state: State, attempts: Int64, lastError: String?, nextAttempt: Double?,
                created: Double, groupStart: String?, groupMembers: [String], queue: String = TaskQueueName.default,
                priority: Int64 = 0) {
        self.id = id
        self.handlerName = handlerName
        self.state = state
        self.attempts = attempts
        self.lastError = lastError
        self.nextAttempt = nextAttempt
        self.created = created
        self.groupStart = groupStart
        self.groupMembers = groupMembers
        self.queue = queue
        self.priority = priority
    }
}

/// One task to add.
public struct NewTask {
    public let work: Handler
    public let groupStart: String?
    public let groupMembers: [String]
    /// The queue the task belongs to (declared in the store; "default" always is).
    public var queue: String = TaskQueueName.default
    /// Higher starts first; ties in order of addition.
    public var priority: Int32 = 0
    /// Seconds since the epoch before which the task does not start (nil: due now).
    public var due: Double?
    /// At most one pending or running task of the queue holds a key.
    public var uniqueKey: String?
    /// The signal the task's result (and progress) is posted to.
    public var resultSignal: String?
    /// A consumer of `resultSignal` registered in the add's transaction.
    public var resultConsumer: TaskResultConsumer?
    /// `work` serialized, when the caller had it so (the bytes `work` was
    /// decoded from: `work.serialized()`, not made again); nil: made at the add.
    public var encodedWork: [UInt8]?

    public init(work: Handler, groupStart: String? = nil, groupMembers: [String] = []) {
        self.work = work
        self.groupStart = groupStart
        self.groupMembers = groupMembers
    }

    public static let maxGroupIDSize = 1_024
    public static let maxGroupMembers = 1_024
    public static let maxUniqueKeySize = 1_024

    public static func validate(groupID: String, _ what: String) throws {
        guard !groupID.isEmpty, groupID.utf8.count <= maxGroupIDSize else {
            throw OutliveError.invalidArgument("\(what) must be 1 to \(maxGroupIDSize) bytes, got \(groupID.utf8.count)")
        }
        guard !groupID.utf8.contains(0) else { throw OutliveError.invalidArgument("\(what) contains a NUL byte") }
    }

    func validate() throws {
        if work.isInvalidated { throw OutliveError(.invalidated, "the task's handler \(work.name) was invalidated") }
        try HandlerRegistry.checkStorable(work, as: "a task's handler")
        if let groupStart { try NewTask.validate(groupID: groupStart, "group_start") }
        guard groupMembers.count <= NewTask.maxGroupMembers else {
            throw OutliveError.invalidArgument("a task is a member of at most \(NewTask.maxGroupMembers) groups, got \(groupMembers.count)")
        }
        for (index, member) in groupMembers.enumerated() { try NewTask.validate(groupID: member, "group_members[\(index)]") }
        if queue != TaskQueueName.default { try TaskQueueName.validate(queue) }
        if let due {
            guard due.isFinite, due >= 0 else { throw OutliveError.invalidArgument("the due time must be a finite number of seconds since the epoch, got \(due)") }
        }
        if let uniqueKey {
            guard !uniqueKey.isEmpty, uniqueKey.utf8.count <= NewTask.maxUniqueKeySize else {
                throw OutliveError.invalidArgument("unique_key must be 1 to \(NewTask.maxUniqueKeySize) bytes, got \(uniqueKey.utf8.count)")
            }
            guard !uniqueKey.utf8.contains(0) else { throw OutliveError.invalidArgument("unique_key contains a NUL byte") }
        }
        if let resultSignal, !Identifier.isValid(resultSignal) {
            throw OutliveError.invalidArgument("result_signal \"\(resultSignal.prefix(64))\" is not a signal id (36-character UUID)")
        }
        if let resultConsumer {
            guard resultSignal != nil else {
                throw OutliveError.invalidArgument("a result consumer needs a result_signal to consume")
            }
            try resultConsumer.validate()
        }
    }
}

/// Queue names: what `outlive_queue_*` and the options accept.
public enum TaskQueueName {
    public static let `default` = "default"
    public static let maxSize = 128

    public static func validate(_ name: String, _ what: String = "queue") throws {
        guard !name.isEmpty, name.utf8.count <= maxSize else {
            throw OutliveError.invalidArgument("\(what) name must be 1 to \(maxSize) bytes, got \(name.utf8.count)")
        }
        let allowed = name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
                || byte == 0x5f || byte == 0x2e || byte == 0x3a || byte == 0x2d
        }
        guard allowed else {
            throw OutliveError.invalidArgument("\(what) name \"\(name.prefix(64))\" may hold only letters, digits and _ . : -")
        }
    }
}
