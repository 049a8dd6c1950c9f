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
