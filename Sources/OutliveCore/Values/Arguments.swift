/// One named argument.
public struct Argument: Equatable {
    public let name: String
    public let value: Value

    public init(name: String, value: Value) {
        self.name = name
        self.value = value
    }
}

/// An ordered set of named, typed values: a name appears at most once, and
/// setting it again replaces its value in place.
public struct Arguments: Equatable {
    public private(set) var entries: [Argument] = []

    public init() {}

    public init(_ entries: [(String, Value)]) {
        for (name, value) in entries { set(name, value) }
    }

    /// Entries of another argument set (names already unique).
    init(entries: UnsafeBufferPointer<Argument>) {
        self.entries = Array(entries)
    }

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }

    public subscript(name: String) -> Value? {
        entries.first { $0.name == name }?.value
    }

    public mutating func set(_ name: String, _ value: Value) {
        if let index = entries.firstIndex(where: { $0.name == name }) {
            entries[index] = Argument(name: name, value: value)
        } else {
            entries.append(Argument(name: name, value: value))
        }
    }

    @discardableResult
    public mutating func remove(_ name: String) -> Value? {
        guard let index = entries.firstIndex(where: { $0.name == name }) else { return nil }
        return entries.remove(at: index).value
    }

    /// These arguments with `later`'s set over them: on equal names `later` wins.
    public func merged(with later: Arguments) -> Arguments {
        var result = self
        for entry in later.entries { result.set(entry.name, entry.value) }
        return result
    }
}

extension Arguments {
    /// The deepest handler nesting among the values (0 without handlers).
    public var handlerDepth: Int {
        var deepest = 0
        for entry in entries { deepest = max(deepest, entry.value.handlerDepth) }
        return deepest
    }

    /// The index of `name`, if present.
    public func index(of name: String) -> Int? {
        entries.firstIndex { $0.name == name }
    }
}

/// Argument (and parameter) names: C identifiers, 1 to 128 bytes of
/// [A-Za-z0-9_], not starting with a digit.
public enum ArgumentName {
    public static let maxLength = 128

    public static func isValid<C: Collection>(utf8 name: C) -> Bool where C.Element == UInt8 {
        guard !name.isEmpty, name.count <= maxLength else { return false }
        var first = true
        for byte in name {
            let letter = (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || byte == 95
            let digit = byte >= 48 && byte <= 57
            guard letter || (digit && !first) else { return false }
            first = false
        }
        return true
    }

    public static func validate(_ name: String) throws {
        guard isValid(utf8: name.utf8) else {
            throw OutliveError.invalidArgument("argument name \"\(name)\" is not an identifier of 1 to \(maxLength) bytes ([A-Za-z_][A-Za-z0-9_]*)")
        }
    }
}

/// ID type tags ("xmpp.account"): 1 to 128 bytes of [A-Za-z0-9_.-].
public enum TypeTag {
    public static let maxLength = 128

    public static func isValid<C: Collection>(utf8 tag: C) -> Bool where C.Element == UInt8 {
        guard !tag.isEmpty, tag.count <= maxLength else { return false }
        for byte in tag {
            let ok = (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
                || byte == 95 || byte == 46 || byte == 45
            guard ok else { return false }
        }
        return true
    }

    public static func validate(_ tag: String) throws {
        guard isValid(utf8: tag.utf8) else {
            throw OutliveError.invalidArgument("type tag \"\(tag)\" must be 1 to \(maxLength) bytes of letters, digits, '_', '.' and '-'")
        }
    }
}

/// The limits on values that can be stored and sent, enforced where values
/// enter from C and by the decoder.
public enum ValueLimits {
    /// Bytes of one ID value.
    public static let maxIDSize = 16 << 20
    /// Handlers nested in arguments of handlers: a handler with no handler
    /// arguments has depth 1.
    public static let maxDepth = 16
    /// Arguments in one set.
    public static let maxArguments = 1024
    /// Bytes of a serialized handler.
    public static let maxSerializedSize = 32 << 20
}
