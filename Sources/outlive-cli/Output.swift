import OutliveCore

/// Tables for people, JSON for scripts; no Foundation, so JSON is written here.
enum JSON {
    case string(String)
    case number(Double)
    case integer(Int64)
    case bool(Bool)
    case null
    case array([JSON])
    case object([(String, JSON)])

    var text: String {
        switch self {
        case .string(let value): return JSON.quote(value)
        case .number(let value): return value.isFinite ? "\(value)" : "null"
        case .integer(let value): return "\(value)"
        case .bool(let value): return value ? "true" : "false"
        case .null: return "null"
        case .array(let items): return "[" + items.map(\.text).joined(separator: ",") + "]"
        case .object(let fields): return "{" + fields.map { JSON.quote($0.0) + ":" + $0.1.text }.joined(separator: ",") + "}"
        }
    }

    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if isUnsafeForTerminal(scalar) {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

/// Characters a terminal acts on instead of showing: C0 and C1 controls
/// (ESC starts escape sequences), DEL, and the bidirectional overrides that
/// reorder what follows them. Stored data is untrusted: none of them is ever
/// printed raw.
func isUnsafeForTerminal(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0..<0x20, 0x7F...0x9F, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
    default: return false
    }
}

/// Text with every unsafe character written as \u{XX}.
func terminalSafe(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: isUnsafeForTerminal) else { return text }
    var out = ""
    for scalar in text.unicodeScalars {
        if isUnsafeForTerminal(scalar) {
            out += "\\u{" + String(scalar.value, radix: 16) + "}"
        } else {
            out.unicodeScalars.append(scalar)
        }
    }
    return out
}

/// Stored bytes as text a terminal shows as they are: valid UTF-8 stays text
/// (unsafe characters escaped as \u{XX}), every byte that is not UTF-8 is
/// written \xNN. Never repaired into another string (U+FFFD).
func displayable(_ bytes: [UInt8]) -> String {
    if let text = String(validating: bytes, as: UTF8.self) { return terminalSafe(text) }
    var out = ""
    var index = 0
    while index < bytes.count {
        // The longest valid UTF-8 sequence starting here (1 to 4 bytes), else one raw byte.
        var taken = 0
        for length in 1...4 where index + length <= bytes.count {
            if let piece = String(validating: bytes[index..<(index + length)], as: UTF8.self), piece.unicodeScalars.count == 1 {
                out += terminalSafe(piece)
                taken = length
                break
            }
        }
        if taken == 0 {
            let hex = String(bytes[index], radix: 16)
            out += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            taken = 1
        }
        index += taken
    }
    return out
}

/// A plain text table: a header row, then rows, columns padded to fit. Every
/// cell is made terminal-safe here, whatever its source.
func table(_ header: [String], _ rows: [[String]]) -> String {
    let header = header.map(terminalSafe)
    let rows = rows.map { $0.map(terminalSafe) }
    var widths = header.map(\.count)
    for row in rows {
        for (index, cell) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], cell.count) }
    }
    func line(_ cells: [String]) -> String {
        cells.enumerated().map { index, cell in
            index == cells.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
        }.joined(separator: "  ")
    }
    return ([line(header)] + rows.map(line)).joined(separator: "\n")
}

/// Bytes as lowercase hex digits.
func hex(_ bytes: [UInt8]) -> String {
    bytes.map { byte -> String in
        let digits = String(byte, radix: 16)
        return digits.count == 1 ? "0" + digits : digits
    }.joined()
}

/// Bytes for a person: the text when it is printable UTF-8, else hex.
func printable(_ bytes: [UInt8]) -> String {
    if let text = String(validating: bytes, as: UTF8.self), !text.unicodeScalars.contains(where: { isUnsafeForTerminal($0) && $0 != "\t" }) {
        return text
    }
    let hex = bytes.prefix(64).map { byte -> String in
        let digits = String(byte, radix: 16)
        return digits.count == 1 ? "0" + digits : digits
    }.joined()
    return "0x" + hex + (bytes.count > 64 ? "… (\(bytes.count) bytes)" : "")
}
