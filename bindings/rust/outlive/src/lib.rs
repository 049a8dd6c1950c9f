//! Outlive from Rust: callbacks that outlive the process.
//!
//! A safe API over the C ABI of liboutlive (`outlive-sys`): a [`Store`]
//! closed on drop, its [`Loop`], key-value with closures for updates and
//! observers, [`Args`] and [`Handler`] values, handlers declared in Rust with
//! [`handler!`] (exported exactly as C's `OUTLIVE_HANDLER` exports them, so
//! any process in any language resolves them), tasks, signals and messages.
//! Every fallible call returns [`Result`]; every handle frees itself on drop;
//! closures live exactly as long as their registration. docs/rust.md is the guide.
//!
//! The compiler holds the C API's rules (these examples must not compile):
//! a draft is used by one thread at a time, so it is not `Sync` —
//!
//! ```compile_fail
//! fn shared<T: Sync>() {}
//! shared::<outlive::MessageDraft>();
//! ```
//!
//! an observer runs on whichever thread dispatches the loop, so it must be `Send` —
//!
//! ```compile_fail
//! # let store = outlive::Store::open("/tmp/never-opened", "app").unwrap();
//! let local = std::rc::Rc::new(0);
//! let observation = store.kv_observe("", move |_, _| { let _ = &local; });
//! ```
//!
//! and a registration cannot outlive its store —
//!
//! ```compile_fail
//! let store = outlive::Store::open("/tmp/never-opened", "app").unwrap();
//! let observation = store.kv_observe("", |_, _| {}).unwrap();
//! drop(store);
//! drop(observation);
//! ```
mod callback;
pub mod declare;
mod durable_interactions;
mod error;
mod event_loop;
mod handler;
mod interactions;
mod kv;
mod log;
mod messages;
mod operations;
#[doc(hidden)]
pub mod panics;
mod signals;
mod store;
mod task_queues;
mod tasks;
mod text;
mod values;

#[doc(hidden)]
pub use declare as __declare;
/// The C declarations, for what this crate does not wrap.
pub use outlive_sys as sys;

pub use durable_interactions::{DurableInteractionInfo, DurableInteractions};
pub use error::{Error, Result, Status};
pub use event_loop::{Loop, OwnedLoop};
pub use handler::{load_library, register, resolve, unregister, Handler, HandlerView};
pub use interactions::{Interaction, Interactions};
pub use kv::{Change, Observation};
pub use log::{remove_log_handler, set_log_handler, LogLevel};
pub use messages::{
    Choice, ChoiceKind, Message, MessageDraft, MessageSnapshot, Presentation, PresentationResult, Presenter,
    Registration, Resolution, PRIORITY_DEFAULT, PRIORITY_HIGH, PRIORITY_LOW, PRIORITY_WONT_PRESENT,
};
pub use operations::{Operation, OperationState, Operations};
pub use signals::{new_signal_id, Delivery, Lifetime, SignalState};
pub use store::{Durability, Store, StoreOptions};
pub use task_queues::{QueueInfo, QueueKind, TaskOptions};
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_converts_to_its_c_value_and_back_with_its_c_name() {
        for raw in 1..=14 {
            let status = Status::from_raw(raw);
            assert!(!matches!(status, Status::Other(_)), "{raw}");
            assert_eq!(status.to_raw(), raw);
            assert!(status.name().starts_with("OUTLIVE_E_"), "{}", status.name());
        }
        assert_eq!(Status::from_raw(99), Status::Other(99));
        assert_eq!(Status::Other(99).name(), "OUTLIVE_E_UNKNOWN");
        assert_eq!(Status::NotFound.name(), "OUTLIVE_E_NOT_FOUND");
    }

    #[test]
    fn a_signature_joins_its_parameters_like_the_c_macros() {
        const PARTS: &[&str] = &["ID name", "ID<xmpp.account>? account", "BOOL ok"];
        const LEN: usize = declare::signature_len(PARTS);
        let joined = declare::signature::<LEN>(PARTS);
        assert_eq!(&joined[..], b"ID name, ID<xmpp.account>? account, BOOL ok\0");
        assert_eq!(declare::signature::<1>(&[]), [0u8]);
    }

    #[test]
    fn the_library_reports_the_version_this_crate_was_written_for() {
        assert_eq!(library_version_number(), VERSION_NUMBER);
        assert_eq!(version(), "0.2.0");
    }

    #[test]
    fn handles_are_send_and_sync_where_the_c_api_allows_it() {
        fn send_sync<T: Send + Sync>() {}
        fn send<T: Send>() {}
        send_sync::<Store>();
        send_sync::<OwnedLoop>();
        send_sync::<Args>();
        send_sync::<Handler>();
        send_sync::<Presentation>();
        send::<MessageDraft>();
        send::<MessageSnapshot>();
    }

    #[test]
    fn a_string_with_a_nul_byte_is_refused_before_the_call() {
        let error = Handler::new("a\0b", None, None).unwrap_err();
        assert_eq!(error.status, Status::InvalidArgument);
        assert!(error.message.contains("NUL"), "{error}");
    }
}
