//! The loop where callbacks run (observers, presenters, tasks, signal
//! deliveries): a file descriptor for the host's own event loop, and dispatch.
use crate::error::{check, Result};
use crate::panics;
use outlive_sys as sys;
use std::marker::PhantomData;
use std::os::fd::{AsRawFd, RawFd};
use std::ptr::NonNull;
use std::time::Duration;

/// A loop: a view of a C `outlive_loop`, reached as `&Loop` (from a store, or
/// an [`OwnedLoop`]). Every call on it is thread-safe in the C API: dispatch
/// from two threads at once is refused with `Status::Busy`, not undefined, so
/// `&Loop` may be shared between threads (Sync).
#[repr(C)]
pub struct Loop {
    _opaque: [u8; 0],
    _not_send: PhantomData<*mut u8>,
}
unsafe impl Sync for Loop {}

impl std::fmt::Debug for Loop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Loop(fd {})", std::os::fd::AsRawFd::as_raw_fd(self))
    }
}

impl Loop {
    pub(crate) unsafe fn from_raw<'a>(raw: *mut sys::outlive_loop) -> &'a Loop {
        unsafe { &*(raw as *const Loop) }
    }

    pub(crate) fn raw(&self) -> *mut sys::outlive_loop {
        self as *const Loop as *mut sys::outlive_loop
    }

    /// Waits up to `timeout` for work (None: until work is due; zero: not at
    /// all) and runs every due callback on this thread. A panic in one of
    /// those callbacks is raised here, after the library's call returned.
    pub fn dispatch(&self, timeout: Option<Duration>) -> Result<()> {
        let ms = match timeout {
            None => -1,
            Some(t) => t.as_millis().min(i32::MAX as u128) as i32,
        };
        let status = unsafe { sys::outlive_loop_dispatch(self.raw(), ms) };
        panics::resume();
        check(status)
    }

    /// Starts a thread owned by the loop that dispatches it until it is freed;
    /// callbacks then run on that thread (hence their `Send` bounds).
    pub fn run_thread(&self) -> Result<()> {
        check(unsafe { sys::outlive_loop_run_thread(self.raw()) })
    }
}

impl AsRawFd for Loop {
    /// Readable when work is due. Owned by the loop: poll it, never read or close it.
    fn as_raw_fd(&self) -> RawFd {
        unsafe { sys::outlive_loop_fd(self.raw()) }
    }
}

/// A loop this program created (`outlive_loop_new`), freed on drop; stores
/// opened on it keep it alive in the library until they are closed.
pub struct OwnedLoop(NonNull<sys::outlive_loop>);

// The loop's functions may be called from any thread (see Loop), and freeing
// it from another thread is allowed: it stops its own thread, if any, first.
unsafe impl Send for OwnedLoop {}
unsafe impl Sync for OwnedLoop {}

impl OwnedLoop {
    pub fn new() -> Result<OwnedLoop> {
        let mut raw = std::ptr::null_mut();
        check(unsafe { sys::outlive_loop_new(&mut raw) })?;
        Ok(OwnedLoop(NonNull::new(raw).expect("a loop")))
    }
}

impl std::ops::Deref for OwnedLoop {
    type Target = Loop;
    fn deref(&self) -> &Loop {
        unsafe { Loop::from_raw(self.0.as_ptr()) }
    }
}

impl Drop for OwnedLoop {
    fn drop(&mut self) {
        unsafe { sys::outlive_loop_free(self.0.as_ptr()) }
    }
}
