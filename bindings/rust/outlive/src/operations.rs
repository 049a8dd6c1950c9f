//! Operation queues: asynchronous operations with dependencies, started on a
//! loop when their dependencies have finished and the queue has room, and
//! finished explicitly from any thread.
use crate::callback::{context_mut, into_context, release};
use crate::error::{check, Error, Result};
use crate::event_loop::Loop;
use crate::panics;
use outlive_sys as sys;
use std::ffi::c_void;
use std::ptr::NonNull;

/// An operation's state (`outlive_operation_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperationState {
    New,
    Waiting,
    Executing,
    Finished,
}

/// A reference to an operation (the C API counts them): `Clone` retains, drop
/// releases. Send and Sync: every operation function may be called from any
/// thread — the way to finish an operation from a worker thread.
pub struct Operation(NonNull<sys::outlive_operation>);
unsafe impl Send for Operation {}
unsafe impl Sync for Operation {}

type Run = Option<Box<dyn FnOnce(Operation) + Send>>;
type Completion = Option<Box<dyn FnOnce(bool) + Send>>;
type Drained = Box<dyn FnMut() + Send>;

unsafe extern "C" fn run(operation: *mut sys::outlive_operation, context: *mut c_void) {
    let run = unsafe { context_mut::<Run>(context) };
    if let Some(run) = run.take() {
        // The closure gets a reference of its own, to keep or move to a thread.
        let own = Operation(NonNull::new(unsafe { sys::outlive_operation_retain(operation) }).expect("an operation"));
        panics::catch((), || run(own))
    }
}

unsafe extern "C" fn completion(_operation: *mut sys::outlive_operation, cancelled: bool, context: *mut c_void) {
    let completion = unsafe { context_mut::<Completion>(context) };
    if let Some(completion) = completion.take() {
        panics::catch((), || completion(cancelled))
    }
}

unsafe extern "C" fn drained(context: *mut c_void) {
    let drained = unsafe { context_mut::<Drained>(context) };
    panics::catch((), drained)
}

impl Operation {
    /// An operation (state New) that calls `run` with a reference to itself
    /// once started; it is finished only by `finish`, not by returning.
    pub fn new(run_fn: impl FnOnce(Operation) + Send + 'static) -> Result<Operation> {
        let context = into_context::<Run>(Some(Box::new(run_fn)));
        let mut out = std::ptr::null_mut();
        let status = unsafe { sys::outlive_operation_new(Some(run), context, Some(release::<Run>), &mut out) };
        if status != sys::OUTLIVE_OK {
            let error = Error::last(status);
            unsafe { release::<Run>(context) };
            return Err(error);
        }
        Ok(Operation(NonNull::new(out).expect("an operation")))
    }

    /// Called on the loop once the operation has finished, with whether it
    /// was cancelled. Only before it is added to a queue (else `Status::State`).
    pub fn on_completion(&self, completion_fn: impl FnOnce(bool) + Send + 'static) -> Result<()> {
        let context = into_context::<Completion>(Some(Box::new(completion_fn)));
        let status = unsafe {
            sys::outlive_operation_set_completion(
                self.0.as_ptr(),
                Some(completion),
                context,
                Some(release::<Completion>),
            )
        };
        if status != sys::OUTLIVE_OK {
            let error = Error::last(status);
            unsafe { release::<Completion>(context) };
            return Err(error);
        }
        Ok(())
    }

    /// This operation will not start before `dependency` has finished.
    /// `Status::InvalidArgument` for a cycle.
    pub fn add_dependency(&self, dependency: &Operation) -> Result<()> {
        check(unsafe { sys::outlive_operation_add_dependency(self.0.as_ptr(), dependency.0.as_ptr()) })
    }

    /// Finishes an executing operation (from any thread).
    pub fn finish(&self) -> Result<()> {
        check(unsafe { sys::outlive_operation_finish(self.0.as_ptr()) })
    }

    pub fn cancel(&self) -> Result<()> {
        check(unsafe { sys::outlive_operation_cancel(self.0.as_ptr()) })
    }

    pub fn is_cancelled(&self) -> bool {
        unsafe { sys::outlive_operation_is_cancelled(self.0.as_ptr()) }
    }

    pub fn state(&self) -> OperationState {
        match unsafe { sys::outlive_operation_get_state(self.0.as_ptr()) } {
            sys::OUTLIVE_OPERATION_WAITING => OperationState::Waiting,
            sys::OUTLIVE_OPERATION_EXECUTING => OperationState::Executing,
            sys::OUTLIVE_OPERATION_FINISHED => OperationState::Finished,
            _ => OperationState::New,
        }
    }
}

impl Clone for Operation {
    fn clone(&self) -> Operation {
        Operation(NonNull::new(unsafe { sys::outlive_operation_retain(self.0.as_ptr()) }).expect("an operation"))
    }
}

impl Drop for Operation {
    fn drop(&mut self) {
        unsafe { sys::outlive_operation_free(self.0.as_ptr()) }
    }
}

/// A queue that starts operations on a loop, at most `max_unfinished` at
/// once (0: no limit), freed on drop (its operations that did not start are
/// cancelled). Send and Sync as `Interactions`, with the same rule for drop.
pub struct Operations(NonNull<sys::outlive_operations>);
unsafe impl Send for Operations {}
unsafe impl Sync for Operations {}

impl Operations {
    pub fn new(event_loop: &Loop, max_unfinished: usize) -> Result<Operations> {
        let mut out = std::ptr::null_mut();
        check(unsafe { sys::outlive_operations_new(event_loop.raw(), max_unfinished, &mut out) })?;
        Ok(Operations(NonNull::new(out).expect("a queue")))
    }

    /// Adds a New operation (the queue holds its own reference).
    pub fn add(&self, operation: &Operation) -> Result<()> {
        check(unsafe { sys::outlive_operations_add(self.0.as_ptr(), operation.0.as_ptr()) })
    }

    pub fn cancel_all(&self) -> Result<()> {
        check(unsafe { sys::outlive_operations_cancel_all(self.0.as_ptr()) })
    }

    pub fn unfinished(&self) -> usize {
        unsafe { sys::outlive_operations_unfinished(self.0.as_ptr()) }
    }

    /// Called on the loop each time the unfinished operations drop to zero.
    pub fn on_drained(&self, drained_fn: impl FnMut() + Send + 'static) -> Result<()> {
        let context = into_context::<Drained>(Box::new(drained_fn));
        let status = unsafe {
            sys::outlive_operations_set_drained(self.0.as_ptr(), Some(drained), context, Some(release::<Drained>))
        };
        if status != sys::OUTLIVE_OK {
            let error = Error::last(status);
            unsafe { release::<Drained>(context) };
            return Err(error);
        }
        Ok(())
    }
}

impl Drop for Operations {
    fn drop(&mut self) {
        unsafe { sys::outlive_operations_free(self.0.as_ptr()) }
    }
}
