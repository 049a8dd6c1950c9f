/// Every key-value entry as stored, for tools that show a store as it is (the
/// `outlive kv` command): keys come back as their stored bytes, so a key that
/// is not UTF-8 (written by a crafted or foreign program) is listed, escaped
/// by the tool, instead of being repaired into a key that does not exist.
public enum KeyValueListing {
    public struct Entry {
        public let key: [UInt8]
        public let value: [UInt8]
    }

    /// Entries whose key starts with `prefix` (bytes), in key order.
    public static func entries(of store: Store, prefix: [UInt8]) throws -> [Entry] {
        try store.checkUsable()
        var entries: [Entry] = []
        try store.database.read { transaction in
            // PostgreSQL's key is text in the database's encoding: its bytes are convert_to's.
            let sql = store.database.engine == .sqlite ? "SELECT CAST(key AS BLOB), CAST(value AS BLOB) FROM outlive_kv ORDER BY key"
                                                       : "SELECT convert_to(key, 'UTF8'), value FROM outlive_kv ORDER BY key"
            try transaction.query(sql) { row in
                let key = row.blob(0) ?? []
                guard key.starts(with: prefix) else { return }
                entries.append(Entry(key: key, value: row.blob(1) ?? []))
            }
        }
        return entries
    }
}
