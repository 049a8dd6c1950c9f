/// One presentation of a durable interaction in this process: the interaction's
/// handler was called and the interaction waits for its `finish`.
///
/// The `finish` handler an interaction receives is the built-in
/// `outlive.durable_interaction.finish` bound with `token` (UINTEGER: this
/// presentation's number, never reused in the process), `interaction_id` (ID)
/// and `run_id` (ID: the presenting run). Calling it looks the token up in the
/// process-wide table and finishes that presentation; the first call that
/// succeeds takes it out of the table, so every later call (or a call in another
/// process, or after the queue was freed) finds nothing and fails with `.state`.
final class DurablePresentation {
    enum Phase {
        case presenting
        case finishing  // a thread is deleting the row; a failure returns it to presenting
    }

    let token: UInt64
    let interactionID: String
    let queue: DurableInteractionQueue
    var phase: Phase = .presenting  // guarded by the table's lock

    init(token: UInt64, interactionID: String, queue: DurableInteractionQueue) {
        self.token = token
        self.interactionID = interactionID
        self.queue = queue
    }

    /// The finish handler for this presentation.
    func finishHandler(runID: String) throws -> Handler {
        try Handler(name: DurableInteractions.finishHandlerName, bound: Arguments([
            ("token", .uinteger(token)),
            ("interaction_id", .id(IDValue(string: interactionID))),
            ("run_id", .id(IDValue(string: runID))),
        ]))
    }
}

/// The process-wide table of durable presentations, by token.
final class DurablePresentations: @unchecked Sendable {
    static let shared = DurablePresentations()

    private let lock = Lock()
    // Guarded by `lock`.
    private var presenting: [UInt64: DurablePresentation] = [:]
    private var nextToken: UInt64 = 1

    private static let registration: Void = {
        do {
            try HandlerRegistry.shared.registerBuiltin(name: DurableInteractions.finishHandlerName,
                                                       signature: "UINTEGER token, ID interaction_id, ID run_id") { arguments in
                try DurablePresentations.shared.finish(arguments)
            }
        } catch {
            Log.emit(.error, "cannot register the built-in handler \(DurableInteractions.finishHandlerName): \(error)")
        }
    }()

    /// Registers the finish built-in (once per process).
    static func registerFinishHandler() {
        _ = registration
    }

    func makeToken() -> UInt64 {
        lock.withLock {
            let token = nextToken
            nextToken &+= 1
            return token
        }
    }

    func insert(_ presentation: DurablePresentation) {
        lock.withLock { presenting[presentation.token] = presentation }
    }

    /// Drops a presentation without finishing it (its queue was closed).
    func drop(_ token: UInt64) {
        _ = lock.withLock { presenting.removeValue(forKey: token) }
    }

    /// The body of the finish built-in. Any thread.
    func finish(_ arguments: Arguments) throws {
        guard case .uinteger(let token)? = arguments["token"],
              case .id(let id)? = arguments["interaction_id"], let interactionID = id.string else {
            throw OutliveError.invalidArgument("the finish handler needs token (UINTEGER) and interaction_id (ID)")
        }
        let presentation: DurablePresentation = try lock.withLock {
            guard let presentation = presenting[token], presentation.interactionID == interactionID else {
                throw OutliveError.state("durable interaction \(interactionID) is not being presented by this process under token \(token): it was finished already, its queue was freed, or the finish handler comes from another process")
            }
            guard presentation.phase == .presenting else {
                throw OutliveError.state("durable interaction \(interactionID) is being finished by another call")
            }
            presentation.phase = .finishing
            return presentation
        }
        do {
            try presentation.queue.finished(presentation)
        } catch {
            lock.withLock {
                if presenting[token] === presentation { presentation.phase = .presenting }
            }
            throw error
        }
        lock.withLock { if presenting[token] === presentation { presenting.removeValue(forKey: token) } }
        presentation.queue.startNextLater()
    }
}
