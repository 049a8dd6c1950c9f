import COutliveAPI
import COutliveSystem
import OutliveCore

// ── messages ── The export layer of the message queue: conversion and
// validation only; the flow lives in OutliveCore/Messages.

/// What an `outlive_message_draft *` points to.
final class DraftHandle {
    // Changed by the setters and read in place by a post, none of which
    // calls out while it holds the draft: no run-time exclusivity check.
    @exclusivity(unchecked) var draft: MessageDraft
    init(_ draft: consuming MessageDraft) { self.draft = draft }
}

/// What an `outlive_message *` points to: a message and the C strings handed
/// out for it, valid while the view lives.
final class MessageView {
    let message: Message
    let id: UnsafeMutablePointer<CChar>?
    let category: UnsafeMutablePointer<CChar>?
    let title: UnsafeMutablePointer<CChar>?
    let text: UnsafeMutablePointer<CChar>?
    let scope: UnsafeMutablePointer<CChar>?
    let thread: UnsafeMutablePointer<CChar>?
    let choice: UnsafeMutablePointer<CChar>?
    let choiceIDs: [UnsafeMutablePointer<CChar>?]
    let choiceLabels: [UnsafeMutablePointer<CChar>?]
    let payload: ArgumentsBox?

    init(_ message: Message) {
        self.message = message
        id = strdup(message.id)
        category = strdup(message.category)
        title = strdup(message.title)
        text = message.text.flatMap { strdup($0) }
        scope = message.scope.flatMap { strdup($0) }
        thread = message.thread.flatMap { strdup($0) }
        choice = message.choice.flatMap { strdup($0) }
        choiceIDs = message.choices.map { strdup($0.id) }
        choiceLabels = message.choices.map { strdup($0.label) }
        payload = (try? message.payload())?.map { ArgumentsBox($0) }
    }

    deinit {
        for pointer in [id, category, title, text, scope, thread, choice] + choiceIDs + choiceLabels { free(pointer) }
    }

    /// Runs `body` with the view as a borrowed `const outlive_message *`.
    static func lend<T>(_ message: Message, _ body: (OpaquePointer) -> T) -> T {
        let view = MessageView(message)
        return withExtendedLifetime(view) { body(OpaquePointer(Unmanaged.passUnretained(view).toOpaque())) }
    }
}

/// Presentation tokens handed to C. The pointer a presenter gets is a number
/// (never dereferenced) looked up here, so that a token finished already — or
/// never issued — is OUTLIVE_E_STATE rather than a use after free.
enum PresentationTokens {
    private static let live = TokenTable<UInt64, Presentation>()

    static func issue(_ presentation: Presentation) -> OpaquePointer? {
        OpaquePointer(bitPattern: UInt(truncatingIfNeeded: live.issue(presentation)))
    }

    static func lookup(_ token: OpaquePointer?) -> Presentation? {
        guard let token else { return nil }
        return live.value(for: number(token))
    }

    static func retire(_ token: OpaquePointer) {
        live.remove(number(token))
    }

    private static func number(_ token: OpaquePointer) -> UInt64 {
        UInt64(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(token))))
    }
}


private func messages(_ store: OpaquePointer?) throws -> MessageQueue {
    try borrow(store, StoreHandle.self, "store").core.messages
}

private func messageID(_ pointer: UnsafePointer<CChar>?) throws -> String {
    try string(pointer, "message_id", maxBytes: 64)
}

private func view(_ message: OpaquePointer?) -> MessageView? {
    borrowIfPresent(message, MessageView.self)
}

private func choiceKind(_ kind: outlive_choice_kind) throws -> ChoiceKind {
    guard let value = ChoiceKind(rawValue: Int32(bitPattern: UInt32(truncatingIfNeeded: kind.rawValue))) else {
        throw OutliveError.invalidArgument("kind \(kind.rawValue) is not an outlive_choice_kind")
    }
    return value
}

// MARK: - Drafts

@c @implementation
public func outlive_message_draft_new(_ category: UnsafePointer<CChar>?, _ title: UnsafePointer<CChar>?,
                                      _ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    guarded {
        let category = try string(category, "category", maxBytes: MessageDraft.maxCategoryLength + 1)
        let title = try string(title, "title", maxBytes: MessageDraft.maxTitleLength + 1)
        let out = try required(out, "out")
        out.pointee = retain(DraftHandle(try MessageDraft(category: category, title: title)))
    }
}

