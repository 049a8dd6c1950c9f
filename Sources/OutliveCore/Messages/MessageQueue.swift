/// What a presenter does with a message.
public struct PresenterCallbacks {
    /// 0 declines; otherwise the highest priority of this process presents.
    public let priority: (Message) -> Int32
    public let present: (Message, Presentation) -> Void
    /// Called before a presented message that asked for it is deleted.
    public let end: ((Message) -> Void)?

    public init(priority: @escaping (Message) -> Int32, present: @escaping (Message, Presentation) -> Void,
                end: ((Message) -> Void)? = nil) {
        self.priority = priority
        self.present = present
        self.end = end
    }
}

/// What an auto-resolver decided about an unanswered message.
public enum AutoResolution: Equatable {
    /// Leave it to presenters.
    case unresolved
    /// Answer it with one of its choices, as the user would.
    case answered(String)
    /// It needs no answer any more (the problem went away): remove it.
    case resolved
}

/// The message queue of one store handle (the ownCloud SDK's OCMessageQueue,
/// across processes). Messages are durable records; presenters, response handlers and
/// auto-resolvers are callbacks of this run, called on the loop. The change
/// feed drives the flow (`MessageFlow.swift`): each process looks only at the
/// messages that changed, and scans — through the state index, never every
/// stored message — only when a callback is added or the feed was resynced.
public final class MessageQueue {
    public static let topic = "message"
    public static var schema: SchemaComponent { MessageTable.schema }
    public static let defaultCategoryLimit: Int64 = 10_000
    public static let maxCallbackIDLength = 255

    public typealias ResponseHandler = (Message) -> Bool
    public typealias AutoResolver = (Message) -> AutoResolution

    final class RegisteredPresenter {
        let id: String
        let callbacks: PresenterCallbacks
        init(id: String, callbacks: PresenterCallbacks) {
            self.id = id
            self.callbacks = callbacks
        }
    }

    let store: Store
    let lock = Lock()
    // Guarded by `lock` (so no run-time exclusivity check: a post reads them).
    @exclusivity(unchecked) var presenters: [RegisteredPresenter] = []
    var responseHandlers: [(id: String, handler: ResponseHandler)] = []
    @exclusivity(unchecked) var autoResolvers: [(id: String, resolver: AutoResolver)] = []
    @exclusivity(unchecked) var categoryLimit = MessageQueue.defaultCategoryLimit
    /// Messages this run presents now (locked by it, token not yet finished).
    var presenting: Set<String> = []
    /// What this handle's last post left (SQLite), with the data version it committed with.
    @exclusivity(unchecked) var keptSeqs: (version: UInt64, seqs: MessageSeqs)?
    /// Answered messages this run's response handlers did not take; asked
    /// again when a response handler is added.
    var declinedResponses: Set<String> = []
    private var subscription: UInt64?
    /// A message being presented by one run (`locking_run`, and which process).
    let presentationLock: RunClaim
    /// An answered message whose response handlers one run is calling.
    let responseClaim: RunClaim

    public init(store: Store) throws {
        self.store = store
        presentationLock = RunClaim(store: store, table: "outlive_messages", key: "id", run: "locking_run", form: .columns,
                                    describing: ["locking_process"], freed: MessageQueue.claimsEnded, locate: MessageQueue.locate)
        responseClaim = RunClaim(store: store, table: "outlive_messages", key: "id", run: "responding_run", form: .columns,
                                 freed: MessageQueue.claimsEnded, locate: MessageQueue.locate)
        store.onRunEnded { [weak self] transaction, run in try self?.runEnded(run, in: transaction) }
        subscription = try store.subscribe(topic: MessageQueue.topic) { [weak self] batch in self?.changed(batch) }
        // Answered and removed messages may be waiting for what this process can
        // do (resolve a durable response handler, delete a record).
        store.loop.post { [weak self] in self?.scan([.answered, .removed]) }
    }

    /// A claim's key (a message id) as the row it names (`MessageTable.row`).
    static func locate(_ key: SQLValue, _ engine: StoreEngine) -> (condition: String, arguments: [SQLValue]) {
        guard case .text(let id) = key else { return ("id = ?", [key]) }
        return MessageTable.row(id, engine)
    }

    var processEntryPrefix: String { "\(store.processName):\(store.runID):" }

    static func validate(messageID: String) throws {
        guard Identifier.isValid(messageID) else {
            throw OutliveError.invalidArgument("message_id \"\(messageID)\" is not a message id (36-character UUID)")
        }
    }

    static func validate(callbackID: String, _ name: String) throws {
        try MessageDraft.check(callbackID, name, max: maxCallbackIDLength)
    }

