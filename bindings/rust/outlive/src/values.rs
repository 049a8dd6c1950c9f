//! Handler arguments: named, typed values (`outlive_args`), and the ID value
//! (`outlive_object`) they may hold.
use crate::error::{check, Result};
use crate::handler::HandlerView;
use crate::text::{borrowed, c_opt, c_string, opt_ptr};
use outlive_sys as sys;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::ptr::NonNull;

/// The seven argument types (`outlive_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueType {
    Id,
    Handler,
    Bool,
    Int,
    Double,
    Integer,
    UInteger,
}

impl ValueType {
    fn from_raw(raw: sys::outlive_type) -> Option<ValueType> {
        Some(match raw {
            sys::OUTLIVE_TYPE_ID => ValueType::Id,
            sys::OUTLIVE_TYPE_HANDLER => ValueType::Handler,
            sys::OUTLIVE_TYPE_BOOL => ValueType::Bool,
            sys::OUTLIVE_TYPE_INT => ValueType::Int,
            sys::OUTLIVE_TYPE_DOUBLE => ValueType::Double,
            sys::OUTLIVE_TYPE_INTEGER => ValueType::Integer,
            sys::OUTLIVE_TYPE_UINTEGER => ValueType::UInteger,
            _ => return None,
        })
    }
}

/// An ID value: bytes and an optional type tag, immutable. Reached as
/// `&Object`, borrowed from the arguments (or the handler call) it belongs to.
#[repr(C)]
pub struct Object {
    _opaque: [u8; 0],
    _not_send: PhantomData<*mut u8>,
}
// Immutable; the accessors are plain reads, callable from any thread.
unsafe impl Sync for Object {}

impl Object {
    #[doc(hidden)]
    pub unsafe fn __from_raw<'a>(raw: *const sys::outlive_object) -> Option<&'a Object> {
        unsafe { (raw as *const Object).as_ref() }
    }

    fn raw(&self) -> *const sys::outlive_object {
        self as *const Object as *const sys::outlive_object
    }

    pub fn bytes(&self) -> &[u8] {
        let mut size = 0usize;
        let bytes = unsafe { sys::outlive_object_bytes(self.raw(), &mut size) };
        unsafe { std::slice::from_raw_parts(bytes as *const u8, size) }
    }

    /// The type tag ("xmpp.account"), if any.
    pub fn tag(&self) -> Option<&str> {
        unsafe { borrowed(sys::outlive_object_type(self.raw())) }
    }

    /// The bytes as text, when they are UTF-8 without a NUL byte.
    pub fn as_str(&self) -> Option<&str> {
        unsafe { borrowed(sys::outlive_object_string(self.raw())) }
    }
}

impl std::fmt::Debug for Object {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.as_str() {
            Some(text) => write!(f, "Object({text:?}, tag {:?})", self.tag()),
            None => write!(f, "Object({} bytes, tag {:?})", self.bytes().len(), self.tag()),
        }
    }
}

/// A view of an argument set, reached as `&ArgsView`: from an [`Args`] you own,
/// or from a message payload. Reading from several threads at once is allowed
/// by the C API (Sync); changing needs an `Args` (`&mut`).
#[repr(C)]
pub struct ArgsView {
    _opaque: [u8; 0],
    _not_send: PhantomData<*mut u8>,
}
unsafe impl Sync for ArgsView {}

