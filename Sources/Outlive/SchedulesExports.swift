import COutliveAPI
import OutliveCore

// The schedules section of include/outlive.h: validation and conversion only.

private func schedules(_ store: OpaquePointer?) throws -> Schedules {
    try borrow(store, StoreHandle.self, "store").core.schedules
}

private func scheduleName(_ pointer: UnsafePointer<CChar>?, _ what: String) throws -> String {
    // One byte past the limit, so that the core reports the length.
    try string(pointer, what, maxBytes: Schedules.maxNameSize + 1)
}

private func period(_ given: outlive_schedule_period) throws -> SchedulePeriod {
    guard given.version == OUTLIVE_SCHEDULE_PERIOD_VERSION else {
        throw OutliveError.invalidArgument("period.version is \(given.version); this library knows version \(OUTLIVE_SCHEDULE_PERIOD_VERSION)")
    }
    switch (given.interval_seconds, given.cron) {
    case (0, nil):
        throw OutliveError.invalidArgument("period has neither interval_seconds nor cron; give one")
    case (0, let cron?):
        return .cron(try CronExpression(try string(cron, "period.cron", maxBytes: CronExpression.maxSize)))
    case (let seconds, nil):
        return try SchedulePeriod.interval(seconds)
    default:
        throw OutliveError.invalidArgument("period has both interval_seconds and cron; give one")
    }
}

@c @implementation
public func outlive_schedule_set(_ store: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ work: OpaquePointer?,
                                 _ period_: UnsafePointer<outlive_schedule_period>?, _ options: UnsafePointer<outlive_task_options>?,
                                 _ out_next_fire: UnsafeMutablePointer<Double>?) -> outlive_status {
    guarded {
        let table = try schedules(store)
        let scheduleName = try scheduleName(name, "name")
        let handler = try handlerBox(work, "work").handler
        let when = try period(try required(period_, "period").pointee)
        var queue = TaskQueueName.default
        var priority: Int32 = 0
        if let options = options?.pointee {
            guard options.version == OUTLIVE_TASK_OPTIONS_VERSION else {
                throw OutliveError.invalidArgument("options.version is \(options.version); this library knows version \(OUTLIVE_TASK_OPTIONS_VERSION)")
            }
            let unsupported = [("due_at", options.due_at != 0), ("delay_seconds", options.delay_seconds != 0),
                               ("unique_key", options.unique_key != nil), ("result_signal", options.result_signal != nil),
                               ("group_start", options.group_start != nil),
                               ("group_members", options.group_members != nil || options.group_member_count != 0)]
            if let (field, _) = unsupported.first(where: { $0.1 }) {
                throw OutliveError.invalidArgument("options.\(field) is set; a schedule's tasks take only a queue and a priority")
            }
            if let given = options.queue { queue = try string(given, "options.queue", maxBytes: TaskQueueName.maxSize + 1) }
            priority = options.priority
        }
        let next = try table.set(name: scheduleName, work: handler, period: when, queue: queue, priority: priority)
        out_next_fire?.pointee = next
    }
}

@c @implementation
public func outlive_schedule_remove(_ store: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        let table = try schedules(store)
        try table.remove(name: try scheduleName(name, "name"))
    }
}

@c @implementation
public func outlive_schedule_list_new(_ store: OpaquePointer?, _ after: UnsafePointer<CChar>?, _ limit: Int,
                                      _ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    guarded {
        let table = try schedules(store)
        let start = try after.map { try scheduleName($0, "after") }
        let out = try required(out, "out")
        let found = try readPaged(after: start, limit: limit, page: Schedules.maxListLimit, key: { (info: ScheduleInfo) in info.name }) {
            try table.list(after: $0, limit: $1)
        }
        out.pointee = retain(SnapshotList(found))
    }
}

private func schedule(_ list: OpaquePointer?, _ index: Int) -> ScheduleInfo? {
    snapshot(list, of: ScheduleInfo.self)?.entry(index)
}

private func scheduleText(_ list: OpaquePointer?, _ index: Int, _ field: String, _ value: (ScheduleInfo) -> String?) -> UnsafePointer<CChar>? {
    snapshot(list, of: ScheduleInfo.self)?.text(index, field, value)
}

@c @implementation
public func outlive_schedule_list_count(_ list: OpaquePointer?) -> Int {
    snapshot(list, of: ScheduleInfo.self)?.entries.count ?? 0
}

@c @implementation
public func outlive_schedule_list_name(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    scheduleText(list, index, "name") { $0.name }
}

@c @implementation
public func outlive_schedule_list_handler_name(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    scheduleText(list, index, "handler_name") { $0.handlerName }
}

@c @implementation
public func outlive_schedule_list_interval(_ list: OpaquePointer?, _ index: Int) -> Double {
    schedule(list, index)?.interval ?? 0
}

@c @implementation
public func outlive_schedule_list_cron(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    scheduleText(list, index, "cron") { $0.cron }
}

@c @implementation
public func outlive_schedule_list_next_fire(_ list: OpaquePointer?, _ index: Int) -> Double {
    schedule(list, index)?.nextFire ?? 0
}

@c @implementation
public func outlive_schedule_list_last_fired(_ list: OpaquePointer?, _ index: Int) -> Double {
    schedule(list, index)?.lastFired ?? 0
}

@c @implementation
public func outlive_schedule_list_queue(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    scheduleText(list, index, "queue") { $0.queue }
}

@c @implementation
public func outlive_schedule_list_priority(_ list: OpaquePointer?, _ index: Int) -> Int32 {
    schedule(list, index)?.priority ?? 0
}

@c @implementation
public func outlive_schedule_list_free(_ list: OpaquePointer?) {
    release(list, SnapshotList<ScheduleInfo>.self)
}
