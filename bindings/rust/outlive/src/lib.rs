//! Outlive from Rust: callbacks that outlive the process.
//!
//! A safe API over the C ABI of liboutlive (`outlive-sys`): a [`Store`]
//! closed on drop, its [`Loop`], key-value with closures for updates and
//! observers, [`Args`] and [`Handler`] values, handlers declared in Rust with
//! [`handler!`] (exported exactly as C's `OUTLIVE_HANDLER` exports them, so
//! any process in any language resolves them), tasks, signals and messages.
//! Every fallible call returns [`Result`]; every handle frees itself on drop;
//! closures live exactly as long as their registration. docs/rust.md is the guide.
mod callback;
pub mod declare;
mod error;
mod event_loop;
mod handler;
mod kv;
mod messages;
#[doc(hidden)]
pub mod panics;
mod signals;
mod store;
mod tasks;
mod text;
mod values;

#[doc(hidden)]
pub use declare as __declare;
/// The C declarations, for what this crate does not wrap.
pub use outlive_sys as sys;

pub use error::{Error, Result, Status};
pub use event_loop::{Loop, OwnedLoop};
pub use handler::{load_library, register, resolve, unregister, Handler, HandlerView};
pub use kv::{Change, Observation};
pub use messages::{
    Choice, ChoiceKind, Message, MessageDraft, MessageSnapshot, Presentation, PresentationResult, Presenter, Registration,
    Resolution, PRIORITY_DEFAULT, PRIORITY_HIGH, PRIORITY_LOW, PRIORITY_WONT_PRESENT,
};
pub use signals::{new_signal_id, Delivery, Lifetime, SignalState};
pub use store::{Durability, Store, StoreOptions};
pub use tasks::{TaskInfo, TaskPolicy, TaskState};
pub use values::{Args, ArgsView, Object, ValueType};

/// The library's version, "MAJOR.MINOR.PATCH".
pub fn version() -> &'static str {
    unsafe { text::borrowed(outlive_sys::outlive_version()) }.unwrap_or("")
}

/// The header version this crate was written for: compare with
/// `library_version_number()` to detect a library of another version.
pub const VERSION_NUMBER: u32 = outlive_sys::OUTLIVE_VERSION_NUMBER;

pub fn library_version_number() -> u32 {
    unsafe { outlive_sys::outlive_version_number() }
}
