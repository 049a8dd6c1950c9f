// The serialized form of an argument set (signal payloads, stored arguments):
// the handler format of docs/FORMAT.md, version 1, for a handler named
// `outlive.arguments` whose bound arguments are the set — so one format, one
// decoder (validated and fuzzed with the handlers) serves both. Nothing calls
// a handler of that name: decoding checks the name and returns the arguments.
extension Arguments {
    public static let serializedCarrierName = "outlive.arguments"

    /// The serialized bytes; `.invalidArgument` past the value limits (count,
    /// nesting, size) that decoding enforces.
    public func serialized() throws -> [UInt8] {
        // The carrier's name is ours and valid: only the limits are checked
        // (validating the constant name cost a sixtieth of a signal post).
        try Handler.checkLimits(of: self, name: Arguments.serializedCarrierName)
        return try Handler(decodedName: Arguments.serializedCarrierName, invalidationName: nil, bound: self,
                           isInvalidated: false).serializedChecked()
    }

    /// Decodes `serialized()` bytes: `.corrupt` for anything malformed or for
    /// a serialized handler that is not an argument set, `.version` for a newer format.
    public init(serialized bytes: [UInt8]) throws {
        let carrier = try Handler(serialized: bytes)
        guard carrier.name == Arguments.serializedCarrierName, carrier.invalidationName == nil, !carrier.isInvalidated else {
            throw OutliveError.corrupt("serialized arguments are a handler named \(carrier.name), not an argument set")
        }
        self = carrier.bound
    }
}
