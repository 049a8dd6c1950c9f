/// A handle on one named durable interaction queue of a store.
///
/// Interactions are handlers stored in the store, in the order they were
/// added, by any process. A handle that is not suspended is a presenter: on its
/// store's loop it claims the queue (when no live presenter of any process
/// holds it), calls the first stored interaction's handler with call-time
/// arguments `interaction_id` (ID) and `finish` (HANDLER), and waits until
/// `finish` is called; finishing deletes the row (one transaction) and the next
/// interaction starts in a later dispatch. The claim is kept across consecutive
/// interactions and released when the queue is empty, when the handle is
/// suspended with nothing presenting, when it is closed, and when its run ends
/// or dies (the end-of-run hook). A presentation that never finished because
/// its process died or its handle was closed is presented again by the next
/// presenter: delivery is at least once.
///
/// A first interaction whose handler does not resolve in this process (or
/// cannot be called: missing or mistyped arguments, a resolver without an
/// instance) is neither skipped nor dropped: the queue waits, the log says why,
/// the claim is released so that a process that can call it may present it, and
/// this handle tries again when the queue changes or it is resumed.
///
/// Changes of other processes (adds, finishes, removals, a presenter's claim
/// released) arrive through the change feed; nothing polls.
///
/// Locks: `lock` is never held during a database transaction, a handler call or
/// while another lock is taken.
public final class DurableInteractionQueue: @unchecked Sendable {
    public let name: String
    let store: Store
    /// This handle's number in the claim row, unique in the process.
    let holder: Int64

    private let lock = Lock()
    // Guarded by `lock`.
    private var suspended: Bool
    private var closed = false
    private var running: DurablePresentation?
    private var startPosted = false
    private var subscription: UInt64?
    /// The interaction last reported as waiting, so that each wait is logged
    /// once per handle rather than on every change of the queue.
    private var reportedWaiting: String?

    private static let holderCounter = HolderCounter()
    let claim: RunClaim

    init(store: Store, claim: RunClaim, name: String, suspended: Bool) throws {
        self.claim = claim
        self.store = store
        self.name = name
        self.suspended = suspended
        holder = DurableInteractionQueue.holderCounter.next()
        let token = try store.subscribe(topic: DurableInteractions.topic) { [weak self] batch in
            guard let self else { return }
            if batch.resync || batch.keys.contains(self.name) { self.startNext() }
        }
        lock.withLock { subscription = token }
        startNextLater()
    }

    // MARK: - Adding, inspecting, removing

    /// Stores `handler` as the last interaction of the queue; returns its id.
    /// Durable when it returns. Throws `.invalidated` for an invalidated handler,
    /// `.invalidArgument` for one too large to serialize, `.state` once the
    /// handle is closed.
    @discardableResult
    public func add(_ handler: Handler) throws -> String {
        try checkOpen()
        if handler.isInvalidated {
            throw OutliveError(.invalidated, "handler \(handler.name) was invalidated; an invalidated handler cannot be an interaction")
        }
        try HandlerRegistry.checkStorable(handler, as: "a durable interaction")
        let bytes = try handler.serializedChecked()
        let id = Identifier.make()
        let queue = name
        try store.database.write { transaction in
            try transaction.execute("INSERT INTO outlive_durable_interactions(id, queue, handler, handler_name, added) VALUES (?, ?, ?, ?, ?)",
                                    [.text(id), .text(queue), .blob(bytes), .text(handler.name), .double(Clock.wall())])
            try transaction.recordChange(topic: DurableInteractions.topic, key: queue)
        }
        startNextLater()
        return id
    }

    /// One stored interaction, for inspection.
    public struct Entry: Equatable {
        public let id: String
        public let handlerName: String
        /// How many times it was presented (more than 1: its presenter died,
        /// or its queue handle was closed, before it was finished).
        public let presentations: Int
    }

    /// The stored interactions of this queue, first first.
    public func entries() throws -> [Entry] {
        try checkOpen()
        var entries: [Entry] = []
        try store.database.read { transaction in
            try transaction.query("SELECT id, handler_name, presentations FROM outlive_durable_interactions WHERE queue = ? ORDER BY seq",
                                  [.text(name)]) { row in
                entries.append(Entry(id: row.text(0) ?? "", handlerName: row.text(1) ?? "", presentations: Int(row.integer(2))))
            }
        }
        return entries
    }

    /// How many interactions the queue holds, the one being presented included.
    public func count() throws -> Int {
        try checkOpen()
        return try store.database.read {
            Int(try $0.integer("SELECT count(*) FROM outlive_durable_interactions WHERE queue = ?", [.text(name)]) ?? 0)
        }
    }

