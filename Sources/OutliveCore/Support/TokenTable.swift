/// A process-wide table of things named by a token: an interaction or a
/// presentation while it runs (its token is what C code holds, a number that
/// is never memory), a task attempt by its claim, the open task queues. A
/// lookup of a token that was removed, or never issued, finds nothing — so a
/// second finish, or a stale token, is an error and never a use after free.
/// Any thread; `body` closures run under the table's lock and must not call
/// back into the table.
public final class TokenTable<Key: Hashable, Value>: @unchecked Sendable {
    private let lock = Lock()
    // Guarded by `lock`.
    private var entries: [Key: Value] = [:]
    private var nextNumber: UInt64 = 1

    public init() {}

    public func insert(_ key: Key, _ value: Value) {
        lock.withLock { entries[key] = value }
    }

    public func value(for key: Key) -> Value? {
        lock.withLock { entries[key] }
    }

    public func contains(_ key: Key) -> Bool {
        lock.withLock { entries[key] != nil }
    }

    @discardableResult
    public func remove(_ key: Key) -> Value? {
        lock.withLock { entries.removeValue(forKey: key) }
    }

    /// Reads and changes one entry in one step (nil: absent, or remove it).
    public func update<T>(_ key: Key, _ body: (inout Value?) throws -> T) rethrows -> T {
        try lock.withLock { try body(&entries[key]) }
    }

    public var values: [Value] { lock.withLock { Array(entries.values) } }
}

extension TokenTable where Key == UInt64 {
    /// Stores `value` under a number never issued before in this table.
    public func issue(_ value: Value) -> UInt64 {
        lock.withLock {
            let token = nextNumber
            nextNumber &+= 1
            entries[token] = value
            return token
        }
    }

    /// A number never issued before, for a value stored later with `insert`.
    public func reserve() -> UInt64 {
        lock.withLock {
            let token = nextNumber
            nextNumber &+= 1
            return token
        }
    }
}

/// An entry that does not keep its object alive.
public struct WeakReference<Object: AnyObject> {
    public weak var object: Object?
    public init(_ object: Object) { self.object = object }
}