@c @implementation
public func outlive_message_draft_free(_ draft: OpaquePointer?) {
    release(draft, DraftHandle.self)
}

@c @implementation
public func outlive_message_draft_set_text(_ draft: OpaquePointer?, _ text: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        let handle = try borrow(draft, DraftHandle.self, "draft")
        try handle.draft.setText(try optionalString(text, "text", maxBytes: MessageDraft.maxTextLength + 1))
    }
}

@c @implementation
public func outlive_message_draft_set_scope(_ draft: OpaquePointer?, _ scope_id: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        let handle = try borrow(draft, DraftHandle.self, "draft")
        try handle.draft.setScope(try optionalString(scope_id, "scope_id", maxBytes: MessageDraft.maxScopeLength + 1))
    }
}

@c @implementation
public func outlive_message_draft_set_thread(_ draft: OpaquePointer?, _ thread_id: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        let handle = try borrow(draft, DraftHandle.self, "draft")
        try handle.draft.setThread(try optionalString(thread_id, "thread_id", maxBytes: MessageDraft.maxThreadLength + 1))
    }
}

@c @implementation
public func outlive_message_draft_add_choice(_ draft: OpaquePointer?, _ choice_id: UnsafePointer<CChar>?,
                                             _ label: UnsafePointer<CChar>?, _ kind: outlive_choice_kind) -> outlive_status {
    guarded {
        try withBorrowed(draft, DraftHandle.self, "draft") { handle in
            let id = try string(choice_id, "choice_id", maxBytes: MessageDraft.maxChoiceIDLength + 1)
            let label = try string(label, "label", maxBytes: MessageDraft.maxChoiceLabelLength + 1)
            try handle.draft.addChoice(Choice(id: id, label: label, kind: try choiceKind(kind)))
        }
    }
}

@c @implementation
public func outlive_message_draft_set_payload(_ draft: OpaquePointer?, _ payload: OpaquePointer?) -> outlive_status {
    guarded {
        let handle = try borrow(draft, DraftHandle.self, "draft")
        handle.draft.setPayload(try borrowNullable(payload, ArgumentsBox.self, "payload")?.arguments)
    }
}

@c @implementation
public func outlive_message_draft_set_response_handler(_ draft: OpaquePointer?, _ handler: OpaquePointer?) -> outlive_status {
    guarded {
        let handle = try borrow(draft, DraftHandle.self, "draft")
        try handle.draft.setResponseHandler(try borrowNullable(handler, HandlerBox.self, "handler")?.handler)
    }
}

@c @implementation
public func outlive_message_draft_set_auto_remove(_ draft: OpaquePointer?, _ auto_remove: Bool) -> outlive_status {
    guarded {
        try borrow(draft, DraftHandle.self, "draft").draft.autoRemove = auto_remove
    }
}

// MARK: - Messages

@c @implementation
public func outlive_message_post(_ store: OpaquePointer?, _ draft: OpaquePointer?, _ out_id: UnsafeMutablePointer<CChar>?) -> outlive_status {
    guarded {
        // The store retained for the call (a close from another thread
        // meanwhile frees nothing it uses); the draft, the caller's to keep
        // alive while it is read, borrowed without a retain and a release.
        let queue = try messages(store)
        try withBorrowed(draft, DraftHandle.self, "draft") { handle in
            let out = try required(out_id, "out_id")
            writeID(try queue.post(&handle.draft), out)
        }
    }
}

@c @implementation
public func outlive_message_respond(_ store: OpaquePointer?, _ message_id: UnsafePointer<CChar>?, _ choice_id: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        let queue = try messages(store)
        try queue.respond(try messageID(message_id), choice: try string(choice_id, "choice_id", maxBytes: MessageDraft.maxChoiceIDLength + 1))
    }
}

@c @implementation
public func outlive_message_mute(_ store: OpaquePointer?, _ message_id: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        try messages(store).mute(try messageID(message_id))
    }
}

