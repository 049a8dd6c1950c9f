//! In-memory interaction queues: modal interactions presented strictly one at
//! a time on a loop, each finished exactly once from any thread.
use crate::callback::{context_mut, into_context, release};
use crate::error::{check, Error, Result};
use crate::event_loop::Loop;
use crate::panics;
use outlive_sys as sys;
use std::ffi::c_void;
use std::ptr::NonNull;

/// A started interaction's token: finish it (from any thread) so the next one
/// can start. Send and Sync: `outlive_interaction_finish` may be called from
/// any thread, any number of times (after the first: `Status::State`).
pub struct Interaction(*mut sys::outlive_interaction);
unsafe impl Send for Interaction {}
unsafe impl Sync for Interaction {}

impl Interaction {
    pub fn finish(&self) -> Result<()> {
        check(unsafe { sys::outlive_interaction_finish(self.0) })
    }
}

type Run = Option<Box<dyn FnOnce(Interaction) + Send>>;

unsafe extern "C" fn run(interaction: *mut sys::outlive_interaction, context: *mut c_void) {
    let run = unsafe { context_mut::<Run>(context) };
    if let Some(run) = run.take() {
        panics::catch((), || run(Interaction(interaction)))
    }
}

/// A queue of interactions run on a loop, freed on drop (waiting ones are
/// dropped without running: their closures are freed then).
///
/// Send and Sync: every function may be called from any thread. Drop it on
/// the loop's thread, or while nobody dispatches the loop, for the guarantee
/// that no interaction starts after the drop.
pub struct Interactions(NonNull<sys::outlive_interactions>);
unsafe impl Send for Interactions {}
unsafe impl Sync for Interactions {}

impl Interactions {
    pub fn new(event_loop: &Loop) -> Result<Interactions> {
        let mut out = std::ptr::null_mut();
        check(unsafe { sys::outlive_interactions_new(event_loop.raw(), &mut out) })?;
        Ok(Interactions(NonNull::new(out).expect("a queue")))
    }

    /// Queues `run`: called on the loop's thread once every interaction added
    /// before has finished and the queue is not suspended.
    pub fn add(&self, run_fn: impl FnOnce(Interaction) + Send + 'static) -> Result<()> {
        let context = into_context::<Run>(Some(Box::new(run_fn)));
        let status =
            unsafe { sys::outlive_interactions_add(self.0.as_ptr(), Some(run), context, Some(release::<Run>)) };
        if status != sys::OUTLIVE_OK {
            let error = Error::last(status);
            unsafe { release::<Run>(context) };
            return Err(error);
        }
        Ok(())
    }

    /// Nothing starts until `resume` (the view will disappear).
    pub fn suspend(&self) -> Result<()> {
        check(unsafe { sys::outlive_interactions_suspend(self.0.as_ptr()) })
    }

    pub fn resume(&self) -> Result<()> {
        check(unsafe { sys::outlive_interactions_resume(self.0.as_ptr()) })
    }

    /// Waiting interactions and the running one.
    pub fn unfinished(&self) -> usize {
        unsafe { sys::outlive_interactions_unfinished(self.0.as_ptr()) }
    }
}

impl Drop for Interactions {
    fn drop(&mut self) {
        unsafe { sys::outlive_interactions_free(self.0.as_ptr()) }
    }
}
