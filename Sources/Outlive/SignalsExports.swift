import COutliveAPI
import COutliveSystem
import OutliveCore

private func signals(_ store: OpaquePointer?) throws -> Signals {
    try borrow(store, StoreHandle.self, "store").core.signals
}

private func signalID(_ pointer: UnsafePointer<CChar>?, _ name: String = "signal_id") throws -> String {
    // An id of the one shape the core accepts is ASCII, hence valid UTF-8:
    // made without validating it again (which cost a fortieth of a post).
    // Anything else takes the general path, and its messages.
    if let pointer, strnlen(pointer, Identifier.textLength + 1) == Identifier.textLength {
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: Identifier.textLength)
        if Identifier.isValid(bytes) { return String(decoding: bytes, as: UTF8.self) }
    }
    return try string(pointer, name, maxBytes: 64)
}

private func delivery(_ value: outlive_delivery) throws -> SignalDelivery {
    guard let delivery = SignalDelivery(rawValue: Int32(truncatingIfNeeded: value.rawValue)) else {
        throw OutliveError.invalidArgument("delivery \(value.rawValue) is not an outlive_delivery")
    }
    return delivery
}

private func lifetime(_ value: outlive_lifetime) throws -> SignalLifetime {
    guard let lifetime = SignalLifetime(rawValue: Int32(truncatingIfNeeded: value.rawValue)) else {
        throw OutliveError.invalidArgument("lifetime \(value.rawValue) is not an outlive_lifetime")
    }
    return lifetime
}

@c @implementation
public func outlive_signal_new_id(_ out_id: UnsafeMutablePointer<CChar>?) {
    guard let out_id else { return }
    writeID(Identifier.make(), out_id)
}

@c @implementation
public func outlive_signal_consume(_ store: OpaquePointer?, _ signal_id: UnsafePointer<CChar>?, _ handler: OpaquePointer?,
                                   _ delivery: outlive_delivery, _ lifetime: outlive_lifetime,
                                   _ scope: UnsafePointer<CChar>?,
                                   _ out_consumer_id: UnsafeMutablePointer<CChar>?) -> outlive_status {
    guarded {
        let id = try consume(store, signal_id, handler, delivery, lifetime, scope)
        if let out_consumer_id { writeID(id, out_consumer_id) }
    }
}

private func consume(_ store: OpaquePointer?, _ signal_id: UnsafePointer<CChar>?, _ handler: OpaquePointer?,
                     _ deliveryValue: outlive_delivery, _ lifetimeValue: outlive_lifetime,
                     _ scope: UnsafePointer<CChar>?) throws -> String {
    let signals = try signals(store)
    let id = try signalID(signal_id)
    let handler = try borrow(handler, HandlerBox.self, "handler").handler
    let delivery = try delivery(deliveryValue)
    let lifetime = try lifetime(lifetimeValue)
    let scope = try optionalString(scope, "scope", maxBytes: Signals.maxScopeSize)
    return try signals.consume(signalID: id, handler: handler, delivery: delivery, lifetime: lifetime, scope: scope)
}

@c @implementation
public func outlive_signal_post(_ store: OpaquePointer?, _ signal_id: UnsafePointer<CChar>?, _ payload: OpaquePointer?,
                                _ terminates_consumers: Bool) -> outlive_status {
    guarded {
        let signals = try signals(store)
        let id = try signalID(signal_id)
        let arguments = try optionalArguments(payload, "payload")
        try signals.postWithoutOutcome(signalID: id, payload: arguments, terminates: terminates_consumers)
    }
}

@c @implementation
public func outlive_signal_consumer_remove(_ store: OpaquePointer?, _ consumer_id: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        let signals = try signals(store)
        try signals.removeConsumer(try signalID(consumer_id, "consumer_id"))
    }
}

@c @implementation
public func outlive_signal_consumers_remove_scope(_ store: OpaquePointer?, _ scope: UnsafePointer<CChar>?,
                                                  _ out_count: UnsafeMutablePointer<Int>?) -> outlive_status {
    guarded {
        let signals = try signals(store)
        let count = try signals.removeConsumers(scope: try string(scope, "scope", maxBytes: Signals.maxScopeSize))
        out_count?.pointee = count
    }
}

@c @implementation
public func outlive_signal_lookup(_ store: OpaquePointer?, _ signal_id: UnsafePointer<CChar>?, _ out_version: UnsafeMutablePointer<UInt64>?,
                                  _ out_consumer_count: UnsafeMutablePointer<Int>?, _ out_terminated: UnsafeMutablePointer<Bool>?) -> outlive_status {
    guarded {
        let signals = try signals(store)
        let found = try signals.signal(try signalID(signal_id))
        out_version?.pointee = found.version
        out_consumer_count?.pointee = found.consumerCount
        out_terminated?.pointee = found.terminated
    }
}

// MARK: - Lists

/// What an `outlive_signal_list *` points to: a snapshot and its C strings.
final class SignalList {
    let items: [SignalSummary]
    let ids: [UnsafeMutablePointer<CChar>]

    init(_ items: [SignalSummary]) {
        self.items = items
        ids = items.map { cCopy($0.signalID) }
    }

    deinit { for id in ids { id.deallocate() } }
}

/// What an `outlive_signal_consumer_list *` points to: a snapshot and its C strings.
final class SignalConsumerList {
    let items: [ConsumerSummary]
    private var strings: [UnsafeMutablePointer<CChar>] = []
    let ids, signalIDs, handlerNames, processes, runIDs: [UnsafePointer<CChar>]
    let scopes, deliveringRunIDs: [UnsafePointer<CChar>?]