@c @implementation
public func outlive_message_remove(_ store: OpaquePointer?, _ message_id: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        try messages(store).remove(try messageID(message_id))
    }
}

@c @implementation
public func outlive_messages_remove_scope(_ store: OpaquePointer?, _ scope_id: UnsafePointer<CChar>?, _ out_count: UnsafeMutablePointer<Int>?) -> outlive_status {
    guarded {
        let queue = try messages(store)
        let removed = try queue.remove(scope: try string(scope_id, "scope_id", maxBytes: MessageDraft.maxScopeLength + 1))
        out_count?.pointee = removed
    }
}

@c @implementation
public func outlive_message_list_new(_ store: OpaquePointer?, _ scope_id: UnsafePointer<CChar>?, _ category: UnsafePointer<CChar>?,
                                     _ after: UnsafePointer<CChar>?, _ limit: Int,
                                     _ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    guarded {
        let queue = try messages(store)
        let scope = try optionalString(scope_id, "scope_id", maxBytes: MessageDraft.maxScopeLength + 1)
        let category = try optionalString(category, "category", maxBytes: MessageDraft.maxCategoryLength + 1)
        let start = try optionalString(after, "after", maxBytes: 64)
        let out = try required(out, "out")
        let ids = try page(try queue.list(scope: scope, category: category), after: start, limit: limit, id: { $0 },
                           what: "message")
        out.pointee = retain(SnapshotList(ids.map(ListedMessage.init)))
    }
}

/// An entry of a message list: its own type, so that a kv key list (of
/// Strings) is a handle of another kind.
struct ListedMessage {
    let id: String
}

@c @implementation
public func outlive_message_list_count(_ list: OpaquePointer?) -> Int {
    snapshot(list, of: ListedMessage.self)?.entries.count ?? 0
}

@c @implementation
public func outlive_message_list_id(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    snapshot(list, of: ListedMessage.self)?.text(index, "id") { $0.id }
}

@c @implementation
public func outlive_message_list_free(_ list: OpaquePointer?) {
    release(list, SnapshotList<ListedMessage>.self)
}

@c @implementation
public func outlive_messages_count(_ store: OpaquePointer?, _ category: UnsafePointer<CChar>?, _ out_count: UnsafeMutablePointer<Int>?) -> outlive_status {
    guarded {
        let queue = try messages(store)
        let category = try optionalString(category, "category", maxBytes: MessageDraft.maxCategoryLength + 1)
        let out = try required(out_count, "out_count")
        out.pointee = Int(clamping: try queue.count(category: category))
    }
}

@c @implementation
public func outlive_messages_set_category_limit(_ store: OpaquePointer?, _ limit: Int) -> outlive_status {
    guarded {
        try messages(store).setCategoryLimit(Int64(clamping: UInt(bitPattern: limit)))
    }
}

@c @implementation
public func outlive_message_get(_ store: OpaquePointer?, _ message_id: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    guarded {
        let queue = try messages(store)
        let id = try messageID(message_id)
        let out = try required(out, "out")
        out.pointee = retain(MessageView(try queue.message(id)))
    }
}

@c @implementation
public func outlive_message_free(_ message: OpaquePointer?) {
    release(message, MessageView.self)
}

// MARK: - Accessors

@c @implementation
public func outlive_message_id(_ message: OpaquePointer?) -> UnsafePointer<CChar>? {
    view(message)?.id.map { UnsafePointer($0) }
}

@c @implementation
public func outlive_message_category(_ message: OpaquePointer?) -> UnsafePointer<CChar>? {
    view(message)?.category.map { UnsafePointer($0) }
}

@c @implementation
public func outlive_message_title(_ message: OpaquePointer?) -> UnsafePointer<CChar>? {
    view(message)?.title.map { UnsafePointer($0) }
}

@c @implementation
public func outlive_message_text(_ message: OpaquePointer?) -> UnsafePointer<CChar>? {
    view(message)?.text.map { UnsafePointer($0) }
}

@c @implementation
public func outlive_message_scope(_ message: OpaquePointer?) -> UnsafePointer<CChar>? {
    view(message)?.scope.map { UnsafePointer($0) }
}

