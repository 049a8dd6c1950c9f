import COutliveAPI
import COutliveSystem
import OutliveCore

private func kvStore(_ store: OpaquePointer?) throws -> KeyValueStore {
    try borrow(store, StoreHandle.self, "store").core.kv
}

private func kvKey(_ key: UnsafePointer<CChar>?) throws -> String {
    try string(key, "key", maxBytes: KeyValueStore.maxKeySize)
}

@c @implementation
public func outlive_kv_set(_ store: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ value: UnsafeRawPointer?, _ size: Int) -> outlive_status {
    guarded {
        let kv = try kvStore(store)
        try kv.set(try kvKey(key), try bytes(value, size, "bytes", maxBytes: KeyValueStore.maxValueSize))
    }
}

@c @implementation
public func outlive_kv_get(_ store: OpaquePointer?, _ key: UnsafePointer<CChar>?,
                           _ value: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ size: UnsafeMutablePointer<Int>?) -> outlive_status {
    guarded {
        let kv = try kvStore(store)
        let name = try kvKey(key)
        let value = try required(value, "out_bytes")
        let size = try required(size, "out_size")
        let found = try kv.get(name)
        value.pointee = try mallocCopy(found)
        size.pointee = found.count
    }
}

@c @implementation
public func outlive_kv_delete(_ store: OpaquePointer?, _ key: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        try kvStore(store).delete(try kvKey(key))
    }
}

/// The value a kv_update modifier works on; usable only during the call.
final class KeyValueUpdate {
    let current: [UInt8]?
    var decision: KeyValueStore.Update = .unchanged
    var open = true

    init(_ current: [UInt8]?) { self.current = current }

    var bytes: [UInt8]? {
        switch decision {
        case .unchanged: return current
        case .set(let value): return value
        case .delete: return nil
        }
    }
}

@c @implementation
public func outlive_kv_value_bytes(_ value: OpaquePointer?, _ size: UnsafeMutablePointer<Int>?) -> UnsafeRawPointer? {
    guard let update = borrowIfPresent(value, KeyValueUpdate.self), update.open, let bytes = update.bytes else {
        size?.pointee = 0
        return nil
    }
    size?.pointee = bytes.count
    // The array's storage lives in the update object until it changes; an empty
    // value still has a non-NULL pointer, as "present" must differ from "absent".
    return bytes.withUnsafeBytes { $0.baseAddress.map { UnsafeRawPointer($0) } } ?? UnsafeRawPointer(staticCString(""))
}

@c @implementation
public func outlive_kv_value_set(_ value: OpaquePointer?, _ bytesPointer: UnsafeRawPointer?, _ size: Int) -> outlive_status {
    guarded {
        let update = try borrow(value, KeyValueUpdate.self, "value")
        guard update.open else { throw OutliveError.state("the value is used after its modifier returned") }
        update.decision = .set(try bytes(bytesPointer, size, "bytes", maxBytes: KeyValueStore.maxValueSize))
    }
}

@c @implementation
public func outlive_kv_value_delete(_ value: OpaquePointer?) -> outlive_status {
    guarded {
        let update = try borrow(value, KeyValueUpdate.self, "value")
        guard update.open else { throw OutliveError.state("the value is used after its modifier returned") }
        update.decision = .delete
    }
}

@c @implementation
public func outlive_kv_update(_ store: OpaquePointer?, _ key: UnsafePointer<CChar>?,
                              _ modifier: outlive_kv_modifier?, _ context: UnsafeMutableRawPointer?) -> outlive_status {
    var modifierStatus = OUTLIVE_OK
    let status = guarded {
        let kv = try kvStore(store)
        let name = try kvKey(key)
        let modifier = try required(modifier, "modifier")
        try kv.update(name) { current in
            let update = KeyValueUpdate(current)
            defer { update.open = false }
            let before = String(cString: COutlive_last_error())
            let result = withExtendedLifetime(update) {
                modifier(OpaquePointer(Unmanaged.passUnretained(update).toOpaque()), context)
            }
            guard result == OUTLIVE_OK else {
                modifierStatus = result
                let after = String(cString: COutlive_last_error())
                throw OutliveError(.state, after != before ? after : "the modifier returned \(String(cString: outlive_status_name(result)))")
            }
            return update.decision
        }
    }
    return modifierStatus != OUTLIVE_OK ? modifierStatus : status
}

@c @implementation
public func outlive_kv_observe(_ store: OpaquePointer?, _ key_prefix: UnsafePointer<CChar>?, _ observer: outlive_kv_observer?,
                               _ context: UnsafeMutableRawPointer?,
                               _ releaseContext: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?,
                               _ token: UnsafeMutablePointer<UInt64>?) -> outlive_status {
    guarded {
        let kv = try kvStore(store)
        let prefix = try string(key_prefix, "key_prefix", maxBytes: KeyValueStore.maxKeySize)
        let observer = try required(observer, "observer")
        let token = try required(token, "out_token")
        let caller = CallerContext(context, release: releaseContext)
        var registered = false
        defer { if !registered { caller.disarm() } }
        token.pointee = try kv.observe(prefix: prefix) { key, value in
            key.withCString { name in
                if let value {
                    value.withUnsafeBytes { buffer in
                        observer(name, buffer.baseAddress ?? UnsafeRawPointer(staticCString("")), buffer.count, caller.pointer)
                    }
                } else {
                    observer(name, nil, 0, caller.pointer)
                }
            }
        }
        registered = true
    }
}

@c @implementation
public func outlive_kv_unobserve(_ store: OpaquePointer?, _ token: UInt64) -> outlive_status {
    guarded {
        try kvStore(store).unobserve(token)
    }
}

@c @implementation
public func outlive_kv_key_list_new(_ store: OpaquePointer?, _ key_prefix: UnsafePointer<CChar>?, _ after: UnsafePointer<CChar>?,
                                    _ limit: Int, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    guarded {
        let kv = try kvStore(store)
        let prefix = try string(key_prefix, "key_prefix", maxBytes: KeyValueStore.maxKeySize)
        let start = try optionalString(after, "after", maxBytes: KeyValueStore.maxKeySize)
        let out = try required(out, "out")
        out.pointee = retain(SnapshotList(try kv.keys(prefix: prefix, after: start, limit: listLimit(limit))))
    }
}

@c @implementation
public func outlive_kv_key_list_count(_ list: OpaquePointer?) -> Int {
    snapshot(list, of: String.self)?.entries.count ?? 0
}

@c @implementation
public func outlive_kv_key_list_key(_ list: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    snapshot(list, of: String.self)?.text(index, "key") { $0 }
}

@c @implementation
public func outlive_kv_key_list_free(_ list: OpaquePointer?) {
    release(list, SnapshotList<String>.self)
}

@c @implementation
public func outlive_kv_count(_ store: OpaquePointer?, _ key_prefix: UnsafePointer<CChar>?, _ out_count: UnsafeMutablePointer<Int>?) -> outlive_status {
    guarded {
        let kv = try kvStore(store)
        let prefix = try string(key_prefix, "key_prefix", maxBytes: KeyValueStore.maxKeySize)
        let out = try required(out_count, "out_count")
        out.pointee = try kv.count(prefix: prefix)
    }
}
