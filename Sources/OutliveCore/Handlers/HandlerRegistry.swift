/// Resolves handler names and calls them. Resolution, in order: handlers
/// registered at run time in this process (C function pointers with a
/// signature, and the library's own built-ins), then descriptors
/// `outlive_handler__NAME` found with dlsym in the main program and in handler
/// libraries loaded explicitly. Nothing else is ever called.
///
/// CONTRACT for the systems (signals, tasks, messages, interactions): they
/// use only `canResolve`, `call`, `invalidate` and `registerBuiltin`.
public final class HandlerRegistry {
    public static let shared = HandlerRegistry()

    private let lock = Lock()
    private var builtins: [String: (Arguments) throws -> Void] = [:]

    /// Whether `name` resolves in this process now.
    public func canResolve(_ name: String) -> Bool {
        lock.withLock { builtins[name] != nil }
    }

    /// Calls the handler with its bound arguments merged with `callArguments`
    /// (call-time wins). Throws `.unresolved`, `.missingArgument`,
    /// `.typeMismatch` (nothing called), `.invalidated`.
    public func call(_ handler: Handler, with callArguments: Arguments = Arguments()) throws {
        if handler.isInvalidated { throw OutliveError(.invalidated, "handler \(handler.name) was invalidated") }
        guard let body = lock.withLock({ builtins[handler.name] }) else {
            throw OutliveError(.unresolved, "no handler named \(handler.name) is declared in this process")
        }
        try body(handler.bound.merged(with: callArguments))
    }

    /// Calls the invalidation handler (if any) and marks the handler invalidated.
    public func invalidate(_ handler: inout Handler, with callArguments: Arguments = Arguments()) throws {
        if handler.isInvalidated { throw OutliveError(.invalidated, "handler \(handler.name) was invalidated") }
        if let invalidationName = handler.invalidationName {
            try call(try Handler(name: invalidationName, bound: handler.bound), with: callArguments)
        }
        handler.isInvalidated = true
    }

    /// Registers a handler implemented by the library itself (for example the
    /// completion handler of a task). `signature` uses the signature grammar.
    public func registerBuiltin(name: String, signature: String, _ body: @escaping (Arguments) throws -> Void) throws {
        try HandlerName.validate(name)
        lock.withLock { builtins[name] = body }
    }
}
