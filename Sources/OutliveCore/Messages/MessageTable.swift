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
        // Step 6 is PostgreSQL's alone: SQLite numbers a post before its
        // insert, with no round trip to save, and checks claims with step 2's triggers.
        "",
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
        // Step 6: a post is one round trip, and its insert queues no check.
        // - The post read its category's count and the newest seq first, a
        //   round trip of its own (and a BEGIN and a COMMIT): about 60 µs of
        //   ~320 on the durable bench cluster (docs/postgresql.md, "A message
        //   post in one round trip"). Now its insert takes its seq from
        //   `outlive_message_admit`, which counts it into its category or
        //   refuses it when the category is full.
        // - The foreign keys on locking_run and responding_run queued two
        //   checks at every insert, no-ops for a new message's NULL runs
        //   (5–8 µs a post): constraint triggers keep what they did, as the
        //   tasks' step 15 does for the runner.
        // - A message without a scope is not in the scope's index (a lookup
        //   by scope implies one), as SQLite's step 3 has it.
        """
        ALTER TABLE outlive_messages DROP CONSTRAINT outlive_messages_locking_run_fkey;
        ALTER TABLE outlive_messages DROP CONSTRAINT outlive_messages_responding_run_fkey;
        DROP INDEX outlive_messages_scope;
        CREATE INDEX outlive_messages_scope ON outlive_messages(scope, seq) WHERE scope IS NOT NULL;

        """ + runsRegistered.ddl + ";\n" + runsReleased.ddl + ";\n" + admission.ddl,
    ], postgresqlFunctions: [runsRegistered, runsReleased, admission])

    /// A presentation lock or a response claim names a registered run (step
    /// 6 on PostgreSQL): checked at commit, as the foreign keys' checks were,
    /// the run's row locked against its removal until then. An update that
    /// sets no new run queues nothing (the trigger's WHEN), nor does an
    /// insert (a post's runs are NULL), as SQLite's triggers check updates only.
    static let runsRegistered = PostgreSQLFunction(name: "outlive_messages_runs_registered", body: """

        BEGIN
            IF NEW.locking_run IS NOT NULL AND NEW.locking_run IS DISTINCT FROM OLD.locking_run THEN
                PERFORM 1 FROM outlive_runs WHERE run_id = NEW.locking_run FOR KEY SHARE;
                IF NOT FOUND THEN
                    RAISE EXCEPTION 'a lock in table "outlive_messages" names run %, which is not in table "outlive_runs"', NEW.locking_run
                        USING ERRCODE = 'foreign_key_violation';
                END IF;
            END IF;
            IF NEW.responding_run IS NOT NULL AND NEW.responding_run IS DISTINCT FROM OLD.responding_run THEN
                PERFORM 1 FROM outlive_runs WHERE run_id = NEW.responding_run FOR KEY SHARE;
                IF NOT FOUND THEN
                    RAISE EXCEPTION 'a claim in table "outlive_messages" names run %, which is not in table "outlive_runs"', NEW.responding_run
                        USING ERRCODE = 'foreign_key_violation';
                END IF;
            END IF;
            RETURN NULL;
        END

        """, triggers: [
        .init(name: "outlive_messages_runs_registered", table: "outlive_messages", definition: """
            AFTER UPDATE OF locking_run, responding_run ON outlive_messages DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
                WHEN ((NEW.locking_run IS NOT NULL AND NEW.locking_run IS DISTINCT FROM OLD.locking_run)
                      OR (NEW.responding_run IS NOT NULL AND NEW.responding_run IS DISTINCT FROM OLD.responding_run))
            """, constraint: true),
    ])

    /// A run's row goes only once no message names it in a lock or a claim
    /// (step 6 on PostgreSQL), checked at commit: a run's removal deletes its
    /// row before the end-of-run hooks free its locks and claims, in the same
    /// transaction. The messages are named with the run's schema, as the
    /// tasks' `outlive_runs_tasks_released` names its tasks.
    static let runsReleased = PostgreSQLFunction(name: "outlive_runs_messages_released", body: """

        DECLARE
            held bigint;
        BEGIN
            IF TG_OP = 'UPDATE' AND NEW.run_id = OLD.run_id THEN
                RETURN NULL;
            END IF;
            EXECUTE format('SELECT count(*) FROM (SELECT 1 FROM %I.outlive_messages WHERE locking_run = $1 OR responding_run = $1 LIMIT 1 FOR KEY SHARE) held', TG_TABLE_SCHEMA)
                INTO held USING OLD.run_id;
            IF held > 0 THEN
                RAISE EXCEPTION 'run % of table "outlive_runs" still holds messages of table "outlive_messages"', OLD.run_id
                    USING ERRCODE = 'foreign_key_violation';
            END IF;
            RETURN NULL;
        END

        """, triggers: [
        .init(name: "outlive_runs_messages_released", table: "outlive_runs", definition: """
            AFTER DELETE OR UPDATE OF run_id ON outlive_runs DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
            """, constraint: true),
    ])

    /// A post's admission on PostgreSQL (step 6), called by its insert for
    /// the new message's seq: refuses the message when its category holds
    /// `cap` messages (`PostgreSQLErrors.limitReached`, in the words SQLite's
    /// post throws), else counts it in and returns the seq after the newest.
    /// The post holds the store's write lock, as every writer of the counts
    /// and of the messages does: nothing changes between the reads and the insert.
    /// The largest seq is refused as damage, as `MessageCounts` does on SQLite.
    static let admission = PostgreSQLFunction(name: "outlive_message_admit", body: """

        DECLARE
            held bigint;
            newest bigint;
        BEGIN
            UPDATE outlive_message_categories SET count = count + 1 WHERE category = admitted AND count < cap;
            IF NOT FOUND THEN
                SELECT count INTO held FROM outlive_message_categories WHERE category = admitted;
                IF FOUND THEN
                    RAISE EXCEPTION '\(MessageCounts.fullCategory("%", holds: "%"))',
                        admitted, held USING ERRCODE = '\(PostgreSQLErrors.limitReached)';
                END IF;
                INSERT INTO outlive_message_categories(category, count) VALUES (admitted, 1);
            END IF;
            SELECT max(seq) INTO newest FROM outlive_messages;
            IF newest = 9223372036854775807 THEN
                RAISE EXCEPTION 'the store is damaged: a message has the largest possible order number' USING ERRCODE = 'data_corrupted';
            END IF;
            RETURN coalesce(newest, 0) + 1;
        END

        """, triggers: [], arguments: "admitted text, cap bigint", returns: "bigint")

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

    /// Where a new message's seq comes from.
    enum Numbering {
        /// SQLite: taken before the insert (`MessageCounts.beforePost`), which then counts nothing.
        case numbered(Int64)
        /// PostgreSQL: the insert's own (`admission`), which counts the
        /// message in or refuses it when its category holds `limit`.
        case admitted(limit: Int64)
    }

    /// Inserts a message, sent with `executeLater`: on PostgreSQL the insert
    /// (its admission within) and the commit are one round trip. The draft
    /// is read in place (inout, not changed): a copy of it retained and
    /// released each of its strings and arrays.
    static func insert(_ draft: inout MessageDraft, id: String, created: Double, numbering: Numbering,
                       in transaction: StoreTransaction) throws {
        let choices = ChoiceCoding.encode(draft.choices)
        switch numbering {
        case .numbered(let sequence):
            let plain = draft.text == nil && draft.scope == nil && draft.thread == nil && draft.payload == nil && draft.responseHandler == nil
            if plain {
                // Most messages have none of the optional values: a statement
                // without them binds 7 values, not 12 (the others are NULL in
                // either form).
                try transaction.executeLater(insertPlainSQLite, [.text(id), .integer(sequence), .double(created), .text(draft.category),
                                                                 .text(draft.title), .blob(choices), .integer(draft.autoRemove ? 1 : 0)])
            } else {
                try transaction.executeLater(insertSQLite, [.text(id), .integer(sequence)] + (try optionalValues(&draft, created: created, choices: choices)))
            }
        case .admitted(let limit):
            try transaction.executeLater(insertAdmittedPostgreSQL, [.text(id), .text(draft.category), .integer(limit)]
                                             + (try optionalValues(&draft, created: created, choices: choices)))
        }
    }

    /// A message's values after its id and seq, in the order of `columns`' insert.
    private static func optionalValues(_ draft: inout MessageDraft, created: Double, choices: [UInt8]) throws -> [SQLValue] {
        let payload: SQLValue = try draft.payload.map { .blob(try MessagePayload.encode($0)) } ?? .null
        let handler: SQLValue = try draft.responseHandler.map { .blob(try $0.serializedChecked()) } ?? .null
        return [.double(created), .text(draft.category), .text(draft.title),
                draft.text.map { .text($0) } ?? .null, draft.scope.map { .text($0) } ?? .null,
                draft.thread.map { .text($0) } ?? .null, .blob(choices),
                payload, handler, .integer(draft.autoRemove ? 1 : 0)]
    }

    private static let insertColumns = """
        INTO outlive_messages(id, seq, created, category, title, body, scope, thread, choices, payload,
            response_handler, auto_remove, processed_by, presented, handled, removed, requires_end)
        """
    /// OR ROLLBACK: a failed post rolls its whole transaction back anyway,
    /// and without it SQLite opens a statement journal for the insert (see
    /// `Signals.post`). A stored string: the statement cache compares it with
    /// the cached one by pointer, where a string made per call is compared
    /// byte by byte after it is built.
    private static let insertSQLite = "INSERT OR ROLLBACK " + insertColumns + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', 0, 0, 0, 0)"
    /// The seq from the admission of the message into its category (its
    /// second and third parameters: the category, the limit).
    private static let insertAdmittedPostgreSQL = "INSERT " + insertColumns
        + " VALUES (?, outlive_message_admit(?, ?), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', 0, 0, 0, 0)"
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
