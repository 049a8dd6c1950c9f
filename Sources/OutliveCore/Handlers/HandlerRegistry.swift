import COutliveAPI
import COutliveSystem
import Synchronization

/// Resolves handler names and calls them. Resolution, in order: handlers
/// registered at run time in this process (C function pointers with a
/// signature, and the library's own built-ins), then descriptors
/// `outlive_handler__NAME` found with dlsym in the main program and in handler
/// libraries loaded explicitly, in load order. Nothing else is ever called: a
/// symbol is used only when it carries the descriptor magic and declares the
/// very name asked for, and names with '.' are never looked up as symbols.
///
/// CONTRACT for the systems (signals, tasks, messages, interactions): they
/// use only `canResolve`, `call`, `invalidate` and `checkStorable`, and call
/// stored work with `call(storedWork:)`.
public final class HandlerRegistry {
    public static let shared = HandlerRegistry()

    /// The descriptor is `outlive_handler_descriptor` of include/outlive.h,
    /// read as that struct; its magic and version are the header's macros
    /// (through the shims, which also assert its 64-bit layout at build time).
    enum Descriptor {
        static let magic: UInt64 = COutlive_handler_magic()
        static let version: UInt32 = COutlive_handler_descriptor_version()
        static let size = MemoryLayout<outlive_handler_descriptor>.size
        static let symbolPrefix = "outlive_handler__"
    }

    struct Library {
        let path: String
        let handle: UnsafeMutableRawPointer
    }

    private let lock = Lock()
    private var registrations: [String: Declaration] = [:]
    private var resolved: [String: Declaration] = [:]
    private var libraries: [Library] = []
    private let mainProgram: UnsafeMutableRawPointer?
    /// Incremented whenever what a name resolves to may change (a registration,
    /// a library loaded); caches compare it with the one they were filled in.
    /// Static (there is one registry, `shared`) so that a call reads it without
    /// retaining the registry.
    private static let generationCounter = Atomic<UInt64>(1)

    init() {
        mainProgram = dlopen(nil, RTLD_NOW)
        for entry in LibraryHandlers.all {
            do {
                let signature = try Signature(parsing: entry.signature)
                registrations[entry.name] = Declaration(name: entry.name, signature: signature, body: .builtin(entry.body), origin: .library)
            } catch {
                Log.emit(.error, "cannot register the library's handler \(entry.name): \(error)")
            }
        }
    }

    public var generation: UInt64 { HandlerRegistry.currentGeneration }

    /// The generation of the shared registry, read without touching it.
    public static var currentGeneration: UInt64 { generationCounter.load(ordering: .acquiring) }

    // MARK: resolution

    /// What `name` resolves to in this process now. Throws `.unresolved`, or
    /// `.invalidArgument` for a descriptor whose signature is malformed.
    public func resolve(_ name: String) throws -> Declaration {
        if let found = lock.withLock({ registrations[name] ?? resolved[name] }) { return found }
        try HandlerName.validate(name)
        guard HandlerName.isCIdentifier(name) else {
            throw OutliveError(.unresolved, "no handler named \(name) is registered in this process (names with '.' resolve only through outlive_handler_register)")
        }
        return try lock.withLock {
            if let found = registrations[name] ?? resolved[name] { return found }
            let symbol = Descriptor.symbolPrefix + name
            var candidates: [(UnsafeMutableRawPointer, String)] = []
            if let mainProgram { candidates.append((mainProgram, "the main program")) }
            for library in libraries { candidates.append((library.handle, library.path)) }
            for (handle, origin) in candidates {
                guard let address = dlsym(handle, symbol) else { continue }
                guard let declaration = try declaration(at: address, name: name, symbol: symbol, origin: origin) else { continue }
                resolved[name] = declaration
                return declaration
            }
            throw OutliveError(.unresolved, "no handler named \(name) is declared in this process (no registration, no descriptor \(symbol) in the main program or a loaded handler library)")
        }
    }

    /// glibc's dladdr1, looked up at run time (its declaration needs _GNU_SOURCE).
    private typealias AddressInfo = @convention(c) (UnsafeRawPointer?, UnsafeMutableRawPointer?,
                                                    UnsafeMutablePointer<UnsafeMutableRawPointer?>?, Int32) -> Int32
    private lazy var addressInfo: AddressInfo? = {
        guard let mainProgram, let function = dlsym(mainProgram, "dladdr1") else { return nil }
        return unsafeBitCast(function, to: AddressInfo.self)
    }()

