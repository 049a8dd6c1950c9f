/// The stored messages: one row per message, with indexes for what the queue
/// looks up — by state (only messages that still need something are scanned),
/// by scope, by the run holding a lock — and a count per category for the cap.
enum MessageTable {
    static let schema = SchemaComponent(name: "messages", migrations: [
        """
        CREATE TABLE outlive_messages(
            id TEXT PRIMARY KEY, seq INTEGER NOT NULL, created REAL NOT NULL,
            category TEXT NOT NULL, title TEXT NOT NULL, body TEXT, scope TEXT, thread TEXT,
            choices BLOB NOT NULL, payload BLOB, response_handler BLOB, auto_remove INTEGER NOT NULL,
            locking_run TEXT, locking_process TEXT, processed_by TEXT NOT NULL,
            presented INTEGER NOT NULL, handled INTEGER NOT NULL, choice TEXT, removed INTEGER NOT NULL,
            presenter TEXT, presenter_run TEXT, requires_end INTEGER NOT NULL, responding_run TEXT);
        CREATE UNIQUE INDEX outlive_messages_order ON outlive_messages(seq);
        CREATE INDEX outlive_messages_state ON outlive_messages(removed, handled, presented, seq);
        CREATE INDEX outlive_messages_scope ON outlive_messages(scope, seq);
        CREATE INDEX outlive_messages_category ON outlive_messages(category, seq);
        CREATE INDEX outlive_messages_locking ON outlive_messages(locking_run) WHERE locking_run IS NOT NULL;
        CREATE INDEX outlive_messages_responding ON outlive_messages(responding_run) WHERE responding_run IS NOT NULL;
        CREATE INDEX outlive_messages_presenter_run ON outlive_messages(presenter_run) WHERE presenter_run IS NOT NULL;
        CREATE TABLE outlive_message_categories(category TEXT PRIMARY KEY, count INTEGER NOT NULL);
        CREATE TABLE outlive_message_presenters(run_id TEXT NOT NULL, presenter_id TEXT NOT NULL, process TEXT NOT NULL,
            PRIMARY KEY(run_id, presenter_id));
        CREATE INDEX outlive_message_presenters_by_name ON outlive_message_presenters(process, presenter_id)
        """,
        SchemaComponent.requiringRegisteredRun("outlive_message_presenters", "run_id")
            + SchemaComponent.requiringRegisteredRun("outlive_messages", "locking_run", onInsert: false)
            + SchemaComponent.requiringRegisteredRun("outlive_messages", "presenter_run", onInsert: false)
            + SchemaComponent.requiringRegisteredRun("outlive_messages", "responding_run", onInsert: false),
        // Step 3: a post writes three pages instead of eight (at
        // synchronous=NORMAL a post costs the pages its commit writes): the
        // table, its id's index and the state's index.
        // - `seq` is the rowid: the table is kept in posting order and
        //   `outlive_messages_order` goes. Every index ends with the rowid, so
        //   the state's index is in posting order within each state without
        //   naming `seq`. A seq is still above every stored one (MessageCounts).
        // - The scope's index holds only messages that have a scope
        //   (`scope = ?` implies it).
        // - No index on the category: only a list by category used it, which
        //   now reads the table in posting order (a category's count is kept).
        // - A post writes no counter: `outlive_message_counted` (MessageCounts).
        // SQLite cannot change a table's key in place: the table is rebuilt,
        // rows copied as they are, step 2's triggers made again.
        """
        ALTER TABLE outlive_messages RENAME TO outlive_messages_keyed_by_id;
        CREATE TABLE outlive_messages(
            id TEXT NOT NULL UNIQUE, seq INTEGER PRIMARY KEY, created REAL NOT NULL,
            category TEXT NOT NULL, title TEXT NOT NULL, body TEXT, scope TEXT, thread TEXT,
            choices BLOB NOT NULL, payload BLOB, response_handler BLOB, auto_remove INTEGER NOT NULL,
            locking_run TEXT, locking_process TEXT, processed_by TEXT NOT NULL,
            presented INTEGER NOT NULL, handled INTEGER NOT NULL, choice TEXT, removed INTEGER NOT NULL,
            presenter TEXT, presenter_run TEXT, requires_end INTEGER NOT NULL, responding_run TEXT);
        INSERT INTO outlive_messages(id, seq, created, category, title, body, scope, thread, choices, payload,
                response_handler, auto_remove, locking_run, locking_process, processed_by, presented, handled,
                choice, removed, presenter, presenter_run, requires_end, responding_run)
            SELECT id, seq, created, category, title, body, scope, thread, choices, payload,
                response_handler, auto_remove, locking_run, locking_process, processed_by, presented, handled,
                choice, removed, presenter, presenter_run, requires_end, responding_run
            FROM outlive_messages_keyed_by_id;
        DROP TABLE outlive_messages_keyed_by_id;
        CREATE INDEX outlive_messages_state ON outlive_messages(removed, handled, presented);
        CREATE INDEX outlive_messages_scope ON outlive_messages(scope) WHERE scope IS NOT NULL;
        CREATE INDEX outlive_messages_locking ON outlive_messages(locking_run) WHERE locking_run IS NOT NULL;
        CREATE INDEX outlive_messages_responding ON outlive_messages(responding_run) WHERE responding_run IS NOT NULL;
        CREATE INDEX outlive_messages_presenter_run ON outlive_messages(presenter_run) WHERE presenter_run IS NOT NULL;
        CREATE TABLE outlive_message_counted(slot INTEGER PRIMARY KEY, seq INTEGER NOT NULL);
        INSERT INTO outlive_message_counted(slot, seq) VALUES (0, coalesce((SELECT max(seq) FROM outlive_messages), 0));

        """ + SchemaComponent.requiringRegisteredRun("outlive_messages", "locking_run", onInsert: false)
            + SchemaComponent.requiringRegisteredRun("outlive_messages", "presenter_run", onInsert: false)
            + SchemaComponent.requiringRegisteredRun("outlive_messages", "responding_run", onInsert: false),
        // Step 4: no index of new messages' ids. A new message's id carries
        // its seq (`SeqID`): found by its rowid and a comparison of the text,
        // where the unique index of ids was a page of the three a post wrote.
        // Ids of the other form (every id stored before this step) stay in a
        // partial unique index, `outlive_messages_id`; a new-form id is unique
        // by its seq, the table's key. The column's UNIQUE cannot be dropped
        // in place: the table is rebuilt, rows copied as they are, its indexes
        // and step 2's triggers made again as step 3 left them.
        """
        ALTER TABLE outlive_messages RENAME TO outlive_messages_unique_id;
        CREATE TABLE outlive_messages(
            id TEXT NOT NULL, seq INTEGER PRIMARY KEY, created REAL NOT NULL,
            category TEXT NOT NULL, title TEXT NOT NULL, body TEXT, scope TEXT, thread TEXT,
            choices BLOB NOT NULL, payload BLOB, response_handler BLOB, auto_remove INTEGER NOT NULL,
            locking_run TEXT, locking_process TEXT, processed_by TEXT NOT NULL,
            presented INTEGER NOT NULL, handled INTEGER NOT NULL, choice TEXT, removed INTEGER NOT NULL,
            presenter TEXT, presenter_run TEXT, requires_end INTEGER NOT NULL, responding_run TEXT);
        INSERT INTO outlive_messages(id, seq, created, category, title, body, scope, thread, choices, payload,
                response_handler, auto_remove, locking_run, locking_process, processed_by, presented, handled,
                choice, removed, presenter, presenter_run, requires_end, responding_run)
            SELECT id, seq, created, category, title, body, scope, thread, choices, payload,
                response_handler, auto_remove, locking_run, locking_process, processed_by, presented, handled,
                choice, removed, presenter, presenter_run, requires_end, responding_run
            FROM outlive_messages_unique_id;
        DROP TABLE outlive_messages_unique_id;
        CREATE UNIQUE INDEX outlive_messages_id ON outlive_messages(id) WHERE substr(id, 15, 1) <> '8';
        CREATE INDEX outlive_messages_state ON outlive_messages(removed, handled, presented);
        CREATE INDEX outlive_messages_scope ON outlive_messages(scope) WHERE scope IS NOT NULL;
        CREATE INDEX outlive_messages_locking ON outlive_messages(locking_run) WHERE locking_run IS NOT NULL;
        CREATE INDEX outlive_messages_responding ON outlive_messages(responding_run) WHERE responding_run IS NOT NULL;
        CREATE INDEX outlive_messages_presenter_run ON outlive_messages(presenter_run) WHERE presenter_run IS NOT NULL;

        """ + SchemaComponent.requiringRegisteredRun("outlive_messages", "locking_run", onInsert: false)
            + SchemaComponent.requiringRegisteredRun("outlive_messages", "presenter_run", onInsert: false)
            + SchemaComponent.requiringRegisteredRun("outlive_messages", "responding_run", onInsert: false),
        // Step 5: a new message is not in the state index. Its entry was the
        // second of the two pages a post wrote (at synchronous=NORMAL a post
        // costs the pages its commit writes). The index holds the messages
        // that left the state a post gives (presented, answered or removed):
        // the scans that run at every open and on every resync (answered,
        // removed) read it. The scans of the messages still waiting
        // (a presenter, an auto-resolver added, `reoffer`) read the table in
        // posting order, once per registration, where each waiting message
        // found is then examined anyway. A message's first change of state
        // inserts its entry where it moved it before. Tried first: leaving a
        // new message out until the fold of the counted tail (as the tasks'
        // step 11 does): the fold's UPDATE of 32 rows of 24 columns cost
        // some 6,700 instructions a row, two thirds of what the post saved.
        // The condition is written as `Stage` tests the states (`= 1`), so
        // that SQLite sees that a scan's condition implies it.
        """
        DROP INDEX outlive_messages_state;
        CREATE INDEX outlive_messages_state ON outlive_messages(removed, handled, presented)
            WHERE presented = 1 OR handled = 1 OR removed = 1
        """,
    ], postgresql: [
        // Text compares and sorts by its bytes (COLLATE "C"), as in SQLite.
        // The foreign keys stand for step 2's triggers: a presenter or a claim
        // (presentation lock, response claim) of a run the store no longer has
        // is refused — at commit, since removing a run deletes its row before
        // the end-of-run hooks free its claims and presenters in the same
        // transaction. presenter_run has none: a presented message keeps
        // naming the run that presented it after that run ended (the hook
        // clears it only when an end notification was owed), and it is only
        // written under the presentation lock (fenced by locking_run) or set
        // to a live heir.
        #"""
        CREATE TABLE outlive_messages(
            id text COLLATE "C" PRIMARY KEY, seq bigint NOT NULL, created double precision NOT NULL,
            category text COLLATE "C" NOT NULL, title text NOT NULL, body text, scope text COLLATE "C", thread text COLLATE "C",
            choices bytea NOT NULL, payload bytea, response_handler bytea, auto_remove bigint NOT NULL,
            locking_run text COLLATE "C" REFERENCES outlive_runs(run_id) DEFERRABLE INITIALLY DEFERRED,
            locking_process text COLLATE "C", processed_by text COLLATE "C" NOT NULL,
            presented bigint NOT NULL, handled bigint NOT NULL, choice text COLLATE "C", removed bigint NOT NULL,
            presenter text COLLATE "C", presenter_run text COLLATE "C", requires_end bigint NOT NULL,
            responding_run text COLLATE "C" REFERENCES outlive_runs(run_id) DEFERRABLE INITIALLY DEFERRED);
        CREATE UNIQUE INDEX outlive_messages_order ON outlive_messages(seq);
        CREATE INDEX outlive_messages_state ON outlive_messages(removed, handled, presented, seq);
        CREATE INDEX outlive_messages_scope ON outlive_messages(scope, seq);
        CREATE INDEX outlive_messages_category ON outlive_messages(category, seq);
        CREATE INDEX outlive_messages_locking ON outlive_messages(locking_run) WHERE locking_run IS NOT NULL;
        CREATE INDEX outlive_messages_responding ON outlive_messages(responding_run) WHERE responding_run IS NOT NULL;
        CREATE INDEX outlive_messages_presenter_run ON outlive_messages(presenter_run) WHERE presenter_run IS NOT NULL;
        CREATE TABLE outlive_message_categories(category text COLLATE "C" PRIMARY KEY, count bigint NOT NULL);
        CREATE TABLE outlive_message_presenters(
            run_id text COLLATE "C" NOT NULL REFERENCES outlive_runs(run_id) DEFERRABLE INITIALLY DEFERRED,
            presenter_id text COLLATE "C" NOT NULL, process text COLLATE "C" NOT NULL,
            PRIMARY KEY(run_id, presenter_id));
        CREATE INDEX outlive_message_presenters_by_name ON outlive_message_presenters(process, presenter_id)
        """#,
        "",
        // Step 3 is SQLite's alone: PostgreSQL keeps its schema. A post there
        // is one round trip (the insert, the count and the commit sent
        // together), whose cost is that round trip and the commit's flush.
        "",
        // Step 4 is SQLite's alone: PostgreSQL's ids stay random (its key,
        // which a post writes anyway), and a post there costs its one round
        // trip and the commit's flush rather than pages.
        "",
        // Step 5 is SQLite's alone: a post on PostgreSQL costs its round
        // trip and the commit's flush, not the pages it writes.
        "",
    ])

    static let columns = """
        id, seq, created, category, title, body, scope, thread, choices, payload, response_handler, auto_remove, \
        locking_run, locking_process, processed_by, presented, handled, choice, removed, presenter, presenter_run, \
        requires_end, responding_run
        """

    /// Which messages a scan looks at.
    enum Stage {
        /// Neither presented nor answered: wants a presenter (or an auto-resolver).
        case waiting
        /// Not answered (presented or not): what auto-resolvers may answer.
        case unanswered
        /// Answered, not removed: wants response handlers.
        case answered
        /// Removed: wants its end notification, then deletion.
        case removed

        var condition: String {
            switch self {
            case .waiting: return "removed = 0 AND handled = 0 AND presented = 0"
            case .unanswered: return "removed = 0 AND handled = 0"
            case .answered: return "removed = 0 AND handled = 1"
            case .removed: return "removed = 1"
            }
        }
    }

    /// The condition (unqualified) selecting the row of message `id`, and
    /// its arguments: on SQLite by the seq the id carries since step 4
    /// (`SeqID`), else through an index of ids.
    static func row(_ id: String, _ engine: StoreEngine) -> (condition: String, arguments: [SQLValue]) {
        SeqID.row(id, engine)
    }

    static func read(_ id: String, in transaction: StoreTransaction) throws -> Message? {
        var message: Message?
        var failure: Error?
        let byID = row(id, transaction.engine)
        try transaction.query("SELECT \(columns) FROM outlive_messages WHERE \(byID.condition)", byID.arguments) { row in
            do { message = try decode(row) } catch { failure = error }
        }
        if let failure { throw failure }
        return message
    }

    static func decode(_ row: SQLRow) throws -> Message {
        let id = row.text(0) ?? ""
        func optionalText(_ column: Int32) -> String? { row.isNull(column) ? nil : row.text(column) }
        let processed = row.text(14) ?? ""
        return Message(
            id: id, sequence: row.integer(1), date: row.double(2),
            category: row.text(3) ?? "", title: row.text(4) ?? "", text: optionalText(5),
            scope: optionalText(6), thread: optionalText(7),
            choices: try ChoiceCoding.decode(row.blob(8) ?? [], message: id),
            payloadBytes: row.isNull(9) ? nil : (row.blob(9) ?? []),
            responseHandlerBytes: row.isNull(10) ? nil : (row.blob(10) ?? []),
            autoRemove: row.integer(11) != 0,
            lockingRun: optionalText(12), lockingProcess: optionalText(13),
            processedBy: processed.isEmpty ? [] : processed.split(separator: "\n").map(String.init),
            presented: row.integer(15) != 0, handled: row.integer(16) != 0, choice: optionalText(17),
            removed: row.integer(18) != 0, presenter: optionalText(19), presenterRun: optionalText(20),
            requiresEndNotification: row.integer(21) != 0, respondingRun: optionalText(22))
    }

    /// Inserts a message numbered `sequence` (`MessageCounts.beforePost`,
    /// in this transaction) and counts it. Sent with `executeLater`: on
    /// PostgreSQL the insert, the count and the commit are one round trip.
    /// The draft is read in place (inout, not changed): a copy of it retained
    /// and released each of its strings and arrays.
    static func insert(_ draft: inout MessageDraft, id: String, created: Double, sequence: Int64,
                       in transaction: StoreTransaction) throws {
        let choices = ChoiceCoding.encode(draft.choices)
        let plain = draft.text == nil && draft.scope == nil && draft.thread == nil && draft.payload == nil && draft.responseHandler == nil
        if plain && transaction.engine == .sqlite {
            // Most messages have none of the optional values: a statement
            // without them binds 7 values, not 12 (the others are NULL in
            // either form).
            try transaction.executeLater(insertPlainSQLite, [.text(id), .integer(sequence), .double(created), .text(draft.category),
                                                             .text(draft.title), .blob(choices), .integer(draft.autoRemove ? 1 : 0)])
        } else {
            let payload: SQLValue = try draft.payload.map { .blob(try MessagePayload.encode($0)) } ?? .null
            let handler: SQLValue = try draft.responseHandler.map { .blob(try $0.serializedChecked()) } ?? .null
            try transaction.executeLater(transaction.engine == .sqlite ? insertSQLite : insertPostgreSQL,
                                         [.text(id), .integer(sequence), .double(created), .text(draft.category), .text(draft.title),
                                          draft.text.map { .text($0) } ?? .null, draft.scope.map { .text($0) } ?? .null,
                                          draft.thread.map { .text($0) } ?? .null, .blob(choices),
                                          payload, handler, .integer(draft.autoRemove ? 1 : 0)])
        }
        try MessageCounts.posted(category: draft.category, in: transaction)
    }

    private static let insertPostgreSQL = """
        INSERT INTO outlive_messages(id, seq, created, category, title, body, scope, thread, choices, payload,
            response_handler, auto_remove, processed_by, presented, handled, removed, requires_end)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', 0, 0, 0, 0)
        """
    /// OR ROLLBACK: a failed post rolls its whole transaction back anyway,
    /// and without it SQLite opens a statement journal for the insert (see
    /// `Signals.post`). A stored string: the statement cache compares it with
    /// the cached one by pointer, where a string made per call is compared
    /// byte by byte after it is built.
    private static let insertSQLite = "INSERT OR ROLLBACK" + insertPostgreSQL.dropFirst("INSERT".count)
    /// `insertSQLite` of a message without text, scope, thread, payload or
    /// response handler: those columns are left NULL.
    private static let insertPlainSQLite = """
        INSERT OR ROLLBACK INTO outlive_messages(id, seq, created, category, title, choices, auto_remove,
            processed_by, presented, handled, removed, requires_end)
        VALUES (?, ?, ?, ?, ?, ?, ?, '', 0, 0, 0, 0)
        """

    /// Deletes a message and counts it out of its category. False when it was gone.
    @discardableResult
    static func delete(_ id: String, in transaction: StoreTransaction) throws -> Bool {
        guard try MessageCounts.delete(id, in: transaction) else { return false }
        try transaction.recordChange(topic: MessageQueue.topic, key: id)
        return true
    }

    static func ids(where condition: String, _ arguments: [SQLValue], in transaction: StoreTransaction) throws -> [String] {
        var ids: [String] = []
        try transaction.query("SELECT id FROM outlive_messages WHERE \(condition) ORDER BY seq", arguments) { row in
            if let id = row.text(0) { ids.append(id) }
        }
        return ids
    }
}