    init(_ items: [ConsumerSummary]) {
        self.items = items
        var strings: [UnsafeMutablePointer<CChar>] = []
        func keep(_ text: String) -> UnsafePointer<CChar> {
            let copy = cCopy(text)
            strings.append(copy)
            return UnsafePointer(copy)
        }
        ids = items.map { keep($0.consumerID) }
        signalIDs = items.map { keep($0.signalID) }
        handlerNames = items.map { keep($0.handlerName) }
        processes = items.map { keep($0.processName) }
        runIDs = items.map { keep($0.runID) }
        scopes = items.map { $0.scope.map(keep) }
        deliveringRunIDs = items.map { $0.deliveringRunID.map(keep) }
        self.strings = strings
    }

    deinit { for text in strings { text.deallocate() } }
}

/// A NUL-terminated copy of text, released with `deallocate()`.
private func cCopy(_ text: String) -> UnsafeMutablePointer<CChar> {
    let utf8 = Array(text.utf8)
    let copy = UnsafeMutablePointer<CChar>.allocate(capacity: utf8.count + 1)
    for (index, byte) in utf8.enumerated() { copy[index] = CChar(bitPattern: byte) }
    copy[utf8.count] = 0
    return copy
}

@c @implementation
public func outlive_signal_list_new(_ store: OpaquePointer?, _ after: UnsafePointer<CChar>?, _ limit: Int,
                                    _ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    guarded {
        let signals = try signals(store)
        let start = try optionalString(after, "after", maxBytes: 64)
        let out = try required(out, "out")
        // size_t past Int.max arrives negative: as good as no limit.
        let found = try signals.signals(after: start, limit: listLimit(limit))
        out.pointee = retain(SignalList(found))
    }
}

private func signalItem(_ list: OpaquePointer?, _ index: Int) -> (SignalList, SignalSummary)? {
    guard let list = borrowIfPresent(list, SignalList.self), index >= 0, index < list.items.count else { return nil }
    return (list, list.items[index])
}

@c @implementation
public func outlive_signal_list_count(_ list: OpaquePointer?) -> Int {
    borrowIfPresent(list, SignalList.self)?.items.count ?? 0
}

@c @implementation
public func outlive_signal_list_id(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    guard let (object, _) = signalItem(list, index) else { return nil }
    return UnsafePointer(object.ids[index])
}

@c @implementation
public func outlive_signal_list_version(_ list: OpaquePointer?, _ index: Int) -> UInt64 {
    signalItem(list, index)?.1.version ?? 0
}

@c @implementation
public func outlive_signal_list_consumer_count(_ list: OpaquePointer?, _ index: Int) -> Int {
    signalItem(list, index)?.1.consumerCount ?? 0
}

@c @implementation
public func outlive_signal_list_terminated(_ list: OpaquePointer?, _ index: Int) -> Bool {
    signalItem(list, index)?.1.terminated ?? false
}

@c @implementation
public func outlive_signal_list_free(_ list: OpaquePointer?) {
    release(list, SignalList.self)
}

@c @implementation
public func outlive_signal_consumer_list_new(_ store: OpaquePointer?, _ signal_id: UnsafePointer<CChar>?,
                                             _ after: UnsafePointer<CChar>?, _ limit: Int,
                                             _ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    guarded {
        let signals = try signals(store)
        let id = try optionalString(signal_id, "signal_id", maxBytes: 64)
        let start = try optionalString(after, "after", maxBytes: 64)
        let out = try required(out, "out")
        let consumers = try page(try signals.consumers(of: id), after: start, limit: limit, id: { $0.consumerID },
                                 what: "consumer")
        out.pointee = retain(SignalConsumerList(consumers))
    }
}

private func consumerList(_ list: OpaquePointer?, _ index: Int) -> SignalConsumerList? {
    guard let list = borrowIfPresent(list, SignalConsumerList.self), index >= 0, index < list.items.count else { return nil }
    return list
}

@c @implementation
public func outlive_signal_consumer_list_count(_ list: OpaquePointer?) -> Int {
    borrowIfPresent(list, SignalConsumerList.self)?.items.count ?? 0
}

@c @implementation
public func outlive_signal_consumer_list_id(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    consumerList(list, index)?.ids[index]
}

@c @implementation
public func outlive_signal_consumer_list_signal_id(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    consumerList(list, index)?.signalIDs[index]
}

@c @implementation
public func outlive_signal_consumer_list_handler_name(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    consumerList(list, index)?.handlerNames[index]
}

@c @implementation
public func outlive_signal_consumer_list_scope(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    consumerList(list, index)?.scopes[index] ?? nil
}

@c @implementation
public func outlive_signal_consumer_list_process(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    consumerList(list, index)?.processes[index]
}

@c @implementation
public func outlive_signal_consumer_list_run_id(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    consumerList(list, index)?.runIDs[index]
}

@c @implementation
public func outlive_signal_consumer_list_delivery(_ list: OpaquePointer?, _ index: Int) -> outlive_delivery {
    outlive_delivery(rawValue: UInt32(consumerList(list, index)?.items[index].delivery.rawValue ?? 0))
}

@c @implementation
public func outlive_signal_consumer_list_lifetime(_ list: OpaquePointer?, _ index: Int) -> outlive_lifetime {
    outlive_lifetime(rawValue: UInt32(consumerList(list, index)?.items[index].lifetime.rawValue ?? 0))
}

@c @implementation
public func outlive_signal_consumer_list_last_version(_ list: OpaquePointer?, _ index: Int) -> UInt64 {
    consumerList(list, index)?.items[index].lastDeliveredVersion ?? 0
}

@c @implementation
public func outlive_signal_consumer_list_delivering_run_id(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    consumerList(list, index)?.deliveringRunIDs[index] ?? nil
}

@c @implementation
public func outlive_signal_consumer_list_free(_ list: OpaquePointer?) {
    release(list, SignalConsumerList.self)
}
