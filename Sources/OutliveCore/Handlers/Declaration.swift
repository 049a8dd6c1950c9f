import COutliveSystem

/// What a handler name resolves to: its parameters and how to call it.
public final class Declaration {
    /// A C function taking the declared parameters (after `self` when it has a resolver).
    public typealias CFunction = @convention(c) () -> Void
    /// `void *resolver(const outlive_args *merged)`.
    public typealias Resolver = @convention(c) (OpaquePointer?) -> UnsafeMutableRawPointer?

    public enum Body {
        /// A C function called through libffi.
        case function(CFunction, resolver: Resolver?, CallInterface)
        /// A handler implemented by the library (or a test) in Swift.
        case builtin((Arguments) throws -> Void)
    }

    public enum Origin: Equatable {
        /// Registered at run time: a C function, or a Swift body (`registerBuiltin`).
        case registered, builtin
        /// One of the library's own handlers (`LibraryHandlers`).
        case library
        case descriptor(library: String)
    }

    public let name: String
    public let signature: Signature
    public let body: Body
    public let origin: Origin
    /// The parts of a `.function` body, also kept apart from `body`: a call
    /// reads them without copying the enum's payload out (a retain each).
    let cFunction: CFunction?
    let resolver: Resolver?
    /// The prepared cif of `body`'s call interface (which `body` keeps alive)
    /// and its count of C parameters: plain values, read without a retain.
    let cif: UnsafeMutablePointer<ffi_cif>?
    let cParameterCount: Int

    init(name: String, signature: Signature, body: Body, origin: Origin) {
        self.name = name
        self.signature = signature
        self.body = body
        self.origin = origin
        if case .function(let function, let resolver, let callInterface) = body {
            (cFunction, self.resolver, cif, cParameterCount) = (function, resolver, callInterface.cif, callInterface.count)
        } else {
            (cFunction, resolver, cif, cParameterCount) = (nil, nil, nil, 0)
        }
    }

    static func function(name: String, signature: Signature, function: CFunction, resolver: Resolver?, origin: Origin) throws -> Declaration {
        let callInterface = try CallInterface(parameters: signature.parameters, hasSelf: resolver != nil)
        return Declaration(name: name, signature: signature, body: .function(function, resolver: resolver, callInterface), origin: origin)
    }
}
