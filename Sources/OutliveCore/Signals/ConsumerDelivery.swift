/// Delivery of signal versions to consumers, on the store's loop thread.
///
/// A process is woken by the change feed (topic "signal", key = signal id) and
/// reads only the signals named there; it looks at the consumers it may
/// deliver to: its own run's `this_run` consumers, `process` consumers of its
/// process name, and `any_process` consumers, each only if its handler resolves
/// here. A consumer whose handler does not resolve is left for a process that
/// can resolve it (it is looked at again on the next post of its signal and
/// when a process opens the store).
///
/// `this_run` consumers can only be delivered by their own run, one callback at
/// a time on its loop: the handler is called, then the delivered version is
/// recorded. `process` and `any_process` consumers may be wanted by several
/// live runs at once, so delivery is claim-then-deliver: a write transaction
/// takes the consumer's delivery claim (`RunClaim` on `claim_run`: only one run
/// can hold it), the handler is called, and a second transaction records the
/// delivered version and releases the claim — only while this run still holds
/// it, so a run that others declared ended records nothing over the run that
/// took over. The consumers of one signal due in one
/// round share these transactions: one claim and one record per signal, not
/// per consumer, so a post to a signal with 100 consumers costs two commits. A run that dies between the two — inside the
/// handler — has its claim released by the end-of-run hook, and another process
/// delivers the same version again: at-least-once across a crash of the
/// deliverer, exactly once otherwise. This is the choice of the task queue too:
/// a durable callback that is lost by a crash is the failure Outlive exists to
/// avoid; handlers get `signal_id` and `version` to recognise a repeat.
///
/// A handler call that fails for any reason other than being unresolved
/// (missing argument, type mismatch, invalidated) counts as delivered: the same
/// arguments would fail the same way again.
extension Signals {
    /// One consumer that this run may deliver a version to.
    struct PendingConsumer {
        let consumerID: String
        let signalID: String
        let handler: [UInt8]
        let handlerName: String
        let delivery: SignalDelivery
        let lifetime: SignalLifetime
        /// When it was registered (`created`); +infinity when the stored time is damaged.
        let created: Double
    }

    /// The state of a signal at the moment a delivery was decided.
    struct PostedVersion {
        let version: Int64
        let payload: [UInt8]
        let terminated: Bool
    }

    func changed(_ batch: ChangeBatch) {
        if batch.resync {
            deliverWaiting()
            return
        }
        var seen = Set<String>()
        deliver(batch.keys.filter { seen.insert($0).inserted })
    }

    /// What is due for a batch, read in the feed's transaction (between a post
    /// and its handler: one read transaction, not two); delivered after it.
    func read(_ batch: ChangeBatch, in transaction: StoreTransaction) throws -> (() -> Void)? {
        if batch.resync { return { [weak self] in self?.deliverWaiting() } }
        var seen = Set<String>()
        let signals = batch.keys.filter { seen.insert($0).inserted }
        let epoch = deliveryEpoch
        let due = try dueConsumers(of: signals, in: transaction)
        guard !due.isEmpty else { return nil }
        return { [weak self] in self?.deliverDue(due, epochWhenRead: epoch) }
    }

    /// Every signal with a consumer this run may deliver now: at open, and when
    /// feed entries were lost. Costs in proportion to the consumers of this
    /// run, this process name and `any_process`.
    func deliverWaiting() {
        guard (try? store.checkUsable()) != nil else { return }
        var signals: [String] = []
        try? store.database.read { transaction in
            try transaction.query("""
                SELECT DISTINCT c.signal_id FROM outlive_signal_consumers c
                JOIN outlive_signals s ON s.signal_id = c.signal_id
                WHERE c.last_delivered < s.version AND c.claim_run IS NULL
                  AND ((c.lifetime = ? AND c.run_id = ?) OR (c.lifetime = ? AND c.process = ?) OR c.lifetime = ?)
                """, Signals.deliverableBy(store)) { row in
                if let id = row.text(0) { signals.append(id) }
            }
        }
        deliver(signals)
    }

