/// One declared parameter of a handler.
public struct Parameter: Equatable {
    public let name: String
    public let type: ValueType
    /// ID and HANDLER parameters may be optional (absent → NULL); primitives never are.
    public let isOptional: Bool
    /// For ID parameters: the only type tag accepted; nil accepts any.
    public let typeTag: String?

    /// Whether `value` may be passed for this parameter.
    public func accepts(_ value: Value) -> Bool {
        guard value.type == type else { return false }
        if let typeTag, case .id(let id) = value { return id.storage.typeTag == typeTag }
        return true
    }
}

/// A handler's parameters, in the order the C function takes them, parsed
/// from a signature string:
///
///     signature = ws [ param *( ws "," ws param ) ws ]
///     param     = type [ "<" tag ">" ] [ "?" ] 1*( SP / HTAB ) name
///     type      = "ID" / "HANDLER" / "BOOL" / "INT" / "DOUBLE" / "INTEGER" / "UINTEGER"
///     ws        = *( SP / HTAB )
///
/// "<tag>" only after ID; "?" only after ID and HANDLER; names are C identifiers
/// of at most 128 bytes, unique; at most 64 parameters; the string is at most
/// 8192 bytes. Example: `ID<xmpp.account>? account, BOOL success`.
public struct Signature: Equatable {
    public static let maxParameters = 64
    public static let maxLength = 8192

    public let parameters: [Parameter]
    public let text: String

    public init(parsing text: String) throws {
        let bytes = Array(text.utf8)
        guard bytes.count <= Signature.maxLength else {
            throw OutliveError.invalidArgument("signature is \(bytes.count) bytes long; at most \(Signature.maxLength) are allowed")
        }
        var parser = SignatureParser(bytes: bytes, text: text)
        parameters = try parser.parse()
        self.text = text
    }

    /// The canonical text (single spaces, ", " between parameters).
    public var canonical: String {
        parameters.map { parameter in
            var text = parameter.type.name
            if let tag = parameter.typeTag { text += "<\(tag)>" }
            if parameter.isOptional { text += "?" }
            return text + " " + parameter.name
        }.joined(separator: ", ")
    }
}

private struct SignatureParser {
    let bytes: [UInt8]
    let text: String
    var position = 0

    init(bytes: [UInt8], text: String) {
        self.bytes = bytes
        self.text = text
    }

    func fail(_ expected: String) -> OutliveError {
        let shown = text.utf8.count <= 200 ? "\"\(text)\"" : "(\(bytes.count) bytes)"
        return OutliveError.invalidArgument("malformed signature \(shown) at byte \(position): expected \(expected)")
    }

    var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    mutating func skipSpace() -> Int {
        let start = position
        while let byte = current, byte == 32 || byte == 9 { position += 1 }
        return position - start
    }

    static func isWordByte(_ byte: UInt8) -> Bool {
        (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || byte == 95
    }

    mutating func word() -> ArraySlice<UInt8> {
        let start = position
        while let byte = current, SignatureParser.isWordByte(byte) { position += 1 }
        return bytes[start..<position]
    }

    mutating func parse() throws -> [Parameter] {
        var parameters: [Parameter] = []
        _ = skipSpace()
        if current == nil { return [] }
        while true {
            let parameter = try parseParameter()
            if parameters.contains(where: { $0.name == parameter.name }) {
                throw fail("a parameter name not used before (\"\(parameter.name)\" is declared twice)")
            }
            parameters.append(parameter)
            guard parameters.count <= Signature.maxParameters else {
                throw fail("at most \(Signature.maxParameters) parameters")
            }
            _ = skipSpace()
            guard let byte = current else { return parameters }
            guard byte == 44 else { throw fail("',' or the end of the signature") }
            position += 1
            _ = skipSpace()
        }
    }

    mutating func parseParameter() throws -> Parameter {
        let typeStart = position
        let typeWord = word()
        let type: ValueType
        switch String(decoding: typeWord, as: UTF8.self) {
        case "ID": type = .id
        case "HANDLER": type = .handler
        case "BOOL": type = .bool
        case "INT": type = .int
        case "DOUBLE": type = .double
        case "INTEGER": type = .integer
        case "UINTEGER": type = .uinteger
        default:
            position = typeStart
            throw fail("a type (ID, HANDLER, BOOL, INT, DOUBLE, INTEGER or UINTEGER)")
        }
        var typeTag: String?
        if current == 60 {  // '<'
            guard type == .id else { throw fail("a name: only ID takes a <type tag>") }
            position += 1
            let start = position
            while let byte = current, byte != 62 { position += 1 }
            let tag = bytes[start..<position]
            guard current == 62 else { throw fail("'>' closing the type tag") }
            guard TypeTag.isValid(utf8: tag) else {
                position = start
                throw fail("a type tag of 1 to \(TypeTag.maxLength) letters, digits, '_', '.' or '-'")
            }
            position += 1
            typeTag = String(decoding: tag, as: UTF8.self)
        }
        var isOptional = false
        if current == 63 {  // '?'
            guard type == .id || type == .handler else { throw fail("a name: only ID and HANDLER can be optional ('?')") }
            position += 1
            isOptional = true
        }
        guard skipSpace() > 0 else { throw fail("a space between the type and the parameter name") }
        let nameStart = position
        let name = word()
        guard ArgumentName.isValid(utf8: name) else {
            position = nameStart
            throw fail("a parameter name ([A-Za-z_][A-Za-z0-9_]*, at most \(ArgumentName.maxLength) bytes)")
        }
        return Parameter(name: String(decoding: name, as: UTF8.self), type: type, isOptional: isOptional, typeTag: typeTag)
    }
}
