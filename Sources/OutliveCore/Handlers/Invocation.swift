import COutliveSystem

// Calling a declaration: bound and call-time arguments merged by name
// (call-time wins), matched to the declared parameters, type-checked, then
// passed to the function. For primitive, ID and absent arguments this path
// allocates nothing: values go into stack slots, IDs are passed as pointers to
// their immutable storage.

extension Declaration {
    /// The value for `name`: call-time first, then bound.
    @inline(__always)
    static func value(named name: String, call: Arguments, bound: Arguments) -> Value? {
        for entry in call.entries where entry.name == name { return entry.value }
        for entry in bound.entries where entry.name == name { return entry.value }
        return nil
    }

    func missing(_ parameter: Parameter) -> OutliveError {
        OutliveError(.missingArgument, "handler \(name): mandatory parameter \(parameter.name) (\(parameter.type.name)) has no value")
    }

    func mismatch(_ parameter: Parameter, _ value: Value) -> OutliveError {
        var declared = parameter.type.name
        if let tag = parameter.typeTag { declared += "<\(tag)>" }
        var given = value.type.name
        if case .id(let id) = value, parameter.type == .id {
            given = id.typeTag.map { "ID<\($0)>" } ?? "an untagged ID"
        }
        return OutliveError(.typeMismatch, "handler \(name): parameter \(parameter.name) is declared \(declared), the argument is \(given)")
    }

    /// Checks every parameter without calling anything.
    public func check(bound: Arguments, call: Arguments) throws {
        for parameter in signature.parameters {
            guard let value = Declaration.value(named: parameter.name, call: call, bound: bound) else {
                if parameter.isOptional { continue }
                throw missing(parameter)
            }
            guard parameter.accepts(value) else { throw mismatch(parameter, value) }
        }
    }

    /// Calls the handler. Throws `.missingArgument` or `.typeMismatch` (nothing
    /// called), `.notFound` when an instance resolver finds no instance
    /// (nothing called), or what a built-in throws.
    public func invoke(bound: Arguments, call: Arguments) throws {
        switch body {
        case .builtin(let body):
            try check(bound: bound, call: call)
            try body(bound.merged(with: call))
        case .function(let function, let resolver, let callInterface):
            try call.entries.withUnsafeBufferPointer { callEntries in
                try invoke(function, resolver: resolver, callInterface.cif, count: callInterface.count, bound: bound,
                           call: callEntries)
            }
        }
    }

    /// The same with the call-time arguments of a box, read in place.
    public func invoke(bound: Arguments, call box: ArgumentsBox) throws {
        guard let cif, let function = cFunction else { return try invoke(bound: bound, call: box.arguments) }
        try box.withEntries { callEntries in
            try invoke(function, resolver: resolver, cif, count: cParameterCount, bound: bound, call: callEntries)
        }
    }

    /// The same with call-time arguments decoded for this call (from
    /// `outlive_handler_call_serialized`), read in place.
    public func invoke(bound: Arguments, decoded call: Arguments) throws {
        guard let cif, let function = cFunction else { return try invoke(bound: bound, call: call) }
        try call.entries.withUnsafeBufferPointer { callEntries in
            try invoke(function, resolver: resolver, cif, count: cParameterCount, bound: bound, call: callEntries)
        }
    }

    /// The index of `name` in entries (borrowed, nothing retained).
    @inline(__always)
    static func index(of name: String, in entries: UnsafeBufferPointer<Argument>) -> Int? {
        var index = 0
        while index < entries.count {
            if entries[index].name == name { return index }
            index += 1
        }
        return nil
    }