    // MARK: - Messages

    /// Stores the draft as a new message and returns its id. Throws `.state`
    /// when its category holds `categoryLimit` messages already.
    public func post(_ draft: MessageDraft) throws -> String {
        var draft = draft
        return try post(&draft)
    }

    /// `post` of a draft kept in a class (the C API's handle): in place, where
    /// reading it out for a parameter copied it, retaining each of its
    /// strings and arrays and releasing them after (about 30 atomic
    /// operations a post). The draft is not changed.
    public func post(_ draft: inout MessageDraft) throws -> String {
        try store.checkUsable()
        let run = store.runID
        // What the commit leaves for this handle's next post, looked at once
        // the write returned: an `afterCommit` action cost a closure and an
        // array, allocated and freed on every post.
        var kept: MessageSeqs?
        var committed: StoreTransaction?
        let id = try store.database.groupedWrite { transaction -> String in
            var (limit, seqs) = limitAndKeptSeqs(in: transaction)
            let id: String
            if transaction.engine == .sqlite {
                let (held, sequence) = try MessageCounts.beforePost(category: draft.category, limit: limit, seqs: &seqs,
                                                                    watchedByOtherThan: run, in: transaction)
                if let count = held {
                    throw OutliveError(.limit, MessageCounts.fullCategory(draft.category, holds: String(count)))
                }
                // An id that carries the seq: no index of ids to write.
                id = SeqID.make(seq: sequence)
                try MessageTable.insert(&draft, id: id, created: Clock.wall(), numbering: .numbered(sequence), in: transaction)
            } else {
                // A random id, its key; the insert admits the message (its
                // seq, its count, the limit) with nothing read before it:
                // the post is one round trip.
                id = Identifier.make()
                try MessageTable.insert(&draft, id: id, created: Clock.wall(), numbering: .admitted(limit: limit), in: transaction)
            }
            // A feed entry (a page written, a doorbell rung) only when a run
            // other than this one watches messages; this run learns of its
            // post after the commit (`posted`). A run that subscribes after
            // this transaction scans the waiting messages when it adds a
            // presenter or an auto-resolver.
            // SQLite looked with the seqs, in the same statement.
            if seqs?.watched ?? true { try transaction.recordChange(topic: MessageQueue.topic, key: id, watchedByOtherThan: run) }
            // The last run of the body is the one committed (a group commit
            // that fails as a whole runs each member again alone).
            if seqs != nil { transaction.keepCommittedDataVersion() }
            kept = seqs
            committed = transaction
            return id
        }
        posted(id, keeping: kept, version: committed?.committedDataVersion)
        return id
    }

    /// The category limit, and the seqs this handle's last post left
    /// (SQLite), if nothing was committed since, by any connection (the data
    /// version is the one it committed with); one lock for both. Taken: a
    /// second post in the same transaction (a group commit's member) reads
    /// them, seeing the first one's insert.
    private func limitAndKeptSeqs(in transaction: StoreTransaction) -> (Int64, MessageSeqs?) {
        let version = transaction.dataVersion
        return lock.withLock {
            guard let version, let kept = keptSeqs else { return (categoryLimit, nil) }
            keptSeqs = nil
            return (categoryLimit, kept.version == version ? kept.seqs : nil)
        }
    }

    /// A message this run posted, committed: looked at on the loop as a feed
    /// entry would have made it, when this run has a callback that may act on
    /// a new message (a presenter or an auto-resolver; one added later scans).
    /// `seqs` (SQLite) are kept for this handle's next post, with the data
    /// version the commit left (nil in a group commit: not kept).
    private func posted(_ id: String, keeping seqs: MessageSeqs?, version: UInt64?) {
        let examines = lock.withLock { () -> Bool in
            if let seqs, let version { keptSeqs = (version, seqs) }
            return !presenters.isEmpty || !autoResolvers.isEmpty
        }
        guard examines else { return }
        store.loop.post { [weak self] in self?.examine(id) }
    }

    /// Answers a message with one of its choices (from any process).
    public func respond(_ id: String, choice: String) throws {
        try MessageQueue.validate(messageID: id)
        try MessageDraft.check(choice, "choice_id", max: MessageDraft.maxChoiceIDLength)
        try changingMessage(id) { message, transaction in
            guard message.hasChoice(choice) else { throw OutliveError.notFound("message \(id) has no choice \"\(choice)\"") }
            guard !message.handled else {
                throw OutliveError.state("message \(id) was answered already (choice \"\(message.choice ?? "")\")")
            }
            let byID = MessageTable.row(id, transaction.engine)
            try transaction.execute("UPDATE outlive_messages SET handled = 1, choice = ? WHERE \(byID.condition)", [.text(choice)] + byID.arguments)
            try transaction.recordChange(topic: MessageQueue.topic, key: id)
        }
    }

