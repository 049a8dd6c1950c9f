//! Strings across the boundary: Rust `&str` to NUL-terminated C strings (a
//! NUL byte inside is refused before the call, as the library refuses what
//! it cannot read), and C strings the library owns back to `&str`.
use crate::error::{Error, Result};
use std::ffi::{c_char, CStr, CString};

pub(crate) fn c_string(text: &str) -> Result<CString> {
    CString::new(text).map_err(|_| Error::invalid(format!("{text:?} contains a NUL byte")))
}

pub(crate) fn c_opt(text: Option<&str>) -> Result<Option<CString>> {
    text.map(c_string).transpose()
}

pub(crate) fn opt_ptr(text: &Option<CString>) -> *const c_char {
    text.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())
}

/// A string the library owns, borrowed for `'a`; None for NULL. The library
/// hands out UTF-8 only; anything else would be a library bug, read lossily
/// rather than trusted.
pub(crate) unsafe fn borrowed<'a>(pointer: *const c_char) -> Option<&'a str> {
    if pointer.is_null() {
        return None;
    }
    let c = unsafe { CStr::from_ptr(pointer) };
    Some(c.to_str().unwrap_or("\u{fffd}"))
}

/// An id written into a `char[OUTLIVE_ID_SIZE]` buffer.
pub(crate) fn id_from_buffer(buffer: &[c_char; outlive_sys::OUTLIVE_ID_SIZE]) -> String {
    let bytes: Vec<u8> = buffer.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}
