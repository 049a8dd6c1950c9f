/// How a choice is shown: an ordinary answer, the one that cancels, one that
/// destroys data, or the default.
public enum ChoiceKind: Int32, Equatable {
    case regular = 1, cancel, destructive, `default`
}

/// One answer a message offers.
public struct Choice: Equatable {
    public let id: String
    public let label: String
    public let kind: ChoiceKind

    public init(id: String, label: String, kind: ChoiceKind) {
        self.id = id
        self.label = label
        self.kind = kind
    }
}

/// A stored message with its state, as read from the store. A snapshot: the
/// record may have changed since.
public struct Message: Equatable {
    public let id: String
    public let sequence: Int64
    /// Seconds since the epoch when it was posted.
    public let date: Double
    public let category: String
    public let title: String
    public let text: String?
    public let scope: String?
    public let thread: String?
    public let choices: [Choice]
    /// The payload in its stored encoding (`MessagePayload`), nil when none.
    public let payloadBytes: [UInt8]?
    /// The durable response handler, serialized, nil when none.
    public let responseHandlerBytes: [UInt8]?
    public let autoRemove: Bool

    /// The run presenting it now (`locking_process`), and that run's process name.
    public let lockingRun: String?
    public let lockingProcess: String?
    /// `process:run:presenter` of every presenter that had its chance.
    public let processedBy: [String]
    public let presented: Bool
    public let handled: Bool
    public let choice: String?
    public let removed: Bool
    /// The presenter that presented it, its run, and whether it wants `end`.
    public let presenter: String?
    public let presenterRun: String?
    public let requiresEndNotification: Bool
    /// The run calling its response handlers now.
    public let respondingRun: String?

    public func hasChoice(_ id: String) -> Bool {
        choices.contains { $0.id == id }
    }

    /// The payload arguments; nil when the message has none.
    public func payload() throws -> Arguments? {
        guard let payloadBytes else { return nil }
        return try MessagePayload.decode(payloadBytes)
    }

    /// The durable response handler; nil when the message has none.
    public func responseHandler() throws -> Handler? {
        guard let responseHandlerBytes else { return nil }
        return try Handler(serialized: responseHandlerBytes)
    }
}

/// The payload's stored form: the arguments bound to a handler value that is
/// never called, so that payloads share the handlers' versioned encoding.
enum MessagePayload {
    static let carrierName = "outlive.message.payload"

    static func encode(_ arguments: Arguments) throws -> [UInt8] {
        try Handler(name: carrierName, bound: arguments).serializedChecked()
    }

    static func decode(_ bytes: [UInt8]) throws -> Arguments {
        try Handler(serialized: bytes).bound
    }
}
