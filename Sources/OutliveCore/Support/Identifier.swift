import COutliveSystem

/// UUIDs in their 36-character text form: random (version 4) run ids, signal
/// ids and message ids; time-ordered (version 7, `makeTimeOrdered`) task ids on
/// PostgreSQL (SQLite's carry their seq: `TaskID`).
/// Read from getrandom(2); no Foundation in the core.
public enum Identifier {
    public static let textLength = 36

    public static func make() -> String {
        make(count: 1)[0]
    }

    /// `count` identifiers from one getrandom(2) call: a step that claims a
    /// batch of tasks makes a claim token for each.
    public static func make(count: Int) -> [String] {
        var bytes = [UInt8](repeating: 0, count: 16 * count)
        bytes.withUnsafeMutableBytes { fillRandom($0) }
        var made: [String] = []
        made.reserveCapacity(count)
        for start in stride(from: 0, to: bytes.count, by: 16) {
            bytes[start + 6] = (bytes[start + 6] & 0x0F) | 0x40
            bytes[start + 8] = (bytes[start + 8] & 0x3F) | 0x80
            made.append(bytes.withUnsafeBytes { format(UnsafeRawBufferPointer(rebasing: $0[start..<start + 16])) })
        }
        return made
    }

    /// A time-ordered (version 7) UUID: the wall clock's milliseconds, then
    /// 74 random bits. Ids made one after the other sort near each other, so
    /// that rows keyed by them sit together in their index: a task's id,
    /// whose index a batch of tasks ended in one transaction rewrites — 32
    /// random ids touched some 32 pages of it (each written to the WAL and
    /// fsynced at FULL), 32 ids made in turn a page or two.
    public static func makeTimeOrdered() -> String {
        let milliseconds = UInt64(max(0, min(Clock.wall() * 1000, Double(UInt64(1) << 47))))
        // On the stack: three arrays made here cost a task add on PostgreSQL
        // some 2,700 instructions (callgrind).
        return withUnsafeTemporaryAllocation(byteCount: 16, alignment: 8) { bytes in
            fillRandom(UnsafeMutableRawBufferPointer(rebasing: bytes[6...]))
            for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * UInt64(5 - index))) }
            bytes[6] = (bytes[6] & 0x0F) | 0x70
            bytes[8] = (bytes[8] & 0x3F) | 0x80
            return format(UnsafeRawBufferPointer(bytes))
        }
    }

    private static func fillRandom(_ bytes: UnsafeMutableRawBufferPointer) {
        var filled = 0
        while filled < bytes.count {
            let got = getrandom(bytes.baseAddress! + filled, bytes.count - filled, 0)
            if got > 0 { filled += got }
        }
    }

    /// 16 bytes as 8-4-4-4-12 lowercase hex, written straight into the
    /// string's storage (appending Characters cost more than the random bytes).
    private static func format(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: textLength) { text in
            let hex: StaticString = "0123456789abcdef"
            let digits = hex.utf8Start
            var at = 0
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    text[at] = UInt8(ascii: "-")
                    at += 1
                }
                text[at] = digits[Int(bytes[index] >> 4)]
                text[at + 1] = digits[Int(bytes[index] & 0x0F)]
                at += 2
            }
            return at
        }
    }

    /// True for 8-4-4-4-12 hexadecimal text (either case).
    public static func isValid(_ text: String) -> Bool {
        // A native string's own bytes, without copying them into an array.
        text.utf8.withContiguousStorageIfAvailable(isValid) ?? Array(text.utf8).withUnsafeBufferPointer(isValid)
    }

    /// True for 8-4-4-4-12 hexadecimal bytes (either case).
    public static func isValid(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard utf8.count == 36 else { return false }
        for index in 0..<36 {
            let byte = utf8[index]
            if index == 8 || index == 13 || index == 18 || index == 23 {
                if byte != UInt8(ascii: "-") { return false }
            } else if !((byte >= 48 && byte <= 57) || (byte >= 97 && byte <= 102) || (byte >= 65 && byte <= 70)) {
                return false
            }
        }
        return true
    }

    /// `text` in lower case, itself when it is already (no new string):
    /// ids are stored in lower case, and those Outlive makes are.
    public static func lowercased(_ text: String) -> String {
        let upper = text.utf8.withContiguousStorageIfAvailable { $0.contains { $0 >= 65 && $0 <= 90 } } ?? true
        return upper ? text.lowercased() : text
    }
}
