import COutliveAPI
import COutliveSystem
import OutliveCore

// outlive_object is an IDStorage, outlive_args an ArgumentsBox (OutliveCore).

private func objectStorage(_ object: OpaquePointer?) -> IDStorage? {
    borrowIfPresent(object, IDStorage.self)
}

func argumentsBox(_ args: OpaquePointer?, _ name: String = "args") throws -> ArgumentsBox {
    try borrow(args, ArgumentsBox.self, name)
}

/// The arguments of a nullable `const outlive_args *`.
func optionalArguments(_ args: OpaquePointer?, _ name: String = "call_args") throws -> Arguments {
    try borrowNullable(args, ArgumentsBox.self, name)?.arguments ?? Arguments()
}

private func argumentName(_ name: UnsafePointer<CChar>?) throws -> String {
    try string(name, "name", maxBytes: ArgumentName.maxLength)
}

private func setValue(_ args: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ value: () throws -> Value) -> outlive_status {
    guarded {
        // Borrowed, not retained: a setter is on the path of every call built from Python.
        try withBorrowed(args, ArgumentsBox.self, "args") { box in
            let key = try argumentName(name)
            try box.set(key, try value())
        }
    }
}

/// The value of `name` in args, or `.notFound`.
private func getValue(_ args: OpaquePointer?, _ name: UnsafePointer<CChar>?) throws -> (ArgumentsBox, String, Value) {
    let box = try argumentsBox(args)
    let key = try argumentName(name)
    guard let value = box.arguments[key] else { throw OutliveError.notFound("no argument named \(key)") }
    return (box, key, value)
}

private func mismatch(_ name: String, _ value: Value, _ wanted: ValueType) -> OutliveError {
    OutliveError(.typeMismatch, "argument \(name) is \(value.type.name), not \(wanted.name)")
}

/// Gets a primitive: the getter's shape for every primitive type.
private func getPrimitive<T>(_ args: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<T>?,
                             _ type: ValueType, _ extract: (Value) -> T?) -> outlive_status {
    guarded {
        let out = try required(out, "out")
        let (_, key, value) = try getValue(args, name)
        guard let result = extract(value) else { throw mismatch(key, value, type) }
        out.pointee = result
    }
}

@c @implementation
public func outlive_object_bytes(_ object: OpaquePointer?, _ size: UnsafeMutablePointer<Int>?) -> UnsafeRawPointer? {
    guard let storage = objectStorage(object) else {
        size?.pointee = 0
        return nil
    }
    size?.pointee = storage.bytes.count
    return UnsafeRawPointer(storage.cBytes)
}

@c @implementation
public func outlive_object_type(_ object: OpaquePointer?) -> UnsafePointer<CChar>? {
    objectStorage(object)?.cTypeTag.map { UnsafePointer($0) }
}

@c @implementation
public func outlive_object_string(_ object: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let storage = objectStorage(object), storage.isCString else { return nil }
    return UnsafePointer(storage.cBytes)
}

@c @implementation
public func outlive_args_new(_ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    guarded {
        let out = try required(out, "out")
        out.pointee = retain(ArgumentsBox())
    }
}

@c @implementation
public func outlive_args_copy(_ args: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    guarded {
        let box = try argumentsBox(args)
        let out = try required(out, "out")
        out.pointee = retain(ArgumentsBox(box.arguments))
    }
}

@c @implementation
public func outlive_args_free(_ args: OpaquePointer?) {
    release(args, ArgumentsBox.self)
}

@c @implementation
public func outlive_args_set_id(_ args: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ typeTag: UnsafePointer<CChar>?,
                                _ pointer: UnsafeRawPointer?, _ size: Int) -> outlive_status {
    setValue(args, name) {
        let tag = try optionalString(typeTag, "type_tag", maxBytes: TypeTag.maxLength)
        if let tag { try TypeTag.validate(tag) }
        return .id(IDValue(bytes: try bytes(pointer, size, "bytes", maxBytes: ValueLimits.maxIDSize), typeTag: tag))
    }
}

@c @implementation
public func outlive_args_set_string(_ args: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ utf8: UnsafePointer<CChar>?) -> outlive_status {
    setValue(args, name) { .id(IDValue(string: try string(utf8, "utf8", maxBytes: ValueLimits.maxIDSize))) }
}

