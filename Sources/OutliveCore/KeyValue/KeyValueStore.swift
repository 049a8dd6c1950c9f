/// Durable key-value pairs shared by every process of a store: atomic
/// read-modify-write (`update` runs its modifier inside BEGIN IMMEDIATE, so no
/// other writer of any process interleaves) and observers by key prefix that see
/// changes of any process, delivered on the loop.
///
/// Observers are told the value a key has when they are called: several quick
/// changes of one key may reach them as one call with the latest value (NULL
/// bytes for a deleted key).
public final class KeyValueStore {
    public static let schema = SchemaComponent(name: "kv", migrations: [
        "CREATE TABLE outlive_kv(key TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID",
    ], postgresql: [
        // COLLATE "C": keys compare and sort by their bytes, as SQLite's BINARY does.
        #"CREATE TABLE outlive_kv(key text COLLATE "C" PRIMARY KEY, value bytea NOT NULL)"#,
    ])
    public static let topic = "kv"
    public static let maxKeySize = 1_024
    public static let maxValueSize = 64 << 20

    public typealias Observer = (_ key: String, _ value: [UInt8]?) -> Void

    private let store: Store
    private let lock = Lock()
    private var observers: [UInt64: (prefix: String, observer: Observer)] = [:]
    private var nextToken: UInt64 = 1
    private var subscription: UInt64?

    public init(store: Store) {
        self.store = store
    }

    public static func validate(key: String) throws {
        guard !key.isEmpty else { throw OutliveError.invalidArgument("the key is empty") }
        guard key.utf8.count <= maxKeySize else {
            throw OutliveError.invalidArgument("the key is \(key.utf8.count) bytes long; keys are at most \(maxKeySize) bytes")
        }
    }

    public static func validate(valueSize: Int) throws {
        guard valueSize <= maxValueSize else {
            throw OutliveError.invalidArgument("the value is \(valueSize) bytes long; values are at most \(maxValueSize) bytes")
        }
    }

