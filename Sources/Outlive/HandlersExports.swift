import COutliveAPI
import COutliveSystem
import OutliveCore

// outlive_handler is a HandlerBox (OutliveCore): a handler value and the C
// strings it hands out. Other sections borrow it with `handlerBox(_:_:)`.

func handlerBox(_ handler: OpaquePointer?, _ name: String = "handler") throws -> HandlerBox {
    try borrow(handler, HandlerBox.self, name)
}

private func handlerName(_ name: UnsafePointer<CChar>?, _ parameter: String) throws -> String {
    let text = try string(name, parameter, maxBytes: HandlerName.maxLength)
    try HandlerName.validate(text)
    return text
}

/// A new handle, or NULL with the last error set.
private func makeHandler(_ body: () throws -> Handler) -> OpaquePointer? {
    do {
        return retain(HandlerBox(try body()))
    } catch {
        _ = fail(error)
        return nil
    }
}

@c @implementation
public func outlive_register(_ name: UnsafePointer<CChar>?, _ signature: UnsafePointer<CChar>?,
                             _ function: (@convention(c) () -> Void)?) -> outlive_status {
    guarded {
        let handler = try handlerName(name, "name")
        let text = try string(signature, "signature", maxBytes: Signature.maxLength)
        let function = try required(function, "function")
        try HandlerRegistry.shared.register(name: handler, signature: text, function: function)
    }
}

@c @implementation
public func outlive_unregister(_ name: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        try HandlerRegistry.shared.unregister(name: try handlerName(name, "name"))
    }
}

@c @implementation
public func outlive_load_handlers(_ path: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        try HandlerRegistry.shared.loadLibrary(path: try string(path, "library_path", maxBytes: 4096))
    }
}

@c @implementation
public func outlive_resolve(_ name: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        _ = try HandlerRegistry.shared.resolve(try handlerName(name, "name"))
    }
}

@c @implementation
public func outlive_handler_new(_ name: UnsafePointer<CChar>?, _ bound: OpaquePointer?) -> OpaquePointer? {
    makeHandler {
        try Handler(name: try handlerName(name, "name"), bound: optionalArguments(bound))
    }
}

@c @implementation
public func outlive_handler_new_with_invalidation(_ name: UnsafePointer<CChar>?, _ invalidationName: UnsafePointer<CChar>?,
                                                  _ bound: OpaquePointer?) -> OpaquePointer? {
    makeHandler {
        try Handler(name: try handlerName(name, "name"),
                    invalidationName: try handlerName(invalidationName, "invalidation_name"),
                    bound: optionalArguments(bound))
    }
}

@c @implementation
public func outlive_handler_copy(_ handler: OpaquePointer?) -> OpaquePointer? {
    makeHandler { try handlerBox(handler).handler }
}

@c @implementation
public func outlive_handler_free(_ handler: OpaquePointer?) {
    release(handler, HandlerBox.self)
}

@c @implementation
public func outlive_handler_bind(_ handler: OpaquePointer?, _ more: OpaquePointer?) -> outlive_status {
    guarded {
        let box = try handlerBox(handler)
        try box.bind(try argumentsBox(more, "more").arguments)
    }
}

@c @implementation
public func outlive_call(_ handler: OpaquePointer?, _ callArgs: OpaquePointer?) -> outlive_status {
    guarded {
        try handlerBox(handler).call(with: optionalArguments(callArgs))
    }
}

@c @implementation
public func outlive_invalidate(_ handler: OpaquePointer?, _ callArgs: OpaquePointer?) -> outlive_status {
    guarded {
        try handlerBox(handler).invalidate(with: optionalArguments(callArgs))
    }
}

@c @implementation
public func outlive_handler_is_invalidated(_ handler: OpaquePointer?) -> Bool {
    borrowIfPresent(handler, HandlerBox.self)?.isInvalidated ?? false
}

@c @implementation
public func outlive_handler_name(_ handler: OpaquePointer?) -> UnsafePointer<CChar>? {
    borrowIfPresent(handler, HandlerBox.self).map { UnsafePointer($0.cName) }
}

@c @implementation
public func outlive_handler_invalidation_name(_ handler: OpaquePointer?) -> UnsafePointer<CChar>? {
    borrowIfPresent(handler, HandlerBox.self)?.cInvalidationName.map { UnsafePointer($0) }
}

@c @implementation
public func outlive_handler_bound(_ handler: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    guarded {
        let box = try handlerBox(handler)
        let out = try required(out, "out")
        out.pointee = retain(ArgumentsBox(box.handler.bound))
    }
}

@c @implementation
public func outlive_handler_description(_ handler: OpaquePointer?) -> UnsafePointer<CChar>? {
    borrowIfPresent(handler, HandlerBox.self)?.description
}

@c @implementation
public func outlive_handler_serialize(_ handler: OpaquePointer?, _ bytesOut: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                      _ size: UnsafeMutablePointer<Int>?) -> outlive_status {
    guarded {
        let box = try handlerBox(handler)
        let bytesOut = try required(bytesOut, "bytes")
        let size = try required(size, "size")
        let encoded = try box.handler.serializedChecked()
        bytesOut.pointee = try mallocCopy(encoded)
        size.pointee = encoded.count
    }
}

@c @implementation
public func outlive_handler_deserialize(_ pointer: UnsafeRawPointer?, _ size: Int,
                                        _ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    guarded {
        let out = try required(out, "out")
        guard size >= 0 else { throw OutliveError.invalidArgument("size \(UInt(bitPattern: size)) is out of range") }
        guard size == 0 || pointer != nil else { throw OutliveError.invalidArgument("bytes is NULL") }
        let handler = try Handler(serialized: UnsafeRawBufferPointer(start: pointer, count: size))
        out.pointee = retain(HandlerBox(handler))
    }
}
