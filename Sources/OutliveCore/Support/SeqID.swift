import COutliveSystem

/// Ids that carry their row's seq, on SQLite: task ids since step 10 of the
/// tasks schema (`TaskID`), message ids since step 4 of the messages schema.
/// A version 8 UUID (RFC 9562, "custom") whose first 60 bits are the seq and
/// whose other 62 are random, so that a lookup by id is a lookup of the rowid
/// and a comparison of the text, and no index of ids is written by an insert
/// (a page of the few an insert writes, where the cost of a commit at
/// synchronous=NORMAL is the pages it writes). A seq can be taken again once
/// the newest rows are gone; the random part tells the two rows apart: the
/// old id is not found. Ids of other forms — every id stored before the
/// step, PostgreSQL's, and a seq too large for 60 bits — are found through a
/// partial unique index of the table's ids not of the new form (their 15th
/// character is not `8`).
///
/// The table must name its columns `id` (the text) and `seq` (SQLite: the
/// rowid). The stored rows are untrusted: a row is the row of an id only if
/// the text stored is that id, whatever seq the id claims.
enum SeqID {
    /// The largest seq a new-form id carries (60 bits); a row of a larger
    /// seq gets a random id (found through the index of ids).
    static let maxSeq: Int64 = (1 << 60) - 1

    /// The index of the version character in the text (`xxxxxxxx-xxxx-V`).
    static let versionIndex = 14

    /// What selects the rows of ids not of the new form: the condition of
    /// the partial index of ids, which a lookup repeats word for word for
    /// SQLite to use the index.
    static let indexedForm = "substr(id, 15, 1) <> '8'"

    /// A new id for the row of `seq` (SQLite): its seq and 62 random bits.
    static func make(seq: Int64) -> String {
        guard seq >= 0, seq <= maxSeq else { return Identifier.make() }
        let random = COutlive_random64()
        // 32 hex digits: seq bits 59..12, the version (8), seq bits 11..0,
        // the variant (binary 10) and 62 random bits.
        let high = (UInt64(seq) >> 12) << 16 | 0x8000 | UInt64(seq) & 0xFFF
        let low = random & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000
        return Identifier.text(high: high, low: low)
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

    /// The condition (on the table, unqualified) selecting the row of `id`,
    /// and its arguments. SQLite: a new-form id by its seq and its text, any
    /// other by the partial index of ids; PostgreSQL: by the unique index of
    /// ids, which holds them all.
    static func row(_ id: String, _ engine: StoreEngine) -> (condition: String, arguments: [SQLValue]) {
        guard engine == .sqlite else { return ("id = ?", [.text(id)]) }
        if let seq = seq(of: id) { return ("seq = ? AND id = ?", [.integer(seq), .text(id)]) }
        return ("id = ? AND \(indexedForm)", [.text(id)])
    }
}
