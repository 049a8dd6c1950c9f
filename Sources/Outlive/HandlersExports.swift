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

/// Writes a new handler handle into out.
private func makeHandler(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ body: () throws -> Handler) -> outlive_status {
    guarded {
        let out = try required(out, "out")
        out.pointee = retain(HandlerBox(try body()))
    }
}

@c @implementation
public func outlive_handler_register(_ name: UnsafePointer<CChar>?, _ signature: UnsafePointer<CChar>?,
                             _ function: (@convention(c) () -> Void)?) -> outlive_status {
    guarded {
        let handler = try handlerName(name, "name")
        let text = try string(signature, "signature", maxBytes: Signature.maxLength)
        let function = try required(function, "function")
        try HandlerRegistry.shared.register(name: handler, signature: text, function: function)
    }
}

@c @implementation
public func outlive_handler_unregister(_ name: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        try HandlerRegistry.shared.unregister(name: try handlerName(name, "name"))
    }
}

@c @implementation
public func outlive_handler_library_load(_ path: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        try HandlerRegistry.shared.loadLibrary(path: try string(path, "library_path", maxBytes: 4096))
    }
}

@c @implementation
public func outlive_handler_resolve(_ name: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        _ = try HandlerRegistry.shared.resolve(try handlerName(name, "name"))
    }
}

@c @implementation
public func outlive_handler_new(_ name: UnsafePointer<CChar>?, _ invalidationName: UnsafePointer<CChar>?,
                                _ bound: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    makeHandler(out) {
        let name = try handlerName(name, "name")
        let arguments = bound == nil ? Arguments() : try argumentsBox(bound, "bound").arguments
        guard invalidationName != nil else { return try Handler(name: name, bound: arguments) }
        return try Handler(name: name, invalidationName: try handlerName(invalidationName, "invalidation_name"), bound: arguments)
    }
}

@c @implementation
public func outlive_handler_copy(_ handler: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    makeHandler(out) { try handlerBox(handler).handler }
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
public func outlive_handler_call(_ handler: OpaquePointer?, _ callArgs: OpaquePointer?) -> outlive_status {
    guarded {
        // Both handles borrowed, the call's arguments read in place: this is
        // the path of every call, where retains and copies cost more than libffi.
        try withBorrowed(handler, HandlerBox.self, "handler") { box in
            guard callArgs != nil else { return try box.call(with: nil as ArgumentsBox?) }
            try withBorrowed(callArgs, ArgumentsBox.self, "call_args") { arguments in
                try box.call(with: arguments)
            }
        }
    }
}

@c @implementation
public func outlive_handler_call_serialized(_ handler: OpaquePointer?, _ bytes: UnsafeRawPointer?, _ size: Int) -> outlive_status {
    guarded {
        try withBorrowed(handler, HandlerBox.self, "handler") { box in
            guard size >= 0 else { throw OutliveError.invalidArgument("size \(UInt(bitPattern: size)) is out of range") }
            guard size == 0 || bytes != nil else { throw OutliveError.invalidArgument("bytes is NULL") }
            // Decoded whole before anything is called: refused bytes call nothing.
            try box.call(decoded: try Arguments(serialized: UnsafeRawBufferPointer(start: bytes, count: size)))
        }
    }
}

@c @implementation
public func outlive_handler_invalidate(_ handler: OpaquePointer?, _ callArgs: OpaquePointer?) -> outlive_status {
    guarded {
        try handlerBox(handler).invalidate(with: try optionalArguments(callArgs))
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
        // A completion's parts are enough to send it elsewhere.
        HandedOutCompletions.shared.note(box.handler)
        out.pointee = retain(ArgumentsBox(box.handler.bound))
    }
}

@c @implementation
public func outlive_handler_description(_ handler: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let box = borrowIfPresent(handler, HandlerBox.self) else { return nil }
    HandedOutCompletions.shared.note(box.handler)  // it shows the bound arguments
    return box.description
}

@c @implementation
public func outlive_handler_serialize(_ handler: OpaquePointer?, _ bytesOut: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                      _ size: UnsafeMutablePointer<Int>?) -> outlive_status {
    guarded {
        let box = try handlerBox(handler)
        let bytesOut = try required(bytesOut, "out_bytes")
        let size = try required(size, "out_size")
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
