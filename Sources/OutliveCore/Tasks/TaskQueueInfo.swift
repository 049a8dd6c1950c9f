/// A declared queue and its counts, as `outlive_queue_list_new` shows it.
public struct TaskQueueInfo: Equatable {
    public enum Kind: Int32 {
        case ordered = 1, parallel
    }

    public let name: String
    public let kind: Kind
    /// Not yet done: due now, due later, or waiting for a retry.
    public let pending: Int64
    public let running: Int64
    public let dead: Int64
}
