import COutliveAPI
import COutliveSystem
import OutliveCore

// The tasks section of include/outlive.h: validation and conversion only.

private func taskQueue(_ store: OpaquePointer?) throws -> TaskQueue {
    try borrow(store, StoreHandle.self, "store").core.tasks
}

private func groupID(_ pointer: UnsafePointer<CChar>?, _ name: String) throws -> String {
    try string(pointer, name, maxBytes: NewTask.maxGroupIDSize)
}

private func newTask(_ work: OpaquePointer?, _ groupStart: UnsafePointer<CChar>?,
                     _ members: UnsafePointer<UnsafePointer<CChar>?>?, _ memberCount: Int, _ prefix: String) throws -> NewTask {
    let handler = try handlerBox(work, "\(prefix)work").handler
    let start = try groupStart.map { try groupID($0, "\(prefix)group_start") }
    guard memberCount >= 0, memberCount <= NewTask.maxGroupMembers else {
        throw OutliveError.invalidArgument("\(prefix)group_member_count is \(memberCount); a task is a member of at most \(NewTask.maxGroupMembers) groups")
    }
    var groups: [String] = []
    if memberCount > 0 {
        let list = try required(members, "\(prefix)group_members")
        for index in 0..<memberCount { groups.append(try groupID(list[index], "\(prefix)group_members[\(index)]")) }
    }
    return NewTask(work: handler, groupStart: start, groupMembers: groups)
}

@c @implementation
public func outlive_task_add(_ store: OpaquePointer?, _ work: OpaquePointer?, _ group_start: UnsafePointer<CChar>?,
                             _ group_members: UnsafePointer<UnsafePointer<CChar>?>?, _ group_member_count: Int,
                             _ out_id: UnsafeMutablePointer<CChar>?) -> outlive_status {
    guarded {
        let queue = try taskQueue(store)
        let id = try queue.add(try newTask(work, group_start, group_members, group_member_count, ""))
        if let out_id { writeID(id, out_id) }
    }
}

@c @implementation
public func outlive_tasks_add_batch(_ store: OpaquePointer?, _ tasks: UnsafePointer<outlive_task_spec>?, _ count: Int,
                                    _ out_ids: UnsafeMutablePointer<CChar>?) -> outlive_status {
    guarded {
        let queue = try taskQueue(store)
        guard count >= 1, count <= TaskQueue.maxBatch else {
            throw OutliveError.invalidArgument("count is \(count); a batch holds 1 to \(TaskQueue.maxBatch) tasks")
        }
        let specs = try required(tasks, "tasks")
        var batch: [NewTask] = []
        batch.reserveCapacity(count)
        for index in 0..<count {
            let spec = specs[index]
            batch.append(try newTask(spec.work, spec.group_start, spec.group_members, spec.group_member_count, "tasks[\(index)]."))
        }
        let ids = try queue.add(batch: batch)
        if let out_ids {
            for (index, id) in ids.enumerated() { writeID(id, out_ids + index * Int(OUTLIVE_ID_SIZE)) }
        }
    }
}

@c @implementation
public func outlive_tasks_run_now(_ store: OpaquePointer?) -> outlive_status {
    guarded { try taskQueue(store).runNow() }
}

@c @implementation
public func outlive_tasks_set_triggers(_ store: OpaquePointer?, _ pending_count: Int, _ delay_seconds: Double) -> outlive_status {
    guarded {
        let queue = try taskQueue(store)
        var triggers = TaskTriggers()
        triggers.pendingCount = pending_count
        triggers.delay = delay_seconds
        try queue.setTriggers(triggers)
    }
}

@c @implementation
public func outlive_tasks_count(_ store: OpaquePointer?, _ pending: UnsafeMutablePointer<Int>?) -> outlive_status {
    guarded {
        let queue = try taskQueue(store)
        let out = try required(pending, "pending")
        out.pointee = try queue.pendingCount()
    }
}

@c @implementation
public func outlive_tasks_count_dead(_ store: OpaquePointer?, _ dead: UnsafeMutablePointer<Int>?) -> outlive_status {
    guarded {
        let queue = try taskQueue(store)
        let out = try required(dead, "dead")
        out.pointee = try queue.deadCount()
    }
}

@c @implementation
public func outlive_tasks_set_policy(_ store: OpaquePointer?, _ policy: UnsafePointer<outlive_task_policy>?) -> outlive_status {
    guarded {
        let queue = try taskQueue(store)
        let given = try required(policy, "policy").pointee
        guard given.version == OUTLIVE_TASK_POLICY_VERSION else {
            throw OutliveError.invalidArgument("policy.version is \(given.version); this library knows version \(OUTLIVE_TASK_POLICY_VERSION)")
        }
        var settings = TaskPolicy()
        settings.initialBackoff = given.initial_backoff
        settings.maxBackoff = given.max_backoff
        settings.maxAttempts = given.max_attempts
        settings.timeout = given.timeout
        settings.maxAge = given.max_age
        try queue.setPolicy(settings)
    }
}

