import COutliveAPI
import OutliveCore

@c @implementation
public func outlive_loop_new(_ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    guarded {
        let out = try required(out, "out")
        out.pointee = retain(try Loop())
    }
}

@c @implementation
public func outlive_loop_free(_ loop: OpaquePointer?) {
    guard let object = borrowIfPresent(loop, Loop.self) else { return }
    object.stop()
    release(loop, Loop.self)
}

@c @implementation
public func outlive_loop_fd(_ loop: OpaquePointer?) -> Int32 {
    guard let object = borrowIfPresent(loop, Loop.self), !object.isInheritedFromParent else { return -1 }
    return object.fileDescriptor
}

@c @implementation
public func outlive_loop_dispatch(_ loop: OpaquePointer?, _ timeout_ms: Int32) -> outlive_status {
    guarded {
        try borrow(loop, Loop.self, "loop").dispatch(timeoutMilliseconds: timeout_ms)
    }
}

@c @implementation
public func outlive_loop_run_thread(_ loop: OpaquePointer?) -> outlive_status {
    guarded {
        try borrow(loop, Loop.self, "loop").runThread()
    }
}
