//! `handler!`: a handler declared in Rust, exported exactly as C's
//! `OUTLIVE_HANDLER` exports one, so that any process resolves it by name.
//!
//! ```ignore
//! outlive::handler! {
//!     /// Greets `name`, `times` times.
//!     pub fn greet(name: ID, times: INTEGER) {
//!         for _ in 0..times { println!("hello, {}", name.as_str().unwrap_or("?")); }
//!     }
//! }
//! ```
//!
//! expands to
//! - `pub unsafe extern "C" fn greet(name: *const outlive_object, times: i64)`,
//!   the function the library calls (through libffi) with the declared C
//!   parameter types; it turns them into Rust values (`&Object`,
//!   `Option<&HandlerView>`, `i64`, ...) that cannot escape the call, and runs
//!   the body under a panic guard (a panic never unwinds into C);
//! - a `static` exported as the data symbol `outlive_handler__greet`: an
//!   `outlive_handler_descriptor` with OUTLIVE_HANDLER_MAGIC, version
//!   OUTLIVE_HANDLER_DESCRIPTOR_VERSION, the name "greet", the signature
//!   "ID name, INTEGER times" (generated at compile time from the parameter
//!   list, as the C macro's stringizing does) and the function.
//!
//! Parameter kinds, as the C macros name them: `ID`, `OPT_ID`, `ID_OF("tag")`,
//! `OPT_ID_OF("tag")`, `HANDLER`, `OPT_HANDLER`, `BOOL`, `INT`, `DOUBLE`,
//! `INTEGER`, `UINTEGER` (up to OUTLIVE_MAX_DECLARED_PARAMETERS of them). The
//! handler's name is the function's name. As for C, an executable must export
//! its symbols (link with `-rdynamic`, e.g. `cargo:rustc-link-arg-bins=-rdynamic`
//! in its build script); a `cdylib` exports them as it is and is loaded with
//! `outlive::load_library`.

/// The length of the signature the parts make, joined by ", ", with its NUL.
#[doc(hidden)]
pub const fn signature_len(parts: &[&str]) -> usize {
    let mut len = 1;
    let mut i = 0;
    while i < parts.len() {
        if i > 0 {
            len += 2;
        }
        len += parts[i].len();
        i += 1;
    }
    len
}

/// The parts joined by ", " and a NUL, at compile time.
#[doc(hidden)]
pub const fn signature<const N: usize>(parts: &[&str]) -> [u8; N] {
    let mut out = [0u8; N];
    let mut at = 0;
    let mut i = 0;
    while i < parts.len() {
        if i > 0 {
            out[at] = b',';
            out[at + 1] = b' ';
            at += 2;
        }
        let bytes = parts[i].as_bytes();
        let mut j = 0;
        while j < bytes.len() {
            out[at] = bytes[j];
            at += 1;
            j += 1;
        }
        i += 1;
    }
    out
}

