// The serialized form of an argument set (signal payloads, stored arguments):
// the handler format of docs/FORMAT.md, version 1, for a handler named
// `outlive.arguments` whose bound arguments are the set — so one format, one
// decoder (validated and fuzzed with the handlers) serves both. Nothing calls
// a handler of that name: decoding checks the name and returns the arguments.
import COutliveSystem

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
        self = try bytes.withUnsafeBytes { try Arguments(serialized: $0) }
    }

    /// The carrier's header (magic, version, flags 0, its name), which every
    /// argument set made by `serialized()` starts with.
    static let carrierHeader: [UInt8] = {
        var encoder = HandlerEncoder()
        encoder.bytes.append(contentsOf: HandlerFormat.magic)
        encoder.bytes.append(HandlerFormat.version)
        encoder.bytes.append(0)
        encoder.string(Arguments.serializedCarrierName.utf8)
        return encoder.bytes
    }()

    /// The same, read in place: what `outlive_handler_call_serialized` decodes
    /// on every call. Bytes that start with the carrier's header are decoded
    /// from its arguments on (the header checked as bytes, not decoded into
    /// strings); any others as a handler, for the precise error.
    public init(serialized bytes: UnsafeRawBufferPointer) throws {
        let header = Arguments.carrierHeader
        let starts = bytes.count > header.count && header.withUnsafeBytes { expected in
            memcmp(expected.baseAddress!, bytes.baseAddress!, expected.count) == 0
        }
        guard starts, bytes.count <= ValueLimits.maxSerializedSize else {
            self = try Arguments(carriedIn: bytes)
            return
        }
        var decoder = HandlerDecoder(bytes: bytes)
        decoder.position = header.count
        let arguments = try decoder.arguments(depth: 1)
        guard decoder.position == bytes.count else {
            throw OutliveError.corrupt("serialized handler has \(bytes.count - decoder.position) trailing bytes after byte \(decoder.position)")
        }
        self = arguments
    }

    private init(carriedIn bytes: UnsafeRawBufferPointer) throws {
        let carrier = try Handler(serialized: bytes)
        guard carrier.name == Arguments.serializedCarrierName, carrier.invalidationName == nil, !carrier.isInvalidated else {
            throw OutliveError.corrupt("serialized arguments are a handler named \(carrier.name), not an argument set")
        }
        self = carrier.bound
    }
}
