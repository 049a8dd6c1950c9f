/// A message being composed: everything but its id, date and state. Each
/// setter validates its argument, so that `post` fails only on the store.
public struct MessageDraft {
    public static let maxCategoryLength = 255
    public static let maxTitleLength = 64 << 10
    public static let maxTextLength = 1 << 20
    public static let maxScopeLength = 255
    public static let maxThreadLength = 255
    /// Choice ids fit an auto-resolver's 64-byte buffer with its NUL.
    public static let maxChoiceIDLength = 63
    public static let maxChoiceLabelLength = 4_096
    public static let maxChoices = 64

    public let category: String
    public let title: String
    public private(set) var text: String?
    public private(set) var scope: String?
    public private(set) var thread: String?
    public private(set) var choices: [Choice] = []
    public private(set) var payload: Arguments?
    public private(set) var responseHandler: Handler?
    public var autoRemove = false

    public init(category: String, title: String) throws {
        try MessageDraft.check(category, "category", max: MessageDraft.maxCategoryLength)
        guard title.utf8.count <= MessageDraft.maxTitleLength else {
            throw OutliveError.invalidArgument("title is \(title.utf8.count) bytes long; at most \(MessageDraft.maxTitleLength) are allowed")
        }
        // Made by an init that cannot throw: a throwing one copied the whole
        // draft on its way out (every post makes a draft).
        self.init(checkedCategory: category, title: title)
    }

    private init(checkedCategory category: String, title: String) {
        self.category = category
        self.title = title
    }

    /// A non-empty name without control characters, at most `max` bytes.
    public static func check(_ value: String, _ name: String, max: Int) throws {
        guard !value.isEmpty else { throw OutliveError.invalidArgument("\(name) is empty") }
        guard value.utf8.count <= max else {
            throw OutliveError.invalidArgument("\(name) is \(value.utf8.count) bytes long; at most \(max) are allowed")
        }
        // By byte: a control character is one byte in UTF-8, and a byte
        // below 0x80 is never part of another character (a draft's names are
        // checked on every post: the generic `contains` cost ~150
        // instructions a name).
        var text = value
        let control = text.withUTF8 { bytes in
            for byte in bytes where byte < 0x20 || byte == 0x7F { return true }
            return false
        }
        guard !control else {
            throw OutliveError.invalidArgument("\(name) \"\(value)\" contains a control character")
        }
    }

    public mutating func setText(_ text: String?) throws {
        if let text, text.utf8.count > MessageDraft.maxTextLength {
            throw OutliveError.invalidArgument("text is \(text.utf8.count) bytes long; at most \(MessageDraft.maxTextLength) are allowed")
        }
        self.text = text
    }

    public mutating func setScope(_ scope: String?) throws {
        if let scope { try MessageDraft.check(scope, "scope_id", max: MessageDraft.maxScopeLength) }
        self.scope = scope
    }

    public mutating func setThread(_ thread: String?) throws {
        if let thread { try MessageDraft.check(thread, "thread_id", max: MessageDraft.maxThreadLength) }
        self.thread = thread
    }

    public mutating func addChoice(_ choice: Choice) throws {
        try MessageDraft.check(choice.id, "choice_id", max: MessageDraft.maxChoiceIDLength)
        guard choice.label.utf8.count <= MessageDraft.maxChoiceLabelLength else {
            throw OutliveError.invalidArgument("label is \(choice.label.utf8.count) bytes long; at most \(MessageDraft.maxChoiceLabelLength) are allowed")
        }
        guard !choices.contains(where: { $0.id == choice.id }) else {
            throw OutliveError.invalidArgument("the draft has a choice \"\(choice.id)\" already")
        }
        guard choices.count < MessageDraft.maxChoices else {
            throw OutliveError.invalidArgument("a message has at most \(MessageDraft.maxChoices) choices")
        }
        choices.append(choice)
    }

    public mutating func setPayload(_ payload: Arguments?) {
        self.payload = payload
    }

    public mutating func setResponseHandler(_ handler: Handler?) throws {
        if let handler, handler.isInvalidated {
            throw OutliveError(.invalidated, "handler \(handler.name) was invalidated; it cannot answer a message")
        }
        if let handler { try HandlerRegistry.checkStorable(handler, as: "a message's response handler") }
        responseHandler = handler
    }
}

/// The stored form of a message's choices: per choice a kind byte, then the id
/// and the label, each a 32-bit little-endian length and UTF-8 bytes.
enum ChoiceCoding {
    static func encode(_ choices: [Choice]) -> [UInt8] {
        // One allocation of the final size: every post encodes its choices.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(choices.reduce(0) { $0 + 9 + $1.id.utf8.count + $1.label.utf8.count })
        func append(_ text: String) {
            let count = UInt32(truncatingIfNeeded: text.utf8.count)
            for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: count >> UInt32(shift))) }
            bytes.append(contentsOf: text.utf8)
        }
        for choice in choices {
            bytes.append(UInt8(truncatingIfNeeded: choice.kind.rawValue))
            append(choice.id)
            append(choice.label)
        }
        return bytes
    }

    static func decode(_ bytes: [UInt8], message id: String) throws -> [Choice] {
        var choices: [Choice] = []
        var index = 0
        func fail() -> OutliveError { OutliveError.corrupt("the stored choices of message \(id) do not decode") }
        func text() throws -> String {
            guard bytes.count - index >= 4 else { throw fail() }
            var count = 0
            for shift in 0..<4 { count |= Int(bytes[index + shift]) << (8 * shift) }
            index += 4
            guard bytes.count - index >= count, let value = String(validating: bytes[index..<(index + count)], as: UTF8.self) else { throw fail() }
            index += count
            return value
        }
        while index < bytes.count {
            guard let kind = ChoiceKind(rawValue: Int32(bytes[index])) else { throw fail() }
            index += 1
            let choiceID = try text()
            let label = try text()
            choices.append(Choice(id: choiceID, label: label, kind: kind))
        }
        return choices
    }
}
