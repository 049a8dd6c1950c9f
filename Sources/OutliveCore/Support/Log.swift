/// The library never prints. What it has to say (a dead run reaped, a feed
/// resync, a handler that failed inside a task) goes to the one handler the
/// host installs, at or above the level it chose; with none installed, nothing.
public enum LogLevel: Int32, Comparable {
    case error = 1, warning, info, debug

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

public enum Log {
    public typealias Handler = (LogLevel, String) -> Void

    private static let lock = Lock()
    nonisolated(unsafe) private static var handler: Handler?
    nonisolated(unsafe) private static var threshold: LogLevel = .warning

    public static func install(_ newHandler: Handler?, level: LogLevel) {
        lock.withLock {
            handler = newHandler
            threshold = level
        }
    }

    /// Whether a message of `level` would go anywhere (skip building it otherwise).
    public static func enabled(_ level: LogLevel) -> Bool {
        lock.withLock { handler != nil && level <= threshold }
    }

    public static func emit(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard let target = lock.withLock({ level <= threshold ? handler : nil }) else { return }
        target(level, message())
    }
}