@c @implementation
public func outlive_message_thread(_ message: OpaquePointer?) -> UnsafePointer<CChar>? {
    view(message)?.thread.map { UnsafePointer($0) }
}

@c @implementation
public func outlive_message_choice(_ message: OpaquePointer?) -> UnsafePointer<CChar>? {
    view(message)?.choice.map { UnsafePointer($0) }
}

@c @implementation
public func outlive_message_payload(_ message: OpaquePointer?) -> OpaquePointer? {
    guard let payload = view(message)?.payload else { return nil }
    return OpaquePointer(Unmanaged.passUnretained(payload).toOpaque())
}

@c @implementation
public func outlive_message_date(_ message: OpaquePointer?) -> Double {
    view(message)?.message.date ?? 0
}

@c @implementation
public func outlive_message_choice_count(_ message: OpaquePointer?) -> Int {
    view(message)?.message.choices.count ?? 0
}

@c @implementation
public func outlive_message_choice_at(_ message: OpaquePointer?, _ index: Int, _ out_id: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                                      _ out_label: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                                      _ out_kind: UnsafeMutablePointer<outlive_choice_kind>?) -> outlive_status {
    guarded {
        let view = try borrow(message, MessageView.self, "message")
        let choices = view.message.choices
        guard index >= 0, index < choices.count else {
            throw OutliveError.invalidArgument("index \(UInt(bitPattern: index)) is out of range; message \(view.message.id) has \(choices.count) choices")
        }
        out_id?.pointee = view.choiceIDs[index].map { UnsafePointer($0) }
        out_label?.pointee = view.choiceLabels[index].map { UnsafePointer($0) }
        out_kind?.pointee = outlive_choice_kind(rawValue: UInt32(bitPattern: choices[index].kind.rawValue))
    }
}

@c @implementation
public func outlive_message_is_presented(_ message: OpaquePointer?) -> Bool {
    view(message)?.message.presented ?? false
}

@c @implementation
public func outlive_message_is_handled(_ message: OpaquePointer?) -> Bool {
    view(message)?.message.handled ?? false
}

@c @implementation
public func outlive_message_is_removed(_ message: OpaquePointer?) -> Bool {
    view(message)?.message.removed ?? false
}

@c @implementation
public func outlive_message_auto_removes(_ message: OpaquePointer?) -> Bool {
    view(message)?.message.autoRemove ?? false
}

@c @implementation
public func outlive_message_has_response_handler(_ message: OpaquePointer?) -> Bool {
    view(message)?.message.responseHandlerBytes != nil
}

// MARK: - Presenters

@c @implementation
public func outlive_presenter_add(_ store: OpaquePointer?, _ presenter_id: UnsafePointer<CChar>?,
                                               _ callbacks: UnsafePointer<outlive_presenter>?, _ context: UnsafeMutableRawPointer?,
                                               _ releaseContext: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?) -> outlive_status {
    guarded {
        let queue = try messages(store)
        let id = try string(presenter_id, "presenter_id", maxBytes: MessageQueue.maxCallbackIDLength + 1)
        let given = try required(callbacks, "callbacks").pointee
        guard given.version == OUTLIVE_PRESENTER_VERSION else {
            throw OutliveError.invalidArgument("callbacks->version is \(given.version); this library knows version \(OUTLIVE_PRESENTER_VERSION)")
        }
        let priority = try required(given.priority, "callbacks->priority")
        let present = try required(given.present, "callbacks->present")
        let end = given.end
        let caller = CallerContext(context, release: releaseContext)
        do {
            try queue.addPresenter(id: id, PresenterCallbacks(
                priority: { message in MessageView.lend(message) { priority($0, caller.pointer) } },
                present: { message, presentation in
                    let token = PresentationTokens.issue(presentation)
                    MessageView.lend(message) { present($0, token, caller.pointer) }
                },
                end: end.map { end in { message in MessageView.lend(message) { end($0, caller.pointer) } } }))
        } catch {
            caller.disarm()
            throw error
        }
    }
}

@c @implementation
public func outlive_presenter_remove(_ store: OpaquePointer?, _ presenter_id: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        let queue = try messages(store)
        try queue.removePresenter(id: try string(presenter_id, "presenter_id", maxBytes: MessageQueue.maxCallbackIDLength + 1))
    }
}

