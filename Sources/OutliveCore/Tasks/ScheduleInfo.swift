/// A schedule as listed.
public struct ScheduleInfo: Equatable {
    public let name: String
    public let handlerName: String
    public let queue: String
    public let priority: Int32
    /// Seconds between firings; nil for a cron schedule.
    public let interval: Double?
    /// The cron expression; nil for an interval.
    public let cron: String?
    /// Seconds since the epoch of the period not yet fired (in the past when
    /// no process fired it yet).
    public let nextFire: Double
    /// The period of the last firing; nil when it never fired.
    public let lastFired: Double?
    public let created: Double
}
