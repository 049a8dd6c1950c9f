import COutliveSystem

/// An ID value: an immutable byte string with an optional type tag (e.g. a
/// UTF-8 string, or an application's own encoding tagged "xmpp.account").
///
/// The bytes live in an immutable `IDStorage` shared by copies, which also holds
/// the C views (a NUL-terminated copy, the tag as a C string) that an
/// `outlive_object *` hands out, so passing an ID to C allocates nothing.
public struct IDValue: Equatable, Hashable {
    public let storage: IDStorage

    public init(bytes: [UInt8], typeTag: String? = nil) {
        storage = IDStorage(bytes: bytes, typeTag: typeTag)
    }

    public init(string: String, typeTag: String? = nil) {
        self.init(bytes: Array(string.utf8), typeTag: typeTag)
    }

    public var bytes: [UInt8] { storage.bytes }
    public var typeTag: String? { storage.typeTag }

    /// The bytes as a string when they are valid UTF-8 without NUL.
    public var string: String? {
        storage.isCString ? String(decoding: storage.bytes, as: UTF8.self) : nil
    }

    public static func == (a: IDValue, b: IDValue) -> Bool {
        a.storage === b.storage || (a.storage.bytes == b.storage.bytes && a.storage.typeTag == b.storage.typeTag)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage.bytes)
        hasher.combine(storage.typeTag)
    }
}

/// The immutable storage of an ID, and what `const outlive_object *` points
/// to: the bytes, a NUL-terminated copy of them, and the tag as a C string,
/// all fixed for the object's life.
public final class IDStorage {
    public let bytes: [UInt8]
    public let typeTag: String?
    /// The bytes followed by a NUL (never NULL, also for no bytes).
    public let cBytes: UnsafeMutablePointer<CChar>
    /// The tag, NUL-terminated; nil when untagged.
    public let cTypeTag: UnsafeMutablePointer<CChar>?
    /// Whether the bytes are valid UTF-8 without NUL (a C string view exists).
    public let isCString: Bool

    init(bytes: [UInt8], typeTag: String?) {
        self.bytes = bytes
        self.typeTag = typeTag
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
        bytes.withUnsafeBytes { raw in
            if let base = raw.baseAddress { UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: raw.count) }
        }
        buffer[bytes.count] = 0
        cBytes = buffer
        if let typeTag {
            let utf8 = Array(typeTag.utf8)
            let tag = UnsafeMutablePointer<CChar>.allocate(capacity: utf8.count + 1)
            for (index, byte) in utf8.enumerated() { tag[index] = CChar(bitPattern: byte) }
            tag[utf8.count] = 0
            cTypeTag = tag
        } else {
            cTypeTag = nil
        }
        // buffer is the bytes and a NUL: without another NUL it is their C
        // string, validated without the generic UTF-8 decoder.
        isCString = !bytes.contains(0) && String(validatingCString: buffer) != nil
    }

    deinit {
        cBytes.deallocate()
        cTypeTag?.deallocate()
    }
}

/// The seven types a handler argument can have.
public enum ValueType: Int32, CaseIterable {
    case id = 1, handler, bool, int, double, integer, uinteger

    /// The name used in signatures and descriptions ("ID", "HANDLER", ...).
    public var name: String {
        switch self {
        case .id: return "ID"
        case .handler: return "HANDLER"
        case .bool: return "BOOL"
        case .int: return "INT"
        case .double: return "DOUBLE"
        case .integer: return "INTEGER"
        case .uinteger: return "UINTEGER"
        }
    }
}

/// A typed argument value. Only the handler case is boxed, so primitives and
/// IDs are read without reference counting on the call path.
public enum Value: Equatable {
    case id(IDValue)
    indirect case handler(Handler)
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

    /// How deep handlers nest in this value: 0 for non-handlers.
    public var handlerDepth: Int {
        if case .handler(let handler) = self { return handler.depth }
        return 0
    }
}
