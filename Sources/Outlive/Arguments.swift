import COutliveAPI
import COutliveSystem
import OutliveCore

// Validation of what C callers pass: pointers, strings, sizes. Every export
// checks its arguments through these before anything reaches the core.

/// A required pointer, or `.invalidArgument` naming the parameter.
func required<T>(_ pointer: T?, _ name: String) throws -> T {
    guard let pointer else { throw OutliveError.invalidArgument("\(name) is NULL") }
    return pointer
}

/// A NUL-terminated string that must be valid UTF-8.
func string(_ pointer: UnsafePointer<CChar>?, _ name: String, maxBytes: Int = 1 << 20) throws -> String {
    let pointer = try required(pointer, name)
    let length = strnlen(pointer, maxBytes + 1)
    guard length <= maxBytes else { throw OutliveError.invalidArgument("\(name) is longer than \(maxBytes) bytes") }
    // The C string initializer validates without the generic UTF-8 decoder
    // (String(validating:as:) instantiated type metadata on every call).
    guard let text = String(validatingCString: pointer) else {
        throw OutliveError.invalidArgument("\(name) is not valid UTF-8")
    }
    return text
}

/// An optional string: NULL stays nil; otherwise as `string`.
func optionalString(_ pointer: UnsafePointer<CChar>?, _ name: String, maxBytes: Int = 1 << 20) throws -> String? {
    guard pointer != nil else { return nil }
    return try string(pointer, name, maxBytes: maxBytes)
}

/// `size` bytes at `pointer` (which may be NULL only when size is 0), copied.
func bytes(_ pointer: UnsafeRawPointer?, _ size: Int, _ name: String, maxBytes: Int) throws -> [UInt8] {
    guard size <= maxBytes else { throw OutliveError.invalidArgument("\(name) is \(size) bytes long; at most \(maxBytes) are allowed") }
    guard size > 0 else { return [] }
    let pointer = try required(pointer, name)
    return Array(UnsafeRawBufferPointer(start: pointer, count: size))
}

/// Copies bytes into a malloc'd block the caller frees with outlive_free;
/// never NULL, also for zero bytes.
func mallocCopy(_ bytes: [UInt8]) throws -> UnsafeMutableRawPointer {
    guard let block = malloc(max(bytes.count, 1)) else { throw OutliveError(.noMemory, "out of memory for \(bytes.count) bytes") }
    bytes.withUnsafeBytes { if let base = $0.baseAddress { block.copyMemory(from: base, byteCount: $0.count) } }
    return block
}

/// A NUL-terminated malloc'd copy of text, freed with outlive_free.
func mallocString(_ text: String) throws -> UnsafeMutablePointer<CChar> {
    guard let copy = strdup(text) else { throw OutliveError(.noMemory, "out of memory for a string") }
    return copy
}

/// Writes an id into a caller's OUTLIVE_ID_SIZE buffer.
func writeID(_ id: String, _ out: UnsafeMutablePointer<CChar>) {
    // From the string's own UTF-8, not an Array of it: an id is written for
    // every task added (the array cost about 2,000 instructions, 3% of an add).
    var id = id
    id.withUTF8 { bytes in
        let count = min(bytes.count, 36)
        for index in 0..<count { out[index] = CChar(bitPattern: bytes[index]) }
        out[count] = 0
    }
}
