/// A serializable callback: the name of a declared handler, bound arguments,
/// an optional invalidation handler's name, and whether it was invalidated.
/// The serialized form names a handler, never a library path or an address.
/// A handler is a value like the others (it can be an argument); resolving and
/// calling one is the job of Handlers/, which uses Values/ and never the reverse.
public struct Handler: Equatable {
    public let name: String
    public let invalidationName: String?
    public internal(set) var bound: Arguments
    public internal(set) var isInvalidated: Bool

    public init(name: String, invalidationName: String? = nil, bound: Arguments = Arguments()) throws {
        try HandlerName.validate(name)
        if let invalidationName { try HandlerName.validate(invalidationName) }
        try Handler.checkLimits(of: bound, name: name)
        self.name = name
        self.invalidationName = invalidationName
        self.bound = bound
        self.isInvalidated = false
    }

    /// A handler as decoded: the caller validated every part.
    init(decodedName name: String, invalidationName: String?, bound: Arguments, isInvalidated: Bool) {
        self.name = name
        self.invalidationName = invalidationName
        self.bound = bound
        self.isInvalidated = isInvalidated
    }

    /// Binds more arguments (later wins on equal names).
    public mutating func bind(_ more: Arguments) throws {
        if isInvalidated { throw OutliveError(.invalidated, "handler \(name) was invalidated") }
        let merged = bound.merged(with: more)
        try Handler.checkLimits(of: merged, name: name)
        bound = merged
    }

    /// 1 for a handler without handler arguments, else one more than the
    /// deepest handler among its bound arguments.
    public var depth: Int { bound.handlerDepth + 1 }

    static func checkLimits(of bound: Arguments, name: String) throws {
        guard bound.count <= ValueLimits.maxArguments else {
            throw OutliveError.invalidArgument("handler \(name) would have \(bound.count) bound arguments; at most \(ValueLimits.maxArguments) are allowed")
        }
        guard bound.handlerDepth + 1 <= ValueLimits.maxDepth else {
            throw OutliveError.invalidArgument("handler \(name) would nest handlers \(bound.handlerDepth + 1) deep; at most \(ValueLimits.maxDepth) are allowed")
        }
    }
}

extension Handler: CustomStringConvertible {
    /// For logs: `name(a: ID "text", n: INTEGER 3) invalidation: other [invalidated]`.
    public var description: String {
        var text = name + "("
        for (index, entry) in bound.entries.enumerated() {
            if index > 0 { text += ", " }
            text += entry.name + ": " + Handler.describe(entry.value)
        }
        text += ")"
        if let invalidationName { text += " invalidation: " + invalidationName }
        if isInvalidated { text += " [invalidated]" }
        return text
    }

    static func describe(_ value: Value) -> String {
        switch value {
        case .id(let id):
            let tag = id.typeTag.map { "<\($0)>" } ?? ""
            if let string = id.string, string.utf8.count <= 64,
               !string.unicodeScalars.contains(where: { $0.value < 32 || $0 == "\"" || $0 == "\\" }) {
                return "ID\(tag) \"\(string)\""
            }
            return "ID\(tag) \(id.bytes.count) bytes"
        case .handler(let handler): return "HANDLER " + handler.description
        case .bool(let flag): return "BOOL \(flag)"
        case .int(let number): return "INT \(number)"
        case .double(let number): return "DOUBLE \(number)"
        case .integer(let number): return "INTEGER \(number)"
        case .uinteger(let number): return "UINTEGER \(number)"
        }
    }
}

/// Handler names: 1 to 200 bytes of [A-Za-z0-9_.]. Only names that are C
/// identifiers ([A-Za-z_][A-Za-z0-9_]*, so without '.') are looked up as the
/// descriptor symbol `outlive_handler__NAME`; names with '.' ("app.greet")
/// resolve only through run-time registration. No name is ever mapped to a
/// symbol other than that prefix plus the name itself.
public enum HandlerName {
    public static let maxLength = 200

    public static func validate(_ name: String) throws {
        guard !name.isEmpty, name.utf8.count <= maxLength else {
            throw OutliveError.invalidArgument("handler name must be 1 to \(maxLength) bytes, got \(name.utf8.count)")
        }
        guard isValid(utf8: name.utf8) else {
            throw OutliveError.invalidArgument("handler name \"\(name)\" may contain only letters, digits, '_' and '.'")
        }
    }

    public static func isValid<C: Collection>(utf8 name: C) -> Bool where C.Element == UInt8 {
        guard !name.isEmpty, name.count <= maxLength else { return false }
        for byte in name {
            let ok = (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || byte == 95 || byte == 46
            guard ok else { return false }
        }
        return true
    }

    /// Whether the name can be the suffix of a C descriptor symbol.
    public static func isCIdentifier(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(first >= 48 && first <= 57) else { return false }
        return !name.utf8.contains(46)
    }
}