/// Declares a handler (see the module documentation of `declare`, or docs/rust.md).
#[macro_export]
macro_rules! handler {
    ($(#[$meta:meta])* $vis:vis fn $name:ident ( $($param:ident : $kind:ident $(($tag:literal))?),* $(,)? ) $body:block) => {
        $(#[$meta])*
        #[allow(unused_unsafe, clippy::missing_safety_doc)]
        $vis unsafe extern "C" fn $name($($param: $crate::__handler_c_type!($kind)),*) {
            $crate::panics::__catch(|| {
                // A closure whose parameters are references of any lifetime:
                // the values cannot be kept past the call (copy what you keep).
                #[allow(unused_variables)]
                let body = |$($param: $crate::__handler_rust_type!($kind)),*| $body;
                body($(unsafe { $crate::__handler_value!($kind, $param) }),*)
            })
        }

        const _: () = {
            const PARTS: &[&str] = &[$($crate::__handler_signature!($kind $(($tag))?, $param)),*];
            const LEN: usize = $crate::__declare::signature_len(PARTS);
            static SIGNATURE: [u8; LEN] = $crate::__declare::signature::<LEN>(PARTS);
            #[used]
            #[unsafe(export_name = concat!("outlive_handler__", stringify!($name)))]
            static DESCRIPTOR: $crate::sys::outlive_handler_descriptor = $crate::sys::outlive_handler_descriptor {
                magic: $crate::sys::OUTLIVE_HANDLER_MAGIC,
                version: $crate::sys::OUTLIVE_HANDLER_DESCRIPTOR_VERSION,
                reserved: 0,
                name: concat!(stringify!($name), "\0").as_ptr() as *const $crate::sys::c_char,
                signature: SIGNATURE.as_ptr() as *const $crate::sys::c_char,
                // The library casts it back to the declared parameters, as C's (void (*)(void)) cast.
                function: Some(unsafe {
                    ::core::mem::transmute::<unsafe extern "C" fn($($crate::__handler_c_type!($kind)),*), unsafe extern "C" fn()>(
                        $name,
                    )
                }),
                resolver: None,
            };
        };
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __handler_c_type {
    (ID) => { *const $crate::sys::outlive_object };
    (OPT_ID) => { *const $crate::sys::outlive_object };
    (ID_OF) => { *const $crate::sys::outlive_object };
    (OPT_ID_OF) => { *const $crate::sys::outlive_object };
    (HANDLER) => { *const $crate::sys::outlive_handler };
    (OPT_HANDLER) => { *const $crate::sys::outlive_handler };
    (BOOL) => { bool };
    (INT) => { i32 };
    (DOUBLE) => { f64 };
    (INTEGER) => { i64 };
    (UINTEGER) => { u64 };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __handler_rust_type {
    (ID) => { &$crate::Object };
    (OPT_ID) => { Option<&$crate::Object> };
    (ID_OF) => { &$crate::Object };
    (OPT_ID_OF) => { Option<&$crate::Object> };
    (HANDLER) => { &$crate::HandlerView };
    (OPT_HANDLER) => { Option<&$crate::HandlerView> };
    (BOOL) => { bool };
    (INT) => { i32 };
    (DOUBLE) => { f64 };
    (INTEGER) => { i64 };
    (UINTEGER) => { u64 };
}

// A mandatory ID or HANDLER parameter is never NULL: the library calls the
// function only when every mandatory parameter has a value.
#[doc(hidden)]
#[macro_export]
macro_rules! __handler_value {
    (ID, $p:ident) => {
        $crate::Object::__from_raw($p).expect("a mandatory ID")
    };
    (OPT_ID, $p:ident) => {
        $crate::Object::__from_raw($p)
    };
    (ID_OF, $p:ident) => {
        $crate::Object::__from_raw($p).expect("a mandatory ID")
    };
    (OPT_ID_OF, $p:ident) => {
        $crate::Object::__from_raw($p)
    };
    (HANDLER, $p:ident) => {
        $crate::HandlerView::__from_raw($p).expect("a mandatory HANDLER")
    };
    (OPT_HANDLER, $p:ident) => {
        $crate::HandlerView::__from_raw($p)
    };
    ($other:ident, $p:ident) => {
        $p
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __handler_signature {
    (ID, $n:ident) => {
        concat!("ID ", stringify!($n))
    };
    (OPT_ID, $n:ident) => {
        concat!("ID? ", stringify!($n))
    };
    (ID_OF($tag:literal), $n:ident) => {
        concat!("ID<", $tag, "> ", stringify!($n))
    };
    (OPT_ID_OF($tag:literal), $n:ident) => {
        concat!("ID<", $tag, ">? ", stringify!($n))
    };
    (HANDLER, $n:ident) => {
        concat!("HANDLER ", stringify!($n))
    };
    (OPT_HANDLER, $n:ident) => {
        concat!("HANDLER? ", stringify!($n))
    };
    (BOOL, $n:ident) => {
        concat!("BOOL ", stringify!($n))
    };
    (INT, $n:ident) => {
        concat!("INT ", stringify!($n))
    };
    (DOUBLE, $n:ident) => {
        concat!("DOUBLE ", stringify!($n))
    };
    (INTEGER, $n:ident) => {
        concat!("INTEGER ", stringify!($n))
    };
    (UINTEGER, $n:ident) => {
        concat!("UINTEGER ", stringify!($n))
    };
}
