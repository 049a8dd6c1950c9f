//! A panic must not unwind through C frames (it would abort the process in
//! the middle of a library call). Every Rust callback the library calls runs
//! under `catch`: a panic is caught there, kept for this thread, and raised
//! again by `resume` once the C call that ran the callback has returned
//! (dispatch, kv update, handler call), so it reaches the Rust caller as if
//! there had been no C in between.
use std::any::Any;
use std::cell::RefCell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

thread_local! {
    static CAUGHT: RefCell<Option<Box<dyn Any + Send>>> = const { RefCell::new(None) };
}

/// Runs a callback; on a panic keeps it (the first one) and returns `fallback`.
pub(crate) fn catch<T>(fallback: T, callback: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(callback)) {
        Ok(value) => value,
        Err(payload) => {
            CAUGHT.with(|slot| {
                slot.borrow_mut().get_or_insert(payload);
            });
            fallback
        }
    }
}

/// Runs a callback whose panic has no caller to reach (the log handler, called
/// inside any call on any thread): the panic hook has printed it; it goes no further.
pub(crate) fn swallow(callback: impl FnOnce()) {
    let _ = catch_unwind(AssertUnwindSafe(callback));
}

/// Raises the panic a callback had during the C call that just returned.
pub(crate) fn resume() {
    if let Some(payload) = CAUGHT.with(|slot| slot.borrow_mut().take()) {
        resume_unwind(payload);
    }
}

/// Used by `handler!`: a declared handler's body runs under `catch`.
#[doc(hidden)]
pub fn __catch(body: impl FnOnce()) {
    catch((), body)
}
