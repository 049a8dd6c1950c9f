/// When a schedule fires: every `interval` seconds, counted from the time the
/// schedule was set (its anchor), or at the minutes a cron expression names.
public enum SchedulePeriod: Equatable {
    case every(Double)
    case cron(CronExpression)

    /// Seconds: shorter periods would fire faster than a firing (a write
    /// transaction) can be relied on to take.
    public static let minInterval = 0.01
    /// Seconds (about 31 years).
    public static let maxInterval = 1e9

    public static func interval(_ seconds: Double) throws -> SchedulePeriod {
        guard seconds.isFinite, seconds >= minInterval, seconds <= maxInterval else {
            throw OutliveError.invalidArgument("a schedule's interval must be \(minInterval) to \(Int(maxInterval)) seconds, got \(seconds)")
        }
        return .every(seconds)
    }

    /// The first period strictly after `now`. Intervals count whole periods
    /// from `anchor`, so that the firings stay on one grid however late each
    /// one is; nil only for a cron expression with no time left before the
    /// year 10000, or times out of range.
    public func next(after now: Double, anchor: Double) -> Double? {
        guard now.isFinite, anchor.isFinite else { return nil }
        switch self {
        case .every(let interval):
            guard now >= anchor else { return anchor + interval }
            let periods = ((now - anchor) / interval).rounded(.down) + 1
            var next = anchor + periods * interval
            // Rounding can leave the sum at now or just below it.
            while next <= now { next += interval }
            return next
        case .cron(let expression):
            return expression.next(after: now)
        }
    }

    public var interval: Double? {
        if case .every(let seconds) = self { return seconds }
        return nil
    }

    public var cronText: String? {
        if case .cron(let expression) = self { return expression.text }
        return nil
    }
}
