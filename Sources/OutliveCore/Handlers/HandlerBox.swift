import COutliveSystem

/// What an `outlive_handler *` points to: a handler value that C code holds,
/// with the C strings it hands out and the declaration its name resolved to.
/// Calls read a snapshot taken under the lock, so any thread may call while
/// another binds or invalidates; the lock is never held while a handler runs.
public final class HandlerBox {
    private let lock = Lock()
    private var value: Handler
    private var invalidating = false
    private var cachedGeneration: UInt64 = 0
    private var cachedDeclaration: Declaration?
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
        let utf8 = Array(text.utf8)
        let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: utf8.count + 1)
        for (index, byte) in utf8.enumerated() { pointer[index] = CChar(bitPattern: byte) }
        pointer[utf8.count] = 0
        return pointer
    }

    /// The handler value now.
    public var handler: Handler { lock.withLock { value } }

    public var isInvalidated: Bool { lock.withLock { value.isInvalidated } }

    /// Binds more arguments. Throws `.invalidated`, `.invalidArgument` (limits).
    public func bind(_ more: Arguments) throws {
        try lock.withLock {
            try value.bind(more)
            dropDescription()
        }
    }

    /// Calls the handler (see `HandlerRegistry.call`); the declaration its name
    /// resolved to is kept until a registration or a loaded library may change it.
    public func call(with callArguments: Arguments, registry: HandlerRegistry = .shared) throws {
        let generation = registry.generation
        let (handler, cached) = lock.withLock { () -> (Handler, Declaration?) in
            (value, cachedGeneration == generation ? cachedDeclaration : nil)
        }
        if handler.isInvalidated { throw OutliveError(.invalidated, "handler \(handler.name) was invalidated") }
        let declaration: Declaration
        if let cached {
            declaration = cached
        } else {
            declaration = try registry.resolve(handler.name)
            lock.withLock {
                cachedDeclaration = declaration
                cachedGeneration = generation
            }
        }
        try declaration.invoke(bound: handler.bound, call: callArguments)
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