    public func set(_ key: String, _ value: [UInt8]) throws {
        try KeyValueStore.validate(key: key)
        try KeyValueStore.validate(valueSize: value.count)
        try store.checkUsable()
        try store.database.groupedWrite { transaction in
            // Later: on PostgreSQL the whole set is then one round trip.
            try transaction.executeLater("INSERT INTO outlive_kv(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                                         [.text(key), .blob(value)])
            try transaction.recordChange(topic: KeyValueStore.topic, key: key)
        }
    }

    public func get(_ key: String) throws -> [UInt8] {
        try KeyValueStore.validate(key: key)
        try store.checkUsable()
        guard let value = try store.database.read({ try KeyValueStore.read(key, in: $0) }) else {
            throw OutliveError.notFound("no value for key \"\(key)\"")
        }
        return value
    }

    public func delete(_ key: String) throws {
        try KeyValueStore.validate(key: key)
        try store.checkUsable()
        try store.database.groupedWrite { transaction in
            try transaction.execute("DELETE FROM outlive_kv WHERE key = ?", [.text(key)])
            guard transaction.changedRows == 1 else { throw OutliveError.notFound("no value for key \"\(key)\"") }
            try transaction.recordChange(topic: KeyValueStore.topic, key: key)
        }
    }

    /// What a modifier decided.
    public enum Update {
        case unchanged
        case set([UInt8])
        case delete
    }

    /// Reads the value and writes what `modifier` decides, atomically across
    /// processes. The modifier is called exactly once; if it throws, nothing changes.
    public func update(_ key: String, _ modifier: ([UInt8]?) throws -> Update) throws {
        try KeyValueStore.validate(key: key)
        try store.checkUsable()
        try store.database.write { transaction in
            let current = try KeyValueStore.read(key, in: transaction)
            switch try modifier(current) {
            case .unchanged:
                return
            case .set(let value):
                try KeyValueStore.validate(valueSize: value.count)
                try transaction.execute("INSERT INTO outlive_kv(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                                        [.text(key), .blob(value)])
            case .delete:
                guard current != nil else { return }
                try transaction.execute("DELETE FROM outlive_kv WHERE key = ?", [.text(key)])
            }
            try transaction.recordChange(topic: KeyValueStore.topic, key: key)
        }
    }

    static func read(_ key: String, in transaction: StoreTransaction) throws -> [UInt8]? {
        var value: [UInt8]?
        try transaction.query("SELECT value FROM outlive_kv WHERE key = ?", [.text(key)]) { value = $0.blob(0) ?? [] }
        return value
    }

    /// Keys in order, starting after `after`, at most `limit`, under `prefix`.
    ///
    /// The database is untrusted input: a stored key that is not UTF-8 text
    /// without NUL (Outlive never writes one) cannot be returned as a C string
    /// or named again by a caller, so it is skipped. The walk continues from
    /// its stored bytes, not from a decoding of them: a key decoded with
    /// replacement characters, or cut at its NUL, would sort before the stored
    /// one and be found again for ever.
    public func keys(prefix: String, after: String? = nil, limit: Int = 1_000) throws -> [String] {
        try store.checkUsable()
        var keys: [String] = []
        let prefixBytes = Array(prefix.utf8)
        var cursor = Array((after ?? "").utf8)
        try store.database.read { transaction in
            while keys.count < limit {
                let wanted = min(limit - keys.count, 1_000)
                var seen = 0
                var last: [UInt8]?
                try transaction.query(KeyValueStore.keysAfter(engine: store.database.engine),
                                      [.text(prefix), KeyValueStore.cursor(cursor, engine: store.database.engine), .integer(Int64(wanted))]) { row in
                    seen += 1
                    last = row.textBytes(0)
                    if let key = row.textIfValid(0) { keys.append(key) }
                }
                guard seen == wanted, let last, last.starts(with: prefixBytes) else { break }
                cursor = last
            }
        }
        // The SQL range starts at the prefix; keep only keys that really have it.
        if let end = keys.firstIndex(where: { !$0.utf8.starts(with: prefix.utf8) }) { keys.removeSubrange(end...) }
        return keys
    }

    /// SQLite may hold a key of any type and any bytes (the file is untrusted):
    /// the cursor is the stored bytes, compared as text. PostgreSQL's column
    /// holds only valid text, so the cursor is text there.
    private static func keysAfter(engine: StoreEngine) -> String {
        switch engine {
        case .sqlite: "SELECT key FROM outlive_kv WHERE key >= ? AND key > CAST(? AS TEXT) AND typeof(key) = 'text' ORDER BY key LIMIT ?"
        case .postgresql: "SELECT key FROM outlive_kv WHERE key >= ? AND key > ? ORDER BY key LIMIT ?"
        }
    }

    private static func cursor(_ bytes: [UInt8], engine: StoreEngine) -> SQLValue {
        switch engine {
        case .sqlite: .blob(bytes)
        case .postgresql: .text(String(decoding: bytes, as: UTF8.self))
        }
    }

    /// How many keys have `prefix`.
    public func count(prefix: String) throws -> Int {
        try store.checkUsable()
        return try store.database.read { transaction in
            // substr compares bytes of the prefix exactly, whatever the collation.
            Int(try transaction.integer("SELECT count(*) FROM outlive_kv WHERE key >= ? AND substr(key, 1, length(?)) = ?",
                                        [.text(prefix), .text(prefix), .text(prefix)]) ?? 0)
        }
    }

    // MARK: - Observers

    public func observe(prefix: String, _ observer: @escaping Observer) throws -> UInt64 {
        guard prefix.utf8.count <= KeyValueStore.maxKeySize else {
            throw OutliveError.invalidArgument("the key prefix is longer than \(KeyValueStore.maxKeySize) bytes")
        }
        try store.checkUsable()
        if lock.withLock({ subscription == nil }) {
            let token = try store.subscribe(topic: KeyValueStore.topic, reading: { [weak self] batch, transaction in
                try self?.read(batch, in: transaction)
            }) { [weak self] batch in self?.deliver(batch) }
            lock.withLock { if subscription == nil { subscription = token } else { store.unsubscribe(token) } }
        }
        return lock.withLock {
            let token = nextToken
            nextToken += 1
            observers[token] = (prefix, observer)
            return token
        }
    }

    public func unobserve(_ token: UInt64) throws {
        try lock.withLock {
            guard observers.removeValue(forKey: token) != nil else {
                throw OutliveError.notFound("no observer with token \(token)")
            }
        }
    }

    /// The observers' values of a batch, read in the feed's transaction; the
    /// observers are called after it. A resync lists keys (its own reads):
    /// left to `deliver`.
    private func read(_ batch: ChangeBatch, in transaction: StoreTransaction) throws -> (() -> Void)? {
        if batch.resync { return { [weak self] in self?.deliver(batch) } }
        let current = lock.withLock { observers }
        let wanted = KeyValueStore.wanted(changedKeys(batch), by: current)
        guard !wanted.isEmpty else { return nil }
        var values: [String: [UInt8]] = [:]
        for key in wanted { values[key] = try KeyValueStore.read(key, in: transaction) }
        return { [weak self] in self?.call(current, for: wanted, values) }
    }

    private func deliver(_ batch: ChangeBatch) {
        let current = lock.withLock { observers }
        guard !current.isEmpty else { return }
        var keys = changedKeys(batch)
        if batch.resync {
            var seen = Set(keys)
            for (_, entry) in current {
                for key in (try? self.keys(prefix: entry.prefix, limit: Int.max)) ?? [] where seen.insert(key).inserted { keys.append(key) }
            }
        }
        let wanted = KeyValueStore.wanted(keys, by: current)
        guard !wanted.isEmpty else { return }
        // One read transaction for the whole batch.
        var values: [String: [UInt8]] = [:]
        do {
            try store.database.read { transaction in
                for key in wanted { values[key] = try KeyValueStore.read(key, in: transaction) }
            }
        } catch {
            return
        }
        call(current, for: wanted, values)
    }

    /// The batch's keys, each once, in the order of its last change.
    private func changedKeys(_ batch: ChangeBatch) -> [String] {
        var keys: [String] = []
        var seen = Set<String>()
        for key in batch.keys.reversed() where seen.insert(key).inserted { keys.append(key) }
        keys.reverse()
        return keys
    }

    private static func wanted(_ keys: [String], by observers: [UInt64: (prefix: String, observer: Observer)]) -> [String] {
        guard !observers.isEmpty else { return [] }
        return keys.filter { key in observers.values.contains { key.utf8.starts(with: $0.prefix.utf8) } }
    }

    private func call(_ current: [UInt64: (prefix: String, observer: Observer)], for wanted: [String], _ values: [String: [UInt8]]) {
        let ordered = current.sorted { $0.key < $1.key }
        for key in wanted {
            for (token, entry) in ordered where key.utf8.starts(with: entry.prefix.utf8) {
                // A still-registered observer only: one removed by an earlier call is
                // skipped, and none once an earlier call closed the store.
                guard store.isOpen else { return }
                guard lock.withLock({ observers[token] != nil }) else { continue }
                entry.observer(key, values[key])
            }
        }
    }
}
