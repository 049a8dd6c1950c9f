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
    var phase: Phase = .presenting  // changed under the table's lock

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
    static let finishSignature = "UINTEGER token, ID interaction_id, ID run_id"

    private let presenting = TokenTable<UInt64, DurablePresentation>()

    func makeToken() -> UInt64 {
        presenting.reserve()
    }

    func insert(_ presentation: DurablePresentation) {
        presenting.insert(presentation.token, presentation)
    }

    /// Drops a presentation without finishing it (its queue was closed).
    func drop(_ token: UInt64) {
        presenting.remove(token)
    }

    /// The body of the finish built-in. Any thread.
    func finish(_ arguments: Arguments) throws {
        guard case .uinteger(let token)? = arguments["token"],
              case .id(let id)? = arguments["interaction_id"], let interactionID = id.string else {
            throw OutliveError.invalidArgument("the finish handler needs token (UINTEGER) and interaction_id (ID)")
        }
        // The phase changes under the table's lock: one finish at a time.
        let presentation: DurablePresentation = try presenting.update(token) { entry in
            guard let presentation = entry, presentation.interactionID == interactionID else {
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
            presenting.update(token) { entry in
                if entry === presentation { presentation.phase = .presenting }
            }
            throw error
        }
        presenting.update(token) { entry in
            if entry === presentation { entry = nil }
        }
        presentation.queue.startNextLater()
    }
}
