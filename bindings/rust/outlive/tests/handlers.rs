//! Handler values and handlers declared in Rust with `outlive::handler!`,
//! resolved by the library through the exported descriptor symbol (dlsym).
mod common;
use outlive::{Args, Handler, HandlerView, Object, Status, ValueType};
use std::sync::Mutex;

static CALLS: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn calls_of(prefix: &str) -> Vec<String> {
    CALLS.lock().unwrap().iter().filter(|c| c.starts_with(prefix)).cloned().collect()
}

outlive::handler! {
    /// Every kind of parameter.
    fn rust_everything(text: ID, maybe: OPT_ID, account: ID_OF("xmpp.account"), flag: BOOL, small: INT,
                       ratio: DOUBLE, big: INTEGER, huge: UINTEGER, then: OPT_HANDLER) {
        let account: &Object = account;
        CALLS.lock().unwrap().push(format!(
            "everything {} {:?} {}:{} {flag} {small} {ratio} {big} {huge} {:?}",
            text.as_str().unwrap(), maybe.map(|m| m.bytes().to_vec()), account.tag().unwrap(),
            account.as_str().unwrap(), then.map(HandlerView::name)
        ));
        if let Some(then) = then {
            then.call(None).unwrap();
        }
    }
}

outlive::handler! {
    fn rust_ping() {
        CALLS.lock().unwrap().push("ping".into());
    }
}

outlive::handler! {
    fn rust_panics(message: ID) {
        panic!("{}", message.as_str().unwrap());
    }
}

outlive::handler! {
    fn rust_cancelled(name: ID) {
        CALLS.lock().unwrap().push(format!("cancelled {}", name.as_str().unwrap()));
    }
}

fn everything_args() -> Args {
    let mut args = Args::new().unwrap();
    args.set_string("text", "hello")
        .unwrap()
        .set_id("account", Some("xmpp.account"), b"dana@example.org")
        .unwrap()
        .set_bool("flag", true)
        .unwrap()
        .set_int("small", -7)
        .unwrap()
        .set_double("ratio", 0.5)
        .unwrap()
        .set_integer("big", -(1 << 40))
        .unwrap()
        .set_uinteger("huge", u64::MAX)
        .unwrap();
    args
}

#[test]
fn a_declared_handler_exports_a_descriptor_the_library_resolves() {
    outlive::resolve("rust_everything").unwrap();
    outlive::resolve("rust_ping").unwrap();
    let error = outlive::resolve("rust_not_declared").unwrap_err();
    assert_eq!(error.status, Status::Unresolved);
    // A Rust function that is not declared is not callable by name.
    assert_eq!(outlive::resolve("everything_args").unwrap_err().status, Status::Unresolved);
}

#[test]
fn the_descriptor_has_the_c_macros_layout_magic_and_signature() {
    extern "C" {
        static outlive_handler__rust_everything: outlive::sys::outlive_handler_descriptor;
    }
    let descriptor = unsafe { &outlive_handler__rust_everything };
    assert_eq!(descriptor.magic, 0x4F55544C49564548);
    assert_eq!(descriptor.version, 1);
    assert_eq!(descriptor.reserved, 0);
    let text = |p| unsafe { std::ffi::CStr::from_ptr(p) }.to_str().unwrap();
    assert_eq!(text(descriptor.name), "rust_everything");
    assert_eq!(
        text(descriptor.signature),
        "ID text, ID? maybe, ID<xmpp.account> account, BOOL flag, INT small, DOUBLE ratio, INTEGER big, \
         UINTEGER huge, HANDLER? then"
    );
    assert!(descriptor.function.is_some() && descriptor.resolver.is_none());
}

#[test]
fn a_call_passes_every_type_of_argument_to_the_rust_function() {
    let mut bound = everything_args();
    let ping = Handler::new("rust_ping", None, None).unwrap();
    bound.set_handler("then", &ping).unwrap();
    let handler = Handler::new("rust_everything", None, Some(&bound)).unwrap();
    let mut call_args = Args::new().unwrap();
    call_args.set_id("maybe", None, &[0, 1, 2]).unwrap();
    let before = calls_of("ping").len();
    handler.call(Some(&call_args)).unwrap();
    assert!(
        calls_of(
            "everything hello Some([0, 1, 2]) xmpp.account:dana@example.org true -7 0.5 -1099511627776 \
                      18446744073709551615 Some(\"rust_ping\")"
        )
        .len()
            == 1,
        "{:?}",
        calls_of("everything")
    );
    assert_eq!(calls_of("ping").len(), before + 1, "the nested handler was called");
}

