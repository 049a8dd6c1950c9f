/// The durable interaction queues of a store: interactions that are handlers
/// stored in the store, under a queue name, so that what was queued before a
/// restart (or a crash) is presented after it, by whichever process presents
/// that queue.
///
/// Tables:
/// - `outlive_durable_interactions`: one row per queued interaction, in the
///   order they were added (`seq`); the row goes when the interaction is
///   finished or removed.
/// - `outlive_durable_interaction_claims`: at most one row per queue name, the
///   presenter that may present it now (its run and its handle number), and the
///   interaction it presents: a `RunClaim` of its own row. A claim of a run that
///   ended (closed, or died: `kill -9` included) is deleted by the end-of-run
///   hook, in the transaction that removes the run, and a claim whose run is no
///   longer alive is broken by the next presenter at once; nothing waits for a
///   timeout.
///
/// Feed: topic `durable_interactions`, key = the queue name, for every add,
/// removal, finish and claim change, so presenters of other processes learn of
/// them without polling.
public final class DurableInteractions {
    public static let schema = SchemaComponent(name: "durable_interactions", migrations: [
        """
        CREATE TABLE outlive_durable_interactions(seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, queue TEXT NOT NULL, handler BLOB NOT NULL, handler_name TEXT NOT NULL, added REAL NOT NULL, presentations INTEGER NOT NULL DEFAULT 0);
        CREATE INDEX outlive_durable_interactions_by_queue ON outlive_durable_interactions(queue, seq);
        CREATE TABLE outlive_durable_interaction_claims(queue TEXT PRIMARY KEY, run_id TEXT NOT NULL, holder INTEGER NOT NULL, interaction_id TEXT) WITHOUT ROWID;
        CREATE INDEX outlive_durable_interaction_claims_by_run ON outlive_durable_interaction_claims(run_id)
        """,
        SchemaComponent.requiringRegisteredRun("outlive_durable_interaction_claims", "run_id"),
    ], postgresql: [
        // seq is an identity: it is drawn inside the add's write transaction,
        // which holds the store's write lock, so seq order is commit order and
        // the head of a queue is the interaction added first, as in SQLite.
        // Queue names and ids compare and sort by their bytes (COLLATE "C").
        // run_id's foreign key stands for the SQLite trigger of step 2: a
        // claim by a run the store no longer has is refused (at commit:
        // removing a run deletes its row before the end-of-run hooks delete
        // its claims, in the same transaction).
        #"""
        CREATE TABLE outlive_durable_interactions(seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id text COLLATE "C" NOT NULL UNIQUE, queue text COLLATE "C" NOT NULL, handler bytea NOT NULL,
            handler_name text NOT NULL, added double precision NOT NULL, presentations bigint NOT NULL DEFAULT 0);
        CREATE INDEX outlive_durable_interactions_by_queue ON outlive_durable_interactions(queue, seq);
        CREATE TABLE outlive_durable_interaction_claims(queue text COLLATE "C" PRIMARY KEY,
            run_id text COLLATE "C" NOT NULL REFERENCES outlive_runs(run_id) DEFERRABLE INITIALLY DEFERRED,
            holder bigint NOT NULL, interaction_id text COLLATE "C");
        CREATE INDEX outlive_durable_interaction_claims_by_run ON outlive_durable_interaction_claims(run_id)
        """#,
        "",
    ])
    public static let topic = "durable_interactions"
    public static let maxQueueNameSize = 255
    /// The built-in handler passed to interactions as their call-time `finish`.
    public static let finishHandlerName = "outlive.durable_interaction.finish"

    let store: Store
    /// A queue being presented by one handle (`holder`) of one run.
    let presenterClaim: RunClaim

    public init(store: Store) {
        self.store = store
        presenterClaim = RunClaim(store: store, table: "outlive_durable_interaction_claims", key: "queue", run: "run_id", token: "holder",
                                  form: .row, freed: DurableInteractions.claimsEnded)
    }

    /// Opens a handle on the queue `name`. See `DurableInteractionQueue`.
    public func open(_ name: String, suspended: Bool = false) throws -> DurableInteractionQueue {
        try DurableInteractions.validate(queueName: name)
        try store.checkUsable()
        return try DurableInteractionQueue(store: store, claim: presenterClaim, name: name, suspended: suspended)
    }

    public static func validate(queueName name: String) throws {
        guard !name.isEmpty else { throw OutliveError.invalidArgument("the queue name is empty") }
        guard name.utf8.count <= maxQueueNameSize else {
            throw OutliveError.invalidArgument("the queue name is \(name.utf8.count) bytes long; queue names are at most \(maxQueueNameSize) bytes")
        }
        guard !name.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
            throw OutliveError.invalidArgument("the queue name \"\(name)\" contains a control character")
        }
    }

    /// The claims of an ended run: each of their queues gets a feed entry so
    /// that a waiting presenter takes over (the claims go with `RunClaim`).
    static func claimsEnded(_ transaction: StoreTransaction, _ run: EndedRun, _ queues: [SQLValue]) throws {
        for case .text(let queue) in queues {
            Log.emit(.info, "durable interaction queue \"\(queue)\": the presenting run \(run.runID) of \(run.processName) \(run.died ? "died" : "ended"); its claim is released")
            try transaction.recordChange(topic: topic, key: queue)
        }
    }

    /// The names of the queues that hold interactions now, in name order (a
    /// queue exists while it holds some), for `outlive worker`.
    public func queueNames() throws -> [String] {
        try store.checkUsable()
        return try store.database.read { transaction in
            var names: [String] = []
            try transaction.query("SELECT DISTINCT queue FROM outlive_durable_interactions ORDER BY queue", []) { row in
                if let name = row.text(0) { names.append(name) }
            }
            return names
        }
    }

    /// Calls `added` on the loop thread with the name of a queue that changed
    /// in any process (an add, finish, removal or claim change); after a feed
    /// resync, with every queue that holds interactions. Returns a token for
    /// `Store.unsubscribe`.
    public func watchQueues(_ changed: @escaping (String) -> Void) throws -> UInt64 {
        try store.subscribe(topic: DurableInteractions.topic) { [weak self] batch in
            guard let self else { return }
            let names = batch.resync ? ((try? self.queueNames()) ?? []) : batch.keys
            for name in names { changed(name) }
        }
    }

    /// How many interactions every durable queue holds, for `outlive inspect`.
    public func storedCount() throws -> Int {
        try store.checkUsable()
        return try store.database.read {
            Int(try $0.integer("SELECT count(*) FROM outlive_durable_interactions") ?? 0)
        }
    }
}
