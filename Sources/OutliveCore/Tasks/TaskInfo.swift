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
}

/// One task to add.
public struct NewTask {
    public let work: Handler
    public let groupStart: String?
    public let groupMembers: [String]

    public init(work: Handler, groupStart: String? = nil, groupMembers: [String] = []) {
        self.work = work
        self.groupStart = groupStart
        self.groupMembers = groupMembers
    }

    public static let maxGroupIDSize = 1_024
    public static let maxGroupMembers = 1_024

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
    }
}