    /// Removes one stored interaction without presenting it. A presentation of
    /// it under way (here or in another process) goes on; its finish then
    /// succeeds and changes nothing more. Throws `.notFound` when the queue
    /// holds no interaction with that id, `.invalidArgument` for a malformed id.
    public func remove(_ id: String) throws {
        guard Identifier.isValid(id) else {
            throw OutliveError.invalidArgument("\"\(id)\" is not an interaction id (36-character UUID)")
        }
        try checkOpen()
        let queue = name
        try store.database.write { transaction in
            try transaction.execute("DELETE FROM outlive_durable_interactions WHERE id = ? AND queue = ?", [.text(id.lowercased()), .text(queue)])
            guard transaction.changedRows == 1 else {
                throw OutliveError.notFound("durable interaction queue \"\(queue)\" holds no interaction \(id)")
            }
            try transaction.recordChange(topic: DurableInteractions.topic, key: queue)
        }
    }

    // MARK: - Suspending

    /// Nothing starts in this handle until `resume`; the interaction it
    /// presents goes on. With nothing presenting, its claim is released so that
    /// a presenter of another process can present the queue. Any thread.
    public func suspend() throws {
        try checkOpen()
        let release: Bool = lock.withLock {
            suspended = true
            return running == nil
        }
        if release { try releaseClaim() }
    }

    /// Lets interactions start again in this handle (also retries a first
    /// interaction that could not be called). Any thread.
    public func resume() throws {
        try checkOpen()
        lock.withLock {
            suspended = false
            reportedWaiting = nil
        }
        startNextLater()
    }

    public var isSuspended: Bool { lock.withLock { suspended } }

    /// The id of the interaction this handle presents now, if any.
    public var presentingID: String? { lock.withLock { running?.interactionID } }

    // MARK: - Closing

    /// Closes the handle: nothing starts any more; the claim is released (when
    /// the store is still open), and an interaction this handle presents is
    /// given back: its finish fails with `.state` and the next presenter
    /// presents it again. Idempotent.
    public func close() {
        let (token, presentation): (UInt64?, DurablePresentation?) = lock.withLock {
            guard !closed else { return (nil, nil) }
            closed = true
            let token = subscription
            subscription = nil
            let presentation = running
            running = nil
            return (token, presentation)
        }
        if let token { store.unsubscribe(token) }
        if let presentation { DurablePresentations.shared.drop(presentation.token) }
        if (try? store.checkUsable()) != nil {
            do { try releaseClaim() } catch {
                Log.emit(.warning, "durable interaction queue \"\(name)\": cannot release its claim on close: \(error); it goes when this run ends")
            }
        }
    }

    deinit { close() }

    private func checkOpen() throws {
        if lock.withLock({ closed }) { throw OutliveError.state("the durable interaction queue \"\(name)\" is freed") }
        try store.checkUsable()
    }

    // MARK: - Presenting

    func startNextLater() {
        let post: Bool = lock.withLock {
            guard !closed, !suspended, running == nil, !startPosted else { return false }
            startPosted = true
            return true
        }
        if post { store.loop.post { [weak self] in self?.startNext() } }
    }

    private var key: SQLValue { .text(name) }
    private var token: SQLValue { .integer(holder) }

    private func claimState(in transaction: StoreTransaction) throws -> RunClaim.Holder {
        try claim.holder(of: key, token: token, in: transaction)
    }

    private struct Head {
        let id: String
        let bytes: [UInt8]
        let handlerName: String
    }

    private func head(in transaction: StoreTransaction) throws -> Head? {
        var head: Head?
        try transaction.query("SELECT id, handler, handler_name FROM outlive_durable_interactions WHERE queue = ? ORDER BY seq LIMIT 1",
                              [.text(name)]) { row in
            head = Head(id: row.text(0) ?? "", bytes: row.blob(1) ?? [], handlerName: row.text(2) ?? "")
        }
        return head
    }

    /// On the loop's thread: presents the first stored interaction when this
    /// handle may.
    func startNext() {
        let ready: Bool = lock.withLock {
            startPosted = false
            return !closed && !suspended && running == nil
        }
        guard ready, (try? store.checkUsable()) != nil else { return }
        do {
            try present()
        } catch {
            Log.emit(.error, "durable interaction queue \"\(name)\": cannot present: \(error)")
        }
    }

