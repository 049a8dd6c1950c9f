//! Errors: every fallible call returns `Result<T, Error>`, the status the C
//! function returned with the message `outlive_last_error()` gave for it.
use outlive_sys as sys;
use std::ffi::CStr;
use std::fmt;

/// The status of a failed call (`outlive_status` without `OUTLIVE_OK`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Status {
    InvalidArgument,
    NotFound,
    Unresolved,
    TypeMismatch,
    MissingArgument,
    Invalidated,
    Corrupt,
    Io,
    Busy,
    Permission,
    State,
    Version,
    NoMemory,
    Limit,
    /// A status this binding does not know yet (statuses are appended).
    Other(i32),
}

impl Status {
    pub fn from_raw(status: sys::outlive_status) -> Status {
        match status {
            sys::OUTLIVE_E_INVALID_ARGUMENT => Status::InvalidArgument,
            sys::OUTLIVE_E_NOT_FOUND => Status::NotFound,
            sys::OUTLIVE_E_UNRESOLVED => Status::Unresolved,
            sys::OUTLIVE_E_TYPE_MISMATCH => Status::TypeMismatch,
            sys::OUTLIVE_E_MISSING_ARGUMENT => Status::MissingArgument,
            sys::OUTLIVE_E_INVALIDATED => Status::Invalidated,
            sys::OUTLIVE_E_CORRUPT => Status::Corrupt,
            sys::OUTLIVE_E_IO => Status::Io,
            sys::OUTLIVE_E_BUSY => Status::Busy,
            sys::OUTLIVE_E_PERMISSION => Status::Permission,
            sys::OUTLIVE_E_STATE => Status::State,
            sys::OUTLIVE_E_VERSION => Status::Version,
            sys::OUTLIVE_E_NO_MEMORY => Status::NoMemory,
            sys::OUTLIVE_E_LIMIT => Status::Limit,
            other => Status::Other(other),
        }
    }

    pub fn to_raw(self) -> sys::outlive_status {
        match self {
            Status::InvalidArgument => sys::OUTLIVE_E_INVALID_ARGUMENT,
            Status::NotFound => sys::OUTLIVE_E_NOT_FOUND,
            Status::Unresolved => sys::OUTLIVE_E_UNRESOLVED,
            Status::TypeMismatch => sys::OUTLIVE_E_TYPE_MISMATCH,
            Status::MissingArgument => sys::OUTLIVE_E_MISSING_ARGUMENT,
            Status::Invalidated => sys::OUTLIVE_E_INVALIDATED,
            Status::Corrupt => sys::OUTLIVE_E_CORRUPT,
            Status::Io => sys::OUTLIVE_E_IO,
            Status::Busy => sys::OUTLIVE_E_BUSY,
            Status::Permission => sys::OUTLIVE_E_PERMISSION,
            Status::State => sys::OUTLIVE_E_STATE,
            Status::Version => sys::OUTLIVE_E_VERSION,
            Status::NoMemory => sys::OUTLIVE_E_NO_MEMORY,
            Status::Limit => sys::OUTLIVE_E_LIMIT,
            Status::Other(raw) => raw,
        }
    }

    /// The C name of the status ("OUTLIVE_E_NOT_FOUND").
    pub fn name(self) -> &'static str {
        // Static storage in the library.
        unsafe { CStr::from_ptr(sys::outlive_status_name(self.to_raw())) }.to_str().unwrap_or("OUTLIVE_E_UNKNOWN")
    }
}

/// A failed call: its status and the library's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub status: Status,
    pub message: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The error of a call that just returned `status`, with the calling
    /// thread's last error message (read now: the next failing call replaces it).
    pub(crate) fn last(status: sys::outlive_status) -> Error {
        let message = unsafe { CStr::from_ptr(sys::outlive_last_error()) }.to_string_lossy().into_owned();
        Error { status: Status::from_raw(status), message }
    }

    /// An error found by the binding before calling the library (a string with
    /// a NUL byte), with the status the library gives that kind of input.
    pub(crate) fn invalid(message: impl Into<String>) -> Error {
        Error { status: Status::InvalidArgument, message: message.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status.name(), self.message)
    }
}

impl std::error::Error for Error {}

/// `Ok(())` for OUTLIVE_OK, the error otherwise.
pub(crate) fn check(status: sys::outlive_status) -> Result<()> {
    if status == sys::OUTLIVE_OK {
        Ok(())
    } else {
        Err(Error::last(status))
    }
}
