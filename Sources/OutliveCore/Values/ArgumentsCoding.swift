// Placeholder until the handler issue lands the real, versioned format of
// argument sets (the handlers helper owns this file; signals only calls it).
// Handles every type but HANDLER; replaced wholesale by the real format.
extension Arguments {
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        func text(_ s: String) { let u = Array(s.utf8); put(UInt64(u.count)); out += u }
        func put(_ v: UInt64) { for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) } }
        for entry in entries {
            text(entry.name)
            out.append(UInt8(entry.value.type.rawValue))
            switch entry.value {
            case .id(let id): put(UInt64(id.bytes.count)); out += id.bytes; text(id.typeTag ?? "")
            case .handler: break
            case .bool(let b): out.append(b ? 1 : 0)
            case .int(let i): put(UInt64(UInt32(bitPattern: i)))
            case .double(let d): put(d.bitPattern)
            case .integer(let i): put(UInt64(bitPattern: i))
            case .uinteger(let u): put(u)
            }
        }
        return out
    }

    public init(serialized bytes: [UInt8]) throws {
        self.init()
        var at = 0
        func take(_ n: Int) throws -> [UInt8] {
            guard n >= 0, n <= bytes.count - at else { throw OutliveError.corrupt("arguments are truncated") }
            defer { at += n }
            return Array(bytes[at..<at + n])
        }
        func get() throws -> UInt64 { try take(8).enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) } }
        func text() throws -> String { String(decoding: try take(Int(clamping: try get())), as: UTF8.self) }
        while at < bytes.count {
            let name = try text()
            let type = try take(1)[0]
            switch type {
            case 1: let b = try take(Int(clamping: try get())); let tag = try text(); set(name, .id(IDValue(bytes: b, typeTag: tag.isEmpty ? nil : tag)))
            case 3: set(name, .bool(try take(1)[0] != 0))
            case 4: set(name, .int(Int32(bitPattern: UInt32(truncatingIfNeeded: try get()))))
            case 5: set(name, .double(Double(bitPattern: try get())))
            case 6: set(name, .integer(Int64(bitPattern: try get())))
            case 7: set(name, .uinteger(try get()))
            default: throw OutliveError.corrupt("argument \(name) has an unknown type \(type)")
            }
        }
    }
}
