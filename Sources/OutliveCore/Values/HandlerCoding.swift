// The serialized form of handlers, version 1 (docs/FORMAT.md):
//
//   serialized = "OLH" version(0x01) handler
//   handler    = flags(u8: bit0 invalidated, bit1 has invalidation name)
//                str(name) [str(invalidation name)] varint(count) count*argument
//   argument   = str(name) type(u8 1...7) payload
//   payload    = ID: flags(u8: bit0 tagged) [str(tag)] varint(size) size*byte
//                HANDLER: handler | BOOL: u8 0/1 | INT, INTEGER: zigzag varint
//                DOUBLE: 8 bytes little-endian IEEE 754 | UINTEGER: varint
//   str        = varint(size) size*byte (UTF-8)
//   varint     = unsigned LEB128, at most 10 bytes, shortest form
//
// Nothing in it depends on the machine: no pointers, no paths, fixed byte order.

public enum HandlerFormat {
    public static let magic: [UInt8] = [0x4F, 0x4C, 0x48]  // "OLH"
    public static let version: UInt8 = 1
}

extension Handler {
    /// The serialized bytes. Values made through the C API and
    /// `Handler.init` stay within the limits that `init(serialized:)` accepts.
    public func serialized() -> [UInt8] {
        var encoder = HandlerEncoder()
        encoder.bytes.append(contentsOf: HandlerFormat.magic)
        encoder.bytes.append(HandlerFormat.version)
        encoder.encode(self)
        return encoder.bytes
    }

    /// `serialized()` checked against the limits: `.invalidArgument` when the
    /// result would be larger than `ValueLimits.maxSerializedSize`.
    public func serializedChecked() throws -> [UInt8] {
        let bytes = serialized()
        guard bytes.count <= ValueLimits.maxSerializedSize else {
            throw OutliveError.invalidArgument("handler \(name) serializes to \(bytes.count) bytes; at most \(ValueLimits.maxSerializedSize) are allowed")
        }
        return bytes
    }

    /// Decodes a serialized handler, validating everything: `.corrupt` for any
    /// malformed, truncated or oversized input or trailing bytes, `.version` for
    /// a newer format version.
    public init(serialized bytes: [UInt8]) throws {
        self = try bytes.withUnsafeBytes { try Handler(serialized: $0) }
    }

    public init(serialized bytes: UnsafeRawBufferPointer) throws {
        guard bytes.count <= ValueLimits.maxSerializedSize else {
            throw OutliveError.corrupt("serialized handler is \(bytes.count) bytes; at most \(ValueLimits.maxSerializedSize) are allowed")
        }
        var decoder = HandlerDecoder(bytes: bytes)
        try decoder.header()
        let handler = try decoder.handler(depth: 1)
        guard decoder.position == bytes.count else {
            throw OutliveError.corrupt("serialized handler has \(bytes.count - decoder.position) trailing bytes after byte \(decoder.position)")
        }
        self = handler
    }
}

