/// An ID value: an immutable byte string with an optional type tag (e.g. a
/// UTF-8 string, or an application's own encoding tagged "xmpp.account").
public struct IDValue: Equatable, Hashable {
    public let bytes: [UInt8]
    public let typeTag: String?

    public init(bytes: [UInt8], typeTag: String? = nil) {
        self.bytes = bytes
        self.typeTag = typeTag
    }

    public init(string: String, typeTag: String? = nil) {
        self.init(bytes: Array(string.utf8), typeTag: typeTag)
    }

    /// The bytes as a string when they are valid UTF-8 without NUL.
    public var string: String? {
        guard !bytes.contains(0) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}

/// The seven types a handler argument can have.
public enum ValueType: Int32, CaseIterable {
    case id = 1, handler, bool, int, double, integer, uinteger
}

/// A typed argument value.
public indirect enum Value: Equatable {
    case id(IDValue)
    case handler(Handler)
    case bool(Bool)
    case int(Int32)
    case double(Double)
    case integer(Int64)
    case uinteger(UInt64)

    public var type: ValueType {
        switch self {
        case .id: return .id
        case .handler: return .handler
        case .bool: return .bool
        case .int: return .int
        case .double: return .double
        case .integer: return .integer
        case .uinteger: return .uinteger
        }
    }

    /// Equality that treats two NaN doubles with the same bits as equal, so that
    /// a decoded handler equals the one that was encoded.
    public static func == (a: Value, b: Value) -> Bool {
        switch (a, b) {
        case (.id(let x), .id(let y)): return x == y
        case (.handler(let x), .handler(let y)): return x == y
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
        case (.integer(let x), .integer(let y)): return x == y
        case (.uinteger(let x), .uinteger(let y)): return x == y
        default: return false
        }
    }
}
