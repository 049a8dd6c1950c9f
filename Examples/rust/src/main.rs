//! Outlive from Rust through the C ABI alone: a store, an atomic update, an
//! observer woken through the loop, and a handler implemented in Rust,
//! registered at run time, serialized and called back from its bytes.
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::ptr;

#[allow(non_camel_case_types)]
type outlive_status = c_int;
const OUTLIVE_OK: outlive_status = 0;

#[repr(C)]
struct Opaque {
    _private: [u8; 0],
}

extern "C" {
    fn outlive_last_error() -> *const c_char;
    fn outlive_version() -> *const c_char;
    fn outlive_free(pointer: *mut c_void);
    fn outlive_store_open(directory: *const c_char, process: *const c_char, loop_: *mut Opaque, options: *const c_void,
                          out: *mut *mut Opaque) -> outlive_status;
    fn outlive_store_close(store: *mut Opaque);
    fn outlive_store_loop(store: *mut Opaque) -> *mut Opaque;
    fn outlive_loop_dispatch(loop_: *mut Opaque, timeout_ms: c_int) -> outlive_status;
    fn outlive_kv_set(store: *mut Opaque, key: *const c_char, bytes: *const c_void, size: usize) -> outlive_status;
    fn outlive_kv_get(store: *mut Opaque, key: *const c_char, out_bytes: *mut *mut c_void, out_size: *mut usize) -> outlive_status;
    fn outlive_kv_update(store: *mut Opaque, key: *const c_char,
                         modifier: extern "C" fn(*mut Opaque, *mut c_void) -> outlive_status, context: *mut c_void) -> outlive_status;
    fn outlive_kv_value_bytes(value: *const Opaque, out_size: *mut usize) -> *const c_void;
    fn outlive_kv_value_set(value: *mut Opaque, bytes: *const c_void, size: usize) -> outlive_status;
    fn outlive_kv_observe(store: *mut Opaque, prefix: *const c_char,
                          observer: extern "C" fn(*const c_char, *const c_void, usize, *mut c_void),
                          context: *mut c_void, release: Option<extern "C" fn(*mut c_void)>,
                          out_token: *mut u64) -> outlive_status;
    fn outlive_handler_register(name: *const c_char, signature: *const c_char, function: *const c_void) -> outlive_status;
    fn outlive_args_new(out: *mut *mut Opaque) -> outlive_status;
    fn outlive_args_free(args: *mut Opaque);
    fn outlive_args_set_string(args: *mut Opaque, name: *const c_char, utf8: *const c_char) -> outlive_status;
    fn outlive_args_set_integer(args: *mut Opaque, name: *const c_char, value: i64) -> outlive_status;
    fn outlive_handler_new(name: *const c_char, invalidation_name: *const c_char, bound: *const Opaque,
                           out: *mut *mut Opaque) -> outlive_status;
    fn outlive_handler_free(handler: *mut Opaque);
    fn outlive_handler_serialize(handler: *const Opaque, out_bytes: *mut *mut c_void, out_size: *mut usize) -> outlive_status;
    fn outlive_handler_deserialize(bytes: *const c_void, size: usize, out: *mut *mut Opaque) -> outlive_status;
    fn outlive_handler_call(handler: *const Opaque, call_args: *const Opaque) -> outlive_status;
    fn outlive_object_string(object: *const Opaque) -> *const c_char;
}

fn check(status: outlive_status, what: &str) {
    if status != OUTLIVE_OK {
        let message = unsafe { CStr::from_ptr(outlive_last_error()) }.to_string_lossy();
        panic!("{what}: {message}");
    }
}

fn c(text: &str) -> CString {
    CString::new(text).unwrap()
}

extern "C" fn add_one(value: *mut Opaque, _context: *mut c_void) -> outlive_status {
    unsafe {
        let mut size = 0usize;
        let bytes = outlive_kv_value_bytes(value, &mut size) as *const u8;
        let old: i64 = if bytes.is_null() { 0 } else {
            std::str::from_utf8(std::slice::from_raw_parts(bytes, size)).unwrap_or("0").parse().unwrap_or(0)
        };
        let next = (old + 1).to_string();
        outlive_kv_value_set(value, next.as_ptr() as *const c_void, next.len())
    }
}

extern "C" fn changed(key: *const c_char, bytes: *const c_void, size: usize, _context: *mut c_void) {
    let key = unsafe { CStr::from_ptr(key) }.to_string_lossy();
    let value = if bytes.is_null() { "(deleted)".into() } else {
        String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(bytes as *const u8, size) }).into_owned()
    };
    println!("observer: {key} = {value}");
}

/// The handler "rust.greet": ID name, INTEGER times.
extern "C" fn greet(name: *const Opaque, times: i64) {
    let name = unsafe { CStr::from_ptr(outlive_object_string(name)) }.to_string_lossy();
    for _ in 0..times {
        println!("hello, {name}, from a Rust handler");
    }
}

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "/tmp/outlive-rust-example".into());
    unsafe {
        println!("liboutlive {}", CStr::from_ptr(outlive_version()).to_string_lossy());
        let mut store = ptr::null_mut();
        check(outlive_store_open(c(&dir).as_ptr(), c("rust").as_ptr(), ptr::null_mut(), ptr::null(), &mut store), "open");

        let mut token = 0u64;
        check(outlive_kv_observe(store, c("visits").as_ptr(), changed, ptr::null_mut(), None, &mut token), "observe");
        check(outlive_kv_update(store, c("visits").as_ptr(), add_one, ptr::null_mut()), "update");
        let (mut bytes, mut size) = (ptr::null_mut(), 0usize);
        check(outlive_kv_get(store, c("visits").as_ptr(), &mut bytes, &mut size), "get");
        let visits = String::from_utf8_lossy(std::slice::from_raw_parts(bytes as *const u8, size)).into_owned();
        outlive_free(bytes);
        println!("visits: {visits}");
        check(outlive_loop_dispatch(outlive_store_loop(store), 1000), "dispatch");

        check(outlive_handler_register(c("rust.greet").as_ptr(), c("ID name, INTEGER times").as_ptr(), greet as *const c_void), "register");
        let mut bound = ptr::null_mut();
        check(outlive_args_new(&mut bound), "arguments");
        check(outlive_args_set_string(bound, c("name").as_ptr(), c("dana").as_ptr()), "bind");
        let mut handler = ptr::null_mut();
        check(outlive_handler_new(c("rust.greet").as_ptr(), ptr::null(), bound, &mut handler), "handler");
        outlive_args_free(bound);
        let (mut blob, mut length) = (ptr::null_mut(), 0usize);
        check(outlive_handler_serialize(handler, &mut blob, &mut length), "serialize");
        outlive_handler_free(handler);
        check(outlive_kv_set(store, c("pending-greeting").as_ptr(), blob, length), "store handler");
        outlive_free(blob);

        // Later (or in another process): the stored bytes become a call.
        check(outlive_kv_get(store, c("pending-greeting").as_ptr(), &mut bytes, &mut size), "load handler");
        let mut restored = ptr::null_mut();
        check(outlive_handler_deserialize(bytes, size, &mut restored), "deserialize");
        outlive_free(bytes);
        let mut call_args = ptr::null_mut();
        check(outlive_args_new(&mut call_args), "call arguments");
        check(outlive_args_set_integer(call_args, c("times").as_ptr(), 2), "call-time argument");
        check(outlive_handler_call(restored, call_args), "call");
        outlive_args_free(call_args);
        outlive_handler_free(restored);
        outlive_store_close(store);
    }
}