macro_rules! getter {
    ($(#[$doc:meta])* $name:ident, $c:ident, $ty:ty) => {
        $(#[$doc])*
        pub fn $name(&self, name: &str) -> Result<$ty> {
            let name = c_string(name)?;
            let mut out = <$ty>::default();
            check(unsafe { sys::$c(self.raw(), name.as_ptr(), &mut out) })?;
            Ok(out)
        }
    };
}

impl ArgsView {
    pub(crate) unsafe fn from_raw<'a>(raw: *const sys::outlive_args) -> Option<&'a ArgsView> {
        unsafe { (raw as *const ArgsView).as_ref() }
    }

    pub(crate) fn raw(&self) -> *const sys::outlive_args {
        self as *const ArgsView as *const sys::outlive_args
    }

    /// The ID value of name. Errors: NotFound, TypeMismatch (another type).
    pub fn get_id(&self, name: &str) -> Result<&Object> {
        let name = c_string(name)?;
        let mut out = std::ptr::null();
        check(unsafe { sys::outlive_args_get_id(self.raw(), name.as_ptr(), &mut out) })?;
        Ok(unsafe { Object::__from_raw(out) }.expect("an object"))
    }

    /// An ID value as text (TypeMismatch when it is not UTF-8 or holds a NUL).
    pub fn get_string(&self, name: &str) -> Result<&str> {
        let name = c_string(name)?;
        let mut out = std::ptr::null();
        check(unsafe { sys::outlive_args_get_string(self.raw(), name.as_ptr(), &mut out) })?;
        Ok(unsafe { borrowed(out) }.unwrap_or(""))
    }

    /// A HANDLER value, borrowed from the arguments (call it, or `copy`).
    pub fn get_handler(&self, name: &str) -> Result<&HandlerView> {
        let name = c_string(name)?;
        let mut out = std::ptr::null();
        check(unsafe { sys::outlive_args_get_handler(self.raw(), name.as_ptr(), &mut out) })?;
        Ok(unsafe { HandlerView::__from_raw(out) }.expect("a handler"))
    }

    getter!(get_bool, outlive_args_get_bool, bool);
    getter!(get_int, outlive_args_get_int, i32);
    getter!(get_double, outlive_args_get_double, f64);
    getter!(get_integer, outlive_args_get_integer, i64);
    getter!(get_uinteger, outlive_args_get_uinteger, u64);

    pub fn len(&self) -> usize {
        unsafe { sys::outlive_args_count(self.raw()) }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Names and types, in order of first insertion.
    pub fn names(&self) -> Vec<(String, ValueType)> {
        (0..self.len())
            .filter_map(|i| {
                let name = unsafe { borrowed(sys::outlive_args_name_at(self.raw(), i)) }?.to_string();
                Some((name, ValueType::from_raw(unsafe { sys::outlive_args_type_at(self.raw(), i) })?))
            })
            .collect()
    }

    /// An independent copy.
    pub fn copy(&self) -> Result<Args> {
        let mut out = std::ptr::null_mut();
        check(unsafe { sys::outlive_args_copy(self.raw(), &mut out) })?;
        Ok(Args(NonNull::new(out).expect("arguments")))
    }
}

/// An argument set you own, freed on drop. Setters copy their value and
/// replace a value of the same name; they return `&mut Self` to chain.
///
/// Send and Sync: the C API lets several threads read one `outlive_args` and
/// one thread change it while nobody else uses it — which `&`/`&mut` enforce.
pub struct Args(NonNull<sys::outlive_args>);
unsafe impl Send for Args {}
unsafe impl Sync for Args {}

macro_rules! setter {
    ($(#[$doc:meta])* $name:ident, $c:ident, $ty:ty) => {
        $(#[$doc])*
        pub fn $name(&mut self, name: &str, value: $ty) -> Result<&mut Self> {
            let name = c_string(name)?;
            check(unsafe { sys::$c(self.raw_mut(), name.as_ptr(), value) })?;
            Ok(self)
        }
    };
}

impl Args {
    pub fn new() -> Result<Args> {
        let mut out = std::ptr::null_mut();
        check(unsafe { sys::outlive_args_new(&mut out) })?;
        Ok(Args(NonNull::new(out).expect("arguments")))
    }

    pub(crate) fn raw_mut(&mut self) -> *mut sys::outlive_args {
        self.0.as_ptr()
    }

    /// An ID of bytes, tagged with `tag` (None: untagged).
    pub fn set_id(&mut self, name: &str, tag: Option<&str>, bytes: &[u8]) -> Result<&mut Self> {
        let (name, tag) = (c_string(name)?, c_opt(tag)?);
        check(unsafe {
            sys::outlive_args_set_id(
                self.raw_mut(),
                name.as_ptr(),
                opt_ptr(&tag),
                bytes.as_ptr() as *const c_void,
                bytes.len(),
            )
        })?;
        Ok(self)
    }

    /// An untagged ID holding the text's UTF-8 bytes.
    pub fn set_string(&mut self, name: &str, text: &str) -> Result<&mut Self> {
        let (name, text) = (c_string(name)?, c_string(text)?);
        check(unsafe { sys::outlive_args_set_string(self.raw_mut(), name.as_ptr(), text.as_ptr()) })?;
        Ok(self)
    }

    /// A copy of a handler value.
    pub fn set_handler(&mut self, name: &str, handler: &HandlerView) -> Result<&mut Self> {
        let name = c_string(name)?;
        check(unsafe { sys::outlive_args_set_handler(self.raw_mut(), name.as_ptr(), handler.raw()) })?;
        Ok(self)
    }

    setter!(set_bool, outlive_args_set_bool, bool);
    setter!(set_int, outlive_args_set_int, i32);
    setter!(set_double, outlive_args_set_double, f64);
    setter!(set_integer, outlive_args_set_integer, i64);
    setter!(set_uinteger, outlive_args_set_uinteger, u64);

    /// Removes name (NotFound when there is none).
    pub fn remove(&mut self, name: &str) -> Result<()> {
        let name = c_string(name)?;
        check(unsafe { sys::outlive_args_remove(self.raw_mut(), name.as_ptr()) })
    }
}

impl std::ops::Deref for Args {
    type Target = ArgsView;
    fn deref(&self) -> &ArgsView {
        unsafe { ArgsView::from_raw(self.0.as_ptr()) }.expect("arguments")
    }
}

impl Clone for Args {
    /// A copy (`outlive_args_copy`); panics only when memory runs out.
    fn clone(&self) -> Args {
        (**self).copy().expect("copying arguments")
    }
}

impl Drop for Args {
    fn drop(&mut self) {
        unsafe { sys::outlive_args_free(self.0.as_ptr()) }
    }
}

impl std::fmt::Debug for Args {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}
