import COutliveSystem

/// What an `outlive_args *` points to: an argument set that C code holds, with
/// the C views it hands out (argument names, nested handlers). Reading from
/// several threads at once is safe; changing it while another thread uses it
/// is not (as for any C object without a lock).
public final class ArgumentsBox {
    public private(set) var arguments: Arguments
    private let lock = Lock()
    /// NUL-terminated names, by index, built on first use; dropped on change.
    private var cNames: [UnsafeMutablePointer<CChar>] = []
    /// Handler views handed out by get_handler, by name; dropped on change.
    private var handlerViews: [String: HandlerBox] = [:]

    public init(_ arguments: Arguments = Arguments()) {
        self.arguments = arguments
    }

    deinit {
        for name in cNames { name.deallocate() }
    }

    /// Runs `body` with the entries read in place (not copied, not retained):
    /// the path of `outlive_handler_call`. The set is under a read access for
    /// the whole of `body`, the handler's run included: reading the set again
    /// meanwhile (a getter, another call with it) is fine; changing it (which
    /// `const outlive_args *call_args` forbids) stops the process with Swift's
    /// exclusivity error rather than freeing what the call reads.
    @inline(__always)
    public func withEntries<R>(_ body: (UnsafeBufferPointer<Argument>) throws -> R) rethrows -> R {
        try withUnsafePointer(to: arguments) { try $0.pointee.entries.withUnsafeBufferPointer(body) }
    }

    /// Sets one argument; throws `.invalidArgument` past the limits.
    public func set(_ name: String, _ value: Value) throws {
        try ArgumentName.validate(name)
        if arguments.index(of: name) == nil, arguments.count >= ValueLimits.maxArguments {
            throw OutliveError.invalidArgument("an argument set holds at most \(ValueLimits.maxArguments) arguments")
        }
        if value.handlerDepth >= ValueLimits.maxDepth {
            throw OutliveError.invalidArgument("argument \(name): handlers would nest more than \(ValueLimits.maxDepth) deep")
        }
        lock.withLock {
            dropViews()
            arguments.set(name, value)
        }
    }

    @discardableResult
    public func remove(_ name: String) -> Value? {
        lock.withLock {
            dropViews()
            return arguments.remove(name)
        }
    }

    private func dropViews() {
        for name in cNames { name.deallocate() }
        cNames = []
        handlerViews = [:]
    }

    /// The name at `index`, NUL-terminated, valid until the set changes.
    public func cName(at index: Int) -> UnsafePointer<CChar>? {
        lock.withLock {
            guard index >= 0, index < arguments.count else { return nil }
            if cNames.isEmpty { cNames = arguments.entries.map { HandlerBox.cString($0.name) } }
            return UnsafePointer(cNames[index])
        }
    }

    /// A handler box for the HANDLER argument `name`, owned by this set and
    /// valid until the set changes.
    public func handlerView(_ name: String) -> HandlerBox? {
        lock.withLock {
            if let view = handlerViews[name] { return view }
            guard case .handler(let handler)? = arguments[name] else { return nil }
            let view = HandlerBox(handler)
            handlerViews[name] = view
            return view
        }
    }
}
