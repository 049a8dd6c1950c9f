import COutliveSystem

/// Task ids (docs/tasks.md, "Task ids"). On SQLite since step 10 of the tasks
/// schema a new task's id carries its `seq`: a version 8 UUID (RFC 9562,
/// "custom") whose first 60 bits are the seq and whose other 62 are random,
/// so that a lookup by id is a lookup of the rowid and a comparison of the
/// text, and no index of ids is written by an add (one page of the three an
/// add wrote, where the cost of an add at synchronous=NORMAL is the pages
/// its commit writes). A seq can be taken again once the newest tasks are
/// gone (step 8); the random part tells the two tasks apart: the old id is
/// not found. Ids of other forms — every id of a store before step 10, and
/// PostgreSQL's, which are random (version 4) — are found through the
/// partial unique index `outlive_tasks_id`, which holds every row whose id is
/// not of the new form (its 15th character is not `8`).
///
/// The stored rows are untrusted: a row is the task of an id only if the
/// text stored is that id, whatever seq the id claims.
enum TaskID {
    /// The largest seq a new-form id carries (60 bits); a task of a larger
    /// seq gets a random id (found through the index of ids).
    static let maxSeq: Int64 = (1 << 60) - 1

    /// The index of the version character in the text (`xxxxxxxx-xxxx-V`).
    static let versionIndex = 14

    /// What selects the rows of ids not of the new form: the condition of the
    /// partial index `outlive_tasks_id`, which a lookup repeats word for word
    /// for SQLite to use the index.
    static let indexedForm = "substr(id, 15, 1) <> '8'"

    /// A new id for the task of `seq` (SQLite): its seq and 62 random bits.
    static func make(seq: Int64) -> String {
        guard seq >= 0, seq <= maxSeq else { return Identifier.make() }
        let random = COutlive_random64()
        // 32 hex digits: seq bits 59..12, the version (8), seq bits 11..0,
        // the variant (binary 10) and 62 random bits.
        let high = (UInt64(seq) >> 12) << 16 | 0x8000 | UInt64(seq) & 0xFFF
        let low = random & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000
        // Written in place, each group of digits from its last: an id is made
        // for every task added (a walk over the 32 digits that placed the
        // dashes and shifted by the digit cost some 700 instructions).
        return String(unsafeUninitializedCapacity: Identifier.textLength) { text in
            func hex(_ value: UInt64, _ digits: Int, at start: Int) {
                var value = value
                for at in stride(from: start + digits - 1, through: start, by: -1) {
                    let nibble = UInt8(truncatingIfNeeded: value) & 0xF
                    text[at] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") - 10 + nibble
                    value >>= 4
                }
            }
            hex(high >> 32, 8, at: 0)
            text[8] = UInt8(ascii: "-")
            hex(high >> 16, 4, at: 9)
            text[13] = UInt8(ascii: "-")
            hex(high, 4, at: 14)
            text[18] = UInt8(ascii: "-")
            hex(low >> 48, 4, at: 19)
            text[23] = UInt8(ascii: "-")
            hex(low, 12, at: 24)
            return Identifier.textLength
        }
    }

    /// The seq a new-form id carries; nil for an id of another form (or text
    /// that is not an id at all).
    static func seq(of id: String) -> Int64? {
        guard Identifier.isValid(id) else { return nil }
        let utf8 = Array(id.utf8)
        guard utf8[versionIndex] == UInt8(ascii: "8") else { return nil }
        var seq: Int64 = 0
        // Hex digits 0-11 then 13-15: the characters before the version, the dashes skipped.
        for index in 0..<versionIndex + 4 where index != 8 && index != 13 && index != versionIndex {
            seq = seq << 4 | Int64(hexValue(utf8[index]))
        }
        return seq
    }

    private static func hexValue(_ byte: UInt8) -> UInt8 {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: byte - UInt8(ascii: "A") + 10
        }
    }

    /// The condition (on `outlive_tasks`, unqualified) selecting the row of
    /// task `id`, and its arguments. SQLite: a new-form id by its seq and its
    /// text, any other by the partial index of ids; PostgreSQL: by the
    /// unique index of ids, which holds them all.
    static func row(_ id: String, _ engine: StoreEngine) -> (condition: String, arguments: [SQLValue]) {
        guard engine == .sqlite else { return ("id = ?", [.text(id)]) }
        if let seq = seq(of: id) { return ("seq = ? AND id = ?", [.integer(seq), .text(id)]) }
        return ("id = ? AND \(indexedForm)", [.text(id)])
    }
}
