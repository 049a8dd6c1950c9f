import COutliveSystem

/// The objects of a store's schema (tables, indexes, triggers, views), and the
/// check at open that they are exactly those Outlive made.
///
/// The database file is untrusted input: whoever can write it can add a
/// trigger that runs on our writes, a view that stands in for one of our
/// tables, an index on an expression, or change the SQL of our own objects.
/// SQLite's defences (defensive mode, `trusted_schema` off, views disabled; see
/// `SQLiteBackend`) limit what such objects can do; this check refuses them
/// outright. The expected schema is not a second copy of the migrations: the
/// migrations themselves are run, up to the versions the store records, in an
/// in-memory database, and its `sqlite_schema` is compared with the store's —
/// type, name, table and SQL text of every object.
enum SchemaObjects {
    struct Object: Hashable, Comparable {
        let type: String
        let name: String
        let table: String
        let sql: String?

        static func < (a: Object, b: Object) -> Bool { (a.type, a.name) < (b.type, b.name) }
        var label: String { "\(type) \(name)" }
    }

    /// Every object in `sqlite_schema`. Reading it runs nothing the file holds.
    static func stored(in transaction: StoreTransaction) throws -> Set<Object> {
        var objects = Set<Object>()
        try transaction.query("SELECT type, name, tbl_name, sql FROM sqlite_schema") { row in
            objects.insert(Object(type: row.text(0) ?? "", name: row.text(1) ?? "", table: row.text(2) ?? "", sql: row.text(3)))
        }
        return objects
    }

    /// Checks `found` against the schema Outlive makes and returns the version
    /// of each component the store records. `.corrupt` for any difference,
    /// `.version` for a component or version this library does not know.
    static func verify(_ found: Set<Object>, components: [SchemaComponent], in transaction: StoreTransaction) throws -> [String: Int64] {
        guard try expected(versions: []).isSubset(of: found) else {
            throw OutliveError.corrupt("the store's outlive_schema table is missing or is not the one Outlive made")
        }
        // Only now is outlive_schema known to be a plain table of ours.
        let versions = try recordedVersions(components: components, in: transaction)
        let wanted = try expected(versions: components.map { ($0, versions[$0.name] ?? 0) })
        if found != wanted {
            let foreign = found.subtracting(wanted).sorted().map(\.label)
            let missing = wanted.subtracting(found).sorted().map(\.label)
            var parts: [String] = []
            if !foreign.isEmpty { parts.append("objects Outlive did not make or whose SQL differs: \(summary(foreign))") }
            if !missing.isEmpty { parts.append("missing: \(summary(missing))") }
            throw OutliveError.corrupt("the store's schema is not the one Outlive made (\(parts.joined(separator: "; ")))")
        }
        return versions
    }

    private static func summary(_ labels: [String]) -> String {
        labels.count <= 6 ? labels.joined(separator: ", ") : labels.prefix(6).joined(separator: ", ") + " and \(labels.count - 6) more"
    }

    /// The component versions in outlive_schema, each checked: a name this
    /// library knows (another is `.version`: a newer Outlive added it), an
    /// integer from 0 to the number of its migrations (more is `.version`,
    /// anything else `.corrupt`).
    private static func recordedVersions(components: [SchemaComponent], in transaction: StoreTransaction) throws -> [String: Int64] {
        var rows: [(String, Int64)] = []
        try transaction.query("SELECT component, version FROM outlive_schema") { row in
            rows.append((row.text(0) ?? "", row.integer(1)))
        }
        var versions: [String: Int64] = [:]
        for (name, version) in rows {
            guard let component = components.first(where: { $0.name == name }) else {
                throw OutliveError(.version, "the store has a component \"\(name.prefix(64))\" that this library does not know (written by a newer Outlive?)")
            }
            if version > Int64(component.migrations.count) {
                throw OutliveError(.version, "the store's \(name) tables are at version \(version), written by a newer Outlive; this library knows version \(component.migrations.count)")
            }
            guard version >= 0 else { throw OutliveError.corrupt("the store records version \(version) for its \(name) tables") }
            versions[name] = version
        }
        return versions
    }

    /// The schema objects the migrations make, run in a fresh in-memory
    /// database up to the given versions (outlive_schema always). Cached per
    /// list of versions: every open of a store at the same versions asks the same.
    static func expected(versions: [(SchemaComponent, Int64)]) throws -> Set<Object> {
        let key = versions.map { "\($0.0.name)=\($0.1)" }.joined(separator: ",")
        if let cached = cacheLock.withLock({ cache[key] }) { return cached }
        let memory = try SQLiteConnection(path: ":memory:", flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX)
        try memory.exec(Schema.schemaTable)
        for (component, version) in versions {
            for step in 0..<Int(version) { try memory.exec(component.migrations[step]) }
        }
        var objects = Set<Object>()
        try memory.run("SELECT type, name, tbl_name, sql FROM sqlite_schema", []) { row in
            objects.insert(Object(type: row.text(0) ?? "", name: row.text(1) ?? "", table: row.text(2) ?? "", sql: row.text(3)))
        }
        cacheLock.withLock { cache[key] = objects }
        return objects
    }

    private static let cacheLock = Lock()
    nonisolated(unsafe) private static var cache: [String: Set<Object>] = [:]
}
