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
        bytes.withUnsafeBytes { bytes in
            for start in stride(from: 0, to: bytes.count, by: 16) {
                let high = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: start, as: UInt64.self))
                let low = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: start + 8, as: UInt64.self))
                // Version 4, variant binary 10.
                made.append(text(high: high & ~0xF000 | 0x4000, low: low & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000))
            }
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
        // On the stack, where three arrays made here cost a task add on
        // PostgreSQL some 2,700 instructions (callgrind).
        var random = (UInt64(0), UInt64(0))
        withUnsafeMutableBytes(of: &random) { fillRandom(UnsafeMutableRawBufferPointer(rebasing: $0[6...])) }
        let high = milliseconds << 16 | 0x7000 | random.0 >> 48 & 0x0FFF
        return text(high: high, low: random.1 & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000)
    }

    private static func fillRandom(_ bytes: UnsafeMutableRawBufferPointer) {
        var filled = 0
        while filled < bytes.count {
            let got = getrandom(bytes.baseAddress! + filled, bytes.count - filled, 0)
            if got > 0 { filled += got }
        }
    }

    /// The 128 bits `high` then `low` as 8-4-4-4-12 lowercase hex, written
    /// in place from the last digit back (appending Characters cost more
    /// than the random bits; an id is made for every row inserted).
    static func text(high: UInt64, low: UInt64) -> String {
        String(unsafeUninitializedCapacity: textLength) { text in
            var at = textLength
            func write(_ value: UInt64, digits: Int) {
                var value = value
                for _ in 0..<digits {
                    at -= 1
                    let nibble = UInt8(truncatingIfNeeded: value) & 0xF
                    text[at] = nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "a") &+ nibble &- 10
                    value >>= 4
                }
            }
            func dash() {
                at -= 1
                text[at] = UInt8(ascii: "-")
            }
            write(low, digits: 12)
            dash()
            write(low >> 48, digits: 4)
            dash()
            write(high, digits: 4)
            dash()
            write(high >> 16, digits: 4)
            dash()
            write(high >> 32, digits: 8)
            return textLength
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
