/// The message flow of the ownCloud SDK's OCMessageQueue (presenters, response
/// handlers, auto-resolvers) across processes, run on the loop thread of each
/// process for the messages that changed:
///
/// - removed: the presenting run's presenter gets `end` if it asked for it,
///   then the record is deleted (by any process when no end is owed);
/// - answered: this run's response handlers, then the message's durable
///   response handler if it resolves here; either makes it removed. One run at
///   a time does this (`responding_run`);
/// - unanswered: auto-resolvers first; then, if not presented and not locked
///   by a live run, this run's presenters that have not had it yet are asked
///   for a priority. Those that say 0 are recorded in `processed_by`; the
///   highest (first added on a tie) is recorded too, the message is locked by
///   this run (the presentation lock, a `RunClaim` on `locking_run`) and
///   presented. Its presentation's outcome is recorded and the lock released
///   when the token is finished — only while this run still holds the lock.
///
/// A run that ends (closed, or dead — seen at once through its liveness lock)
/// loses its locks and claims inside the transaction that removes it (the
/// claims' end-of-run hook), and the end notifications it owed pass to a live
/// run of the same process name that has a presenter of the same id, or the
/// record simply goes.
extension MessageQueue {
    func changed(_ batch: ChangeBatch) {
        if batch.resync {
            let (hasPresenters, hasResolvers) = lock.withLock { (!presenters.isEmpty, !autoResolvers.isEmpty) }
            var stages: [MessageTable.Stage] = [.answered, .removed]
            if hasResolvers { stages.append(.unanswered) } else if hasPresenters { stages.append(.waiting) }
            scan(stages)
        }
        var seen = Set<String>()
        for id in batch.keys where seen.insert(id).inserted { examine(id) }
    }

    /// Looks at every message in the given stages, through the state index.
    func scan(_ stages: [MessageTable.Stage]) {
        guard (try? store.checkUsable()) != nil else { return }
        var ids: [String] = []
        do {
            try store.database.read { transaction in
                for stage in stages { ids += try MessageTable.ids(where: stage.condition, [], in: transaction) }
            }
        } catch {
            Log.emit(.warning, "messages: scan failed: \(error)")
            return
        }
        var seen = Set<String>()
        for id in ids where seen.insert(id).inserted { examine(id) }
    }

    func examine(_ id: String) {
        guard (try? store.checkUsable()) != nil else { return }
        let found: Message?
        do {
            found = try store.database.read { try MessageTable.read(id, in: $0) }
        } catch {
            Log.emit(.warning, "messages: cannot read message \(id): \(error)")
            return
        }
        guard let message = found else {
            lock.withLock { _ = declinedResponses.remove(id) }
            return
        }
        do {
            if message.removed {
                try conclude(message)
            } else if message.handled {
                try answer(message)
            } else if try !autoResolve(message), !message.presented {
                try offer(message)
            }
        } catch {
            Log.emit(.warning, "messages: message \(id): \(error)")
        }
    }

    // MARK: - Unanswered

    /// Asks this run's auto-resolvers; true when one answered or resolved it.
    private func autoResolve(_ message: Message) throws -> Bool {
        let resolvers = lock.withLock { autoResolvers }
        for (resolverID, resolver) in resolvers {
            switch resolver(message) {
            case .unresolved:
                continue
            case .answered(let choice):
                guard message.hasChoice(choice) else {
                    Log.emit(.warning, "messages: auto-resolver \(resolverID) answered message \(message.id) with \"\(choice)\", which it does not offer")
                    continue
                }
                try store.database.write { transaction in
                    let byID = MessageTable.row(message.id, transaction.engine)
                    try transaction.execute("UPDATE outlive_messages SET handled = 1, choice = ? WHERE \(byID.condition) AND handled = 0 AND removed = 0",
                                            [.text(choice)] + byID.arguments)
                    if transaction.changedRows == 1 { try transaction.recordChange(topic: MessageQueue.topic, key: message.id) }
                }
                return true
            case .resolved:
                try store.database.write { transaction in
                    guard let current = try MessageTable.read(message.id, in: transaction), !current.handled, !current.removed else { return }
                    try remove(current, in: transaction)
                }
                return true
            }
        }
        return false
    }

    private func lockedByOther(_ message: Message) -> Bool {
        presentationLock.isHeldByAnotherLiveRun(message.lockingRun)
    }

