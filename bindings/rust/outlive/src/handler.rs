//! Handler values (`outlive_handler`): a declared handler's name, bound
//! arguments, an optional invalidation handler and an invalidated flag;
//! serializable, called in whichever process resolves the name.
use crate::error::{check, Result};
use crate::panics;
use crate::text::{borrowed, c_opt, c_string, opt_ptr};
use crate::values::{Args, ArgsView};
use outlive_sys as sys;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::ptr::NonNull;

/// A view of a handler value, reached as `&HandlerView`: from a [`Handler`]
/// you own, a HANDLER argument, or a handler parameter of a declared handler
/// (valid during that call only: `copy` to keep it). Its functions are
/// thread-safe in the C API (Sync).
#[repr(C)]
pub struct HandlerView {
    _opaque: [u8; 0],
    _not_send: PhantomData<*mut u8>,
}
unsafe impl Sync for HandlerView {}

impl HandlerView {
    #[doc(hidden)]
    pub unsafe fn __from_raw<'a>(raw: *const sys::outlive_handler) -> Option<&'a HandlerView> {
        unsafe { (raw as *const HandlerView).as_ref() }
    }

    pub(crate) fn raw(&self) -> *const sys::outlive_handler {
        self as *const HandlerView as *const sys::outlive_handler
    }

    pub fn name(&self) -> &str {
        unsafe { borrowed(sys::outlive_handler_name(self.raw())) }.unwrap_or("")
    }

    pub fn invalidation_name(&self) -> Option<&str> {
        unsafe { borrowed(sys::outlive_handler_invalidation_name(self.raw())) }
    }

    pub fn is_invalidated(&self) -> bool {
        unsafe { sys::outlive_handler_is_invalidated(self.raw()) }
    }

    /// A one-line description for logs (not a format to parse).
    pub fn description(&self) -> String {
        unsafe { borrowed(sys::outlive_handler_description(self.raw())) }.unwrap_or("").to_string()
    }

    /// Calls the handler on this thread with its bound arguments merged with
    /// `args` (call-time wins). Errors: Unresolved, MissingArgument,
    /// TypeMismatch, NotFound, Invalidated. A panic in a Rust handler it runs
    /// is raised here.
    pub fn call(&self, args: Option<&ArgsView>) -> Result<()> {
        let status = unsafe { sys::outlive_handler_call(self.raw(), args.map_or(std::ptr::null(), ArgsView::raw)) };
        panics::resume();
        check(status)
    }

    /// The bytes of docs/FORMAT.md: no pointers or paths, decodable anywhere.
    pub fn serialize(&self) -> Result<Vec<u8>> {
        let (mut bytes, mut size) = (std::ptr::null_mut(), 0usize);
        check(unsafe { sys::outlive_handler_serialize(self.raw(), &mut bytes, &mut size) })?;
        let out = unsafe { std::slice::from_raw_parts(bytes as *const u8, size) }.to_vec();
        unsafe { sys::outlive_free(bytes) };
        Ok(out)
    }

    /// A copy of the bound arguments.
    pub fn bound(&self) -> Result<Args> {
        let mut out = std::ptr::null_mut();
        check(unsafe { sys::outlive_handler_bound(self.raw(), &mut out) })?;
        // An empty set when nothing is bound; the library always writes one.
        let view = unsafe { ArgsView::from_raw(out) }.expect("arguments");
        let copy = view.copy();
        unsafe { sys::outlive_args_free(out) };
        copy
    }

    /// An independent copy (invalidated state included).
    pub fn copy(&self) -> Result<Handler> {
        let mut out = std::ptr::null_mut();
        check(unsafe { sys::outlive_handler_copy(self.raw(), &mut out) })?;
        Ok(Handler(NonNull::new(out).expect("a handler")))
    }
}

impl std::fmt::Debug for HandlerView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Handler({})", self.description())
    }
}

/// A handler value you own, freed on drop.
///
/// Send and Sync: every handler function of the C API may be called from any
/// thread; the two that change the value (bind, invalidate) take `&mut self`.
pub struct Handler(NonNull<sys::outlive_handler>);
unsafe impl Send for Handler {}
unsafe impl Sync for Handler {}

