/// The stored format. `PRAGMA application_id` marks an Outlive database;
/// `PRAGMA user_version` is the format version, raised only by an incompatible
/// change; each system keeps its own list of forward migrations in the
/// `outlive_schema` table, so systems evolve independently. A store whose format
/// or any component is newer than this library is refused with `.version`.
///
/// A component carries its DDL for each engine: `migrations` (SQLite) and
/// `postgresql`, the same number of steps with the same meaning, step i of one
/// list taking the component to the same version i + 1 as step i of the other
/// (PostgreSQL has no triggers with RAISE: such a step may be empty there, its
/// meaning carried by a foreign key of an earlier step). A component without a
/// `postgresql` list is not available on PostgreSQL stores yet: its tables are
/// never created there, and the system is refused when a PostgreSQL store
/// attaches it (`Store.requireAvailable`).
public struct SchemaComponent {
    public let name: String
    /// Migration i takes the component from version i to i + 1 (SQLite SQL).
    public let migrations: [String]
    /// The same steps in PostgreSQL SQL; nil while the system is not ported.
    public let postgresql: [String]?
    /// The trigger functions the PostgreSQL steps create: the only functions
    /// and triggers the schema check accepts (PostgreSQLSchema).
    public let postgresqlFunctions: [PostgreSQLFunction]

    public init(name: String, migrations: [String], postgresql: [String]? = nil,
                postgresqlFunctions: [PostgreSQLFunction] = []) {
        precondition(postgresql == nil || postgresql!.count == migrations.count,
                     "component \(name): the PostgreSQL migrations must be as many as the SQLite ones")
        self.name = name
        self.migrations = migrations
        self.postgresql = postgresql
        self.postgresqlFunctions = postgresqlFunctions
    }

    /// This component's steps for `engine`; nil when it has none there.
    func migrations(for engine: StoreEngine) -> [String]? {
        switch engine {
        case .sqlite: return migrations
        case .postgresql: return postgresql
        }
    }
}

extension SchemaComponent {
    /// Triggers that refuse to bind a row to a run the store no longer has: a
    /// handle whose run others declared ended (its lock file in runs/ was
    /// deleted, so its lock could not be seen) must not register claims or
    /// this-run state that no end-of-run hook would ever remove. The check is in
    /// the same transaction as the write, so no reap can slip between them; it
    /// fails with SQLITE_CONSTRAINT, which is OUTLIVE_E_STATE.
    /// `onInsert: false` for a column no INSERT sets: a trigger on every insert
    /// of a busy table costs (a batch of task adds ran 40% slower with one).
    public static func requiringRegisteredRun(_ table: String, _ column: String, onInsert: Bool = true) -> String {
        let unregistered = "NEW.\(column) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM outlive_runs WHERE run_id = NEW.\(column))"
        let refuse = "SELECT RAISE(ABORT, 'this run was ended by another process (its lock file in runs/ was deleted): close the store and open it again')"
        let update = """
            CREATE TRIGGER \(table)_\(column)_registered_update BEFORE UPDATE OF \(column) ON \(table)
                WHEN NEW.\(column) IS NOT OLD.\(column) AND \(unregistered) BEGIN \(refuse); END;
            """
        guard onInsert else { return update }
        return """
            CREATE TRIGGER \(table)_\(column)_registered_insert BEFORE INSERT ON \(table)
                WHEN \(unregistered) BEGIN \(refuse); END;
            """ + update
    }
}

enum Schema {
    static let applicationID: Int64 = 0x4F55_544C  // "OUTL"
    static let formatVersion: Int64 = 1

