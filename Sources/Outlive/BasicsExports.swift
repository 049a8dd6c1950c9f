import COutliveAPI
import COutliveSystem
import OutliveCore

func staticCString(_ text: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
}

@c @implementation
public func outlive_last_error() -> UnsafePointer<CChar>! {
    COutlive_last_error()
}

@c @implementation
public func outlive_status_name(_ status: outlive_status) -> UnsafePointer<CChar>! {
    let name: StaticString
    switch status {
    case OUTLIVE_OK: name = "OUTLIVE_OK"
    case OUTLIVE_E_INVALID_ARGUMENT: name = "OUTLIVE_E_INVALID_ARGUMENT"
    case OUTLIVE_E_NOT_FOUND: name = "OUTLIVE_E_NOT_FOUND"
    case OUTLIVE_E_UNRESOLVED: name = "OUTLIVE_E_UNRESOLVED"
    case OUTLIVE_E_TYPE_MISMATCH: name = "OUTLIVE_E_TYPE_MISMATCH"
    case OUTLIVE_E_MISSING_ARGUMENT: name = "OUTLIVE_E_MISSING_ARGUMENT"
    case OUTLIVE_E_INVALIDATED: name = "OUTLIVE_E_INVALIDATED"
    case OUTLIVE_E_CORRUPT: name = "OUTLIVE_E_CORRUPT"
    case OUTLIVE_E_IO: name = "OUTLIVE_E_IO"
    case OUTLIVE_E_BUSY: name = "OUTLIVE_E_BUSY"
    case OUTLIVE_E_PERMISSION: name = "OUTLIVE_E_PERMISSION"
    case OUTLIVE_E_STATE: name = "OUTLIVE_E_STATE"
    case OUTLIVE_E_VERSION: name = "OUTLIVE_E_VERSION"
    case OUTLIVE_E_NO_MEMORY: name = "OUTLIVE_E_NO_MEMORY"
    case OUTLIVE_E_LIMIT: name = "OUTLIVE_E_LIMIT"
    default: name = "OUTLIVE_E_UNKNOWN"
    }
    return staticCString(name)
}

@c @implementation
public func outlive_version() -> UnsafePointer<CChar>! {
    staticCString(OutliveVersion.text)
}

@c @implementation
public func outlive_version_number() -> UInt32 {
    OutliveVersion.number
}

@c @implementation
public func outlive_free(_ pointer: UnsafeMutableRawPointer?) {
    free(pointer)
}

@c @implementation
public func outlive_log_set_handler(_ handler: outlive_log_handler?, _ level: outlive_log_level, _ context: UnsafeMutableRawPointer?,
                                    _ release: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?) -> outlive_status {
    guarded {
        guard let threshold = LogLevel(rawValue: Int32(level.rawValue)) else {
            throw OutliveError.invalidArgument("level \(level.rawValue) is not an outlive_log_level")
        }
        guard let handler else {
            Log.install(nil, level: threshold)
            return
        }
        let caller = CallerContext(context, release: release)
        Log.install({ level, message in
            message.withCString { handler(outlive_log_level(rawValue: UInt32(level.rawValue)), $0, caller.pointer) }
        }, level: threshold)
    }
}
