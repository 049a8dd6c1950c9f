//! Key-value: durable values under string keys, shared by every process.
use crate::callback::{context_mut, into_context, release};
use crate::error::{check, Error, Result};
use crate::panics;
use crate::store::Store;
use crate::text::{borrowed, c_opt, c_string, opt_ptr};
use outlive_sys as sys;
use std::ffi::{c_char, c_void};

/// What an update does with the value it read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// Leave it as it is.
    Keep,
    /// Write these bytes.
    Set(Vec<u8>),
    /// Delete the key.
    Delete,
}

type Observer = Box<dyn FnMut(&str, Option<&[u8]>) + Send>;

/// An observer registration: unobserves when dropped. It borrows the store, so
/// it cannot outlive it (closing the store also ends it).
#[must_use = "dropping the observation unobserves at once"]
pub struct Observation<'s> {
    store: &'s Store,
    token: u64,
}

impl Observation<'_> {
    pub fn token(&self) -> u64 {
        self.token
    }

    /// Keeps observing until the store is closed (the closure is freed then).
    pub fn keep(self) {
        std::mem::forget(self)
    }
}

impl Drop for Observation<'_> {
    fn drop(&mut self) {
        // NOT_FOUND cannot happen for a live token; nothing to report from drop.
        let _ = unsafe { sys::outlive_kv_unobserve(self.store.raw(), self.token) };
    }
}

impl Store {
    pub fn kv_set(&self, key: &str, value: &[u8]) -> Result<()> {
        let key = c_string(key)?;
        check(unsafe { sys::outlive_kv_set(self.raw(), key.as_ptr(), value.as_ptr() as *const c_void, value.len()) })
    }

    /// The value of key; `Ok(None)` when there is none (NOT_FOUND).
    pub fn kv_get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let key = c_string(key)?;
        let (mut bytes, mut size) = (std::ptr::null_mut(), 0usize);
        let status = unsafe { sys::outlive_kv_get(self.raw(), key.as_ptr(), &mut bytes, &mut size) };
        if status == sys::OUTLIVE_E_NOT_FOUND {
            return Ok(None);
        }
        check(status)?;
        let value = unsafe { std::slice::from_raw_parts(bytes as *const u8, size) }.to_vec();
        unsafe { sys::outlive_free(bytes) };
        Ok(Some(value))
    }

    /// Removes key; `Ok(false)` when there was no value under it.
    pub fn kv_delete(&self, key: &str) -> Result<bool> {
        let key = c_string(key)?;
        let status = unsafe { sys::outlive_kv_delete(self.raw(), key.as_ptr()) };
        if status == sys::OUTLIVE_E_NOT_FOUND {
            return Ok(false);
        }
        check(status).map(|_| true)
    }

    /// Atomic read-modify-write across processes: `modify` gets the current
    /// value (None: no value) while the store's write lock is held, and its
    /// `Change` is committed. It must be quick and must not use the store.
    pub fn kv_update<F: FnOnce(Option<&[u8]>) -> Change>(&self, key: &str, modify: F) -> Result<()> {
        struct Context<F> {
            modify: Option<F>,
        }
        unsafe extern "C" fn modifier<F: FnOnce(Option<&[u8]>) -> Change>(
            value: *mut sys::outlive_kv_value,
            context: *mut c_void,
        ) -> sys::outlive_status {
            let context = unsafe { context_mut::<Context<F>>(context) };
            panics::catch(sys::OUTLIVE_E_STATE, || {
                let modify = context.modify.take().expect("called once");
                let mut size = 0usize;
                let bytes = unsafe { sys::outlive_kv_value_bytes(value, &mut size) };
                let current =
                    (!bytes.is_null()).then(|| unsafe { std::slice::from_raw_parts(bytes as *const u8, size) });
                match modify(current) {
                    Change::Keep => sys::OUTLIVE_OK,
                    Change::Set(new) => unsafe {
                        sys::outlive_kv_value_set(value, new.as_ptr() as *const c_void, new.len())
                    },
                    Change::Delete => unsafe { sys::outlive_kv_value_delete(value) },
                }
            })
        }
        let key = c_string(key)?;
        let mut context = Context { modify: Some(modify) };
        let status = unsafe {
            sys::outlive_kv_update(self.raw(), key.as_ptr(), Some(modifier::<F>), &mut context as *mut _ as *mut c_void)
        };
        panics::resume();
        check(status)
    }

    /// Calls `observer(key, value)` on the store's loop for each change of a
    /// key under `prefix` ("" for all) by any process, this one included
    /// (value None: deleted). The closure lives as long as the returned
    /// `Observation`; it is `Send` because the loop may be dispatched on
    /// another thread than this one.
    pub fn kv_observe(
        &self,
        prefix: &str,
        observer: impl FnMut(&str, Option<&[u8]>) + Send + 'static,
    ) -> Result<Observation<'_>> {
        unsafe extern "C" fn call(key: *const c_char, bytes: *const c_void, size: usize, context: *mut c_void) {
            let observer = unsafe { context_mut::<Observer>(context) };
            panics::catch((), || {
                let key = unsafe { borrowed(key) }.unwrap_or("");
                let value = (!bytes.is_null()).then(|| unsafe { std::slice::from_raw_parts(bytes as *const u8, size) });
                observer(key, value)
            })
        }
        let prefix = c_string(prefix)?;
        let context = into_context::<Observer>(Box::new(observer));
        let mut token = 0u64;
        let status = unsafe {
            sys::outlive_kv_observe(
                self.raw(),
                prefix.as_ptr(),
                Some(call),
                context,
                Some(release::<Observer>),
                &mut token,
            )
        };
        if status != sys::OUTLIVE_OK {
            let error = Error::last(status);
            unsafe { release::<Observer>(context) };
            return Err(error);
        }
        Ok(Observation { store: self, token })
    }

    /// The keys under `prefix` in bytewise order, after `after` (None: from
    /// the first), at most `limit` of them (0: no limit).
    pub fn kv_keys(&self, prefix: &str, after: Option<&str>, limit: usize) -> Result<Vec<String>> {
        let (prefix, after) = (c_string(prefix)?, c_opt(after)?);
        let mut list = std::ptr::null_mut();
        check(unsafe { sys::outlive_kv_key_list_new(self.raw(), prefix.as_ptr(), opt_ptr(&after), limit, &mut list) })?;
        let keys = (0..unsafe { sys::outlive_kv_key_list_count(list) })
            .map(|i| unsafe { borrowed(sys::outlive_kv_key_list_key(list, i)) }.unwrap_or("").to_string())
            .collect();
        unsafe { sys::outlive_kv_key_list_free(list) };
        Ok(keys)
    }

    /// How many keys start with `prefix`.
    pub fn kv_count(&self, prefix: &str) -> Result<usize> {
        let prefix = c_string(prefix)?;
        let mut count = 0usize;
        check(unsafe { sys::outlive_kv_count(self.raw(), prefix.as_ptr(), &mut count) })?;
        Ok(count)
    }
}
