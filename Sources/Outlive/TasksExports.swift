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
    try newTask(try handlerBox(work, "\(prefix)work").handler, groupStart, members, memberCount, prefix)
}

private func newTask(_ handler: Handler, _ groupStart: UnsafePointer<CChar>?,
                     _ members: UnsafePointer<UnsafePointer<CChar>?>?, _ memberCount: Int, _ prefix: String) throws -> NewTask {
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
            guard spec.version == OUTLIVE_TASK_SPEC_VERSION else {
                throw OutliveError.invalidArgument("tasks[\(index)].version is \(spec.version); this library knows version \(OUTLIVE_TASK_SPEC_VERSION)")
            }
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
public func outlive_tasks_count(_ store: OpaquePointer?, _ out_count: UnsafeMutablePointer<Int>?) -> outlive_status {
    guarded {
        let queue = try taskQueue(store)
        let out = try required(out_count, "out_count")
        out.pointee = try queue.pendingCount()
    }
}

@c @implementation
public func outlive_tasks_count_dead(_ store: OpaquePointer?, _ out_count: UnsafeMutablePointer<Int>?) -> outlive_status {
    guarded {
        let queue = try taskQueue(store)
        let out = try required(out_count, "out_count")
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

@c @implementation
public func outlive_tasks_set_completion_batch(_ store: OpaquePointer?, _ max_tasks: Int) -> outlive_status {
    guarded { try taskQueue(store).setCompletionBatch(max_tasks) }
}

@c @implementation
public func outlive_task_list_new(_ store: OpaquePointer?, _ after: UnsafePointer<CChar>?, _ limit: Int,
                                  _ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    guarded {
        let queue = try taskQueue(store)
        let start = try optionalString(after, "after", maxBytes: 64)
        let out = try required(out, "out")
        // The core reads at most maxListLimit tasks per call; a larger list is read in pages.
        let tasks = try readPaged(after: start, limit: limit, page: TaskQueue.maxListLimit, key: { (task: TaskInfo) in task.id }) {
            try queue.list(after: $0, limit: $1)
        }
        out.pointee = retain(SnapshotList(tasks))
    }
}

private func task(_ list: OpaquePointer?, _ index: Int) -> TaskInfo? {
    snapshot(list, of: TaskInfo.self)?.entry(index)
}

private func taskText(_ list: OpaquePointer?, _ index: Int, _ field: String, _ value: (TaskInfo) -> String?) -> UnsafePointer<CChar>? {
    snapshot(list, of: TaskInfo.self)?.text(index, field, value)
}

@c @implementation
public func outlive_task_list_count(_ list: OpaquePointer?) -> Int {
    snapshot(list, of: TaskInfo.self)?.entries.count ?? 0
}

@c @implementation
public func outlive_task_list_id(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    taskText(list, index, "id") { $0.id }
}

@c @implementation
public func outlive_task_list_handler_name(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    taskText(list, index, "handler_name") { $0.handlerName }
}

@c @implementation
public func outlive_task_list_state(_ list: OpaquePointer?, _ index: Int) -> outlive_task_state {
    outlive_task_state(rawValue: UInt32(task(list, index)?.state.rawValue ?? 0))
}

@c @implementation
public func outlive_task_list_attempts(_ list: OpaquePointer?, _ index: Int) -> UInt32 {
    UInt32(clamping: task(list, index)?.attempts ?? 0)
}

@c @implementation
public func outlive_task_list_last_error(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    taskText(list, index, "last_error") { $0.lastError }
}

@c @implementation
public func outlive_task_list_next_attempt(_ list: OpaquePointer?, _ index: Int) -> Double {
    task(list, index)?.nextAttempt ?? 0
}

@c @implementation
public func outlive_task_list_created(_ list: OpaquePointer?, _ index: Int) -> Double {
    task(list, index)?.created ?? 0
}

@c @implementation
public func outlive_task_list_group_start(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    taskText(list, index, "group_start") { $0.groupStart }
}

@c @implementation
public func outlive_task_list_group_member_count(_ list: OpaquePointer?, _ index: Int) -> Int {
    task(list, index)?.groupMembers.count ?? 0
}

@c @implementation
public func outlive_task_list_group_member(_ list: OpaquePointer?, _ index: Int, _ member: Int) -> UnsafePointer<CChar>? {
    taskText(list, index, "group_members/\(member)") { task in
        member >= 0 && member < task.groupMembers.count ? task.groupMembers[member] : nil
    }
}

@c @implementation
public func outlive_task_list_queue(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    taskText(list, index, "queue") { $0.queue }
}

@c @implementation
public func outlive_task_list_priority(_ list: OpaquePointer?, _ index: Int) -> Int32 {
    Int32(clamping: task(list, index)?.priority ?? 0)
}

@c @implementation
public func outlive_task_list_unique_key(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    taskText(list, index, "unique_key") { $0.uniqueKey }
}

@c @implementation
public func outlive_task_list_cancelled(_ list: OpaquePointer?, _ index: Int) -> Bool {
    task(list, index)?.cancelled ?? false
}

@c @implementation
public func outlive_task_list_result_signal(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    taskText(list, index, "result_signal") { $0.resultSignal }
}

@c @implementation
public func outlive_task_list_free(_ list: OpaquePointer?) {
    release(list, SnapshotList<TaskInfo>.self)
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

@c @implementation
public func outlive_task_enqueue(_ store: OpaquePointer?, _ work: OpaquePointer?, _ options: UnsafePointer<outlive_task_options>?,
                                 _ out_id: UnsafeMutablePointer<CChar>?, _ out_existing: UnsafeMutablePointer<Bool>?) -> outlive_status {
    guarded {
        let queue = try taskQueue(store)
        let handler = try handlerBox(work, options == nil ? "work" : "options.work").handler
        try enqueue(handler, options, into: queue, out_id, out_existing)
    }
}

@c @implementation
public func outlive_task_enqueue_serialized(_ store: OpaquePointer?, _ work: UnsafeRawPointer?, _ size: Int,
                                            _ options: UnsafePointer<outlive_task_options>?,
                                            _ out_id: UnsafeMutablePointer<CChar>?,
                                            _ out_existing: UnsafeMutablePointer<Bool>?) -> outlive_status {
    guarded {
        let queue = try taskQueue(store)
        guard size >= 0 else { throw OutliveError.invalidArgument("size \(UInt(bitPattern: size)) is out of range") }
        guard size == 0 || work != nil else { throw OutliveError.invalidArgument("work is NULL") }
        let bytes = UnsafeRawBufferPointer(start: work, count: size)
        let handler = try Handler(serialized: bytes)
        // Stored as given: the decoder accepts one encoding of a handler only
        // (shortest varints, known flags, arguments in order, no repeats), so
        // the bytes are what serializing the handler again would write. Not
        // with a handler among the arguments: encoding one notes a task
        // completion that leaves its call (HandedOutCompletions).
        let encoded = handler.bound.handlerDepth == 0 ? Array(bytes) : nil
        try enqueue(handler, options, encoded: encoded, into: queue, out_id, out_existing)
    }
}

/// The task of `outlive_task_enqueue` (its options read and checked) added to `queue`.
private func enqueue(_ handler: Handler, _ options: UnsafePointer<outlive_task_options>?, encoded: [UInt8]? = nil,
                     into queue: TaskQueue, _ out_id: UnsafeMutablePointer<CChar>?,
                     _ out_existing: UnsafeMutablePointer<Bool>?) throws {
    var task: NewTask
    if let options = options?.pointee {
        guard options.version == OUTLIVE_TASK_OPTIONS_VERSION else {
            throw OutliveError.invalidArgument("options.version is \(options.version); this library knows version \(OUTLIVE_TASK_OPTIONS_VERSION)")
        }
        task = try newTask(handler, options.group_start, options.group_members, options.group_member_count, "options.")
        if let name = options.queue { task.queue = try string(name, "options.queue", maxBytes: TaskQueueName.maxSize) }
        task.priority = options.priority
        task.due = try dueTime(at: options.due_at, after: options.delay_seconds)
        if let key = options.unique_key { task.uniqueKey = try string(key, "options.unique_key", maxBytes: NewTask.maxUniqueKeySize) }
        if let signal = options.result_signal { task.resultSignal = try string(signal, "options.result_signal", maxBytes: 64) }
        task.resultConsumer = try resultConsumer(options)
    } else {
        task = try newTask(handler, nil, nil, 0, "")
    }
    task.encodedWork = encoded
    let added = try queue.enqueue(task)
    if let out_id { writeID(added.id, out_id) }
    out_existing?.pointee = added.existing
}

/// The consumer of the result registered with the add, if options name one.
private func resultConsumer(_ options: outlive_task_options) throws -> TaskResultConsumer? {
    let delivery: SignalDelivery, lifetime: SignalLifetime
    if options.result_delivery.rawValue == 0 {
        delivery = .untilTerminated
    } else {
        guard let given = SignalDelivery(rawValue: Int32(truncatingIfNeeded: options.result_delivery.rawValue)) else {
            throw OutliveError.invalidArgument("options.result_delivery \(options.result_delivery.rawValue) is neither 0 nor an outlive_delivery")
        }
        delivery = given
    }
    if options.result_lifetime.rawValue == 0 {
        lifetime = .process
    } else {
        guard let given = SignalLifetime(rawValue: Int32(truncatingIfNeeded: options.result_lifetime.rawValue)) else {
            throw OutliveError.invalidArgument("options.result_lifetime \(options.result_lifetime.rawValue) is neither 0 nor an outlive_lifetime")
        }
        lifetime = given
    }
    let scope = try optionalString(options.result_scope, "options.result_scope", maxBytes: Signals.maxScopeSize)
    guard let pointer = options.result_consumer else {
        if options.result_delivery.rawValue != 0 || options.result_lifetime.rawValue != 0 || scope != nil {
            throw OutliveError.invalidArgument("options.result_delivery, result_lifetime and result_scope are set, but result_consumer is NULL")
        }
        return nil
    }
    let handler = try handlerBox(pointer, "options.result_consumer").handler
    return TaskResultConsumer(handler: handler, delivery: delivery, lifetime: lifetime, scope: scope)
}

@c @implementation
public func outlive_task_cancel(_ store: OpaquePointer?, _ task_id: UnsafePointer<CChar>?, _ out_running: UnsafeMutablePointer<Bool>?) -> outlive_status {
    guarded {
        let queue = try taskQueue(store)
        let outcome = try queue.cancel(id: try string(task_id, "task_id", maxBytes: 64))
        out_running?.pointee = outcome == .told
    }
}

@c @implementation
public func outlive_task_is_cancelled(_ store: OpaquePointer?, _ task_id: UnsafePointer<CChar>?, _ out_cancelled: UnsafeMutablePointer<Bool>?) -> outlive_status {
    guarded {
        let queue = try taskQueue(store)
        let id = try string(task_id, "task_id", maxBytes: 64)
        let out = try required(out_cancelled, "out_cancelled")
        out.pointee = try queue.isCancelled(id: id)
    }
}

/// The absolute due time of `due_at` / `delay_seconds` (0 each: due now).
private func dueTime(at: Double, after delay: Double) throws -> Double? {
    guard at.isFinite, at >= 0 else { throw OutliveError.invalidArgument("options.due_at must be a finite time >= 0 (seconds since the epoch), got \(at)") }
    guard delay.isFinite, delay >= 0 else { throw OutliveError.invalidArgument("options.delay_seconds must be a finite number >= 0, got \(delay)") }
    guard at == 0 || delay == 0 else { throw OutliveError.invalidArgument("options.due_at and options.delay_seconds are both set; give one") }
    if at > 0 { return at }
    if delay > 0 { return Clock.wall() + delay }
    return nil
}

// MARK: - Queues

@c @implementation
public func outlive_queue_declare(_ store: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ kind: outlive_queue_kind) -> outlive_status {
    guarded {
        let queue = try taskQueue(store)
        let text = try string(name, "name", maxBytes: TaskQueueName.maxSize)
        guard let known = TaskQueueInfo.Kind(rawValue: Int32(bitPattern: kind.rawValue)) else {
            throw OutliveError.invalidArgument("kind \(kind.rawValue) is not an outlive_queue_kind (OUTLIVE_QUEUE_ORDERED or OUTLIVE_QUEUE_PARALLEL)")
        }
        try queue.declare(queue: text, kind: known)
    }
}

@c @implementation
public func outlive_queue_serve(_ store: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ limit: Int) -> outlive_status {
    guarded {
        let queue = try taskQueue(store)
        let text = try string(name, "name", maxBytes: TaskQueueName.maxSize)
        guard limit >= 0, limit <= Int(OUTLIVE_QUEUE_MAX_LIMIT) else {
            throw OutliveError.invalidArgument("limit is \(UInt(bitPattern: limit)); a handle runs 0 to \(OUTLIVE_QUEUE_MAX_LIMIT) tasks of a queue at once")
        }
        try queue.serve(queue: text, limit: limit)
    }
}

@c @implementation
public func outlive_queue_list_new(_ store: OpaquePointer?, _ after: UnsafePointer<CChar>?, _ limit: Int,
                                   _ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    guarded {
        let queue = try taskQueue(store)
        let start = try optionalString(after, "after", maxBytes: TaskQueueName.maxSize)
        let out = try required(out, "out")
        let queues = try readPaged(after: start, limit: limit, page: TaskQueue.maxListLimit, key: { (info: TaskQueueInfo) in info.name }) {
            try queue.queues(after: $0, limit: $1)
        }
        out.pointee = retain(SnapshotList(queues))
    }
}

private func queueInfo(_ list: OpaquePointer?, _ index: Int) -> TaskQueueInfo? {
    snapshot(list, of: TaskQueueInfo.self)?.entry(index)
}

@c @implementation
public func outlive_queue_list_count(_ list: OpaquePointer?) -> Int {
    snapshot(list, of: TaskQueueInfo.self)?.entries.count ?? 0
}

@c @implementation
public func outlive_queue_list_name(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    snapshot(list, of: TaskQueueInfo.self)?.text(index, "name") { $0.name }
}

@c @implementation
public func outlive_queue_list_kind(_ list: OpaquePointer?, _ index: Int) -> outlive_queue_kind {
    outlive_queue_kind(rawValue: UInt32(queueInfo(list, index)?.kind.rawValue ?? 0))
}

@c @implementation
public func outlive_queue_list_pending(_ list: OpaquePointer?, _ index: Int) -> Int {
    Int(clamping: queueInfo(list, index)?.pending ?? 0)
}

@c @implementation
public func outlive_queue_list_running(_ list: OpaquePointer?, _ index: Int) -> Int {
    Int(clamping: queueInfo(list, index)?.running ?? 0)
}

@c @implementation
public func outlive_queue_list_dead(_ list: OpaquePointer?, _ index: Int) -> Int {
    Int(clamping: queueInfo(list, index)?.dead ?? 0)
}

@c @implementation
public func outlive_queue_list_free(_ list: OpaquePointer?) {
    release(list, SnapshotList<TaskQueueInfo>.self)
}
