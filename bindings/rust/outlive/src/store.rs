//! A store: one open handle (one "run") on a store directory shared by every
//! process that opens it.
use crate::error::{check, Error, Result};
use crate::event_loop::Loop;
use crate::text::{borrowed, c_string};
use outlive_sys as sys;
use std::path::Path;
use std::ptr::NonNull;

/// How durable an acknowledged change is (`outlive_durability`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Durability {
    /// Survives a power loss (SQLite synchronous=FULL). The default.
    #[default]
    Full,
    /// Survives a crash of any process; the last changes may be lost on a power loss.
    Normal,
}

/// What `Store::open_with` takes besides the directory and process name.
#[derive(Clone, Copy, Debug)]
pub struct StoreOptions<'l> {
    pub durability: Durability,
    /// How long a write waits for other processes, in milliseconds (default 10000).
    pub busy_timeout_ms: i32,
    /// PostgreSQL stores: the liveness bound in seconds, 2 to 3600; 0: the
    /// URI's `outlive_liveness`, else 10. Ignored by directory stores.
    pub liveness_seconds: i32,
    /// The loop to deliver callbacks on; None: the store makes its own.
    pub event_loop: Option<&'l Loop>,
}

impl Default for StoreOptions<'_> {
    fn default() -> Self {
        StoreOptions { durability: Durability::Full, busy_timeout_ms: 10000, liveness_seconds: 0, event_loop: None }
    }
}

/// An open store handle, closed on drop (`outlive_store_close`).
///
/// Send and Sync: every store function of the C API is thread-safe. Closing
/// must happen on the thread that dispatches the store's loop or while nobody
/// dispatches it; the store's own loop is only reachable as `&Loop` borrowed
/// from the store, so it cannot be dispatched while the store is dropped. With
/// a loop of your own (`StoreOptions::event_loop`), drop the store on the
/// thread that dispatches that loop.
pub struct Store {
    raw: NonNull<sys::outlive_store>,
}

unsafe impl Send for Store {}
unsafe impl Sync for Store {}

impl Store {
    /// Opens (creating it if needed) the store in `directory` as a run of
    /// `process_name`, with the default options and a loop of its own.
    pub fn open(directory: impl AsRef<Path>, process_name: &str) -> Result<Store> {
        Store::open_with(directory, process_name, &StoreOptions::default())
    }

    pub fn open_with(directory: impl AsRef<Path>, process_name: &str, options: &StoreOptions<'_>) -> Result<Store> {
        let directory =
            directory.as_ref().to_str().ok_or_else(|| Error::invalid("the directory is not valid UTF-8"))?;
        let (directory, process_name) = (c_string(directory)?, c_string(process_name)?);
        let raw_options = sys::outlive_store_options {
            version: sys::OUTLIVE_STORE_OPTIONS_VERSION,
            durability: match options.durability {
                Durability::Full => sys::OUTLIVE_DURABILITY_FULL,
                Durability::Normal => sys::OUTLIVE_DURABILITY_NORMAL,
            },
            busy_timeout_ms: options.busy_timeout_ms,
            liveness_seconds: options.liveness_seconds,
        };
        let event_loop = options.event_loop.map_or(std::ptr::null_mut(), Loop::raw);
        let mut raw = std::ptr::null_mut();
        check(unsafe {
            sys::outlive_store_open(directory.as_ptr(), process_name.as_ptr(), event_loop, &raw_options, &mut raw)
        })?;
        Ok(Store { raw: NonNull::new(raw).expect("a store") })
    }

    pub(crate) fn raw(&self) -> *mut sys::outlive_store {
        self.raw.as_ptr()
    }

    /// This handle's run id (36 characters).
    pub fn run_id(&self) -> &str {
        unsafe { borrowed(sys::outlive_store_run_id(self.raw())) }.unwrap_or("")
    }

    /// `Err` with `Status::State` once this handle no longer acts as a live run:
    /// its run ended while it was open (PostgreSQL: its connection to the server
    /// was lost). No I/O; learnt while the loop dispatches. Drop the store and
    /// open it again.
    pub fn check(&self) -> Result<()> {
        check(unsafe { sys::outlive_store_check(self.raw()) })
    }

    pub fn process_name(&self) -> &str {
        unsafe { borrowed(sys::outlive_store_process_name(self.raw())) }.unwrap_or("")
    }

    /// The loop the store delivers its callbacks on (owned by the store).
    pub fn event_loop(&self) -> &Loop {
        unsafe { Loop::from_raw(sys::outlive_store_loop(self.raw())) }
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        // Releases every callback context still registered (observers,
        // presenters): their boxed closures are dropped by their release.
        unsafe { sys::outlive_store_close(self.raw()) }
    }
}
