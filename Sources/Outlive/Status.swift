import COutliveAPI
import COutliveSystem
import OutliveCore

// The one place where core errors become statuses and the thread's message.

extension outlive_status {
    init(_ code: OutliveError.Code) {
        switch code {
        case .invalidArgument: self = OUTLIVE_E_INVALID_ARGUMENT
        case .notFound: self = OUTLIVE_E_NOT_FOUND
        case .unresolved: self = OUTLIVE_E_UNRESOLVED
        case .typeMismatch: self = OUTLIVE_E_TYPE_MISMATCH
        case .missingArgument: self = OUTLIVE_E_MISSING_ARGUMENT
        case .invalidated: self = OUTLIVE_E_INVALIDATED
        case .corrupt: self = OUTLIVE_E_CORRUPT
        case .io: self = OUTLIVE_E_IO
        case .busy: self = OUTLIVE_E_BUSY
        case .permission: self = OUTLIVE_E_PERMISSION
        case .state: self = OUTLIVE_E_STATE
        case .version: self = OUTLIVE_E_VERSION
        case .noMemory: self = OUTLIVE_E_NO_MEMORY
        case .limit: self = OUTLIVE_E_LIMIT
        }
    }
}

/// Records `error` as this thread's last error and returns its status.
func fail(_ error: Error) -> outlive_status {
    let failure = (error as? OutliveError) ?? OutliveError(.io, "unexpected error: \(error)")
    COutlive_set_last_error(failure.message)
    return outlive_status(failure.code)
}

func fail(_ code: OutliveError.Code, _ message: String) -> outlive_status {
    fail(OutliveError(code, message))
}

/// Runs an export's body: OK, or the status and message of what it threw.
/// No Swift error ever crosses the C boundary.
@inline(__always)
func guarded(_ body: () throws -> Void) -> outlive_status {
    do {
        try body()
        return OUTLIVE_OK
    } catch {
        return fail(error)
    }
}
