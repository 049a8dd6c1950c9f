/// The systems write SQL with SQLite's `?` placeholders; PostgreSQL numbers them
/// (`$1`, `$2`, …). A `?` inside a string literal ('…'), a quoted identifier
/// ("…"), a dollar-quoted body ($tag$…$tag$) or a comment is text, not a
/// placeholder, and is kept. SQLite's numbered forms (`?NNN`, `:name`) are not
/// used by the systems and are not translated.
enum PostgreSQLPlaceholders {
    /// `sql` with every placeholder `?` replaced by `$n`, and the count of them.
    static func translate(_ sql: String) -> (sql: String, count: Int) {
        let bytes = Array(sql.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 8)
        var count = 0
        var index = 0
        func copy(until end: Int) {
            output.append(contentsOf: bytes[index..<min(end, bytes.count)])
            index = min(end, bytes.count)
        }
        /// The index just past the next `terminator` at or after `from` (the end if none).
        func skip(to terminator: [UInt8], from: Int) -> Int {
            var i = from
            while i + terminator.count <= bytes.count {
                if Array(bytes[i..<i + terminator.count]) == terminator { return i + terminator.count }
                i += 1
            }
            return bytes.count
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "'"), UInt8(ascii: "\""):
                // A doubled quote inside is an escaped quote: the scan simply
                // leaves and re-enters the literal, which copies it unchanged.
                copy(until: skip(to: [byte], from: index + 1))
            case UInt8(ascii: "-") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-"):
                copy(until: skip(to: [UInt8(ascii: "\n")], from: index + 2))
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                copy(until: skip(to: Array("*/".utf8), from: index + 2))
            case UInt8(ascii: "$"):
                // $tag$ … $tag$ (tag empty or an identifier); `$1` is not a tag.
                var end = index + 1
                while end < bytes.count, bytes[end] == UInt8(ascii: "_") || (bytes[end] >= 0x41 && bytes[end] <= 0x5A)
                    || (bytes[end] >= 0x61 && bytes[end] <= 0x7A) || (end > index + 1 && bytes[end] >= 0x30 && bytes[end] <= 0x39) {
                    end += 1
                }
                if end < bytes.count && bytes[end] == UInt8(ascii: "$") {
                    let tag = Array(bytes[index...end])
                    copy(until: skip(to: tag, from: end + 1))
                } else {
                    copy(until: index + 1)
                }
            case UInt8(ascii: "?"):
                count += 1
                output.append(contentsOf: Array("$\(count)".utf8))
                index += 1
            default:
                copy(until: index + 1)
            }
        }
        return (String(decoding: output, as: UTF8.self), count)
    }
}
