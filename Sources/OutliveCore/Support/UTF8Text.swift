/// Text read from bytes (a serialized handler, a stored column): a `String`
/// when the bytes are valid UTF-8, else nil.
enum UTF8Text {
    /// ASCII — every name and id Outlive writes — is valid UTF-8 as it
    /// stands and is decoded without validation: `String(validating:as:)`
    /// looks up its generic metadata on every call (about 1,000 instructions,
    /// a third of what decoding a handler cost). Anything else is validated.
    static func string(_ bytes: UnsafeRawBufferPointer) -> String? {
        if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }
}
