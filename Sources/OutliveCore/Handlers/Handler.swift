/// A serializable callback: the name of a declared handler, bound arguments,
/// an optional invalidation handler's name, and whether it was invalidated.
/// The serialized form names a handler, never a library path or an address.
public struct Handler: Equatable {
    public let name: String
    public let invalidationName: String?
    public internal(set) var bound: Arguments
    public internal(set) var isInvalidated: Bool

    public init(name: String, invalidationName: String? = nil, bound: Arguments = Arguments()) throws {
        try HandlerName.validate(name)
        if let invalidationName { try HandlerName.validate(invalidationName) }
        self.name = name
        self.invalidationName = invalidationName
        self.bound = bound
        self.isInvalidated = false
    }

    /// Binds more arguments (later wins on equal names).
    public mutating func bind(_ more: Arguments) throws {
        if isInvalidated { throw OutliveError(.invalidated, "handler \(name) was invalidated") }
        bound = bound.merged(with: more)
    }
}

/// Handler names: 1 to 200 bytes of [A-Za-z0-9_.], so that a name is also the
/// suffix of its C descriptor symbol outlive_handler__NAME once '.' is mapped.
public enum HandlerName {
    public static let maxLength = 200

    public static func validate(_ name: String) throws {
        guard !name.isEmpty, name.utf8.count <= maxLength else {
            throw OutliveError.invalidArgument("handler name must be 1 to \(maxLength) bytes, got \(name.utf8.count)")
        }
        for byte in name.utf8 {
            let ok = (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || byte == 95 || byte == 46
            guard ok else { throw OutliveError.invalidArgument("handler name \"\(name)\" may contain only letters, digits, '_' and '.'") }
        }
    }
}
