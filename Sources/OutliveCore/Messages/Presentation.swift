/// How a presentation ended.
public struct PresentationOutcome {
    public var presented: Bool
    public var requiresEndNotification: Bool
    public var choice: String?

    public init(presented: Bool, requiresEndNotification: Bool = false, choice: String? = nil) {
        self.presented = presented
        self.requiresEndNotification = requiresEndNotification
        self.choice = choice
    }
}

/// The token a presenter gets with a message: finished exactly once, from any
/// thread. Finishing hands the outcome to the loop, where the queue records it
/// and releases the message's lock. It stays usable after its presenter was
/// removed; the outcome is recorded all the same.
public final class Presentation {
    public let message: Message
    public let presenterID: String
    private let lock = Lock()
    private var finished = false
    private let deliver: (Presentation, PresentationOutcome) -> Void

    init(message: Message, presenterID: String, deliver: @escaping (Presentation, PresentationOutcome) -> Void) {
        self.message = message
        self.presenterID = presenterID
        self.deliver = deliver
    }

    public var isFinished: Bool { lock.withLock { finished } }

    /// Throws `.notFound` for a choice the message does not offer (the token
    /// stays unfinished) and `.state` when it was finished already.
    public func finish(_ outcome: PresentationOutcome) throws {
        if let choice = outcome.choice, !message.hasChoice(choice) {
            throw OutliveError.notFound("message \(message.id) has no choice \"\(choice)\"")
        }
        try lock.withLock {
            if finished { throw OutliveError.state("the presentation of message \(message.id) was finished already") }
            finished = true
        }
        deliver(self, outcome)
    }
}