@c @implementation
public func outlive_args_set_handler(_ args: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ handler: OpaquePointer?) -> outlive_status {
    setValue(args, name) { .handler(try borrow(handler, HandlerBox.self, "handler").handler) }
}

@c @implementation
public func outlive_args_set_bool(_ args: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ value: Bool) -> outlive_status {
    setValue(args, name) { .bool(value) }
}

@c @implementation
public func outlive_args_set_int(_ args: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ value: Int32) -> outlive_status {
    setValue(args, name) { .int(value) }
}

@c @implementation
public func outlive_args_set_double(_ args: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ value: Double) -> outlive_status {
    setValue(args, name) { .double(value) }
}

@c @implementation
public func outlive_args_set_integer(_ args: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ value: Int64) -> outlive_status {
    setValue(args, name) { .integer(value) }
}

@c @implementation
public func outlive_args_set_uinteger(_ args: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ value: UInt64) -> outlive_status {
    setValue(args, name) { .uinteger(value) }
}

@c @implementation
public func outlive_args_remove(_ args: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> outlive_status {
    guarded {
        let box = try argumentsBox(args)
        let key = try argumentName(name)
        guard box.remove(key) != nil else { throw OutliveError.notFound("no argument named \(key)") }
    }
}

@c @implementation
public func outlive_args_get_id(_ args: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                _ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    guarded {
        let out = try required(out, "out")
        let (_, key, value) = try getValue(args, name)
        guard case .id(let id) = value else { throw mismatch(key, value, .id) }
        out.pointee = OpaquePointer(Unmanaged.passUnretained(id.storage).toOpaque())
    }
}

@c @implementation
public func outlive_args_get_string(_ args: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                    _ out: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> outlive_status {
    guarded {
        let out = try required(out, "out")
        let (_, key, value) = try getValue(args, name)
        guard case .id(let id) = value else { throw mismatch(key, value, .id) }
        guard id.storage.isCString else {
            throw OutliveError(.typeMismatch, "argument \(key) is an ID whose bytes are not a UTF-8 string without NUL")
        }
        out.pointee = UnsafePointer(id.storage.cBytes)
    }
}

@c @implementation
public func outlive_args_get_handler(_ args: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                     _ out: UnsafeMutablePointer<OpaquePointer?>?) -> outlive_status {
    guarded {
        let out = try required(out, "out")
        let (box, key, value) = try getValue(args, name)
        guard let view = box.handlerView(key) else { throw mismatch(key, value, .handler) }
        out.pointee = OpaquePointer(Unmanaged.passUnretained(view).toOpaque())
    }
}

@c @implementation
public func outlive_args_get_bool(_ args: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<Bool>?) -> outlive_status {
    getPrimitive(args, name, out, .bool) { if case .bool(let x) = $0 { return x } else { return nil } }
}

@c @implementation
public func outlive_args_get_int(_ args: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<Int32>?) -> outlive_status {
    getPrimitive(args, name, out, .int) { if case .int(let x) = $0 { return x } else { return nil } }
}

@c @implementation
public func outlive_args_get_double(_ args: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<Double>?) -> outlive_status {
    getPrimitive(args, name, out, .double) { if case .double(let x) = $0 { return x } else { return nil } }
}

@c @implementation
public func outlive_args_get_integer(_ args: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<Int64>?) -> outlive_status {
    getPrimitive(args, name, out, .integer) { if case .integer(let x) = $0 { return x } else { return nil } }
}

@c @implementation
public func outlive_args_get_uinteger(_ args: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<UInt64>?) -> outlive_status {
    getPrimitive(args, name, out, .uinteger) { if case .uinteger(let x) = $0 { return x } else { return nil } }
}

@c @implementation
public func outlive_args_count(_ args: OpaquePointer?) -> Int {
    borrowIfPresent(args, ArgumentsBox.self)?.arguments.count ?? 0
}

@c @implementation
public func outlive_args_name_at(_ args: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    borrowIfPresent(args, ArgumentsBox.self)?.cName(at: index)
}

@c @implementation
public func outlive_args_type_at(_ args: OpaquePointer?, _ index: Int) -> outlive_type {
    guard let box = borrowIfPresent(args, ArgumentsBox.self), index >= 0, index < box.arguments.count else {
        return outlive_type(rawValue: 0)
    }
    return outlive_type(rawValue: UInt32(box.arguments.entries[index].value.type.rawValue))
}
