//! The process-wide log handler: what the library has to say (a dead run it
//! cleaned up, a task attempt that failed) at a level or more severe.
use crate::callback::{into_context, release};
use crate::error::{check, Error, Result};
use crate::panics;
use crate::text::borrowed;
use outlive_sys as sys;
use std::ffi::{c_char, c_void};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Error,
    Warning,
    Info,
    Debug,
}

impl LogLevel {
    fn to_raw(self) -> sys::outlive_log_level {
        match self {
            LogLevel::Error => sys::OUTLIVE_LOG_ERROR,
            LogLevel::Warning => sys::OUTLIVE_LOG_WARNING,
            LogLevel::Info => sys::OUTLIVE_LOG_INFO,
            LogLevel::Debug => sys::OUTLIVE_LOG_DEBUG,
        }
    }

    fn from_raw(raw: sys::outlive_log_level) -> LogLevel {
        match raw {
            sys::OUTLIVE_LOG_ERROR => LogLevel::Error,
            sys::OUTLIVE_LOG_WARNING => LogLevel::Warning,
            sys::OUTLIVE_LOG_INFO => LogLevel::Info,
            _ => LogLevel::Debug,
        }
    }
}

// Fn + Send + Sync: the library may call the handler on any thread, several
// at once, inside any call. It must not call back into the library.
type LogHandler = Box<dyn Fn(LogLevel, &str) + Send + Sync>;

unsafe extern "C" fn log(level: sys::outlive_log_level, message: *const c_char, context: *mut c_void) {
    let handler = unsafe { &*(context as *const LogHandler) };
    // Called inside any library call, on any thread: a panic here has no
    // caller of its own to reach, and must not surface in an unrelated one.
    panics::swallow(|| handler(LogLevel::from_raw(level), unsafe { borrowed(message) }.unwrap_or("")))
}

/// Installs the process-wide log handler for messages at `level` or more
/// severe, replacing (and freeing, once no call of it is under way) the
/// previous one.
pub fn set_log_handler(level: LogLevel, handler: impl Fn(LogLevel, &str) + Send + Sync + 'static) -> Result<()> {
    let context = into_context::<LogHandler>(Box::new(handler));
    let status =
        unsafe { sys::outlive_log_set_handler(Some(log), level.to_raw(), context, Some(release::<LogHandler>)) };
    if status != sys::OUTLIVE_OK {
        let error = Error::last(status);
        unsafe { release::<LogHandler>(context) };
        return Err(error);
    }
    Ok(())
}

/// Removes the log handler: messages are dropped again (the default).
pub fn remove_log_handler() -> Result<()> {
    check(unsafe { sys::outlive_log_set_handler(None, sys::OUTLIVE_LOG_ERROR, std::ptr::null_mut(), None) })
}