@c @implementation
public func outlive_tasks_set_concurrency(_ store: OpaquePointer?, _ max_in_flight: Int) -> outlive_status {
    guarded { try taskQueue(store).setConcurrency(max_in_flight) }
}

private func cCopy(_ text: String) throws -> UnsafePointer<CChar> {
    UnsafePointer(try mallocString(text))
}

@c @implementation
public func outlive_tasks_list(_ store: OpaquePointer?, _ after_id: UnsafePointer<CChar>?, _ limit: Int,
                               _ out: UnsafeMutablePointer<UnsafeMutablePointer<outlive_task_info>?>?,
                               _ out_count: UnsafeMutablePointer<Int>?) -> outlive_status {
    guarded {
        let queue = try taskQueue(store)
        let after = try optionalString(after_id, "after_id", maxBytes: 64)
        let out = try required(out, "out")
        let outCount = try required(out_count, "out_count")
        guard limit <= TaskQueue.maxListLimit else {
            throw OutliveError.invalidArgument("limit is \(limit); at most \(TaskQueue.maxListLimit) tasks are listed at once")
        }
        let tasks = try queue.list(after: after, limit: limit)
        guard !tasks.isEmpty else {
            out.pointee = nil
            outCount.pointee = 0
            return
        }
        guard let raw = calloc(tasks.count, MemoryLayout<outlive_task_info>.stride) else {
            throw OutliveError(.noMemory, "out of memory for \(tasks.count) task entries")
        }
        let list = raw.bindMemory(to: outlive_task_info.self, capacity: tasks.count)
        var filled = 0
        do {
            for task in tasks {
                var info = outlive_task_info()
                withUnsafeMutableBytes(of: &info.id) { buffer in
                    for (index, byte) in task.id.utf8.prefix(36).enumerated() { buffer[index] = byte }
                }
                info.handler_name = try cCopy(task.handlerName)
                list[filled] = info
                filled += 1
                list[filled - 1].state = outlive_task_state(rawValue: UInt32(task.state.rawValue))
                list[filled - 1].attempts = UInt32(clamping: task.attempts)
                list[filled - 1].last_error = try task.lastError.map(cCopy)
                list[filled - 1].next_attempt = task.nextAttempt ?? 0
                list[filled - 1].created = task.created
                list[filled - 1].group_start = try task.groupStart.map(cCopy)
                if !task.groupMembers.isEmpty {
                    guard let block = calloc(task.groupMembers.count, MemoryLayout<UnsafePointer<CChar>?>.stride) else {
                        throw OutliveError(.noMemory, "out of memory for a task's group members")
                    }
                    let members = block.bindMemory(to: UnsafePointer<CChar>?.self, capacity: task.groupMembers.count)
                    list[filled - 1].group_members = UnsafePointer(members)
                    for (index, member) in task.groupMembers.enumerated() {
                        members[index] = try cCopy(member)
                        list[filled - 1].group_member_count = index + 1
                    }
                }
            }
        } catch {
            outlive_task_info_free(list, filled)
            throw error
        }
        out.pointee = list
        outCount.pointee = tasks.count
    }
}

@c @implementation
public func outlive_task_info_free(_ tasks: UnsafeMutablePointer<outlive_task_info>?, _ count: Int) {
    guard let tasks else { return }
    for index in 0..<max(0, count) {
        let info = tasks[index]
        free(UnsafeMutableRawPointer(mutating: info.handler_name))
        free(UnsafeMutableRawPointer(mutating: info.last_error))
        free(UnsafeMutableRawPointer(mutating: info.group_start))
        if let members = info.group_members {
            for member in 0..<info.group_member_count { free(UnsafeMutableRawPointer(mutating: members[member])) }
            free(UnsafeMutableRawPointer(mutating: members))
        }
    }
    free(tasks)
}

@c @implementation
public func outlive_task_retry(_ store: OpaquePointer?, _ task_id: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        let queue = try taskQueue(store)
        try queue.retry(id: try string(task_id, "task_id", maxBytes: 64))
    }
}

@c @implementation
public func outlive_task_delete(_ store: OpaquePointer?, _ task_id: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        let queue = try taskQueue(store)
        try queue.delete(id: try string(task_id, "task_id", maxBytes: 64))
    }
}