    static func deliverableBy(_ store: Store) -> [SQLValue] {
        [.integer(Int64(SignalLifetime.thisRun.rawValue)), .text(store.runID),
         .integer(Int64(SignalLifetime.process.rawValue)), .text(store.processName),
         .integer(Int64(SignalLifetime.anyProcess.rawValue))]
    }

    /// Delivers what is due for `signals`, again for a signal whose version
    /// moved on while its handlers ran (a version posted meanwhile, e.g. by a
    /// handler, is delivered too). That is seen in the transaction recording
    /// the delivery, not by a read of its own; a consumer added or released
    /// meanwhile is announced on the feed and wakes this loop again.
    func deliver(_ signals: [String]) {
        var remaining = signals
        while !remaining.isEmpty {
            guard (try? store.checkUsable()) != nil else { return }
            let epoch = deliveryEpoch
            guard let due = try? store.database.read({ try dueConsumers(of: remaining, in: $0) }) else { return }
            remaining = deliverRound(due, epochWhenRead: epoch)
        }
    }

    /// Delivers what `dueConsumers` found, then what became due meanwhile.
    private func deliverDue(_ due: [DueSignal], epochWhenRead epoch: UInt64) {
        guard (try? store.checkUsable()) != nil else { return }
        deliver(deliverRound(due, epochWhenRead: epoch))
    }

    /// Delivers what `dueConsumers` found; returns the signals whose version
    /// moved on while their handlers ran.
    private func deliverRound(_ due: [DueSignal], epochWhenRead epoch: UInt64) -> [String] {
        due.filter { deliver($0.posted, to: $0.consumers, epochWhenRead: epoch) }.map(\.signal)
    }

    /// A signal with something due: the version posted last and the consumers
    /// this run may deliver it to, in registration order.
    typealias DueSignal = (signal: String, posted: PostedVersion, consumers: [PendingConsumer])

    /// Per signal with something due, its `DueSignal`.
    private func dueConsumers(of signals: [String], in transaction: StoreTransaction) throws -> [DueSignal] {
        let registry = HandlerRegistry.shared
        var found: [DueSignal] = []
        for signal in signals {
            var posted: PostedVersion?
            var consumers: [PendingConsumer] = []
            // The signal's row and its due consumers in one statement: on
            // PostgreSQL one round trip of a dispatch where the row's own
            // statement took two (SQLite runs about as many instructions
            // either way: the pages read are the cost there). A signal with no
            // consumer due has no row, and nothing is due.
            // In registration order, sorted here rather than by the query: a
            // signal has one consumer or a few, and SQLite's sorter was a
            // third of the query's instructions (callgrind: a consumer's
            // dispatch of one post, 8 % fewer without it).
            try transaction.query(Self.dueConsumersSQL, [.text(signal)] + Signals.deliverableBy(store)) { row in
                // The signal's columns strictly (a damaged version fails the
                // read, as it fails every reader of the signal), once: each
                // row repeats them.
                let version: PostedVersion
                if let read = posted {
                    version = read
                } else {
                    version = PostedVersion(version: row.integer(0), payload: row.blob(1) ?? [], terminated: row.integer(2) != 0)
                    posted = version
                }
                // The consumer's leniently: a strict read of a damaged row
                // would fail the whole query, and the signal's other
                // consumers with it.
                let name = row.textIfValid(5)
                if let name, !registry.canResolve(name) { return }  // for a process that resolves it
                guard let id = row.textIfValid(3), let name,
                      let delivery = row.integerIfValid(6).flatMap({ Int32(exactly: $0) }).flatMap(SignalDelivery.init(rawValue:)),
                      let lifetime = row.integerIfValid(7).flatMap({ Int32(exactly: $0) }).flatMap(SignalLifetime.init(rawValue:)) else {
                    reportDamagedConsumer(row.textIfValid(3), of: signal)
                    return
                }
                if lifetime == .thisRun, let delivered = unrecorded.version(of: id), delivered >= version.version { return }
                // A damaged time sorts last; it does not stop the delivery (it only orders).
                // A damaged handler is logged as undecodable by the delivery, and left stored.
                consumers.append(PendingConsumer(consumerID: id, signalID: signal, handler: row.blobIfValid(4) ?? [], handlerName: name,
                                                 delivery: delivery, lifetime: lifetime, created: row.doubleIfValid(8) ?? .infinity))
            }
            guard let posted, !consumers.isEmpty else { continue }
            if consumers.count > 1 { consumers.sort(by: Self.registrationOrder) }
            found.append((signal, posted, consumers))
        }
        return found
    }

