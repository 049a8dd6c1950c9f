import OutliveCore

// Opaque C handles are retained Swift objects: passRetained on create,
// takeUnretainedValue on use, release in _free.

func retain<T: AnyObject>(_ object: T) -> OpaquePointer {
    OpaquePointer(Unmanaged.passRetained(object).toOpaque())
}

func borrow<T: AnyObject>(_ handle: OpaquePointer?, _ type: T.Type, _ name: String) throws -> T {
    guard let handle else { throw OutliveError.invalidArgument("\(name) is NULL") }
    return Unmanaged<T>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue()
}

func borrowIfPresent<T: AnyObject>(_ handle: OpaquePointer?, _ type: T.Type) -> T? {
    guard let handle else { return nil }
    return Unmanaged<T>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue()
}

func release<T: AnyObject>(_ handle: OpaquePointer?, _ type: T.Type) {
    guard let handle else { return }
    Unmanaged<T>.fromOpaque(UnsafeRawPointer(handle)).release()
}
