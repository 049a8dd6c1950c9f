//! Durable interaction queues: interactions stored as handlers, presented one
//! at a time across every process of the store, surviving restarts and crashes.
use crate::error::{check, Result};
use crate::handler::HandlerView;
use crate::store::Store;
use crate::text::{borrowed, c_opt, c_string, id_from_buffer, opt_ptr};
use outlive_sys as sys;
use std::ffi::c_char;
use std::marker::PhantomData;
use std::ptr::NonNull;

/// A stored interaction of a listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DurableInteractionInfo {
    pub id: String,
    pub handler_name: String,
    /// More than 1: a presenter died or freed its handle before finishing it.
    pub presentations: u32,
}

/// A handle on the durable queue `name` of a store, freed on drop (its claim
/// released; an interaction it presented unfinished is presented again).
/// Unless opened suspended it presents: the first stored interaction's handler
/// is called on the store's loop with `interaction_id` (ID) and `finish`
/// (HANDLER, call it to finish). It borrows the store: the C API asks for it
/// to be freed before the store is closed.
///
/// Send and Sync: every function may be called from any thread.
pub struct DurableInteractions<'s> {
    raw: NonNull<sys::outlive_durable_interactions>,
    _store: PhantomData<&'s Store>,
}
unsafe impl Send for DurableInteractions<'_> {}
unsafe impl Sync for DurableInteractions<'_> {}

impl Store {
    /// Opens a handle on the durable interaction queue `name`; `suspended`:
    /// add, inspect and remove without presenting until `resume`.
    pub fn durable_interactions(&self, name: &str, suspended: bool) -> Result<DurableInteractions<'_>> {
        let name = c_string(name)?;
        let flags = if suspended { sys::OUTLIVE_DURABLE_INTERACTIONS_SUSPENDED } else { 0 };
        let mut out = std::ptr::null_mut();
        check(unsafe { sys::outlive_durable_interactions_open(self.raw(), name.as_ptr(), flags, &mut out) })?;
        Ok(DurableInteractions { raw: NonNull::new(out).expect("a queue"), _store: PhantomData })
    }
}

impl DurableInteractions<'_> {
    fn raw(&self) -> *mut sys::outlive_durable_interactions {
        self.raw.as_ptr()
    }

    /// Stores (a copy of) `interaction` last in the queue; returns its id.
    pub fn add(&self, interaction: &HandlerView) -> Result<String> {
        let mut id = [0 as c_char; sys::OUTLIVE_ID_SIZE];
        check(unsafe { sys::outlive_durable_interactions_add(self.raw(), interaction.raw(), id.as_mut_ptr()) })?;
        Ok(id_from_buffer(&id))
    }

    pub fn suspend(&self) -> Result<()> {
        check(unsafe { sys::outlive_durable_interactions_suspend(self.raw()) })
    }

    /// Presents again; retries a first interaction that could not be called
    /// here (call it after loading the library that declares its handler).
    pub fn resume(&self) -> Result<()> {
        check(unsafe { sys::outlive_durable_interactions_resume(self.raw()) })
    }

    /// Interactions stored in the queue, the one being presented included.
    pub fn count(&self) -> Result<usize> {
        let mut count = 0;
        check(unsafe { sys::outlive_durable_interactions_count(self.raw(), &mut count) })?;
        Ok(count)
    }

    /// The stored interactions, first first, after `after`, at most `limit` (0: no limit).
    pub fn list(&self, after: Option<&str>, limit: usize) -> Result<Vec<DurableInteractionInfo>> {
        let after = c_opt(after)?;
        let mut list = std::ptr::null_mut();
        check(unsafe { sys::outlive_durable_interaction_list_new(self.raw(), opt_ptr(&after), limit, &mut list) })?;
        let items = (0..unsafe { sys::outlive_durable_interaction_list_count(list) })
            .map(|i| unsafe {
                DurableInteractionInfo {
                    id: borrowed(sys::outlive_durable_interaction_list_id(list, i)).unwrap_or("").to_string(),
                    handler_name: borrowed(sys::outlive_durable_interaction_list_handler_name(list, i))
                        .unwrap_or("")
                        .to_string(),
                    presentations: sys::outlive_durable_interaction_list_presentations(list, i),
                }
            })
            .collect();
        unsafe { sys::outlive_durable_interaction_list_free(list) };
        Ok(items)
    }

    /// Removes a stored interaction without presenting it.
    pub fn remove(&self, interaction_id: &str) -> Result<()> {
        let id = c_string(interaction_id)?;
        check(unsafe { sys::outlive_durable_interactions_remove(self.raw(), id.as_ptr()) })
    }
}

impl Drop for DurableInteractions<'_> {
    fn drop(&mut self) {
        unsafe { sys::outlive_durable_interactions_free(self.raw()) }
    }
}
