import COutliveSystem

/// What an `outlive_handler *` points to: a handler value that C code holds,
/// with the C strings it hands out and the declaration its name resolved to.
/// Calls read a snapshot taken under the lock, so any thread may call while
/// another binds or invalidates; the lock is never held while a handler runs.
public final class HandlerBox {
    private let lock = Lock()
    private var value: Handler
    private var invalidating = false
    /// The handler value and what its name resolved to, for calls: one
    /// reference to take under the lock instead of copying the value (its
    /// strings and bound arguments) on every call. Dropped when the value
    /// changes; stale when the registry's generation moved on.
    private var resolved: Resolved?
    private var cDescription: UnsafeMutablePointer<CChar>?
    /// The name, NUL-terminated, fixed for the box's life.
    public let cName: UnsafeMutablePointer<CChar>
    /// The invalidation handler's name, NUL-terminated, or nil.
    public let cInvalidationName: UnsafeMutablePointer<CChar>?

    public init(_ handler: Handler) {
        value = handler
        cName = HandlerBox.cString(handler.name)
        cInvalidationName = handler.invalidationName.map(HandlerBox.cString)
    }

    deinit {
        cName.deallocate()
        cInvalidationName?.deallocate()
        cDescription?.deallocate()
    }

    static func cString(_ text: String) -> UnsafeMutablePointer<CChar> {
        // From the string's own UTF-8, not an Array of it: a box is made for
        // every handler, and the array cost as much as the rest of the box.
        var text = text
        return text.withUTF8 { utf8 in
            let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: utf8.count + 1)
            for index in 0..<utf8.count { pointer[index] = CChar(bitPattern: utf8[index]) }
            pointer[utf8.count] = 0
            return pointer
        }
    }

    /// The handler value now.
    public var handler: Handler { lock.withLock { value } }

    public var isInvalidated: Bool { lock.withLock { value.isInvalidated } }

    /// Binds more arguments. Throws `.invalidated`, `.invalidArgument` (limits).
    public func bind(_ more: Arguments) throws {
        try lock.withLock {
            try value.bind(more)
            resolved = nil
            dropDescription()
        }
    }

    /// An immutable snapshot: a valid handler value and its declaration in
    /// the registry generation it was resolved in.
    private final class Resolved {
        let handler: Handler
        let declaration: Declaration
        let generation: UInt64

        init(handler: Handler, declaration: Declaration, generation: UInt64) {
            self.handler = handler
            self.declaration = declaration
            self.generation = generation
        }

        /// A method of the snapshot, so that its parts are read in place
        /// (borrowed from `self`) rather than copied out and retained.
        func invoke(call: ArgumentsBox?) throws {
            // The declaration lives as long as self, which the caller holds.
            try Unmanaged.passUnretained(declaration)._withUnsafeGuaranteedRef { declaration in
                guard let call else { return try declaration.invoke(bound: handler.bound, call: Arguments()) }
                try declaration.invoke(bound: handler.bound, call: call)
            }
        }

        /// The same with call-time arguments decoded for this call.
        func invoke(decoded call: Arguments) throws {
            try Unmanaged.passUnretained(declaration)._withUnsafeGuaranteedRef { declaration in
                try declaration.invoke(bound: handler.bound, decoded: call)
            }
        }
    }

    /// Calls the handler (see `HandlerRegistry.call`); the declaration its name
    /// resolved to is kept until a registration or a loaded library may change it.
    public func call(with callArguments: Arguments, registry: HandlerRegistry = .shared) throws {
        let snapshot = try resolve(generation: registry.generation, registry)
        try snapshot.declaration.invoke(bound: snapshot.handler.bound, call: callArguments)
    }

    /// Calls the handler (of the shared registry) with the arguments of a box
    /// (nil: none), read in place: what `outlive_handler_call` does.
    public func call(with callArguments: ArgumentsBox?) throws {
        let generation = HandlerRegistry.currentGeneration
        let cached = lock.withLock { () -> Resolved? in
            guard let resolved, resolved.generation == generation else { return nil }
            return resolved
        }
        try (cached ?? resolve(generation: generation, .shared)).invoke(call: callArguments)
    }

    /// Calls the handler (of the shared registry) with call-time arguments
    /// decoded for this call: what `outlive_handler_call_serialized` does.
    public func call(decoded callArguments: Arguments) throws {
        let generation = HandlerRegistry.currentGeneration
        let cached = lock.withLock { () -> Resolved? in
            guard let resolved, resolved.generation == generation else { return nil }
            return resolved
        }
        try (cached ?? resolve(generation: generation, .shared)).invoke(decoded: callArguments)
    }

    /// The snapshot to call: the cached one while the registry's generation is
    /// the one it was resolved in, else resolved again. Throws `.invalidated`,
    /// or what `HandlerRegistry.resolve` throws.
    private func resolve(generation: UInt64, _ registry: HandlerRegistry) throws -> Resolved {
        let (cached, handler) = lock.withLock { () -> (Resolved?, Handler?) in
            if let resolved, resolved.generation == generation { return (resolved, nil) }
            return (nil, value)
        }
        if let cached { return cached }
        guard let handler else { preconditionFailure("a handler value comes with no snapshot") }
        if handler.isInvalidated { throw OutliveError(.invalidated, "handler \(handler.name) was invalidated") }
        let made = Resolved(handler: handler, declaration: try registry.resolve(handler.name), generation: generation)
        lock.withLock {
            // Only while the value is still the one resolved: a bind or an
            // invalidation on another thread meanwhile dropped it for a reason.
            if value == handler { resolved = made }
        }
        return made
    }

    /// Calls the invalidation handler (if any) and marks this handler
    /// invalidated; on failure it stays valid. `.invalidated` when it was
    /// already, `.busy` while another thread is invalidating it.
    public func invalidate(with callArguments: Arguments, registry: HandlerRegistry = .shared) throws {
        let handler: Handler = try lock.withLock {
            if value.isInvalidated { throw OutliveError(.invalidated, "handler \(value.name) was invalidated") }
            if invalidating { throw OutliveError(.busy, "handler \(value.name) is being invalidated on another thread") }
            invalidating = true
            return value
        }
        do {
            try registry.runInvalidation(of: handler, with: callArguments)
        } catch {
            lock.withLock { invalidating = false }
            throw error
        }
        lock.withLock {
            invalidating = false
            value.isInvalidated = true
            resolved = nil
            dropDescription()
        }
    }

    /// A description for logs, owned by the box: valid until the handler is
    /// bound, invalidated or freed.
    public var description: UnsafePointer<CChar> {
        lock.withLock {
            if let cDescription { return UnsafePointer(cDescription) }
            let made = HandlerBox.cString(value.description)
            cDescription = made
            return UnsafePointer(made)
        }
    }

    private func dropDescription() {
        // A description handed out is valid until the next change (documented).
        cDescription?.deallocate()
        cDescription = nil
    }
}
