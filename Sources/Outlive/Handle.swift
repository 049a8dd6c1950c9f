import OutliveCore

// Opaque C handles are retained Swift objects: passRetained on create,
// takeUnretainedValue on use, release in _free.
//
// Every use checks the handle's kind first, as sqlite3SafetyCheckOk does: the
// object's class is its type tag, so a store passed where a handler is expected
// is OUTLIVE_E_INVALID_ARGUMENT, not a handler call on a store's memory. (Only
// live handles of this library can be checked: a freed pointer is not a handle.)

func retain<T: AnyObject>(_ object: T) -> OpaquePointer {
    OpaquePointer(Unmanaged.passRetained(object).toOpaque())
}

/// The object behind a handle when it is of class T; nil for any other kind.
private func object<T: AnyObject>(_ handle: OpaquePointer, _ type: T.Type) -> T? {
    Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue() as? T
}

func borrow<T: AnyObject>(_ handle: OpaquePointer?, _ type: T.Type, _ name: String) throws -> T {
    guard let handle else { throw OutliveError.invalidArgument("\(name) is NULL") }
    guard let value = object(handle, type) else {
        throw OutliveError.invalidArgument("\(name) is a handle of another kind")
    }
    return value
}

/// Whether the object behind a handle is exactly of class T: its first word,
/// the class metadata, compared without a dynamic cast.
@inline(__always)
private func isExactly<T: AnyObject>(_ handle: OpaquePointer, _ type: T.Type) -> Bool {
    UnsafeRawPointer(handle).load(as: UnsafeRawPointer.self) == unsafeBitCast(type, to: UnsafeRawPointer.self)
}

/// Runs `body` with the object of a handle of class T, borrowed for the call:
/// neither retained nor released (the caller's handle keeps it alive), and
/// checked as `borrow` does (`.invalidArgument` for NULL or another kind).
@inline(__always)
func withBorrowed<T: AnyObject, R>(_ handle: OpaquePointer?, _ type: T.Type, _ name: String, _ body: (T) throws -> R) throws -> R {
    guard let handle else { throw OutliveError.invalidArgument("\(name) is NULL") }
    guard isExactly(handle, type) || object(handle, type) != nil else {
        throw OutliveError.invalidArgument("\(name) is a handle of another kind")
    }
    return try Unmanaged<T>.fromOpaque(UnsafeRawPointer(handle))._withUnsafeGuaranteedRef(body)
}

/// The object of a nullable handle: nil for NULL and for a handle of another
/// kind (accessors answer NULL, 0 or false for both).
func borrowIfPresent<T: AnyObject>(_ handle: OpaquePointer?, _ type: T.Type) -> T? {
    guard let handle else { return nil }
    return object(handle, type)
}

/// Releases a handle of class T; NULL and handles of another kind are ignored.
func release<T: AnyObject>(_ handle: OpaquePointer?, _ type: T.Type) {
    guard let handle, isExactly(handle, type) || object(handle, type) != nil else { return }
    Unmanaged<T>.fromOpaque(UnsafeRawPointer(handle)).release()
}

/// A nullable handle parameter: nil for NULL, `.invalidArgument` for a handle of another kind.
func borrowNullable<T: AnyObject>(_ handle: OpaquePointer?, _ type: T.Type, _ name: String) throws -> T? {
    guard handle != nil else { return nil }
    return try borrow(handle, type, name)
}