    /// Whether the ELF symbol at `address` is a data object that starts there
    /// and is large enough to be a descriptor, so that reading one cannot run
    /// past it. Without dladdr1 (not glibc) the magic alone decides.
    private func isDescriptorSizedObject(_ address: UnsafeMutableRawPointer) -> Bool {
        guard let addressInfo else { return true }
        // Dl_info: dli_fname, dli_fbase, dli_sname, dli_saddr (4 pointers).
        var info: (UnsafeRawPointer?, UnsafeRawPointer?, UnsafeRawPointer?, UnsafeRawPointer?) = (nil, nil, nil, nil)
        var symbolEntry: UnsafeMutableRawPointer?
        let found = withUnsafeMutableBytes(of: &info) { addressInfo(UnsafeRawPointer(address), $0.baseAddress, &symbolEntry, 1 /* RTLD_DL_SYMENT */) }
        guard found != 0, info.3 == UnsafeRawPointer(address), let entry = symbolEntry else { return false }
        // Elf64_Sym: st_name u32, st_info u8, st_other u8, st_shndx u16, st_value u64, st_size u64.
        let type = entry.load(fromByteOffset: 4, as: UInt8.self) & 0x0F
        let size = entry.loadUnaligned(fromByteOffset: 16, as: UInt64.self)
        return type == 1 /* STT_OBJECT */ && size >= UInt64(Descriptor.size)
    }

    /// The declaration a descriptor symbol describes, or nil when the symbol is
    /// not a descriptor of `name` (not a data object of a descriptor's size, wrong
    /// magic, version, name, NULL function).
    private func declaration(at address: UnsafeMutableRawPointer, name: String, symbol: String, origin: String) throws -> Declaration? {
        guard isDescriptorSizedObject(address) else { return nil }
        let descriptor = UnsafeRawPointer(address).loadUnaligned(as: outlive_handler_descriptor.self)
        guard descriptor.magic == Descriptor.magic, descriptor.version == Descriptor.version,
              let namePointer = descriptor.name, let signaturePointer = descriptor.signature,
              let function = descriptor.function.map({ unsafeBitCast($0, to: UnsafeRawPointer.self) })
        else { return nil }
        let resolver = descriptor.resolver.map { unsafeBitCast($0, to: UnsafeRawPointer.self) }
        let nameLength = strnlen(namePointer, HandlerName.maxLength + 1)
        guard nameLength == name.utf8.count,
              name.utf8.elementsEqual(UnsafeRawBufferPointer(start: namePointer, count: nameLength)) else { return nil }
        let signatureLength = strnlen(signaturePointer, Signature.maxLength + 1)
        let signatureBytes = UnsafeRawBufferPointer(start: signaturePointer, count: signatureLength)
        guard signatureLength <= Signature.maxLength, let text = String(validating: signatureBytes, as: UTF8.self) else {
            throw OutliveError.invalidArgument("descriptor \(symbol) in \(origin) has a signature that is too long or not UTF-8")
        }
        let signature: Signature
        do { signature = try Signature(parsing: text) } catch let error as OutliveError {
            throw OutliveError.invalidArgument("descriptor \(symbol) in \(origin): \(error.message)")
        }
        return try Declaration.function(name: name, signature: signature,
                                        function: unsafeBitCast(function, to: Declaration.CFunction.self),
                                        resolver: resolver.map { unsafeBitCast($0, to: Declaration.Resolver.self) },
                                        origin: .descriptor(library: origin))
    }

    /// Whether `name` resolves in this process now.
    public func canResolve(_ name: String) -> Bool {
        (try? resolve(name)) != nil
    }

    // MARK: registration

    /// Registers a C function under `name` with the parameters of `signature`
    /// (the signature grammar). A second registration of a name replaces the first.
    public func register(name: String, signature: String, function: @escaping Declaration.CFunction) throws {
        try HandlerName.validate(name)
        try HandlerRegistry.refuseLibraryName(name)
        let parsed = try Signature(parsing: signature)
        let declaration = try Declaration.function(name: name, signature: parsed, function: function, resolver: nil, origin: .registered)
        store(declaration)
    }

    /// Registers a handler implemented by the library itself (for example the
    /// completion handler of a task). `signature` uses the signature grammar;
    /// its parameters are checked before `body` runs (missing mandatory or
    /// mistyped: `body` is not called), and `body` gets the merged arguments
    /// (call-time over bound), undeclared ones included.
    public func registerBuiltin(name: String, signature: String, _ body: @escaping (Arguments) throws -> Void) throws {
        try HandlerName.validate(name)
        try HandlerRegistry.refuseLibraryName(name)
        let parsed = try Signature(parsing: signature)
        store(Declaration(name: name, signature: parsed, body: .builtin(body), origin: .builtin))
    }

