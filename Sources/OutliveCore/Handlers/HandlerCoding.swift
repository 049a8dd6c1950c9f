// The serialized form of handlers (docs/FORMAT.md). Placeholder until the
// handler issue defines the real, versioned format.
extension Handler {
    public func serialized() -> [UInt8] {
        []
    }

    public init(serialized bytes: [UInt8]) throws {
        throw OutliveError.corrupt("handler serialization is not implemented yet")
    }
}