impl Handler {
    /// A handler naming `name` (resolved when called, in the calling process),
    /// with an invalidation handler's name and a copy of `bound`.
    pub fn new(name: &str, invalidation_name: Option<&str>, bound: Option<&ArgsView>) -> Result<Handler> {
        let (name, invalidation) = (c_string(name)?, c_opt(invalidation_name)?);
        let mut out = std::ptr::null_mut();
        check(unsafe {
            sys::outlive_handler_new(
                name.as_ptr(),
                opt_ptr(&invalidation),
                bound.map_or(std::ptr::null(), ArgsView::raw),
                &mut out,
            )
        })?;
        Ok(Handler(NonNull::new(out).expect("a handler")))
    }

    /// Decodes bytes made by `serialize` (any process, any language).
    /// Errors: Corrupt (the message gives the offset), Version.
    pub fn deserialize(bytes: &[u8]) -> Result<Handler> {
        let mut out = std::ptr::null_mut();
        check(unsafe { sys::outlive_handler_deserialize(bytes.as_ptr() as *const c_void, bytes.len(), &mut out) })?;
        Ok(Handler(NonNull::new(out).expect("a handler")))
    }

    /// Binds copies of `more` (later wins on equal names).
    pub fn bind(&mut self, more: &ArgsView) -> Result<()> {
        check(unsafe { sys::outlive_handler_bind(self.0.as_ptr(), more.raw()) })
    }

    /// Calls the invalidation handler (if any) with the merged arguments, then
    /// marks the handler invalidated; on any failure it stays valid.
    pub fn invalidate(&mut self, args: Option<&ArgsView>) -> Result<()> {
        let status =
            unsafe { sys::outlive_handler_invalidate(self.0.as_ptr(), args.map_or(std::ptr::null(), ArgsView::raw)) };
        panics::resume();
        check(status)
    }
}

impl std::ops::Deref for Handler {
    type Target = HandlerView;
    fn deref(&self) -> &HandlerView {
        unsafe { HandlerView::__from_raw(self.0.as_ptr()) }.expect("a handler")
    }
}

impl Clone for Handler {
    /// A copy (`outlive_handler_copy`); panics only when memory runs out.
    fn clone(&self) -> Handler {
        (**self).copy().expect("copying a handler")
    }
}

impl Drop for Handler {
    fn drop(&mut self) {
        unsafe { sys::outlive_handler_free(self.0.as_ptr()) }
    }
}

impl std::fmt::Debug for Handler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

/// Ok when `name` resolves in this process now; Unresolved when it does not.
pub fn resolve(name: &str) -> Result<()> {
    let name = c_string(name)?;
    check(unsafe { sys::outlive_handler_resolve(name.as_ptr()) })
}

/// Loads a handler library (a path with a '/'): its descriptors become
/// resolvable, those of Rust `cdylib`s declared with `handler!` included.
pub fn load_library(path: &str) -> Result<()> {
    let path = c_string(path)?;
    check(unsafe { sys::outlive_handler_library_load(path.as_ptr()) })
}

/// Registers `function` under `name` (which may contain '.') with the
/// parameters of `signature`, for this process.
///
/// # Safety
/// `function` must be an `unsafe extern "C" fn` whose parameters are exactly
/// the C types of `signature`'s parameters, in order, returning nothing
/// (`handler!` generates such functions), and stay valid while registered.
pub unsafe fn register(name: &str, signature: &str, function: unsafe extern "C" fn()) -> Result<()> {
    let (name, signature) = (c_string(name)?, c_string(signature)?);
    check(unsafe { sys::outlive_handler_register(name.as_ptr(), signature.as_ptr(), Some(function)) })
}

/// Removes a registration made with `register` (NotFound: none).
pub fn unregister(name: &str) -> Result<()> {
    let name = c_string(name)?;
    check(unsafe { sys::outlive_handler_unregister(name.as_ptr()) })
}
