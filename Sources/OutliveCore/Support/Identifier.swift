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
        var filled = 0
        while filled < bytes.count {
            let got = bytes.withUnsafeMutableBytes { getrandom($0.baseAddress! + filled, $0.count - filled, 0) }
            if got > 0 { filled += got }
        }
        // Formatted as bytes: appending Characters costs more than the random bytes.
        let hex = Array("0123456789abcdef".utf8)
        var made: [String] = []
        made.reserveCapacity(count)
        var text = [UInt8]()
        text.reserveCapacity(36)
        for start in stride(from: 0, to: bytes.count, by: 16) {
            bytes[start + 6] = (bytes[start + 6] & 0x0F) | 0x40
            bytes[start + 8] = (bytes[start + 8] & 0x3F) | 0x80
            text.removeAll(keepingCapacity: true)
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
                let byte = bytes[start + index]
                text.append(hex[Int(byte >> 4)])
                text.append(hex[Int(byte & 0x0F)])
            }
            made.append(String(decoding: text, as: UTF8.self))
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
        var bytes = [UInt8](repeating: 0, count: 16)
        var filled = 6
        while filled < bytes.count {
            let got = bytes.withUnsafeMutableBytes { getrandom($0.baseAddress! + filled, $0.count - filled, 0) }
            if got > 0 { filled += got }
        }
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * UInt64(5 - index))) }
        bytes[6] = (bytes[6] & 0x0F) | 0x70
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(36)
        for index in 0..<16 {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(hex[Int(bytes[index] >> 4)])
            text.append(hex[Int(bytes[index] & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
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