    /// Marks a message presented without presenting it; a message without
    /// choices that removes itself when presented goes too.
    public func mute(_ id: String) throws {
        try changingMessage(id) { message, transaction in
            guard !message.presented else { return }
            let removes = message.autoRemove && message.choices.isEmpty && !message.handled
            let byID = MessageTable.row(id, transaction.engine)
            try transaction.execute("UPDATE outlive_messages SET presented = 1, removed = ? WHERE \(byID.condition)",
                                    [.integer(removes ? 1 : 0)] + byID.arguments)
            try transaction.recordChange(topic: MessageQueue.topic, key: id)
        }
    }

    /// Removes a message: deleted at once, or, when a presentation is under way
    /// or its presenter wants an end notification, marked removed and deleted
    /// after that.
    public func remove(_ id: String) throws {
        try changingMessage(id) { message, transaction in
            try remove(message, in: transaction)
        }
    }

    /// Removes every message of a scope; returns how many were removed.
    @discardableResult
    public func remove(scope: String) throws -> Int {
        try MessageDraft.check(scope, "scope_id", max: MessageDraft.maxScopeLength)
        try store.checkUsable()
        return try store.database.write { transaction in
            var removed = 0
            for id in try MessageTable.ids(where: "scope = ? AND removed = 0", [.text(scope)], in: transaction) {
                guard let message = try MessageTable.read(id, in: transaction) else { continue }
                try remove(message, in: transaction)
                removed += 1
            }
            return removed
        }
    }

    /// Runs `change` in a write transaction on a message that is there and not
    /// removed, after the checks every change of one message makes.
    private func changingMessage(_ id: String, _ change: (Message, StoreTransaction) throws -> Void) throws {
        try MessageQueue.validate(messageID: id)
        try store.checkUsable()
        try store.database.write { transaction in
            guard let message = try MessageTable.read(id, in: transaction), !message.removed else {
                throw OutliveError.notFound("no message \(id)")
            }
            try change(message, transaction)
        }
    }

    func remove(_ message: Message, in transaction: StoreTransaction) throws {
        let presenting = message.lockingRun.map { store.isAlive(run: $0) } ?? false
        let responding = message.respondingRun.map { store.isAlive(run: $0) } ?? false
        if message.requiresEndNotification || presenting || responding {
            let byID = MessageTable.row(message.id, transaction.engine)
            try transaction.execute("UPDATE outlive_messages SET removed = 1 WHERE \(byID.condition)", byID.arguments)
            try transaction.recordChange(topic: MessageQueue.topic, key: message.id)
        } else {
            try MessageTable.delete(message.id, in: transaction)
        }
    }

    /// A stored message (removed ones included, until they are deleted).
    public func message(_ id: String) throws -> Message {
        try MessageQueue.validate(messageID: id)
        try store.checkUsable()
        guard let message = try store.database.read({ try MessageTable.read(id, in: $0) }) else {
            throw OutliveError.notFound("no message \(id)")
        }
        return message
    }

    /// Ids of stored messages in the order they were posted, optionally only
    /// those of a scope and/or category.
    public func list(scope: String? = nil, category: String? = nil) throws -> [String] {
        if let scope { try MessageDraft.check(scope, "scope_id", max: MessageDraft.maxScopeLength) }
        if let category { try MessageDraft.check(category, "category", max: MessageDraft.maxCategoryLength) }
        try store.checkUsable()
        var conditions: [String] = []
        var arguments: [SQLValue] = []
        if let scope { conditions.append("scope = ?"); arguments.append(.text(scope)) }
        if let category { conditions.append("category = ?"); arguments.append(.text(category)) }
        let condition = conditions.isEmpty ? "1 = 1" : conditions.joined(separator: " AND ")
        return try store.database.read { try MessageTable.ids(where: condition, arguments, in: $0) }
    }

    /// Stored messages, of one category or all.
    public func count(category: String? = nil) throws -> Int64 {
        if let category { try MessageDraft.check(category, "category", max: MessageDraft.maxCategoryLength) }
        try store.checkUsable()
        return try store.database.read { try MessageCounts.count(category: category, in: $0) }
    }

    /// The most messages of one category that posts through this handle allow.
    public func setCategoryLimit(_ limit: Int64) throws {
        guard limit >= 1 else { throw OutliveError.invalidArgument("limit must be at least 1, got \(limit)") }
        lock.withLock { categoryLimit = limit }
    }

    // MARK: - Callbacks of this run

