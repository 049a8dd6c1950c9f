import COutliveSystem

/// A libffi call interface for one declaration: the `ffi_cif` and its argument
/// types, prepared once and then shared by every call (read-only, so calls on
/// any number of threads may use it at once).
public final class CallInterface {
    let cif: UnsafeMutablePointer<ffi_cif>
    let argumentTypes: UnsafeMutablePointer<UnsafeMutablePointer<ffi_type>?>
    /// C parameters, `self` included.
    let count: Int

    init(parameters: [Parameter], hasSelf: Bool) throws {
        count = parameters.count + (hasSelf ? 1 : 0)
        argumentTypes = .allocate(capacity: max(count, 1))
        var index = 0
        if hasSelf {
            argumentTypes[0] = FFITypes.pointer
            index = 1
        }
        for parameter in parameters {
            argumentTypes[index] = FFITypes.type(of: parameter.type)
            index += 1
        }
        cif = .allocate(capacity: 1)
        let status = ffi_prep_cif(cif, FFI_DEFAULT_ABI, UInt32(count), FFITypes.void, argumentTypes)
        guard status == FFI_OK else {
            cif.deallocate()
            argumentTypes.deallocate()
            throw OutliveError.invalidArgument("libffi cannot prepare a call with \(count) parameters (status \(status.rawValue))")
        }
    }

    deinit {
        cif.deallocate()
        argumentTypes.deallocate()
    }
}

/// libffi's primitive types, copied once out of its globals so that their
/// addresses are ours to keep (libffi treats primitive types by value).
enum FFITypes {
    static func copy(_ type: ffi_type) -> UnsafeMutablePointer<ffi_type> {
        let pointer = UnsafeMutablePointer<ffi_type>.allocate(capacity: 1)
        pointer.initialize(to: type)
        return pointer
    }

    static let void = copy(ffi_type_void)
    static let pointer = copy(ffi_type_pointer)
    static let bool = copy(ffi_type_uint8)
    static let int32 = copy(ffi_type_sint32)
    static let double = copy(ffi_type_double)
    static let int64 = copy(ffi_type_sint64)
    static let uint64 = copy(ffi_type_uint64)

    static func type(of valueType: ValueType) -> UnsafeMutablePointer<ffi_type> {
        switch valueType {
        case .id, .handler: return pointer
        case .bool: return bool
        case .int: return int32
        case .double: return double
        case .integer: return int64
        case .uinteger: return uint64
        }
    }
}