#[test]
fn wrong_or_missing_arguments_call_nothing_and_say_why() {
    let handler = Handler::new("rust_everything", None, None).unwrap();
    let before = calls_of("everything").len();
    assert_eq!(handler.call(None).unwrap_err().status, Status::MissingArgument);
    let mut args = everything_args();
    args.set_string("account", "untagged").unwrap();
    let error = handler.call(Some(&args)).unwrap_err();
    assert_eq!(error.status, Status::TypeMismatch, "{error}");
    args.set_int("text", 1).unwrap();
    assert_eq!(handler.call(Some(&args)).unwrap_err().status, Status::TypeMismatch);
    assert_eq!(calls_of("everything").len(), before);
    let unresolved = Handler::new("rust_nowhere", None, None).unwrap();
    assert_eq!(unresolved.call(None).unwrap_err().status, Status::Unresolved);
}

#[test]
fn a_panic_in_a_handler_reaches_the_caller_of_call() {
    let mut args = Args::new().unwrap();
    args.set_string("message", "boom").unwrap();
    let handler = Handler::new("rust_panics", None, Some(&args)).unwrap();
    let caught = std::panic::catch_unwind(|| handler.call(None)).unwrap_err();
    assert_eq!(caught.downcast_ref::<String>().map(String::as_str), Some("boom"));
}

#[test]
fn a_handler_survives_serialization_with_its_bound_arguments() {
    let mut bound = Args::new().unwrap();
    bound.set_string("name", "dana").unwrap().set_integer("times", 2).unwrap();
    let handler = Handler::new("rust_cancelled", Some("rust_cancelled"), Some(&bound)).unwrap();
    let bytes = handler.serialize().unwrap();
    let restored = Handler::deserialize(&bytes).unwrap();
    assert_eq!(restored.name(), "rust_cancelled");
    assert_eq!(restored.invalidation_name(), Some("rust_cancelled"));
    let restored_bound = restored.bound().unwrap();
    assert_eq!(restored_bound.get_string("name").unwrap(), "dana");
    assert_eq!(restored_bound.get_integer("times").unwrap(), 2);
    assert_eq!(
        restored_bound.names(),
        [("name".to_string(), ValueType::Id), ("times".to_string(), ValueType::Integer)]
    );
    assert!(restored.description().contains("dana"), "{}", restored.description());
    let corrupt = Handler::deserialize(&bytes[..bytes.len() - 1]).unwrap_err();
    assert_eq!(corrupt.status, Status::Corrupt);
}

#[test]
fn invalidating_calls_the_invalidation_handler_once_and_then_refuses() {
    let mut bound = Args::new().unwrap();
    bound.set_string("name", "erin").unwrap();
    let mut handler = Handler::new("rust_ping", Some("rust_cancelled"), Some(&bound)).unwrap();
    let copy = handler.clone();
    handler.invalidate(None).unwrap();
    assert!(handler.is_invalidated() && !copy.is_invalidated());
    assert_eq!(calls_of("cancelled erin").len(), 1);
    assert_eq!(handler.call(None).unwrap_err().status, Status::Invalidated);
    assert_eq!(handler.invalidate(None).unwrap_err().status, Status::Invalidated);
    let serialized = Handler::deserialize(&handler.serialize().unwrap()).unwrap();
    assert!(serialized.is_invalidated(), "the state is part of the value");
}

#[test]
fn getters_return_typed_values_and_errors() {
    let args = everything_args();
    assert_eq!(args.get_bool("flag").unwrap(), true);
    assert_eq!(args.get_int("small").unwrap(), -7);
    assert_eq!(args.get_double("ratio").unwrap(), 0.5);
    assert_eq!(args.get_uinteger("huge").unwrap(), u64::MAX);
    assert_eq!(args.get_id("account").unwrap().tag(), Some("xmpp.account"));
    assert_eq!(args.get_int("flag").unwrap_err().status, Status::TypeMismatch);
    assert_eq!(args.get_int("absent").unwrap_err().status, Status::NotFound);
    let mut args = args;
    assert_eq!(args.set_int("not an identifier", 1).unwrap_err().status, Status::InvalidArgument);
    assert_eq!(args.len(), 7, "a refused setter changes nothing");
    args.remove("flag").unwrap();
    assert_eq!(args.remove("flag").unwrap_err().status, Status::NotFound);
    assert_eq!(args.clone().len(), 6);
}

#[test]
fn a_registered_function_resolves_under_a_dotted_name() {
    outlive::handler! {
        fn rust_registered(word: ID) {
            CALLS.lock().unwrap().push(format!("registered {}", word.as_str().unwrap()));
        }
    }
    let function: unsafe extern "C" fn(*const outlive::sys::outlive_object) = rust_registered;
    unsafe { outlive::register("app.rust.word", "ID word", std::mem::transmute(function)) }.unwrap();
    let mut args = Args::new().unwrap();
    args.set_string("word", "dotted").unwrap();
    Handler::new("app.rust.word", None, None).unwrap().call(Some(&args)).unwrap();
    assert_eq!(calls_of("registered dotted").len(), 1);
    outlive::unregister("app.rust.word").unwrap();
    assert_eq!(outlive::resolve("app.rust.word").unwrap_err().status, Status::Unresolved);
}
