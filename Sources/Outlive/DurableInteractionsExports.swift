import COutliveAPI
import COutliveSystem
import OutliveCore

// An outlive_durable_interactions * is a retained DurableInteractionQueue.

private let knownOpenFlags: UInt32 = 1  // OUTLIVE_DURABLE_INTERACTIONS_SUSPENDED

@c @implementation
public func outlive_durable_interactions_open(_ store: OpaquePointer?, _ queueName: UnsafePointer<CChar>?, _ flags: UInt32,
                                              _ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    guarded {
        let store = try borrow(store, StoreHandle.self, "store")
        let name = try string(queueName, "queue_name", maxBytes: DurableInteractions.maxQueueNameSize)
        let out = try required(out, "out")
        guard flags & ~knownOpenFlags == 0 else {
            throw OutliveError.invalidArgument("flags 0x\(String(flags, radix: 16)) has unknown bits; only OUTLIVE_DURABLE_INTERACTIONS_SUSPENDED is defined")
        }
        let queue = try store.core.durableInteractions.open(name, suspended: flags & 1 != 0)
        out.pointee = retain(queue)
    }
}

@c @implementation
public func outlive_durable_interactions_free(_ queue: OpaquePointer?) {
    guard let object = borrowIfPresent(queue, DurableInteractionQueue.self) else { return }
    object.close()
    release(queue, DurableInteractionQueue.self)
}

@c @implementation
public func outlive_durable_interactions_add(_ queue: OpaquePointer?, _ interaction: OpaquePointer?,
                                             _ outID: UnsafeMutablePointer<CChar>?) -> outlive_status {
    guarded {
        let queue = try borrow(queue, DurableInteractionQueue.self, "queue")
        let handler = try handlerBox(interaction, "interaction").handler
        let id = try queue.add(handler)
        if let outID { writeID(id, outID) }
    }
}

@c @implementation
public func outlive_durable_interactions_suspend(_ queue: OpaquePointer?) -> outlive_status {
    guarded { try borrow(queue, DurableInteractionQueue.self, "queue").suspend() }
}

@c @implementation
public func outlive_durable_interactions_resume(_ queue: OpaquePointer?) -> outlive_status {
    guarded { try borrow(queue, DurableInteractionQueue.self, "queue").resume() }
}

@c @implementation
public func outlive_durable_interactions_count(_ queue: OpaquePointer?, _ outCount: UnsafeMutablePointer<Int>?) -> outlive_status {
    guarded {
        let queue = try borrow(queue, DurableInteractionQueue.self, "queue")
        let outCount = try required(outCount, "out_count")
        outCount.pointee = try queue.count()
    }
}

@c @implementation
public func outlive_durable_interaction_list_new(_ queue: OpaquePointer?, _ after: UnsafePointer<CChar>?, _ limit: Int,
                                                 _ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    guarded {
        let queue = try borrow(queue, DurableInteractionQueue.self, "queue")
        let start = try optionalString(after, "after", maxBytes: 64)
        let out = try required(out, "out")
        let entries = try page(try queue.entries(), after: start, limit: limit, id: { $0.id }, what: "interaction")
        out.pointee = retain(SnapshotList(entries))
    }
}

private typealias Listed = DurableInteractionQueue.Entry

@c @implementation
public func outlive_durable_interaction_list_count(_ list: OpaquePointer?) -> Int {
    snapshot(list, of: Listed.self)?.entries.count ?? 0
}

@c @implementation
public func outlive_durable_interaction_list_id(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    snapshot(list, of: Listed.self)?.text(index, "id") { $0.id }
}

@c @implementation
public func outlive_durable_interaction_list_handler_name(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    snapshot(list, of: Listed.self)?.text(index, "handler_name") { $0.handlerName }
}

@c @implementation
public func outlive_durable_interaction_list_presentations(_ list: OpaquePointer?, _ index: Int) -> UInt32 {
    UInt32(clamping: snapshot(list, of: Listed.self)?.entry(index)?.presentations ?? 0)
}

@c @implementation
public func outlive_durable_interaction_list_free(_ list: OpaquePointer?) {
    release(list, SnapshotList<Listed>.self)
}

@c @implementation
public func outlive_durable_interactions_remove(_ queue: OpaquePointer?, _ interactionID: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        let queue = try borrow(queue, DurableInteractionQueue.self, "queue")
        let id = try string(interactionID, "interaction_id", maxBytes: 64)
        try queue.remove(id)
    }
}