@c @implementation
public func outlive_presenter_reoffer(_ store: OpaquePointer?, _ presenter_id: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        let queue = try messages(store)
        try queue.reoffer(presenterID: try string(presenter_id, "presenter_id", maxBytes: MessageQueue.maxCallbackIDLength + 1))
    }
}

@c @implementation
public func outlive_presentation_finish(_ presentation: OpaquePointer?, _ result: outlive_presentation_result,
                                        _ requires_end_notification: Bool, _ choice_id: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        let token = try required(presentation, "presentation")
        let presented: Bool
        switch result {
        case OUTLIVE_PRESENTATION_PRESENTED: presented = true
        case OUTLIVE_PRESENTATION_NOT_PRESENTED: presented = false
        default: throw OutliveError.invalidArgument("result \(result.rawValue) is not an outlive_presentation_result")
        }
        let choice = try optionalString(choice_id, "choice_id", maxBytes: MessageDraft.maxChoiceIDLength + 1)
        if let choice { try MessageDraft.check(choice, "choice_id", max: MessageDraft.maxChoiceIDLength) }
        guard let found = PresentationTokens.lookup(token) else {
            throw OutliveError.state("the presentation was finished already (or is no presentation token)")
        }
        try found.finish(PresentationOutcome(presented: presented, requiresEndNotification: requires_end_notification, choice: choice))
        PresentationTokens.retire(token)
    }
}

// MARK: - Response handlers and auto-resolvers

@c @implementation
public func outlive_response_handler_add(_ store: OpaquePointer?, _ id: UnsafePointer<CChar>?, _ handler: outlive_response_handler?,
                                                      _ context: UnsafeMutableRawPointer?,
                                                      _ releaseContext: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?) -> outlive_status {
    guarded {
        let queue = try messages(store)
        let name = try string(id, "id", maxBytes: MessageQueue.maxCallbackIDLength + 1)
        let handler = try required(handler, "handler")
        let caller = CallerContext(context, release: releaseContext)
        do {
            try queue.addResponseHandler(id: name) { message in MessageView.lend(message) { handler($0, caller.pointer) } }
        } catch {
            caller.disarm()
            throw error
        }
    }
}

@c @implementation
public func outlive_response_handler_remove(_ store: OpaquePointer?, _ id: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        let queue = try messages(store)
        try queue.removeResponseHandler(id: try string(id, "id", maxBytes: MessageQueue.maxCallbackIDLength + 1))
    }
}

@c @implementation
public func outlive_auto_resolver_add(_ store: OpaquePointer?, _ id: UnsafePointer<CChar>?, _ resolver: outlive_auto_resolver?,
                                                   _ context: UnsafeMutableRawPointer?,
                                                   _ releaseContext: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?) -> outlive_status {
    guarded {
        let queue = try messages(store)
        let name = try string(id, "id", maxBytes: MessageQueue.maxCallbackIDLength + 1)
        let resolver = try required(resolver, "resolver")
        let caller = CallerContext(context, release: releaseContext)
        do {
            try queue.addAutoResolver(id: name) { message in
                var buffer = [CChar](repeating: 0, count: Int(OUTLIVE_MESSAGE_CHOICE_ID_SIZE))
                let resolved = MessageView.lend(message) { view in
                    buffer.withUnsafeMutableBufferPointer { resolver(view, $0.baseAddress, caller.pointer) }
                }
                guard resolved else { return .unresolved }
                buffer[buffer.count - 1] = 0
                let length = buffer.firstIndex(of: 0) ?? buffer.count - 1
                guard length > 0 else { return .resolved }
                let bytes = buffer[0..<length].map { UInt8(bitPattern: $0) }
                guard let choice = String(validating: bytes, as: UTF8.self) else { return .unresolved }
                return .answered(choice)
            }
        } catch {
            caller.disarm()
            throw error
        }
    }
}

@c @implementation
public func outlive_auto_resolver_remove(_ store: OpaquePointer?, _ id: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        let queue = try messages(store)
        try queue.removeAutoResolver(id: try string(id, "id", maxBytes: MessageQueue.maxCallbackIDLength + 1))
    }
}
