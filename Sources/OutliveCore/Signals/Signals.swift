/// Versioned results delivered to durable consumers in any process (the
/// ownCloud SDK's OCSignal with handlers that outlive the process).
///
/// Records: one row per signal (latest payload, version, terminated) that exists
/// only while it has consumers, and one row per consumer (its serialized handler,
/// delivery, lifetime, scope, registering process and run, last delivered
/// version, and the run delivering to it right now). A post touches only its
/// signal's row and appends one feed entry; a process woken by the feed reads
/// only the signals named in it (see `ConsumerDelivery.swift`).
///
/// Posts keep only the latest payload: a consumer that is behind receives the
/// newest version, never an older one after a newer one, and never one version
/// twice. A post with `terminates` ends the signal: later posts to it are
/// ignored while its consumers still have to receive the final version; once the
/// last consumer is gone the record goes and the id is free again.
public final class Signals {
    public static let topic = "signal"
    public static let maxScopeSize = 1_024
    /// Call-time arguments the library binds; a payload must not use them.
    public static let reservedArgumentNames = ["signal_id", "version", "terminated"]

    public static let schema = SchemaComponent(name: "signals", migrations: [
        """
        CREATE TABLE outlive_signals(signal_id TEXT PRIMARY KEY, version INTEGER NOT NULL,
            payload BLOB, terminated INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE outlive_signal_consumers(consumer_id TEXT PRIMARY KEY, signal_id TEXT NOT NULL,
            handler BLOB NOT NULL, handler_name TEXT NOT NULL, delivery INTEGER NOT NULL, lifetime INTEGER NOT NULL,
            scope TEXT, process TEXT NOT NULL, run_id TEXT NOT NULL, last_delivered INTEGER NOT NULL,
            claim_run TEXT, created REAL NOT NULL);
        CREATE INDEX outlive_signal_consumers_by_signal ON outlive_signal_consumers(signal_id);
        CREATE INDEX outlive_signal_consumers_by_run ON outlive_signal_consumers(run_id);
        CREATE INDEX outlive_signal_consumers_by_scope ON outlive_signal_consumers(scope);
        CREATE INDEX outlive_signal_consumers_by_claim ON outlive_signal_consumers(claim_run);
        CREATE INDEX outlive_signal_consumers_by_lifetime ON outlive_signal_consumers(lifetime, process)
        """,
        SchemaComponent.requiringRegisteredRun("outlive_signal_consumers", "run_id")
            + SchemaComponent.requiringRegisteredRun("outlive_signal_consumers", "claim_run", onInsert: false),
    ], postgresql: [
        // Ids compare and sort by their bytes (COLLATE "C"), as in SQLite.
        // claim_run's foreign key stands for the SQLite trigger of step 2: a
        // claim by a run the store no longer has is refused (at commit:
        // removing a run deletes its row before the end-of-run hooks free its
        // claims, in the same transaction). run_id has no foreign key, since
        // `process` and `any_process` consumers outlive the run that made
        // them; `insertConsumer` checks it instead.
        #"""
        CREATE TABLE outlive_signals(signal_id text COLLATE "C" PRIMARY KEY, version bigint NOT NULL,
            payload bytea, terminated bigint NOT NULL);
        CREATE TABLE outlive_signal_consumers(consumer_id text COLLATE "C" PRIMARY KEY, signal_id text COLLATE "C" NOT NULL,
            handler bytea NOT NULL, handler_name text NOT NULL, delivery bigint NOT NULL, lifetime bigint NOT NULL,
            scope text COLLATE "C", process text COLLATE "C" NOT NULL, run_id text COLLATE "C" NOT NULL,
            last_delivered bigint NOT NULL,
            claim_run text COLLATE "C" REFERENCES outlive_runs(run_id) DEFERRABLE INITIALLY DEFERRED,
            created double precision NOT NULL);
        CREATE INDEX outlive_signal_consumers_by_signal ON outlive_signal_consumers(signal_id);
        CREATE INDEX outlive_signal_consumers_by_run ON outlive_signal_consumers(run_id);
        CREATE INDEX outlive_signal_consumers_by_scope ON outlive_signal_consumers(scope);
        CREATE INDEX outlive_signal_consumers_by_claim ON outlive_signal_consumers(claim_run);
        CREATE INDEX outlive_signal_consumers_by_lifetime ON outlive_signal_consumers(lifetime, process)
        """#,
        "",
    ])

    let store: Store
    /// A `process` or `any_process` consumer being delivered by one run.
    let deliveryClaim: RunClaim
    /// Handler calls made by this handle's deliveries (loop thread only): a
    /// consumer read as due is read again only when a handler ran since.
    var handlersCalled: UInt64 = 0
    /// Consumers removed through this handle, from any thread. A delivery read
    /// before a removal checks again: the read may come before the callbacks
    /// of its dispatch (see `Store.FeedReader`), and a consumer removed on the
    /// loop thread gets no delivery that starts after the removal returned.
    private let removalLock = Lock()
    private var removalCount: UInt64 = 0
    /// Changes when a handler ran or a consumer was removed since it was read.
    var deliveryEpoch: UInt64 { handlersCalled &+ removalLock.withLock { removalCount } }
    /// Versions delivered to this run's `this_run` consumers, recorded in the
    /// store up to `recordDelay` later, in one transaction.
    let unrecorded = UnrecordedDeliveries()
    /// Damaged consumer rows this handle has logged (loop thread only): each
    /// once, though every post of their signal reads them again.
    var damageReported = Set<String>()
    static let recordDelay = 0.1

    /// Attaches signals to an open store: the end-of-run hooks (register before
    /// the store reaps ended runs), the feed subscription, and a first look for
    /// consumers that waited for this process name or for any process.
    public init(store: Store) throws {
        self.store = store
        store.onRunEnded { transaction, run in try Signals.runEnded(run, in: transaction) }
        deliveryClaim = RunClaim(store: store, table: "outlive_signal_consumers", key: "consumer_id", run: "claim_run",
                                 form: .columns, freed: Signals.deliveriesEnded)
        _ = try store.subscribe(topic: Signals.topic, reading: { [weak self] batch, transaction in
            try self?.read(batch, in: transaction)
        }) { [weak self] batch in self?.changed(batch) }
        store.loop.post { [weak self] in self?.deliverWaiting() }
    }

    // MARK: - Validation

    /// A signal id: a UUID in text form, either case; stored in lower case.
    public static func validate(signalID: String, _ argument: String = "signal_id") throws -> String {
        guard Identifier.isValid(signalID) else {
            throw OutliveError.invalidArgument("\(argument) \"\(signalID.prefix(64))\" is not a UUID (8-4-4-4-12 hexadecimal digits)")
        }
        return Identifier.lowercased(signalID)
    }

    public static func validate(scope: String?) throws {
        guard let scope else { return }
        guard !scope.isEmpty else { throw OutliveError.invalidArgument("scope is empty; pass NULL for no scope") }
        guard scope.utf8.count <= maxScopeSize else {
            throw OutliveError.invalidArgument("scope is \(scope.utf8.count) bytes long; at most \(maxScopeSize) are allowed")
        }
    }

    static func validate(payload: Arguments) throws {
        for name in reservedArgumentNames where payload[name] != nil {
            throw OutliveError.invalidArgument("the payload has an argument named \"\(name)\"; signal_id, version and terminated are bound by the library")
        }
    }

    // MARK: - Consumers

    /// Registers a consumer of `signalID` and returns its id. If the signal was
    /// posted already (its record exists with a version), the current version is
    /// delivered to it as to any consumer that has not received it.
    @discardableResult
    public func consume(signalID: String, handler: Handler, delivery: SignalDelivery, lifetime: SignalLifetime,
                        scope: String? = nil) throws -> String {
        let signal = try Signals.validate(signalID: signalID)
        try Signals.validate(scope: scope)
        if handler.isInvalidated { throw OutliveError(.invalidated, "handler \(handler.name) was invalidated; it cannot consume a signal") }
        try HandlerRegistry.checkStorable(handler, as: "a signal consumer")
        let encoded = try handler.serializedChecked()
        try store.checkUsable()
        return try store.database.write { transaction in
            try Signals.insertConsumer(of: signal, handler: encoded, named: handler.name, delivery: delivery, lifetime: lifetime,
                                       scope: scope, by: store, in: transaction)
        }
    }

    /// Registers a consumer inside the caller's transaction (a consumer and
    /// the work whose result it waits for, in one commit): `signal` and
    /// `scope` validated, `handler` serialized and checked storable.
    @discardableResult
    static func insertConsumer(of signal: String, handler encoded: [UInt8], named name: String, delivery: SignalDelivery,
                               lifetime: SignalLifetime, scope: String?, by store: Store,
                               in transaction: StoreTransaction) throws -> String {
        let consumer = Identifier.make()
        try transaction.execute("INSERT INTO outlive_signals(signal_id, version, payload, terminated) VALUES (?, 0, NULL, 0) ON CONFLICT(signal_id) DO NOTHING",
                                [.text(signal)])
        let values: [SQLValue] = [.text(consumer), .text(signal), .blob(encoded), .text(name), .integer(Int64(delivery.rawValue)),
                                  .integer(Int64(lifetime.rawValue)), scope.map { .text($0) } ?? .null, .text(store.processName),
                                  .text(store.runID), .double(Clock.wall())]
        let columns = """
            INSERT INTO outlive_signal_consumers(consumer_id, signal_id, handler, handler_name, delivery, lifetime,
                scope, process, run_id, last_delivered, claim_run, created)
            """
        switch store.database.engine {
        case .sqlite:
            // The trigger refuses a run the store no longer registers.
            try transaction.execute(columns + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, NULL, ?)", values)
        case .postgresql:
            // No trigger there: the same check, in the same transaction, so no reap slips between.
            try transaction.execute(columns + """
                 SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, NULL, ? WHERE EXISTS (SELECT 1 FROM outlive_runs WHERE run_id = ?)
                """, values + [.text(store.runID)])
            guard transaction.changedRows == 1 else {
                throw OutliveError.state("this run was ended by another process (its lock connection was lost): close the store and open it again")
            }
        }
        let version = try transaction.integer("SELECT version FROM outlive_signals WHERE signal_id = ?", [.text(signal)]) ?? 0
        if version > 0 { try transaction.recordChange(topic: Signals.topic, key: signal) }
        return consumer
    }

    /// Removes one consumer (and the signal's record with its last consumer).
    /// A delivery already under way completes.
    public func removeConsumer(_ consumerID: String) throws {
        guard Identifier.isValid(consumerID) else {
            throw OutliveError.invalidArgument("consumer_id \"\(consumerID.prefix(64))\" is not a UUID (8-4-4-4-12 hexadecimal digits)")
        }
        let consumer = consumerID.lowercased()
        try store.checkUsable()
        try store.database.write { transaction in
            var signal: String?
            try transaction.query("SELECT signal_id FROM outlive_signal_consumers WHERE consumer_id = ?", [.text(consumer)]) { signal = $0.text(0) }
            guard let signal else { throw OutliveError.notFound("no signal consumer with id \(consumer)") }
            try transaction.execute("DELETE FROM outlive_signal_consumers WHERE consumer_id = ?", [.text(consumer)])
            try Signals.removeRecordIfUnconsumed(signal, in: transaction)
        }
        removalLock.withLock { removalCount &+= 1 }
    }

    /// Removes every consumer registered with `scope`, of any process; returns
    /// how many there were (0 is not an error).
    @discardableResult
    public func removeConsumers(scope: String) throws -> Int {
        try Signals.validate(scope: scope)
        try store.checkUsable()
        defer { removalLock.withLock { removalCount &+= 1 } }
        return try store.database.write { transaction in
            var signals: [String] = []
            try transaction.query("SELECT DISTINCT signal_id FROM outlive_signal_consumers WHERE scope = ?", [.text(scope)]) { row in
                if let id = row.text(0) { signals.append(id) }
            }
            try transaction.execute("DELETE FROM outlive_signal_consumers WHERE scope = ?", [.text(scope)])
            let removed = transaction.changedRows
            for signal in signals { try Signals.removeRecordIfUnconsumed(signal, in: transaction) }
            return removed
        }
    }

    // MARK: - Posting

    /// Posts a new version of `signalID` with `payload`. With no consumer the
    /// signal is not stored and nothing happens (not an error: nobody waits for
    /// it); after a terminating post that still has consumers to reach, further
    /// posts are ignored the same way. Returns the version stored, or nil.
    @discardableResult
    public func post(signalID: String, payload: Arguments = Arguments(), terminates: Bool) throws -> UInt64? {
        try post(signalID, payload, terminates, readingVersion: true)
    }

    /// `post` for a caller with no use for its outcome (the C API): without
    /// the statement that reads the version back (a tenth of a post's
    /// instructions), and on PostgreSQL without a round trip to learn
    /// whether the post was stored (the feed's entry is decided by the
    /// server, with the commit).
    public func postWithoutOutcome(signalID: String, payload: Arguments = Arguments(), terminates: Bool) throws {
        _ = try post(signalID, payload, terminates, readingVersion: false)
    }

    private func post(_ signalID: String, _ payload: Arguments, _ terminates: Bool, readingVersion: Bool) throws -> UInt64? {
        let signal = try Signals.validate(signalID: signalID)
        try Signals.validate(payload: payload)
        let encoded = try payload.serialized()
        try store.checkUsable()
        // OR ROLLBACK: a failing post rolls back its whole transaction anyway,
        // and without it SQLite opens a statement journal for this one-row
        // update (a savepoint whose bitmap is allocated and freed on every
        // post; the heap grew and shrank with brk twice a post). Not RETURNING
        // for the version: in SQLite 3.40 it costs more than the SELECT (a
        // third more instructions for the whole post).
        return try store.database.groupedWrite { transaction -> UInt64? in
            try Signals.post(signal, payload: encoded, terminates: terminates, readingVersion: readingVersion, in: transaction)
        }
    }

    /// A post inside the caller's transaction (a task's result with the end
    /// of its attempt): `signal` validated, `encoded` a checked payload.
    @discardableResult
    /// The post inside `transaction`: the version stored, or nil when nothing
    /// was stored; without `readingVersion`, nil whatever happened (the
    /// statement and its feed entry go with the commit, see `executeLater`).
    static func post(_ signal: String, payload encoded: [UInt8], terminates: Bool, readingVersion: Bool = true,
                     in transaction: StoreTransaction) throws -> UInt64? {
        let arguments: [SQLValue] = [.blob(encoded), .integer(terminates ? 1 : 0), .text(signal)]
        guard readingVersion else {
            try transaction.executeLater(postStatement(transaction.engine), arguments, recordingChangeOf: Signals.topic, key: signal)
            return nil
        }
        try transaction.execute(postStatement(transaction.engine), arguments)
        guard transaction.changedRows == 1 else { return nil }
        try transaction.recordChange(topic: Signals.topic, key: signal)
        let version = try transaction.integer("SELECT version FROM outlive_signals WHERE signal_id = ?", [.text(signal)]) ?? 0
        return UInt64(clamping: version)
    }

    /// OR ROLLBACK is SQLite's (see `post` above); a failing statement
    /// aborts the whole transaction on PostgreSQL anyway.
    private static func postStatement(_ engine: StoreEngine) -> String {
        switch engine {
        case .sqlite: "UPDATE OR ROLLBACK outlive_signals SET version = version + 1, payload = ?, terminated = ? WHERE signal_id = ? AND terminated = 0"
        case .postgresql: "UPDATE outlive_signals SET version = version + 1, payload = ?, terminated = ? WHERE signal_id = ? AND terminated = 0"
        }
    }

    // MARK: - Records

    static func removeRecordIfUnconsumed(_ signal: String, in transaction: StoreTransaction) throws {
        try transaction.execute("""
            DELETE FROM outlive_signals WHERE signal_id = ?
                AND NOT EXISTS (SELECT 1 FROM outlive_signal_consumers WHERE signal_id = ?)
            """, [.text(signal), .text(signal)])
    }

    /// Inside the transaction that removes a closed or dead run: its this-run
    /// consumers go (and records left without consumers).
    static func runEnded(_ run: EndedRun, in transaction: StoreTransaction) throws {
        var owned: [String] = []
        try transaction.query("SELECT DISTINCT signal_id FROM outlive_signal_consumers WHERE run_id = ? AND lifetime = ?",
                              [.text(run.runID), .integer(Int64(SignalLifetime.thisRun.rawValue))]) { row in
            if let id = row.text(0) { owned.append(id) }
        }
        if !owned.isEmpty {
            try transaction.execute("DELETE FROM outlive_signal_consumers WHERE run_id = ? AND lifetime = ?",
                                    [.text(run.runID), .integer(Int64(SignalLifetime.thisRun.rawValue))])
            for signal in owned { try removeRecordIfUnconsumed(signal, in: transaction) }
        }
    }

    /// The delivery claims of an ended run: their signals are announced, so
    /// that another process delivers them (the claim itself is freed by `RunClaim`).
    static func deliveriesEnded(_ transaction: StoreTransaction, _ run: EndedRun, _ consumers: [SQLValue]) throws {
        var claimed: [String] = []
        try transaction.query("SELECT DISTINCT signal_id FROM outlive_signal_consumers WHERE claim_run = ?", [.text(run.runID)]) { row in
            if let id = row.text(0) { claimed.append(id) }
        }
        for signal in claimed { try transaction.recordChange(topic: Signals.topic, key: signal) }
    }
}