    /// A posted signal (version above 0) with the consumers this run may
    /// deliver it to that have not had it; parameters: the signal, then
    /// `deliverableBy`.
    private static let dueConsumersSQL = """
        SELECT s.version, s.payload, s.terminated,
            c.consumer_id, c.handler, c.handler_name, c.delivery, c.lifetime, c.created
        FROM outlive_signals s JOIN outlive_signal_consumers c ON c.signal_id = s.signal_id
        WHERE s.signal_id = ? AND s.version > 0 AND c.last_delivered < s.version AND c.claim_run IS NULL
          AND ((c.lifetime = ? AND c.run_id = ?) OR (c.lifetime = ? AND c.process = ?) OR c.lifetime = ?)
        """

    /// Logs, once per consumer and handle, a consumer row whose id, handler
    /// name, delivery or lifetime is not a value Outlive stores: no process
    /// can deliver it; it stays stored until removed.
    private func reportDamagedConsumer(_ id: String?, of signal: String) {
        guard damageReported.insert(signal + "/" + (id ?? "")).inserted else { return }
        Log.emit(.error, "signal \(signal): consumer \(id ?? "(its id damaged)") is damaged in the store (its id, handler name, delivery or lifetime); skipped, the others delivered")
    }

    /// `ORDER BY created, consumer_id`, as SQLite and PostgreSQL (COLLATE
    /// "C") order them: ids by their bytes. (Times are never NaN here.)
    private static func registrationOrder(_ a: PendingConsumer, _ b: PendingConsumer) -> Bool {
        if a.created != b.created { return a.created < b.created }
        return a.consumerID.utf8.lexicographicallyPrecedes(b.consumerID.utf8)
    }

    static func postedVersion(of signal: String, in transaction: StoreTransaction) throws -> PostedVersion? {
        var posted: PostedVersion?
        try transaction.query("SELECT version, payload, terminated FROM outlive_signals WHERE signal_id = ?", [.text(signal)]) { row in
            posted = PostedVersion(version: row.integer(0), payload: row.blob(1) ?? [], terminated: row.integer(2) != 0)
        }
        guard let posted, posted.version > 0 else { return nil }
        return posted
    }

