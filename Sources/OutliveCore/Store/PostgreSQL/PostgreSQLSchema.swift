/// Where a store lives in a PostgreSQL database, and its tables.
///
/// Several stores share one database without seeing each other: each store is a
/// schema of its own, `outlive_<store name>`, and every connection of the store
/// sets `search_path` to it, so the systems' unqualified SQL (`outlive_feed`, …)
/// names the store's own tables. Advisory locks are per database, not per
/// schema: their keys carry the schema's OID (see PostgreSQLBackend.storeKey).
///
/// Migrations run in one transaction under a transaction advisory lock derived
/// from the schema name (concurrent openers: one migrates, the others wait and
/// find it done). A store whose format or a component is newer than this
/// library is refused with `.version`, as SQLite stores are.
enum PostgreSQLSchema {
    static let formatVersion: Int64 = 1
    static let maxStoreNameLength = 40

    /// The schema of `store`: lower-case letters, digits and `_`, starting with a
    /// letter (so that the name needs no quoting anywhere, channel names included).
    static func schemaName(store: String) throws -> String {
        let bytes = Array(store.utf8)
        guard !bytes.isEmpty, bytes.count <= maxStoreNameLength,
              let first = bytes.first, first >= UInt8(ascii: "a") && first <= UInt8(ascii: "z"),
              bytes.allSatisfy({ ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: "_") })
        else {
            throw OutliveError.invalidArgument("the PostgreSQL store name \"\(store)\" must be 1 to \(maxStoreNameLength) lower-case letters, digits or '_', starting with a letter")
        }
        return "outlive_" + store
    }

    /// The tables every store has: `Schema.store`'s PostgreSQL steps.
    static var store: SchemaComponent { Schema.store }

    /// Creates (unless `creating` is false: `.notFound` then) or upgrades the
    /// store's schema; leaves the connection's search_path on it.
    static func migrate(_ connection: PostgreSQLConnection, schema: String, components: [SchemaComponent], creating: Bool = true) throws {
        let quoted = try connection.quoteIdentifier(schema)
        try connection.exec("BEGIN")
        do {
            try connection.run("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", [.text("outlive migration " + schema)])
            let exists = try connection.integer("SELECT count(*) FROM pg_namespace WHERE nspname = ?", [.text(schema)]) ?? 0
            var marked: Int64 = 0
            if exists > 0 {
                marked = try connection.integer("SELECT count(*) FROM pg_tables WHERE schemaname = ? AND tablename = 'outlive_schema'", [.text(schema)]) ?? 0
                let tables = try connection.integer("SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ?", [.text(schema)]) ?? 0
                if marked == 0 && tables > 0 {
                    throw OutliveError.corrupt("the PostgreSQL schema \(schema) holds tables but is not an Outlive store")
                }
            }
            if !creating && marked == 0 {
                throw OutliveError.notFound("the database has no Outlive store in the schema \(schema)")
            }
            // Only a missing schema is created: a role without CREATE on the
            // database can use a schema its administrator made for it
            // (docs/postgresql.md, "A database and a role").
            if exists == 0 {
                do {
                    try connection.exec("CREATE SCHEMA \(quoted)")
                } catch let error as OutliveError where error.code == .permission {
                    throw OutliveError(.permission, "creating the schema \(schema) of this store needs CREATE on the database; or have it created for this role: CREATE SCHEMA \(schema) AUTHORIZATION <role> (\(error.message))")
                }
            }
            try connection.exec("SET LOCAL search_path = \(quoted)")
            try connection.exec("CREATE TABLE IF NOT EXISTS outlive_schema(component text PRIMARY KEY, version bigint NOT NULL)")
            let format = try connection.integer("SELECT version FROM outlive_schema WHERE component = 'format'") ?? 0
            if format > formatVersion {
                throw OutliveError(.version, "the store \(schema) was written in format \(format) by a newer Outlive; this library reads format \(formatVersion)")
            }
            try connection.run("INSERT INTO outlive_schema(component, version) VALUES ('format', ?) ON CONFLICT(component) DO NOTHING", [.integer(formatVersion)])
            // A component not yet ported to PostgreSQL gets no tables here (see SchemaComponent).
            for component in components {
                guard let migrations = component.postgresql else { continue }
                let current = try connection.integer("SELECT version FROM outlive_schema WHERE component = ?", [.text(component.name)]) ?? 0
                if current > Int64(migrations.count) {
                    throw OutliveError(.version, "the store's \(component.name) tables are at version \(current), written by a newer Outlive; this library knows version \(migrations.count)")
                }
                for step in Int(current)..<migrations.count where !migrations[step].isEmpty {
                    try connection.exec(migrations[step])
                }
                try connection.run("INSERT INTO outlive_schema(component, version) VALUES (?, ?) ON CONFLICT(component) DO UPDATE SET version = excluded.version",
                                   [.text(component.name), .integer(Int64(migrations.count))])
            }
            try refuseForeignObjects(connection, schema: schema, functions: components.flatMap(\.postgresqlFunctions))
            try connection.exec("COMMIT")
        } catch {
            if !connection.isBroken { try? connection.exec("ROLLBACK") }
            throw error
        }
        try connection.exec("SET search_path = \(quoted)")
    }

    /// The schema is untrusted input, as an SQLite file is: whoever can write
    /// it could add a trigger that runs on our writes, a rule or a view that
    /// stands in for a table. Outlive makes none of these but the functions
    /// its components declare (`PostgreSQLFunction`): a function is accepted
    /// only with a declared name, source, arguments and result, a trigger
    /// only with a declared name, table and function (the triggers of foreign
    /// keys are PostgreSQL's own, marked internal); anything else is refused.
    /// Cheaper than SchemaObjects.verify's comparison of every object's SQL,
    /// which PostgreSQL does not keep as text for tables (see docs/postgresql.md).
    private static func refuseForeignObjects(_ connection: PostgreSQLConnection, schema: String,
                                             functions: [PostgreSQLFunction]) throws {
        var foreign = try connection.integer("""
            SELECT (SELECT count(*) FROM pg_class c WHERE c.relnamespace = n.oid AND c.relkind NOT IN ('r', 'i', 'S'))
                 + (SELECT count(*) FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class WHERE c.relnamespace = n.oid)
                 + (SELECT count(*) FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid WHERE c.relnamespace = n.oid)
            FROM pg_namespace n WHERE n.nspname = ?
            """, [.text(schema)]) ?? 0
        let declared = Dictionary(functions.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        try connection.run("""
            SELECT p.proname, p.prosrc, pg_get_function_arguments(p.oid), p.prorettype::regtype::text,
                   l.lanname = 'plpgsql' AND p.prokind = 'f' AND NOT p.prosecdef AND p.proconfig IS NULL
            FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE p.pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = ?)
            """, [.text(schema)]) { row in
            guard let name = row.text(0), let function = declared[name], row.integer(4) == 1, row.text(1) == function.body,
                  row.text(2) == function.arguments, row.text(3) == function.returns else {
                foreign += 1
                return
            }
        }
        var triggers: Set<String> = []
        for function in functions {
            for trigger in function.triggers { triggers.insert("\(trigger.name) \(trigger.table) \(function.name)") }
        }
        try connection.run("""
            SELECT t.tgname || ' ' || c.relname || ' ' || p.proname, p.pronamespace = c.relnamespace
            FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid
            WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = ?) AND NOT t.tgisinternal
            """, [.text(schema)]) { row in
            if row.integer(1) != 1 || !triggers.contains(row.text(0) ?? "") { foreign += 1 }
        }
        if foreign > 0 {
            throw OutliveError.corrupt("the PostgreSQL schema \(schema) holds \(foreign) trigger(s), function(s), view(s), rule(s) or policies Outlive did not make")
        }
    }
}