    /// Writes `value` into the slot of `parameter` as the C function takes it;
    /// a handler value gets a box of its own, kept alive in `nested`. Throws
    /// `.typeMismatch`. Primitives are matched on the spot, without copying the
    /// value or the parameter (the path of every call).
    @inline(__always)
    private func store(_ value: Value, for parameter: Parameter, into slot: UnsafeMutableRawPointer,
                       nested: inout [HandlerBox]) throws {
        switch value {
        case .integer(let number):
            guard parameter.type == .integer else { throw mismatch(parameter, value) }
            slot.storeBytes(of: number, as: Int64.self)
        case .id(let id):
            guard parameter.accepts(value) else { throw mismatch(parameter, value) }
            slot.storeBytes(of: UnsafeRawPointer(Unmanaged.passUnretained(id.storage).toOpaque()), as: UnsafeRawPointer.self)
        case .handler(let handler):
            guard parameter.type == .handler else { throw mismatch(parameter, value) }
            let box = HandlerBox(handler)
            nested.append(box)
            slot.storeBytes(of: UnsafeRawPointer(Unmanaged.passUnretained(box).toOpaque()), as: UnsafeRawPointer.self)
        case .bool(let flag):
            guard parameter.type == .bool else { throw mismatch(parameter, value) }
            slot.storeBytes(of: flag ? 1 : 0, as: UInt8.self)
        case .int(let number):
            guard parameter.type == .int else { throw mismatch(parameter, value) }
            slot.storeBytes(of: number, as: Int32.self)
        case .double(let number):
            guard parameter.type == .double else { throw mismatch(parameter, value) }
            slot.storeBytes(of: number, as: Double.self)
        case .uinteger(let number):
            guard parameter.type == .uinteger else { throw mismatch(parameter, value) }
            slot.storeBytes(of: number, as: UInt64.self)
        }
    }

    private func invoke(_ function: CFunction, resolver: Resolver?, _ cif: UnsafeMutablePointer<ffi_cif>, count: Int,
                        bound: Arguments, call callEntries: UnsafeBufferPointer<Argument>) throws {
        // One slot per C parameter plus one for the (void) return value.
        try withUnsafeTemporaryAllocation(of: UInt64.self, capacity: count + 1) { slots in
            try withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: count + 1) { values in
                guard let slotBase = slots.baseAddress, let valueBase = values.baseAddress else { return }
                var nested: [HandlerBox] = []
                try bound.entries.withUnsafeBufferPointer { boundEntries in
                    try signature.parameters.withUnsafeBufferPointer { parameters in
                        var index = resolver == nil ? 0 : 1
                        for position in 0..<parameters.count {
                            let slot = UnsafeMutableRawPointer(slotBase + index)
                            valueBase[index] = slot
                            index += 1
                            if let found = Declaration.index(of: parameters[position].name, in: callEntries) {
                                try store(callEntries[found].value, for: parameters[position], into: slot, nested: &nested)
                            } else if let found = Declaration.index(of: parameters[position].name, in: boundEntries) {
                                try store(boundEntries[found].value, for: parameters[position], into: slot, nested: &nested)
                            } else {
                                guard parameters[position].isOptional else { throw missing(parameters[position]) }
                                slot.storeBytes(of: nil, as: UnsafeRawPointer?.self)
                            }
                        }
                    }
                }
                if let resolver {
                    let merged = ArgumentsBox(bound.merged(with: Arguments(entries: callEntries)))
                    let instance = withExtendedLifetime(merged) {
                        resolver(OpaquePointer(Unmanaged.passUnretained(merged).toOpaque()))
                    }
                    guard let instance else {
                        throw OutliveError.notFound("handler \(name): its instance resolver found no instance for these arguments")
                    }
                    slotBase.withMemoryRebound(to: UnsafeMutableRawPointer.self, capacity: 1) { $0.pointee = instance }
                    valueBase[0] = UnsafeMutableRawPointer(slotBase)
                }
                let returnSlot = UnsafeMutableRawPointer(slotBase + count)
                // bound and the caller's call-time entries keep the ID storages
                // alive; nested the handler boxes.
                withExtendedLifetime(nested) {
                    withExtendedLifetime(bound) {
                        ffi_call(cif, function, returnSlot, valueBase)
                    }
                }
            }
        }
    }
}
