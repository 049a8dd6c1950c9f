//! Closures handed to the library: boxed, passed as the `void *context` of a
//! registration, and freed by the `release` callback the library calls
//! exactly once when it no longer needs them — or by us, when the
//! registration itself failed (then the library never calls release).
use std::ffi::c_void;

/// Moves `value` to the heap; the pointer is a registration's context.
pub(crate) fn into_context<T>(value: T) -> *mut c_void {
    Box::into_raw(Box::new(value)) as *mut c_void
}

/// The `release` of a context made by `into_context::<T>`.
pub(crate) unsafe extern "C" fn release<T>(context: *mut c_void) {
    drop(unsafe { Box::from_raw(context as *mut T) });
}

/// The context, borrowed during a callback. The library calls a
/// registration's callbacks one at a time (on the loop's thread), so the
/// mutable borrow is exclusive.
pub(crate) unsafe fn context_mut<'a, T>(context: *mut c_void) -> &'a mut T {
    unsafe { &mut *(context as *mut T) }
}