    private func offer(_ message: Message) throws {
        if lock.withLock({ presenting.contains(message.id) }) || lockedByOther(message) { return }
        let prefix = processEntryPrefix
        let candidates = lock.withLock { presenters }.filter { !message.processedBy.contains(prefix + $0.id) }
        guard !candidates.isEmpty else { return }
        var winner: RegisteredPresenter?
        var best: Int32 = 0
        var declined: [String] = []
        for presenter in candidates {
            let priority = presenter.callbacks.priority(message)
            if priority <= 0 {
                declined.append(prefix + presenter.id)
            } else if winner == nil || priority > best {
                winner = presenter
                best = priority
            }
        }
        let name = store.processName
        // Not synced (`unsyncedWrite`): a lock that a power loss takes back is
        // one whose run died while presenting, and the message is offered
        // again; so is a decline it records. The answer's commit is synced.
        let locked = try store.database.unsyncedWrite { transaction -> Bool in
            guard let current = try MessageTable.read(message.id, in: transaction),
                  !current.presented, !current.handled, !current.removed, !lockedByOther(current) else { return false }
            var processed = current.processedBy
            for entry in declined where !processed.contains(entry) { processed.append(entry) }
            guard let winner else {
                let byID = MessageTable.row(message.id, transaction.engine)
                try transaction.execute("UPDATE outlive_messages SET processed_by = ? WHERE \(byID.condition)",
                                        [.text(processed.joined(separator: "\n"))] + byID.arguments)
                return false
            }
            processed.append(prefix + winner.id)
            return try presentationLock.take(.text(message.id), setting: [("processed_by", .text(processed.joined(separator: "\n"))),
                                                                          ("locking_process", .text(name))],
                                             where: "presented = 0 AND handled = 0 AND removed = 0", in: transaction)
        }
        guard locked, let winner else { return }
        lock.withLock { _ = presenting.insert(message.id) }
        // The loop weakly: a finished presentation's completion waits in the
        // loop's queue holding the presentation, so a strong loop here would
        // make a cycle that outlives a store closed before its next dispatch.
        let presentation = Presentation(message: message, presenterID: winner.id) { [weak self, weak loop = store.loop] presentation, outcome in
            loop?.post { self?.complete(presentation, outcome) }
        }
        winner.callbacks.present(message, presentation)
    }

    /// Records a finished presentation and releases the lock (loop thread).
    func complete(_ presentation: Presentation, _ outcome: PresentationOutcome) {
        let id = presentation.message.id
        lock.withLock { _ = presenting.remove(id) }
        guard (try? store.checkUsable()) != nil else { return }
        let run = store.runID
        let key: SQLValue = .text(id)
        do {
            let answered = try store.database.write { transaction -> (Message, Responders)? in
                guard try presentationLock.holds(key, in: transaction),
                      let current = try MessageTable.read(id, in: transaction) else { return nil }
                var handled = current.handled, choice = current.choice, removed = current.removed
                if let answer = outcome.choice, !handled {
                    handled = true
                    choice = answer
                }
                if outcome.presented && current.autoRemove && current.choices.isEmpty && !handled { removed = true }
                var values: [(column: String, value: SQLValue)] = [
                    ("handled", .integer(handled ? 1 : 0)), ("choice", choice.map { .text($0) } ?? .null), ("removed", .integer(removed ? 1 : 0)),
                ]
                if outcome.presented {
                    values += [("presented", .integer(1)), ("presenter", .text(presentation.presenterID)), ("presenter_run", .text(run)),
                               ("requires_end", .integer(outcome.requiresEndNotification ? 1 : 0))]
                }
                guard try presentationLock.release(key, setting: values, in: transaction) else { return nil }
                try transaction.recordChange(topic: MessageQueue.topic, key: id)
                // Answered here: when this run responds to it, its response
                // claim is taken in this commit rather than in one of its own
                // (as `answer` would next). A crash after it leaves the claim
                // to a dead run, which the next run to look takes over, as
                // after `answer`'s claim.
                guard outcome.choice != nil, handled, !removed, current.respondingRun == nil,
                      let answered = try MessageTable.read(id, in: transaction),
                      let responders = responders(for: answered),
                      try responseClaim.take(key, where: "handled = 1 AND removed = 0", in: transaction) else { return nil }
                return (answered, responders)
            }
            if let (message, responders) = answered { try respond(message, responders) }
        } catch {
            Log.emit(.warning, "messages: cannot record the presentation of message \(id): \(error)")
        }
    }

    // MARK: - Answered

    /// What this run would answer a message with: its response handlers and
    /// the message's durable one when it resolves here; nil when neither.
    private struct Responders {
        var handlers: [(id: String, handler: ResponseHandler)]
        var durable: Handler?
    }

    private func responders(for message: Message) -> Responders? {
        if lock.withLock({ declinedResponses.contains(message.id) }) { return nil }
        let handlers = lock.withLock { responseHandlers }
        var durable: Handler?
        if message.responseHandlerBytes != nil {
            do {
                durable = try message.responseHandler()
            } catch {
                Log.emit(.error, "messages: the response handler of message \(message.id) does not decode: \(error)")
            }
        }
        if let handler = durable, !HandlerRegistry.shared.canResolve(handler.name) { durable = nil }
        guard !handlers.isEmpty || durable != nil else { return nil }
        return Responders(handlers: handlers, durable: durable)
    }

    private func answer(_ message: Message) throws {
        guard let responders = responders(for: message) else { return }
        // Not while this run or another live run answers it.
        if message.respondingRun == store.runID || responseClaim.isHeldByAnotherLiveRun(message.respondingRun) { return }
        let key: SQLValue = .text(message.id)
        // Not synced: a claim that a power loss takes back is one whose run
        // died inside the responders, which run again (at-least-once).
        let claimed = try store.database.unsyncedWrite { transaction -> Bool in
            try responseClaim.take(key, where: "handled = 1 AND removed = 0", in: transaction)
        }
        guard claimed else { return }
        try respond(message, responders)
    }

