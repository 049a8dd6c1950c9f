import COutliveSystem

/// The one error type of the core. Its codes mirror `outlive_status` one to one
/// (the export layer maps them in a single place); the message is what
/// `outlive_last_error()` returns, so it names the argument, key or file at fault.
public struct OutliveError: Error, CustomStringConvertible, Equatable {
    public enum Code: Int32, Sendable {
        case invalidArgument = 1
        case notFound
        case unresolved
        case typeMismatch
        case missingArgument
        case invalidated
        case corrupt
        case io
        case busy
        case permission
        case state
        case version
        case noMemory
        case limit
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    public static func invalidArgument(_ message: String) -> OutliveError { .init(.invalidArgument, message) }
    public static func notFound(_ message: String) -> OutliveError { .init(.notFound, message) }
    public static func state(_ message: String) -> OutliveError { .init(.state, message) }
    public static func corrupt(_ message: String) -> OutliveError { .init(.corrupt, message) }

    /// An error from a failed system call, with errno's text; EACCES/EPERM become
    /// `.permission`, ENOMEM `.noMemory`, the rest `.io`.
    public static func system(_ what: String, errno code: Int32 = COutlive_errno()) -> OutliveError {
        let text = String(cString: strerror(code))
        switch code {
        case EACCES, EPERM, EROFS: return .init(code == EROFS ? .io : .permission, "\(what): \(text)")
        case ENOMEM: return .init(.noMemory, "\(what): \(text)")
        default: return .init(.io, "\(what): \(text)")
        }
    }
}
