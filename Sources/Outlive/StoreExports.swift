import COutliveAPI
import OutliveCore

@c @implementation
public func outlive_store_open(_ location: UnsafePointer<CChar>?, _ process_name: UnsafePointer<CChar>?,
                               _ loop: OpaquePointer?, _ options: UnsafePointer<outlive_store_options>?,
                               _ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    guarded {
        let path = try string(location, "location", maxBytes: 4_096)
        let name = try string(process_name, "process_name", maxBytes: 4_096)
        let out = try required(out, "out")
        var settings = StoreOptions()
        if let options {
            // Version 1 callers pass the struct without liveness_seconds: read
            // only the fields their version has.
            let version = UnsafeRawPointer(options).load(as: UInt32.self)
            guard version == 1 || version == OUTLIVE_STORE_OPTIONS_VERSION else {
                throw OutliveError.invalidArgument("options.version is \(version); this library knows versions 1 to \(OUTLIVE_STORE_OPTIONS_VERSION)")
            }
            var given = outlive_store_options()
            let size = version == 1 ? MemoryLayout<outlive_store_options>.offset(of: \outlive_store_options.liveness_seconds)!
                                    : MemoryLayout<outlive_store_options>.size
            withUnsafeMutableBytes(of: &given) { $0.copyMemory(from: UnsafeRawBufferPointer(start: options, count: size)) }
            if given.liveness_seconds != 0 {
                guard PostgreSQLLivenessBound.range.contains(given.liveness_seconds) else {
                    throw OutliveError.invalidArgument("options.liveness_seconds is \(given.liveness_seconds); it is 0 (the default) or \(PostgreSQLLivenessBound.range.lowerBound) to \(PostgreSQLLivenessBound.range.upperBound)")
                }
                settings.livenessBoundSeconds = given.liveness_seconds
            }
            guard let durability = Durability(rawValue: Int32(given.durability.rawValue)) else {
                throw OutliveError.invalidArgument("options.durability \(given.durability.rawValue) is not an outlive_durability")
            }
            guard given.busy_timeout_ms >= 0 else { throw OutliveError.invalidArgument("options.busy_timeout_ms is negative") }
            settings.durability = durability
            settings.busyTimeoutMilliseconds = given.busy_timeout_ms
        }
        let core = try OutliveStore(path: path, processName: name, loop: loop == nil ? nil : try borrow(loop, Loop.self, "loop"), options: settings)
        out.pointee = retain(StoreHandle(core))
    }
}

@c @implementation
public func outlive_store_close(_ store: OpaquePointer?) {
    guard let handle = borrowIfPresent(store, StoreHandle.self) else { return }
    handle.core.close()
    release(store, StoreHandle.self)
}

@c @implementation
public func outlive_store_run_id(_ store: OpaquePointer?) -> UnsafePointer<CChar>? {
    borrowIfPresent(store, StoreHandle.self).map { UnsafePointer($0.runID) }
}

@c @implementation
public func outlive_store_process_name(_ store: OpaquePointer?) -> UnsafePointer<CChar>? {
    borrowIfPresent(store, StoreHandle.self).map { UnsafePointer($0.processName) }
}

@c @implementation
public func outlive_store_check(_ store: OpaquePointer?) -> outlive_status {
    guarded {
        try borrow(store, StoreHandle.self, "store").core.store.checkUsable()
    }
}

@c @implementation
public func outlive_store_loop(_ store: OpaquePointer?) -> OpaquePointer? {
    guard let handle = borrowIfPresent(store, StoreHandle.self) else { return nil }
    return OpaquePointer(Unmanaged.passUnretained(handle.core.loop).toOpaque())
}