    /// Calls the responders of a message whose response claim this run took
    /// (committed), then releases the claim.
    private func respond(_ message: Message, _ responders: Responders) throws {
        let key: SQLValue = .text(message.id)
        let handlers = responders.handlers
        let durable = responders.durable, runsDurable = durable != nil
        var done = false
        for (_, handler) in handlers where handler(message) {
            done = true
            break
        }
        if runsDurable, let durable {
            var arguments = Arguments([("message_id", .id(IDValue(string: message.id))),
                                       ("choice", .id(IDValue(string: message.choice ?? "")))])
            if let scope = message.scope { arguments.set("scope", .id(IDValue(string: scope))) }
            do {
                try HandlerRegistry.shared.call(storedWork: durable, with: arguments)
                done = true
            } catch let error as OutliveError where error.code == .unresolved {
                Log.emit(.info, "messages: the response handler of message \(message.id) does not resolve here: \(error)")
            } catch {
                // It cannot take these arguments in any process: waiting would keep the message forever.
                Log.emit(.error, "messages: the response handler \(durable.name) of message \(message.id) failed: \(error); the message is removed")
                done = true
            }
        }
        if !done { lock.withLock { _ = declinedResponses.insert(message.id) } }
        try store.database.write { transaction in
            let values: [(column: String, value: SQLValue)] = done ? [("removed", .integer(1))] : []
            guard try responseClaim.release(key, setting: values, in: transaction) else { return }
            // Answered and owing nothing more: deleted in this commit rather than
            // marked removed for `conclude` to delete in another — one commit and
            // one wake-up of every watching process fewer per message. Kept
            // removed (concluded later, as before) while a live run presents it
            // or its presenter is owed an end notification.
            if done, let current = try MessageTable.read(message.id, in: transaction), current.removed,
               !current.requiresEndNotification, !(current.lockingRun.map { store.isAlive(run: $0) } ?? false) {
                _ = try MessageTable.delete(message.id, in: transaction)
            } else {
                try transaction.recordChange(topic: MessageQueue.topic, key: message.id)
            }
        }
    }

    // MARK: - Removed

    private func conclude(_ message: Message) throws {
        if lock.withLock({ presenting.contains(message.id) }) || lockedByOther(message) { return }
        if let holder = message.respondingRun, holder != store.runID, store.isAlive(run: holder) { return }
        if message.requiresEndNotification, let run = message.presenterRun {
            // Only the presenting run delivers the end; a dead run's end-of-run
            // hook hands it on or clears it.
            guard run == store.runID else { return }
            let presenter = lock.withLock { presenters.first { $0.id == message.presenter } }
            presenter?.callbacks.end?(message)
        }
        try store.database.write { transaction in
            guard let current = try MessageTable.read(message.id, in: transaction), current.removed else { return }
            try MessageTable.delete(message.id, in: transaction)
        }
    }

    // MARK: - Ended runs

    /// The presentation locks and response claims of an ended run: each
    /// message is announced, so that a live run takes it up (the claims
    /// themselves are freed by `RunClaim`).
    static func claimsEnded(_ transaction: StoreTransaction, _ run: EndedRun, _ messages: [SQLValue]) throws {
        for case .text(let id) in messages { try transaction.recordChange(topic: MessageQueue.topic, key: id) }
    }

    /// Inside the transaction that removes `run`: the end notifications it
    /// owed pass on or are dropped, its presenters are unregistered.
    func runEnded(_ run: EndedRun, in transaction: StoreTransaction) throws {
        let dead: [SQLValue] = [.text(run.runID)]
        var owed: [(id: String, presenter: String, removed: Bool)] = []
        try transaction.query("SELECT id, presenter, removed FROM outlive_messages WHERE presenter_run = ? AND requires_end = 1 ORDER BY seq", dead) { row in
            owed.append((row.text(0) ?? "", row.text(1) ?? "", row.integer(2) != 0))
        }
        for entry in owed {
            var heirs: [String] = []
            try transaction.query("SELECT run_id FROM outlive_message_presenters WHERE process = ? AND presenter_id = ? AND run_id <> ?",
                                  [.text(run.processName), .text(entry.presenter), .text(run.runID)]) { row in
                if let heir = row.text(0) { heirs.append(heir) }
            }
            let byID = MessageTable.row(entry.id, transaction.engine)
            if let heir = heirs.first(where: { store.isAlive(run: $0) }) {
                try transaction.execute("UPDATE outlive_messages SET presenter_run = ? WHERE \(byID.condition)", [.text(heir)] + byID.arguments)
                try transaction.recordChange(topic: MessageQueue.topic, key: entry.id)
            } else if entry.removed {
                try MessageTable.delete(entry.id, in: transaction)
            } else {
                try transaction.execute("UPDATE outlive_messages SET requires_end = 0, presenter_run = NULL WHERE \(byID.condition)", byID.arguments)
            }
        }
        try transaction.execute("DELETE FROM outlive_message_presenters WHERE run_id = ?", dead)
    }
}
