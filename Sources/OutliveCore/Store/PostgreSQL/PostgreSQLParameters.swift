import COutliveSystem

/// The parameters of the statement a connection is sending, in libpq's
/// binary format, in one buffer of the connection's that is used again for
/// every statement (libpq copies them into its output buffer as the
/// statement is sent). In text format each integer and double became a
/// Swift string and a `strdup` (a double's shortest form alone some 1,100
/// instructions), each value a `malloc` and a `free`, and the server parsed
/// them back (`float8in`, `int8in`); here an integer or a double is its 8
/// bytes in network order, and text its UTF-8 bytes. The declared types are
/// the same in both formats, so the server reads the same values.
final class PostgreSQLParameters {
    // Used by one thread at a time under the connection's owner, never
    // across a callback: no run-time exclusivity check.
    @exclusivity(unchecked) private(set) var types: [COutlive_Oid] = []
    @exclusivity(unchecked) private var offsets: [Int] = []
    @exclusivity(unchecked) private var lengths: [Int32] = []
    @exclusivity(unchecked) private var formats: [Int32] = []
    @exclusivity(unchecked) private var values: [UnsafePointer<CChar>?] = []
    @exclusivity(unchecked) private var buffer: UnsafeMutableRawPointer
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private var used = 0

    static let integerType: COutlive_Oid = 20   // int8
    static let doubleType: COutlive_Oid = 701   // float8
    static let textType: COutlive_Oid = 25
    static let byteaType: COutlive_Oid = 17

    /// The buffer's size between statements: one that grew past it for a
    /// large value is given back before the next statement.
    private static let keptCapacity = 16_384
    /// The largest value PostgreSQL takes (`MaxAllocSize`, 1 GiB less one byte).
    static let largestValue = 0x3FFF_FFFF

    init() {
        capacity = Self.keptCapacity
        buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
    }

    deinit { buffer.deallocate() }

    /// Lays out `arguments`; throws `.invalidArgument` for a text holding a
    /// NUL (PostgreSQL's text cannot) or a value larger than PostgreSQL takes.
    func bind(_ arguments: [SQLValue]) throws {
        if capacity > Self.keptCapacity {
            buffer.deallocate()
            capacity = Self.keptCapacity
            buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        }
        used = 0
        types.removeAll(keepingCapacity: true)
        offsets.removeAll(keepingCapacity: true)
        lengths.removeAll(keepingCapacity: true)
        formats.removeAll(keepingCapacity: true)
        for argument in arguments {
            switch argument {
            case .null:
                // Format 0 with no value is NULL; its type is inferred when prepared.
                append(type: 0, offset: -1, length: 0, format: 0)
            case .integer(let value):
                append(type: Self.integerType, offset: store(UInt64(bitPattern: value).bigEndian), length: 8, format: 1)
            case .double(let value):
                append(type: Self.doubleType, offset: store(value.bitPattern.bigEndian), length: 8, format: 1)
            case .text(var value):
                try value.withUTF8 { bytes in
                    if let base = bytes.baseAddress, memchr(base, 0, bytes.count) != nil {
                        throw OutliveError.invalidArgument("PostgreSQL text cannot hold a NUL character")
                    }
                    append(type: Self.textType, offset: try copy(UnsafeRawBufferPointer(bytes)), length: bytes.count, format: 1)
                }
            case .blob(let value):
                try value.withUnsafeBytes { bytes in
                    append(type: Self.byteaType, offset: try copy(bytes), length: bytes.count, format: 1)
                }
            }
        }
        // The buffer may have moved as it grew: pointers are made last.
        values.removeAll(keepingCapacity: true)
        for offset in offsets {
            values.append(offset < 0 ? nil : UnsafePointer(buffer.advanced(by: offset).assumingMemoryBound(to: CChar.self)))
        }
    }

    /// Calls `body` with the arrays libpq takes: types, values, lengths, formats.
    func withPointers<R>(_ body: ([COutlive_Oid], UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?,
                                  UnsafePointer<Int32>?) throws -> R) rethrows -> R {
        try values.withUnsafeBufferPointer { values in
            try lengths.withUnsafeBufferPointer { lengths in
                try formats.withUnsafeBufferPointer { formats in
                    try body(types, values.baseAddress, lengths.baseAddress, formats.baseAddress)
                }
            }
        }
    }

    private func append(type: COutlive_Oid, offset: Int, length: Int, format: Int32) {
        types.append(type)
        offsets.append(offset)
        lengths.append(Int32(length))
        formats.append(format)
    }

    private func store(_ value: UInt64) -> Int {
        let offset = reserve(8)
        buffer.storeBytes(of: value, toByteOffset: offset, as: UInt64.self)
        return offset
    }

    private func copy(_ bytes: UnsafeRawBufferPointer) throws -> Int {
        guard bytes.count <= Self.largestValue else {
            throw OutliveError.invalidArgument("a value of \(bytes.count) bytes is larger than PostgreSQL takes (1 GiB)")
        }
        let offset = reserve(bytes.count)
        if let base = bytes.baseAddress, bytes.count > 0 { (buffer + offset).copyMemory(from: base, byteCount: bytes.count) }
        return offset
    }

    /// Room for `count` more bytes; returns where they go.
    private func reserve(_ count: Int) -> Int {
        if used + count > capacity {
            var grown = capacity * 2
            while grown < used + count { grown *= 2 }
            let larger = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 8)
            larger.copyMemory(from: buffer, byteCount: used)
            buffer.deallocate()
            buffer = larger
            capacity = grown
        }
        defer { used += count }
        return used
    }
}
