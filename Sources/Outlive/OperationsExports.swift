import COutliveAPI
import OutliveCore

// An outlive_operation * is a retained AsyncOperation: new gives the caller one
// reference, retain adds one, free drops one. The queue holds its own.

private func handle(_ operation: AsyncOperation) -> OpaquePointer {
    OpaquePointer(Unmanaged.passUnretained(operation).toOpaque())
}

@c @implementation
public func outlive_operations_new(_ loop: OpaquePointer?, _ max_unfinished: Int,
                                   _ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    guarded {
        let loop = try borrow(loop, Loop.self, "loop")
        let out = try required(out, "out")
        out.pointee = retain(try AsyncOperationQueue(loop: loop, maxUnfinished: max_unfinished))
    }
}

@c @implementation
public func outlive_operations_free(_ queue: OpaquePointer?) {
    guard let object = borrowIfPresent(queue, AsyncOperationQueue.self) else { return }
    object.close()
    release(queue, AsyncOperationQueue.self)
}

@c @implementation
public func outlive_operation_new(_ run: outlive_operation_fn?, _ context: UnsafeMutableRawPointer?,
                                               _ releaseContext: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?,
                                               _ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    guarded {
        let run = try required(run, "run")
        let out = try required(out, "out")
        let caller = CallerContext(context, release: releaseContext)
        out.pointee = retain(AsyncOperation { operation in run(handle(operation), caller.pointer) })
    }
}

@c @implementation
public func outlive_operation_retain(_ operation: OpaquePointer?) -> OpaquePointer? {
    guard let object = borrowIfPresent(operation, AsyncOperation.self) else { return nil }
    _ = Unmanaged.passUnretained(object).retain()
    return operation
}

@c @implementation
public func outlive_operation_free(_ operation: OpaquePointer?) {
    release(operation, AsyncOperation.self)
}

@c @implementation
public func outlive_operation_set_completion(_ operation: OpaquePointer?, _ completion: outlive_operation_completion_fn?,
                                             _ context: UnsafeMutableRawPointer?,
                                             _ releaseContext: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?) -> outlive_status {
    guarded {
        let operation = try borrow(operation, AsyncOperation.self, "operation")
        let caller = CallerContext(context, release: releaseContext)
        do {
            try operation.setCompletion(completion.map { completion in
                { operation, cancelled in completion(handle(operation), cancelled, caller.pointer) }
            })
        } catch {
            caller.disarm()
            throw error
        }
    }
}

@c @implementation
public func outlive_operation_add_dependency(_ operation: OpaquePointer?, _ dependency: OpaquePointer?) -> outlive_status {
    guarded {
        let operation = try borrow(operation, AsyncOperation.self, "operation")
        let dependency = try borrow(dependency, AsyncOperation.self, "dependency")
        try operation.addDependency(dependency)
    }
}

@c @implementation
public func outlive_operations_add(_ queue: OpaquePointer?, _ operation: OpaquePointer?) -> outlive_status {
    guarded {
        let queue = try borrow(queue, AsyncOperationQueue.self, "queue")
        try queue.add(try borrow(operation, AsyncOperation.self, "operation"))
    }
}

@c @implementation
public func outlive_operation_finish(_ operation: OpaquePointer?) -> outlive_status {
    guarded { try borrow(operation, AsyncOperation.self, "operation").finish() }
}

@c @implementation
public func outlive_operation_cancel(_ operation: OpaquePointer?) -> outlive_status {
    guarded { try borrow(operation, AsyncOperation.self, "operation").cancel() }
}

@c @implementation
public func outlive_operation_is_cancelled(_ operation: OpaquePointer?) -> Bool {
    borrowIfPresent(operation, AsyncOperation.self)?.isCancelled ?? false
}

@c @implementation
public func outlive_operation_get_state(_ operation: OpaquePointer?) -> outlive_operation_state {
    switch borrowIfPresent(operation, AsyncOperation.self)?.currentState ?? .new {
    case .new: return OUTLIVE_OPERATION_NEW
    case .waiting: return OUTLIVE_OPERATION_WAITING
    case .executing: return OUTLIVE_OPERATION_EXECUTING
    case .finished: return OUTLIVE_OPERATION_FINISHED
    }
}

@c @implementation
public func outlive_operation_dependency_count(_ operation: OpaquePointer?) -> Int {
    borrowIfPresent(operation, AsyncOperation.self)?.dependencyCount ?? 0
}

@c @implementation
public func outlive_operation_dependency(_ operation: OpaquePointer?, _ index: Int) -> OpaquePointer? {
    guard let dependency = borrowIfPresent(operation, AsyncOperation.self)?.dependency(at: index) else { return nil }
    return handle(dependency)
}

@c @implementation
public func outlive_operations_cancel_all(_ queue: OpaquePointer?) -> outlive_status {
    guarded { try borrow(queue, AsyncOperationQueue.self, "queue").cancelAll() }
}

@c @implementation
public func outlive_operations_unfinished(_ queue: OpaquePointer?) -> Int {
    borrowIfPresent(queue, AsyncOperationQueue.self)?.unfinishedCount ?? 0
}

@c @implementation
public func outlive_operations_set_drained(_ queue: OpaquePointer?, _ drained: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?,
                                           _ context: UnsafeMutableRawPointer?,
                                           _ releaseContext: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?) -> outlive_status {
    guarded {
        let queue = try borrow(queue, AsyncOperationQueue.self, "queue")
        let caller = CallerContext(context, release: releaseContext)
        do {
            try queue.setDrained(drained.map { drained in { drained(caller.pointer) } })
        } catch {
            caller.disarm()
            throw error
        }
    }
}