struct HandlerEncoder {
    var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(64) }

    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: rest))
    }

    mutating func zigzag(_ value: Int64) {
        varint(UInt64(bitPattern: (value &<< 1) ^ (value >> 63)))
    }

    mutating func string<C: Collection>(_ utf8: C) where C.Element == UInt8 {
        varint(UInt64(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    mutating func encode(_ handler: Handler) {
        if handler.name == HandedOutCompletions.handlerName { HandedOutCompletions.shared.note(handler) }
        var flags: UInt8 = 0
        if handler.isInvalidated { flags |= 1 }
        if handler.invalidationName != nil { flags |= 2 }
        bytes.append(flags)
        string(handler.name.utf8)
        if let invalidationName = handler.invalidationName { string(invalidationName.utf8) }
        varint(UInt64(handler.bound.count))
        for entry in handler.bound.entries {
            string(entry.name.utf8)
            bytes.append(UInt8(truncatingIfNeeded: entry.value.type.rawValue))
            switch entry.value {
            case .id(let id):
                if let tag = id.typeTag {
                    bytes.append(1)
                    string(tag.utf8)
                } else {
                    bytes.append(0)
                }
                string(id.bytes)
            case .handler(let nested): encode(nested)
            case .bool(let flag): bytes.append(flag ? 1 : 0)
            case .int(let number): zigzag(Int64(number))
            case .double(let number):
                var bits = number.bitPattern
                for _ in 0..<8 {
                    bytes.append(UInt8(truncatingIfNeeded: bits))
                    bits >>= 8
                }
            case .integer(let number): zigzag(number)
            case .uinteger(let number): varint(number)
            }
        }
    }
}

struct HandlerDecoder {
    let bytes: UnsafeRawBufferPointer
    var position = 0

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    func corrupt(_ what: String) -> OutliveError {
        OutliveError.corrupt("serialized handler is malformed at byte \(position): \(what)")
    }

    var remaining: Int { bytes.count - position }

    mutating func byte(_ what: @autoclosure () -> String) throws -> UInt8 {
        guard position < bytes.count else { throw corrupt("truncated, expected \(what())") }
        let value = bytes[position]
        position += 1
        return value
    }

    mutating func header() throws {
        for expected in HandlerFormat.magic {
            guard try byte("the format's magic \"OLH\"") == expected else { throw corrupt("not a serialized handler (bad magic)") }
        }
        let version = try byte("the format version")
        if version > HandlerFormat.version {
            throw OutliveError(.version, "serialized handler has format version \(version); this library reads version \(HandlerFormat.version)")
        }
        guard version == HandlerFormat.version else { throw corrupt("format version 0 does not exist") }
    }

    mutating func varint(_ what: @autoclosure () -> String) throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        let start = position
        while true {
            let byte = try self.byte(what())
            let payload = UInt64(byte & 0x7F)
            if shift == 63, payload > 1 { throw corrupt("\(what()) overflows 64 bits") }
            value |= payload << shift
            if byte & 0x80 == 0 {
                if byte == 0, position - start > 1 { throw corrupt("\(what()) is not in its shortest form") }
                return value
            }
            shift += 7
            if shift > 63 { throw corrupt("\(what()) is longer than 10 bytes") }
        }
    }

    mutating func length(_ what: @autoclosure () -> String, max: Int) throws -> Int {
        let value = try varint("the size of \(what())")
        guard value <= UInt64(max) else { throw corrupt("\(what()) is \(value) bytes; at most \(max) are allowed") }
        let count = Int(value)
        guard count <= remaining else { throw corrupt("truncated: \(what()) needs \(count) bytes, \(remaining) remain") }
        return count
    }

    mutating func slice(_ count: Int) -> UnsafeRawBufferPointer {
        let slice = UnsafeRawBufferPointer(rebasing: bytes[position..<(position + count)])
        position += count
        return slice
    }

    mutating func text(_ what: @autoclosure () -> String, max: Int, valid: (UnsafeRawBufferPointer) -> Bool) throws -> String {
        let count = try length(what(), max: max)
        let start = position
        let raw = slice(count)
        guard let text = UTF8Text.string(raw) else {
            position = start
            throw corrupt("\(what()) is not valid UTF-8")
        }
        guard valid(raw) else {
            position = start
            throw corrupt("\(what()) \"\(text)\" is not allowed")
        }
        return text
    }

    mutating func handler(depth: Int) throws -> Handler {
        guard depth <= ValueLimits.maxDepth else { throw corrupt("handlers nest deeper than \(ValueLimits.maxDepth)") }
        let flags = try byte("the handler flags")
        guard flags & ~3 == 0 else { throw corrupt("unknown handler flags \(flags)") }
        let name = try text("the handler name", max: HandlerName.maxLength) { HandlerName.isValid(utf8: $0) }
        var invalidationName: String?
        if flags & 2 != 0 {
            invalidationName = try text("the invalidation handler name", max: HandlerName.maxLength) { HandlerName.isValid(utf8: $0) }
        }
        let arguments = try self.arguments(depth: depth)
        return Handler(decodedName: name, invalidationName: invalidationName, bound: arguments, isInvalidated: flags & 1 != 0)
    }

    /// A handler's `count *argument`, of a handler at `depth`.
    mutating func arguments(depth: Int) throws -> Arguments {
        let count = try varint("the argument count")
        guard count <= UInt64(ValueLimits.maxArguments) else { throw corrupt("\(count) arguments; at most \(ValueLimits.maxArguments) are allowed") }
        // Every argument takes at least 3 bytes: refuse counts the input cannot hold.
        guard count <= UInt64(remaining / 3) else { throw corrupt("truncated: \(count) arguments cannot fit in \(remaining) bytes") }
        var arguments = Arguments()
        for _ in 0..<Int(count) {
            let argumentName = try text("an argument name", max: ArgumentName.maxLength) { ArgumentName.isValid(utf8: $0) }
            guard arguments.index(of: argumentName) == nil else { throw corrupt("argument \(argumentName) appears twice") }
            let typeByte = try byte("the type of argument \(argumentName)")
            guard let type = ValueType(rawValue: Int32(typeByte)) else { throw corrupt("argument \(argumentName) has unknown type \(typeByte)") }
            arguments.set(argumentName, try value(of: type, named: argumentName, depth: depth))
        }
        return arguments
    }

    mutating func value(of type: ValueType, named name: String, depth: Int) throws -> Value {
        switch type {
        case .id:
            let flags = try byte("the ID flags of \(name)")
            guard flags & ~1 == 0 else { throw corrupt("argument \(name) has unknown ID flags \(flags)") }
            var tag: String?
            if flags & 1 != 0 {
                tag = try text("the type tag of \(name)", max: TypeTag.maxLength) { TypeTag.isValid(utf8: $0) }
            }
            let count = try length("the ID \(name)", max: ValueLimits.maxIDSize)
            return .id(IDValue(bytes: Array(slice(count)), typeTag: tag))
        case .handler:
            return .handler(try handler(depth: depth + 1))
        case .bool:
            let flag = try byte("the BOOL \(name)")
            guard flag <= 1 else { throw corrupt("BOOL \(name) is \(flag), not 0 or 1") }
            return .bool(flag == 1)
        case .int:
            let number = try zigzag("the INT \(name)")
            guard let int = Int32(exactly: number) else { throw corrupt("INT \(name) is \(number), outside 32 bits") }
            return .int(int)
        case .double:
            guard remaining >= 8 else { throw corrupt("truncated: DOUBLE \(name) needs 8 bytes") }
            var bits: UInt64 = 0
            for index in 0..<8 { bits |= UInt64(bytes[position + index]) << UInt64(8 * index) }
            position += 8
            return .double(Double(bitPattern: bits))
        case .integer:
            return .integer(try zigzag("the INTEGER \(name)"))
        case .uinteger:
            return .uinteger(try varint("the UINTEGER \(name)"))
        }
    }

    mutating func zigzag(_ what: @autoclosure () -> String) throws -> Int64 {
        let raw = try varint(what())
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }
}
