/// The table of periodic tasks (docs/tasks.md, "Periodic tasks"): one row per
/// named schedule — its work as a serialized handler, the queue and priority
/// of the tasks it adds, its period (`interval` seconds from `anchor`, or a
/// `cron` expression), `next_fire`, the period not yet fired, and
/// `last_fired`, the period of its last firing. `outlive_schedules_next`
/// makes the timer (the earliest next_fire) and the due rows an index lookup.
enum ScheduleSchema {
    static let component = SchemaComponent(name: "schedules", migrations: [
        """
        CREATE TABLE outlive_schedules(
            name TEXT PRIMARY KEY,
            handler_name TEXT NOT NULL,
            handler BLOB NOT NULL,
            queue TEXT NOT NULL,
            priority INTEGER NOT NULL,
            interval REAL,
            cron TEXT,
            anchor REAL NOT NULL,
            next_fire REAL NOT NULL,
            last_fired REAL,
            created REAL NOT NULL);
        CREATE INDEX outlive_schedules_next ON outlive_schedules(next_fire)
        """,
    ], postgresql: [
        // `rowid` is a column here, so that the same SQL names a row that the
        // firing skips when it cannot fire (SQLite's implicit rowid).
        #"""
        CREATE TABLE outlive_schedules(
            rowid bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
            name text COLLATE "C" PRIMARY KEY,
            handler_name text COLLATE "C" NOT NULL,
            handler bytea NOT NULL,
            queue text COLLATE "C" NOT NULL,
            priority bigint NOT NULL,
            interval double precision,
            cron text,
            anchor double precision NOT NULL,
            next_fire double precision NOT NULL,
            last_fired double precision,
            created double precision NOT NULL);
        CREATE INDEX outlive_schedules_next ON outlive_schedules(next_fire)
        """#,
    ])

    static let topic = "schedules"

    /// The rows a firing may read: every column has the type Outlive writes
    /// and every time is a finite number. The database is untrusted input: a
    /// row damaged otherwise is never due (and never arms a timer), and
    /// `outlive schedules` reports the store as damaged. PostgreSQL's columns
    /// are typed by the schema: only the values are checked (NaN and the
    /// infinities fall outside every range).
    static func usable(_ engine: StoreEngine) -> String {
        switch engine {
        case .sqlite: """
            typeof(name) = 'text' AND typeof(handler_name) = 'text' AND typeof(handler) = 'blob' \
            AND typeof(queue) = 'text' AND typeof(priority) = 'integer' AND priority BETWEEN -2147483648 AND 2147483647 \
            AND ((typeof(interval) IN ('real', 'integer') AND interval BETWEEN 0.01 AND 1e9 AND cron IS NULL) \
                 OR (interval IS NULL AND typeof(cron) = 'text')) \
            AND typeof(anchor) IN ('real', 'integer') AND anchor BETWEEN -1e12 AND 1e12 \
            AND typeof(next_fire) IN ('real', 'integer') AND next_fire BETWEEN -1e12 AND 1e12
            """
        case .postgresql: """
            priority BETWEEN -2147483648 AND 2147483647 \
            AND ((interval BETWEEN 0.01 AND 1e9 AND cron IS NULL) OR (interval IS NULL AND cron IS NOT NULL)) \
            AND anchor BETWEEN -1e12 AND 1e12 AND next_fire BETWEEN -1e12 AND 1e12
            """
        }
    }
}