    /// Delivers the due version to the consumers of one signal: claims the
    /// shared (process, any-process) ones in one transaction, calls each
    /// handler, and records what was delivered in one transaction. True when
    /// something was delivered and recorded.
    private func deliver(_ candidate: PostedVersion, to consumers: [PendingConsumer], epochWhenRead: UInt64) -> Bool {
        guard let signal = consumers.first?.signalID else { return false }
        var handlers: [String: Handler] = [:]
        for consumer in consumers {
            do {
                handlers[consumer.consumerID] = try Handler(serialized: consumer.handler)
            } catch {
                Log.emit(.error, "signal \(signal): the handler of consumer \(consumer.consumerID) does not decode (\(error)); left stored")
            }
        }
        let shared = consumers.filter { $0.lifetime != .thisRun && handlers[$0.consumerID] != nil }
        var claimedVersion: PostedVersion?
        var claimed = Set<String>()
        if !shared.isEmpty, let (posted, ids) = try? claim(shared, of: signal) {
            claimedVersion = posted
            claimed = ids
        }
        var delivered: [(PendingConsumer, PostedVersion)] = []
        var unresolved: [PendingConsumer] = []
        var payloads: [Int64: Arguments?] = [:]
        for consumer in consumers {
            guard let handler = handlers[consumer.consumerID] else { continue }
            let posted: PostedVersion
            if consumer.lifetime == .thisRun {
                posted = candidate
            } else {
                guard claimed.contains(consumer.consumerID), let claimedVersion else { continue }
                posted = claimedVersion
            }
            // An earlier handler of this round, or a callback of this
            // dispatch, may have removed it. Until a handler ran or a
            // consumer was removed, the read that found it due still holds (for this
            // process; a removal by another process meanwhile is a delivery
            // already under way, which completes), and a read per delivery
            // would cost a transaction between the post and its handler.
            if deliveryEpoch != epochWhenRead {
                guard (try? isDue(consumer, posted)) == true else { continue }
            }
            if payloads[posted.version] == nil {
                do {
                    payloads[posted.version] = .some(try Arguments(serialized: posted.payload))
                } catch {
                    Log.emit(.error, "signal \(signal) version \(posted.version): the payload does not decode (\(error)); counted as delivered")
                    payloads[posted.version] = .some(nil)
                }
            }
            guard case .some(.some(let payload)) = payloads[posted.version] else {
                delivered.append((consumer, posted))
                continue
            }
            var arguments = payload
            arguments.set("signal_id", .id(IDValue(string: signal)))
            arguments.set("version", .uinteger(UInt64(clamping: posted.version)))
            arguments.set("terminated", .bool(posted.terminated))
            handlersCalled &+= 1
            do {
                try HandlerRegistry.shared.call(storedWork: handler, with: arguments)
            } catch let error as OutliveError where error.code == .unresolved {
                if consumer.lifetime != .thisRun { unresolved.append(consumer) }
                continue
            } catch {
                Log.emit(.warning, "signal \(signal) version \(posted.version): handler \(handler.name) of consumer \(consumer.consumerID) failed: \(error); counted as delivered")
            }
            delivered.append((consumer, posted))
        }
        // Claimed but neither delivered nor unresolved (removed meanwhile): nothing to release.
        guard !delivered.isEmpty || !unresolved.isEmpty else { return false }
        do {
            let movedOn = try record(delivered, releasing: unresolved, of: signal)
            return !delivered.isEmpty && movedOn
        } catch {
            Log.emit(.error, "signal \(signal): \(delivered.count) deliveries made but not recorded: \(error)")
            return false
        }
    }

    /// Marks the consumers as being delivered by this run, in one transaction;
    /// returns the version to deliver and the consumers this run got (not
    /// those another run holds, removed, or with nothing new).
    /// Not synced (`unsyncedWrite`): a claim that a power loss takes back is
    /// one whose run died before the record, and the version is delivered
    /// again, as after a crash inside the handler; a post → handler at FULL
    /// waits for one sync (the post's), not two.
    private func claim(_ consumers: [PendingConsumer], of signal: String) throws -> (PostedVersion, Set<String>)? {
        try store.database.unsyncedWrite { transaction -> (PostedVersion, Set<String>)? in
            guard let posted = try Signals.postedVersion(of: signal, in: transaction) else { return nil }
            var claimed = Set<String>()
            for consumer in consumers {
                if try deliveryClaim.take(.text(consumer.consumerID), where: "last_delivered < ?", [.integer(posted.version)], in: transaction) {
                    claimed.insert(consumer.consumerID)
                }
            }
            return claimed.isEmpty ? nil : (posted, claimed)
        }
    }

    private func isDue(_ consumer: PendingConsumer, _ posted: PostedVersion) throws -> Bool {
        if consumer.lifetime == .thisRun, let delivered = unrecorded.version(of: consumer.consumerID), delivered >= posted.version {
            return false
        }
        return try store.database.read { transaction in
            try transaction.integer("SELECT count(*) FROM outlive_signal_consumers WHERE consumer_id = ? AND last_delivered < ?",
                                    [.text(consumer.consumerID), .integer(posted.version)]) == 1
        }
    }