    static let store = SchemaComponent(name: "store", migrations: [
        """
        CREATE TABLE outlive_feed(seq INTEGER PRIMARY KEY, topic TEXT NOT NULL, key TEXT NOT NULL);
        CREATE TABLE outlive_runs(run_id TEXT PRIMARY KEY, process TEXT NOT NULL, pid INTEGER NOT NULL, started REAL NOT NULL);
        """,
        // Which runs read which topics of the feed: a change nobody watches is not written.
        "CREATE TABLE outlive_watchers(topic TEXT NOT NULL, run_id TEXT NOT NULL, PRIMARY KEY(topic, run_id)) WITHOUT ROWID",
        SchemaComponent.requiringRegisteredRun("outlive_watchers", "run_id"),
        // PostgreSQL's watcher changes (next list); SQLite's writers compare its data version.
        "",
    ], postgresql: [
        // outlive_runs also holds each run's advisory lock key (PostgreSQLRunLock).
        """
        CREATE TABLE outlive_feed(seq bigint PRIMARY KEY, topic text NOT NULL, key text NOT NULL);
        CREATE SEQUENCE outlive_run_keys AS integer MINVALUE 1 CYCLE;
        CREATE TABLE outlive_runs(run_id text PRIMARY KEY, process text NOT NULL, pid bigint NOT NULL,
                                  started double precision NOT NULL, host text NOT NULL DEFAULT '',
                                  lock_key integer NOT NULL UNIQUE);
        """,
        // The foreign key does what SQLite's trigger (the next step) does: a
        // watcher of a run the store no longer has is refused.
        """
        CREATE TABLE outlive_watchers(topic text NOT NULL,
                                      run_id text NOT NULL REFERENCES outlive_runs(run_id) ON DELETE CASCADE,
                                      PRIMARY KEY(topic, run_id));
        """,
        "",
        // A count of the watchers' changes, raised for every row added,
        // changed or removed (before the commit, under the store's lock; not
        // by a subscription's insert that finds its row there already): a
        // writer that knows which topics no other run watched at a count
        // skips their feed statements while the count stays the same
        // (PostgreSQLWatchKnowledge).
        "CREATE SEQUENCE outlive_watcher_changes;\n" + watcherChanges.ddl,
    ], postgresqlFunctions: [watcherChanges])

    /// The sequence is named with the table's schema: a run's rows go with
    /// it (ON DELETE CASCADE) from whatever session deletes the run, an
    /// operator's psql with another search_path too.
    static let watcherChanges = PostgreSQLFunction(name: "outlive_watchers_changed", body: """
        BEGIN
            PERFORM nextval(format('%I.outlive_watcher_changes', TG_TABLE_SCHEMA));
            RETURN NULL;
        END;
        """, triggers: [.init(name: "outlive_watchers_changed", table: "outlive_watchers",
                              definition: "AFTER INSERT OR UPDATE OR DELETE ON outlive_watchers FOR EACH ROW")])

    static let schemaTable = "CREATE TABLE IF NOT EXISTS outlive_schema(component TEXT PRIMARY KEY, version INTEGER NOT NULL)"

    static func migrate(_ backend: StoreBackend, components: [SchemaComponent]) throws {
        try backend.write { transaction in
            let application = try transaction.integer("PRAGMA application_id") ?? 0
            let format = try transaction.integer("PRAGMA user_version") ?? 0
            if application != 0 && application != applicationID {
                throw OutliveError.corrupt("the database is not an Outlive store (application_id \(application))")
            }
            if format > formatVersion {
                throw OutliveError(.version, "the store was written in format \(format) by a newer Outlive; this library reads format \(formatVersion)")
            }
            let found = try SchemaObjects.stored(in: transaction)
            var versions: [String: Int64] = [:]
            if application == 0 {
                if !found.isEmpty { throw OutliveError.corrupt("the database holds tables but is not an Outlive store") }
                try transaction.execute("PRAGMA application_id = \(applicationID)")
                try transaction.execute("PRAGMA user_version = \(formatVersion)")
            } else {
                // Nothing of the store is read, and nothing written that could
                // fire a trigger, before its schema is known to be Outlive's own.
                versions = try SchemaObjects.verify(found, components: components, in: transaction)
            }
            try transaction.execute(schemaTable)
            for component in components {
                let current = versions[component.name] ?? 0
                for step in Int(current)..<component.migrations.count {
                    try transaction.executeScript(component.migrations[step])
                }
                try transaction.execute("INSERT INTO outlive_schema(component, version) VALUES (?, ?) ON CONFLICT(component) DO UPDATE SET version = excluded.version",
                                        [.text(component.name), .integer(Int64(component.migrations.count))])
            }
        }
    }
}