    private func present() throws {
        // A read first: most wake-ups (another process's add while it presents)
        // need no write.
        let (state, first) = try store.database.read { transaction in
            (try claimState(in: transaction), try head(in: transaction))
        }
        if case .live = state { return }
        guard let first else {
            if case .ours = state { try releaseClaim() }
            return
        }
        let handler: Handler
        do {
            handler = try Handler(serialized: first.bytes)
        } catch {
            Log.emit(.error, "durable interaction queue \"\(name)\": interaction \(first.id) (\(first.handlerName)) does not decode: \(error); the queue waits until it is removed")
            if case .ours = state { try releaseClaim() }
            return
        }
        do {
            _ = try HandlerRegistry.shared.resolve(handler.name)
        } catch {
            if shouldReportWaiting(first.id) { Log.emit(.warning, "durable interaction queue \"\(name)\": interaction \(first.id) waits: \((error as? OutliveError)?.message ?? "\(error)") (process \(store.processName), run \(store.runID)); a process that declares \(handler.name) presents it, or this one once it resolves here and the queue changes or is resumed") }
            if case .ours = state { try releaseClaim() }
            return
        }
        // Claim the queue and mark the presentation, unless another presenter
        // got there first or the first interaction changed.
        let claimed: Bool = try store.database.write { transaction in
            if case .live = try claimState(in: transaction) { return false }
            guard let current = try head(in: transaction), current.id == first.id else { return false }
            guard try claim.take(key, token: token, setting: [("interaction_id", .text(first.id))], in: transaction) else { return false }
            try transaction.execute("UPDATE outlive_durable_interactions SET presentations = presentations + 1 WHERE id = ?", [.text(first.id)])
            return true
        }
        guard claimed else {
            startNextLater()  // the first interaction changed: look again
            return
        }
        let table = DurablePresentations.shared
        let presentation = DurablePresentation(token: table.makeToken(), interactionID: first.id, queue: self)
        let finish = try presentation.finishHandler(runID: store.runID)
        let started: Bool = lock.withLock {
            guard !closed, running == nil else { return false }
            running = presentation
            return true
        }
        guard started else {
            try releaseClaim()  // closed meanwhile: give the queue back
            return
        }
        table.insert(presentation)
        do {
            try HandlerRegistry.shared.call(storedWork: handler, with: Arguments([
                ("interaction_id", .id(IDValue(string: first.id))),
                ("finish", .handler(finish)),
            ]))
        } catch {
            // Nothing was called: the interaction stays first and the queue waits.
            let mine: Bool = lock.withLock {
                guard running === presentation else { return false }
                running = nil
                return true
            }
            table.drop(presentation.token)
            Log.emit(.error, "durable interaction queue \"\(name)\": interaction \(first.id) cannot be presented: \(handler.name) failed: \(error); the queue waits (remove the interaction, or fix the handler and resume)")
            if mine { try releaseClaim() }
        }
    }

    private func shouldReportWaiting(_ id: String) -> Bool {
        lock.withLock {
            guard reportedWaiting != id else { return false }
            reportedWaiting = id
            return true
        }
    }

    /// Called by the finish built-in, on the finishing thread, once per
    /// presentation: clears the claim's interaction and deletes the
    /// interaction (it may have been removed already), in one transaction —
    /// only while this handle still holds the queue's claim: a run that others
    /// ended finishes nothing (`.state`), and the presenter that took over
    /// presents the interaction again.
    func finished(_ presentation: DurablePresentation) throws {
        try store.checkUsable()
        let queue = name, key = key, token = token
        try store.database.write { transaction in
            let (fence, fenced) = claim.fence(token: token)
            try transaction.execute("UPDATE outlive_durable_interaction_claims SET interaction_id = NULL WHERE queue = ? AND \(fence) AND interaction_id = ?",
                                    [key] + fenced + [.text(presentation.interactionID)])
            guard transaction.changedRows == 1 else {
                throw OutliveError.state("durable interaction queue \"\(queue)\" is no longer presented by this handle (its run was ended by another process); interaction \(presentation.interactionID) is presented again")
            }
            try transaction.execute("DELETE FROM outlive_durable_interactions WHERE id = ?", [.text(presentation.interactionID)])
            try transaction.recordChange(topic: DurableInteractions.topic, key: queue)
        }
        let releaseNow: Bool = lock.withLock {
            guard running === presentation else { return false }
            running = nil
            return suspended
        }
        if releaseNow { try? releaseClaim() }
    }

    /// Deletes this handle's claim (if it holds one) and tells the other
    /// presenters.
    private func releaseClaim() throws {
        let queue = name, key = key, token = token
        // A read first: most calls find nothing to release and need no write.
        guard try store.database.read({ try claim.holds(key, token: token, in: $0) }) else { return }
        try store.database.write { transaction in
            if try claim.release(key, token: token, in: transaction) {
                try transaction.recordChange(topic: DurableInteractions.topic, key: queue)
            }
        }
    }
}

/// Numbers for queue handles, unique in the process.
private final class HolderCounter: @unchecked Sendable {
    private let lock = Lock()
    private var last: Int64 = 0

    func next() -> Int64 {
        lock.withLock {
            last += 1
            return last
        }
    }
}
