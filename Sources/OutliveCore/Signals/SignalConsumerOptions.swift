/// How many versions of a signal a consumer receives.
public enum SignalDelivery: Int32, CaseIterable {
    /// The first version delivered to it; then the consumer is removed.
    case once = 1
    /// Every version it sees, until one posted with `terminates`; then removed.
    case untilTerminated = 2
}

/// Which runs may deliver to a consumer, and how long it lives.
public enum SignalLifetime: Int32, CaseIterable {
    /// Only the run that registered it; removed when that run ends (closed or died).
    case thisRun = 1
    /// Any live run of the registering process name, this one or a later one.
    case process = 2
    /// Any live process that resolves the handler; delivered by one of them only.
    case anyProcess = 3
}

/// A stored signal as inspection shows it.
public struct SignalSummary: Equatable {
    public let signalID: String
    /// 0 until the first post; each post adds one.
    public let version: UInt64
    /// The last post terminated its consumers (later posts are ignored).
    public let terminated: Bool
    public let consumerCount: Int
}

/// A stored consumer as inspection shows it.
public struct ConsumerSummary: Equatable {
    public let consumerID: String
    public let signalID: String
    public let handlerName: String
    public let delivery: SignalDelivery
    public let lifetime: SignalLifetime
    public let scope: String?
    /// Process name and run id of the run that registered it.
    public let processName: String
    public let runID: String
    /// The last version delivered to it (0: none yet).
    public let lastDeliveredVersion: UInt64
    /// The run delivering to it right now, if any.
    public let deliveringRunID: String?
}
