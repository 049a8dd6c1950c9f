//! Signals: results of an action delivered to consumers (handlers) that may
//! live in other processes and outlive the process that registered them.
use crate::error::{check, Result};
use crate::handler::HandlerView;
use crate::store::Store;
use crate::text::{c_opt, c_string, id_from_buffer, opt_ptr};
use crate::values::ArgsView;
use outlive_sys as sys;
use std::ffi::c_char;

/// How many versions a consumer receives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// One version, then the consumer is removed.
    Once,
    /// Every version until a terminating post.
    UntilTerminated,
}

/// Who may deliver to a consumer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lifetime {
    /// This store handle only; gone when it ends.
    ThisRun,
    /// Any run of this process name, now or later.
    Process,
    /// One of the processes that resolve the handler.
    AnyProcess,
}

/// A stored signal (`outlive_signal_lookup`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignalState {
    pub version: u64,
    pub consumer_count: usize,
    pub terminated: bool,
}

/// A new random signal id (36 characters).
pub fn new_signal_id() -> String {
    let mut id = [0 as c_char; sys::OUTLIVE_ID_SIZE];
    unsafe { sys::outlive_signal_new_id(id.as_mut_ptr()) };
    id_from_buffer(&id)
}

impl Store {
    /// Registers (a copy of) `handler` as a consumer of `signal_id`; returns
    /// the consumer's id. The handler is called with the payload's arguments
    /// and `signal_id` (ID), `version` (UINTEGER), `terminated` (BOOL).
    pub fn signal_consume(
        &self,
        signal_id: &str,
        handler: &HandlerView,
        delivery: Delivery,
        lifetime: Lifetime,
        scope: Option<&str>,
    ) -> Result<String> {
        let (signal_id, scope) = (c_string(signal_id)?, c_opt(scope)?);
        let delivery = match delivery {
            Delivery::Once => sys::OUTLIVE_DELIVERY_ONCE,
            Delivery::UntilTerminated => sys::OUTLIVE_DELIVERY_UNTIL_TERMINATED,
        };
        let lifetime = match lifetime {
            Lifetime::ThisRun => sys::OUTLIVE_LIFETIME_THIS_RUN,
            Lifetime::Process => sys::OUTLIVE_LIFETIME_PROCESS,
            Lifetime::AnyProcess => sys::OUTLIVE_LIFETIME_ANY_PROCESS,
        };
        let mut id = [0 as c_char; sys::OUTLIVE_ID_SIZE];
        check(unsafe {
            sys::outlive_signal_consume(
                self.raw(),
                signal_id.as_ptr(),
                handler.raw(),
                delivery,
                lifetime,
                opt_ptr(&scope),
                id.as_mut_ptr(),
            )
        })?;
        Ok(id_from_buffer(&id))
    }

    /// Posts the next version of `signal_id` with a copy of `payload`.
    pub fn signal_post(&self, signal_id: &str, payload: Option<&ArgsView>, terminates_consumers: bool) -> Result<()> {
        let signal_id = c_string(signal_id)?;
        check(unsafe {
            sys::outlive_signal_post(
                self.raw(),
                signal_id.as_ptr(),
                payload.map_or(std::ptr::null(), ArgsView::raw),
                terminates_consumers,
            )
        })
    }

    pub fn signal_consumer_remove(&self, consumer_id: &str) -> Result<()> {
        let id = c_string(consumer_id)?;
        check(unsafe { sys::outlive_signal_consumer_remove(self.raw(), id.as_ptr()) })
    }

    /// Removes every consumer registered with `scope`; returns how many.
    pub fn signal_consumers_remove_scope(&self, scope: &str) -> Result<usize> {
        let scope = c_string(scope)?;
        let mut count = 0;
        check(unsafe { sys::outlive_signal_consumers_remove_scope(self.raw(), scope.as_ptr(), &mut count) })?;
        Ok(count)
    }

    /// The stored signal; `Ok(None)` when it is not stored (no consumer).
    pub fn signal_lookup(&self, signal_id: &str) -> Result<Option<SignalState>> {
        let id = c_string(signal_id)?;
        let mut state = SignalState { version: 0, consumer_count: 0, terminated: false };
        let status = unsafe {
            sys::outlive_signal_lookup(
                self.raw(),
                id.as_ptr(),
                &mut state.version,
                &mut state.consumer_count,
                &mut state.terminated,
            )
        };
        if status == sys::OUTLIVE_E_NOT_FOUND {
            return Ok(None);
        }
        check(status).map(|_| Some(state))
    }
}
