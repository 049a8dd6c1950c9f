/// What a connection made of an SQL text (a prepared statement, a
/// translation), found by where the text's bytes lie rather than by hashing
/// them: SipHash over a statement's every byte, and a comparison, cost some
/// 700 to 3,000 instructions a lookup (callgrind), a fiftieth of an
/// operation. The SQL of a hot path is nearly always a literal, whose bytes
/// stay at one place in the binary; a string built at run time keeps its
/// bytes in its storage, which the entry's copy of the string keeps alive
/// and unchanged. So an entry made for bytes at the same place and of the
/// same length is this text's. A string of 15 bytes or fewer holds its bytes
/// inline (no place to find it by): `make` is asked each time, as it is on
/// a miss. Entries are overwritten, never freed: the owner's own cache, which
/// `make` consults, holds what must be released.
struct PlacedSQLCache<Value> {
    private var slots: [Slot]
    private let mask: Int

    private struct Slot {
        var sql = ""
        var base: UnsafeRawPointer?
        var count = 0
        var value: Value?
    }

    /// `count`: the number of slots, a power of two.
    init(count: Int) {
        precondition(count > 0 && count & (count - 1) == 0, "a power of two")
        slots = Array(repeating: Slot(), count: count)
        mask = count - 1
    }

    mutating func value(for sql: String, make: (String) throws -> Value) rethrows -> Value {
        let place = sql.utf8.withContiguousStorageIfAvailable { bytes -> (UnsafeRawPointer, Int)? in
            guard bytes.count > 15, let base = bytes.baseAddress else { return nil }
            return (UnsafeRawPointer(base), bytes.count)
        } ?? nil
        guard let (base, count) = place else { return try make(sql) }
        let slot = Int(bitPattern: UInt(bitPattern: base) >> 4) & mask
        if slots[slot].base == base, slots[slot].count == count, let value = slots[slot].value { return value }
        let value = try make(sql)
        slots[slot] = Slot(sql: sql, base: base, count: count, value: value)
        return value
    }

    /// Forgets every entry (what they held is no longer valid).
    mutating func removeAll() {
        for index in slots.indices { slots[index] = Slot() }
    }
}