    public func addPresenter(id: String, _ callbacks: PresenterCallbacks) throws {
        try MessageQueue.validate(callbackID: id, "presenter_id")
        try store.checkUsable()
        if lock.withLock({ presenters.contains { $0.id == id } }) {
            throw OutliveError.state("a presenter with id \"\(id)\" is registered on this store handle already")
        }
        let run = store.runID, name = store.processName
        try store.database.write { transaction in
            try transaction.execute("INSERT INTO outlive_message_presenters(run_id, presenter_id, process) VALUES (?, ?, ?) ON CONFLICT(run_id, presenter_id) DO NOTHING",
                                    [.text(run), .text(id), .text(name)])
        }
        try lock.withLock {
            if presenters.contains(where: { $0.id == id }) {
                throw OutliveError.state("a presenter with id \"\(id)\" is registered on this store handle already")
            }
            presenters.append(RegisteredPresenter(id: id, callbacks: callbacks))
        }
        store.loop.post { [weak self] in self?.scan([.waiting]) }
    }

    /// Removes a presenter. A presentation it has under way can still be
    /// finished; its end notification is no longer delivered.
    public func removePresenter(id: String) throws {
        try MessageQueue.validate(callbackID: id, "presenter_id")
        try store.checkUsable()
        try lock.withLock {
            guard let index = presenters.firstIndex(where: { $0.id == id }) else {
                throw OutliveError.notFound("no presenter with id \"\(id)\" is registered on this store handle")
            }
            presenters.remove(at: index)
        }
        let run = store.runID
        try store.database.write { transaction in
            try transaction.execute("DELETE FROM outlive_message_presenters WHERE run_id = ? AND presenter_id = ?", [.text(run), .text(id)])
        }
    }

    /// Offers the messages a presenter declined (or did not present) to it again.
    public func reoffer(presenterID id: String) throws {
        try MessageQueue.validate(callbackID: id, "presenter_id")
        try store.checkUsable()
        guard lock.withLock({ presenters.contains { $0.id == id } }) else {
            throw OutliveError.notFound("no presenter with id \"\(id)\" is registered on this store handle")
        }
        let entry = processEntryPrefix + id
        try store.database.write { transaction in
            var changes: [(String, String)] = []
            try transaction.query("SELECT id, processed_by FROM outlive_messages WHERE \(MessageTable.Stage.waiting.condition) ORDER BY seq") { row in
                let processed = (row.text(1) ?? "").split(separator: "\n").map(String.init)
                guard processed.contains(entry) else { return }
                changes.append((row.text(0) ?? "", processed.filter { $0 != entry }.joined(separator: "\n")))
            }
            for (message, processed) in changes {
                let byID = MessageTable.row(message, transaction.engine)
                try transaction.execute("UPDATE outlive_messages SET processed_by = ? WHERE \(byID.condition)", [.text(processed)] + byID.arguments)
            }
        }
        store.loop.post { [weak self] in self?.scan([.waiting]) }
    }

    public func addResponseHandler(id: String, _ handler: @escaping ResponseHandler) throws {
        try MessageQueue.validate(callbackID: id, "id")
        try store.checkUsable()
        try lock.withLock {
            if responseHandlers.contains(where: { $0.id == id }) {
                throw OutliveError.state("a response handler with id \"\(id)\" is registered on this store handle already")
            }
            responseHandlers.append((id, handler))
            declinedResponses.removeAll()
        }
        store.loop.post { [weak self] in self?.scan([.answered]) }
    }

    public func removeResponseHandler(id: String) throws {
        try MessageQueue.validate(callbackID: id, "id")
        try lock.withLock {
            guard let index = responseHandlers.firstIndex(where: { $0.id == id }) else {
                throw OutliveError.notFound("no response handler with id \"\(id)\" is registered on this store handle")
            }
            responseHandlers.remove(at: index)
        }
    }

    public func addAutoResolver(id: String, _ resolver: @escaping AutoResolver) throws {
        try MessageQueue.validate(callbackID: id, "id")
        try store.checkUsable()
        try lock.withLock {
            if autoResolvers.contains(where: { $0.id == id }) {
                throw OutliveError.state("an auto-resolver with id \"\(id)\" is registered on this store handle already")
            }
            autoResolvers.append((id, resolver))
        }
        store.loop.post { [weak self] in self?.scan([.unanswered]) }
    }

    public func removeAutoResolver(id: String) throws {
        try MessageQueue.validate(callbackID: id, "id")
        try lock.withLock {
            guard let index = autoResolvers.firstIndex(where: { $0.id == id }) else {
                throw OutliveError.notFound("no auto-resolver with id \"\(id)\" is registered on this store handle")
            }
            autoResolvers.remove(at: index)
        }
    }
}
