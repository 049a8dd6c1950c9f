import COutliveSystem

/// One row of a PostgreSQL result, read through the same SQLRow the systems use
/// for SQLite. Results come in text format, so one reader serves every column
/// type: integers of any width, booleans ('t'/'f' read as 1/0, as SQLite stores
/// them), floats, text, and bytea (hex text, decoded). Valid only inside the row
/// callback, like SQLite's.
struct PostgreSQLRow {
    let result: OpaquePointer
    let row: Int32

    static let booleanType: COutlive_Oid = 16
    static let byteaType: COutlive_Oid = 17

    func isNull(_ column: Int32) -> Bool {
        column < 0 || column >= COutlive_PQnfields(result) || COutlive_PQgetisnull(result, row, column) != 0
    }

    private func bytes(_ column: Int32) -> UnsafeBufferPointer<UInt8>? {
        guard !isNull(column), let value = COutlive_PQgetvalue(result, row, column) else { return nil }
        let count = Int(COutlive_PQgetlength(result, row, column))
        return UnsafeRawPointer(value).withMemoryRebound(to: UInt8.self, capacity: count) {
            UnsafeBufferPointer(start: $0, count: count)
        }
    }

    /// NULL and text that is no number read as 0, as sqlite3_column_int64 does.
    func integer(_ column: Int32) -> Int64 {
        guard let text = text(column) else { return 0 }
        if COutlive_PQftype(result, column) == PostgreSQLRow.booleanType { return text == "t" ? 1 : 0 }
        if let value = Int64(text) { return value }
        if let value = Double(text), value.isFinite, abs(value) < 9.2e18 { return Int64(value) }
        return 0
    }

    func double(_ column: Int32) -> Double {
        guard let text = text(column) else { return 0 }
        switch text {
        case "Infinity": return .infinity
        case "-Infinity": return -.infinity
        case "NaN": return .nan
        default: return Double(text) ?? 0
        }
    }

    func text(_ column: Int32) -> String? {
        guard let bytes = bytes(column) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    func blob(_ column: Int32) -> [UInt8]? {
        guard let bytes = bytes(column) else { return nil }
        guard COutlive_PQftype(result, column) == PostgreSQLRow.byteaType else { return Array(bytes) }
        // bytea_output 'hex' (the default since 9.0, and set on every connection): \x0a1b…
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "\\"), bytes[1] == UInt8(ascii: "x") else { return Array(bytes) }
        func nibble(_ c: UInt8) -> UInt8 {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x61...0x66: return c - 0x61 + 10
            case 0x41...0x46: return c - 0x41 + 10
            default: return 0
            }
        }
        var decoded: [UInt8] = []
        decoded.reserveCapacity((bytes.count - 2) / 2)
        var index = 2
        while index + 1 < bytes.count {
            decoded.append(nibble(bytes[index]) << 4 | nibble(bytes[index + 1]))
            index += 2
        }
        return decoded
    }
}