    /// Removes a run-time registration. Throws `.notFound` when there is none.
    public func unregister(name: String) throws {
        try HandlerRegistry.refuseLibraryName(name)
        let removed = lock.withLock { registrations.removeValue(forKey: name) }
        guard removed != nil else { throw OutliveError.notFound("no handler named \(name) is registered at run time") }
        HandlerRegistry.generationCounter.add(1, ordering: .releasing)
    }

    private static func refuseLibraryName(_ name: String) throws {
        guard !LibraryHandlers.names.contains(name) else {
            throw OutliveError.invalidArgument("\(name) is one of the library's own handlers; it cannot be registered or unregistered")
        }
    }

    /// Throws `.invalidArgument` for a handler that must not be stored as
    /// work: one of the library's own (see `LibraryHandlers`).
    public static func checkStorable(_ handler: Handler, as what: String) throws {
        guard !LibraryHandlers.names.contains(handler.name) else {
            throw OutliveError.invalidArgument("\(handler.name) is one of the library's own handlers; it cannot be \(what)")
        }
    }

    private func store(_ declaration: Declaration) {
        lock.withLock { registrations[declaration.name] = declaration }
        HandlerRegistry.generationCounter.add(1, ordering: .releasing)
    }

    /// dlopens a handler library (RTLD_NOW | RTLD_LOCAL); its descriptors become
    /// resolvable after the main program's and earlier libraries'. Loading the
    /// same library again changes nothing.
    public func loadLibrary(path: String) throws {
        guard !path.isEmpty else { throw OutliveError.invalidArgument("library_path is empty") }
        // A bare name would make dlopen search the library path: only an explicit file is loaded.
        guard path.contains("/") else {
            throw OutliveError.invalidArgument("library_path \"\(path)\" has no '/': give the library's path (\"./\(path)\" for the current directory), never a name to search for")
        }
        if access(path, F_OK) != 0 {
            throw OutliveError.notFound("handler library \(path) does not exist")
        }
        _ = dlerror()
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown error"
            throw OutliveError(.io, "cannot load handler library \(path): \(reason)")
        }
        let added: Bool = lock.withLock {
            if libraries.contains(where: { $0.handle == handle }) { return false }
            libraries.append(Library(path: path, handle: handle))
            return true
        }
        if added {
            HandlerRegistry.generationCounter.add(1, ordering: .releasing)
        } else {
            dlclose(handle)  // drops the reference this dlopen added
        }
    }

    // MARK: calling

    /// Calls the handler with its bound arguments merged with `callArguments`
    /// (call-time wins). Throws `.unresolved`, `.missingArgument`,
    /// `.typeMismatch` (nothing called), `.invalidated`, `.notFound` (an
    /// instance handler's resolver found no instance; nothing called).
    public func call(_ handler: Handler, with callArguments: Arguments = Arguments()) throws {
        if handler.isInvalidated { throw OutliveError(.invalidated, "handler \(handler.name) was invalidated") }
        try resolve(handler.name).invoke(bound: handler.bound, call: callArguments)
    }

    /// Calls a handler read from the store as a task's, a consumer's, a
    /// response's or an interaction's work. The library's own handlers are
    /// refused (`.invalidArgument`, nothing called): stored data must not reach
    /// them with arguments of its choosing.
    public func call(storedWork handler: Handler, with callArguments: Arguments = Arguments()) throws {
        if handler.isInvalidated { throw OutliveError(.invalidated, "handler \(handler.name) was invalidated") }
        let declaration = try resolve(handler.name)
        guard declaration.origin != .library else {
            throw OutliveError.invalidArgument("the stored work names \(handler.name), one of the library's own handlers, which stored work cannot call")
        }
        try declaration.invoke(bound: handler.bound, call: callArguments)
    }

    /// Calls the invalidation handler (if any) with the merged arguments and
    /// marks the handler invalidated. When the invalidation handler cannot run
    /// (unresolved, missing argument, mismatch) this throws and the handler
    /// stays valid.
    public func invalidate(_ handler: inout Handler, with callArguments: Arguments = Arguments()) throws {
        if handler.isInvalidated { throw OutliveError(.invalidated, "handler \(handler.name) was invalidated") }
        try runInvalidation(of: handler, with: callArguments)
        handler.isInvalidated = true
    }

    func runInvalidation(of handler: Handler, with callArguments: Arguments) throws {
        guard let invalidationName = handler.invalidationName else { return }
        try resolve(invalidationName).invoke(bound: handler.bound, call: callArguments)
    }
}
