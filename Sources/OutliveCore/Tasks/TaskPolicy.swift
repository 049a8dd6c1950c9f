import COutliveSystem

/// How failures are retried and when a task is given up (`dead`).
public struct TaskPolicy: Equatable {
    /// Seconds before the first retry; doubled per failed attempt, with jitter.
    public var initialBackoff: Double = 1
    /// Seconds; the backoff never exceeds it.
    public var maxBackoff: Double = 3_600
    /// Attempts after which a failing task is dead.
    public var maxAttempts: UInt32 = 20
    /// Seconds a handler has to complete an attempt.
    public var timeout: Double = 60
    /// Seconds after its creation when a failing task is dead (group starts exempt).
    public var maxAge: Double = 3 * 24 * 3_600

    public init() {}

    public func validate() throws {
        guard initialBackoff.isFinite, initialBackoff >= 0 else {
            throw OutliveError.invalidArgument("policy.initial_backoff must be a finite number of seconds >= 0, got \(initialBackoff)")
        }
        guard maxBackoff.isFinite, maxBackoff >= initialBackoff else {
            throw OutliveError.invalidArgument("policy.max_backoff must be finite and >= initial_backoff, got \(maxBackoff)")
        }
        guard maxAttempts >= 1 else { throw OutliveError.invalidArgument("policy.max_attempts must be at least 1") }
        guard timeout.isFinite, timeout > 0, timeout <= 1e9 else {
            throw OutliveError.invalidArgument("policy.timeout must be a finite number of seconds > 0, got \(timeout)")
        }
        guard maxAge.isFinite, maxAge > 0 else {
            throw OutliveError.invalidArgument("policy.max_age must be a finite number of seconds > 0, got \(maxAge)")
        }
    }

    /// The wait after failed attempt number `attempt` (1-based): the doubled
    /// backoff capped at `maxBackoff`, scaled by a random factor in [0.5, 1]
    /// so that many failing tasks do not retry in lockstep.
    public func backoff(afterAttempt attempt: Int64) -> Double {
        let exponent = Double(max(0, min(attempt - 1, 60)))
        let full = min(maxBackoff, initialBackoff * pow2(exponent))
        return full * (0.5 + 0.5 * TaskPolicy.randomUnit())
    }

    private func pow2(_ exponent: Double) -> Double {
        var value = 1.0
        var remaining = Int(exponent)
        while remaining > 0 { value *= 2; remaining -= 1 }
        return value
    }

    static func randomUnit() -> Double {
        var word: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &word) { getrandom($0.baseAddress, 8, 0) }
        return Double(word >> 11) / Double(1 << 53)
    }
}

/// When a process starts a run by itself.
public struct TaskTriggers: Equatable {
    /// A run starts when this many tasks are pending (0: never by count).
    public var pendingCount: Int = 10
    /// A run starts this many seconds after a task was added.
    public var delay: Double = 30

    public init() {}

    public func validate() throws {
        guard pendingCount >= 0 else { throw OutliveError.invalidArgument("pending_count is too large") }
        guard delay.isFinite, delay >= 0, delay <= 1e9 else {
            throw OutliveError.invalidArgument("delay_seconds must be a finite number of seconds >= 0, got \(delay)")
        }
    }
}