    /// Records the delivered versions and releases the claims of consumers
    /// whose handler did not resolve after all, in one transaction. A `once`
    /// consumer, or one that received a terminating version, goes (and the
    /// record with its last consumer). True when the signal now has a newer
    /// version than the newest delivered here.
    private func record(_ delivered: [(PendingConsumer, PostedVersion)], releasing unresolved: [PendingConsumer],
                        of signal: String) throws -> Bool {
        // A this-run consumer that stays is remembered by this run and
        // recorded later (see UnrecordedDeliveries); a version posted
        // meanwhile is announced on the feed and wakes this loop again.
        var stored: [(PendingConsumer, PostedVersion)] = []
        for (consumer, posted) in delivered {
            if consumer.lifetime == .thisRun && consumer.delivery == .untilTerminated && !posted.terminated {
                if unrecorded.note(consumer.consumerID, version: posted.version) { scheduleRecording() }
            } else {
                stored.append((consumer, posted))
            }
        }
        guard !stored.isEmpty || !unresolved.isEmpty else { return false }
        return try store.database.write { transaction -> Bool in
            for consumer in unresolved {
                try deliveryClaim.release(.text(consumer.consumerID), in: transaction)
            }
            var removed = false
            for (consumer, posted) in stored {
                let key: SQLValue = .text(consumer.consumerID)
                if consumer.lifetime == .thisRun {
                    // Only its own run delivers it: no claim.
                    try transaction.execute("UPDATE outlive_signal_consumers SET last_delivered = ? WHERE consumer_id = ? AND run_id = ? AND last_delivered < ?",
                                            [.integer(posted.version), key, .text(store.runID), .integer(posted.version)])
                    transaction.afterCommit { [unrecorded] in unrecorded.forget(consumer.consumerID) }
                } else {
                    // Fenced: recorded only while this run holds the delivery claim.
                    let (fence, fenced) = deliveryClaim.fence()
                    try transaction.execute("UPDATE outlive_signal_consumers SET last_delivered = ?, claim_run = NULL WHERE consumer_id = ? AND \(fence) AND last_delivered < ?",
                                            [.integer(posted.version), key] + fenced + [.integer(posted.version)])
                }
                guard transaction.changedRows == 1, consumer.delivery == .once || posted.terminated else { continue }
                try transaction.execute("DELETE FROM outlive_signal_consumers WHERE consumer_id = ?", [.text(consumer.consumerID)])
                removed = true
            }
            if removed { try Signals.removeRecordIfUnconsumed(signal, in: transaction) }
            let newest = stored.map(\.1.version).max() ?? 0
            let current = try transaction.integer("SELECT version FROM outlive_signals WHERE signal_id = ?", [.text(signal)]) ?? 0
            return current > newest
        }
    }

    private func scheduleRecording() {
        store.loop.schedule(after: Signals.recordDelay) { [weak self] in self?.recordUnrecorded() }
    }

    /// Writes the versions delivered to this run's `this_run` consumers since
    /// the last time, in one transaction; again later if it failed (busy) or
    /// more were delivered meanwhile.
    func recordUnrecorded() {
        guard store.isOpen else { return }
        let pending = unrecorded.all
        guard !pending.isEmpty else { return }
        let run = store.runID
        do {
            try store.database.write { transaction in
                for (consumer, version) in pending {
                    try transaction.execute("UPDATE outlive_signal_consumers SET last_delivered = ? WHERE consumer_id = ? AND run_id = ? AND last_delivered < ?",
                                            [.integer(version), .text(consumer), .text(run), .integer(version)])
                }
            }
        } catch {
            Log.emit(.warning, "signals: the versions delivered to \(pending.count) consumer(s) of this run are not recorded yet: \(error); trying again")
            scheduleRecording()
            return
        }
        if unrecorded.recorded(pending) { scheduleRecording() }
    }
}
