//! The C ABI of liboutlive, declared by hand from `include/outlive.h`.
//!
//! Every `OUTLIVE_API` function of the header is declared here with the same
//! name and the same parameter and return types; `tests/header.rs` parses the
//! header and this file and fails when they differ, and compiles a C program
//! to compare struct layouts and every constant's value. What each function
//! does, who owns what and which thread may call it is documented in the
//! header, the reference: these declarations do not repeat it.
//!
//! Mapping: `outlive_status` and every C enumeration are `c_int` aliases with
//! their values as constants (a C enum is an int in the ABI, and a Rust enum
//! must never hold a value the library might add later); opaque handles are
//! zero-sized `#[repr(C)]` structs used only behind pointers; nullable
//! function pointers are `Option<unsafe extern "C" fn ...>`; `char out[N]`
//! parameters are `*mut c_char`.
#![allow(non_camel_case_types)]
#![no_std]

pub use core::ffi::{c_char, c_int, c_void};

macro_rules! opaque {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {
        $(
            $(#[$doc])*
            #[repr(C)]
            pub struct $name {
                _private: [u8; 0],
                // Neither Send, Sync nor Unpin: the safe crate decides.
                _marker: core::marker::PhantomData<(*mut u8, core::marker::PhantomPinned)>,
            }
        )*
    };
}

opaque!(
    outlive_object,
    outlive_args,
    outlive_handler,
    outlive_loop,
    outlive_store,
    outlive_kv_value,
    outlive_kv_key_list,
    outlive_task_list,
    outlive_queue_list,
    outlive_schedule_list,
    outlive_signal_list,
    outlive_signal_consumer_list,
    outlive_message,
    outlive_message_draft,
    outlive_presentation,
    outlive_message_list,
    outlive_interactions,
    outlive_interaction,
    outlive_durable_interactions,
    outlive_durable_interaction_list,
    outlive_operations,
    outlive_operation,
);

// ── basics ──────────────────────────────────────────────────────────────────

pub const OUTLIVE_VERSION_MAJOR: u32 = 0;
pub const OUTLIVE_VERSION_MINOR: u32 = 2;
pub const OUTLIVE_VERSION_PATCH: u32 = 0;
pub const OUTLIVE_VERSION_NUMBER: u32 =
    OUTLIVE_VERSION_MAJOR * 1000000 + OUTLIVE_VERSION_MINOR * 1000 + OUTLIVE_VERSION_PATCH;
pub const OUTLIVE_ID_SIZE: usize = 37;

pub type outlive_status = c_int;
pub const OUTLIVE_OK: outlive_status = 0;
pub const OUTLIVE_E_INVALID_ARGUMENT: outlive_status = 1;
pub const OUTLIVE_E_NOT_FOUND: outlive_status = 2;
pub const OUTLIVE_E_UNRESOLVED: outlive_status = 3;
pub const OUTLIVE_E_TYPE_MISMATCH: outlive_status = 4;
pub const OUTLIVE_E_MISSING_ARGUMENT: outlive_status = 5;
pub const OUTLIVE_E_INVALIDATED: outlive_status = 6;
pub const OUTLIVE_E_CORRUPT: outlive_status = 7;
pub const OUTLIVE_E_IO: outlive_status = 8;
pub const OUTLIVE_E_BUSY: outlive_status = 9;
pub const OUTLIVE_E_PERMISSION: outlive_status = 10;
pub const OUTLIVE_E_STATE: outlive_status = 11;
pub const OUTLIVE_E_VERSION: outlive_status = 12;
pub const OUTLIVE_E_NO_MEMORY: outlive_status = 13;
pub const OUTLIVE_E_LIMIT: outlive_status = 14;

pub type outlive_log_level = c_int;
pub const OUTLIVE_LOG_ERROR: outlive_log_level = 1;
pub const OUTLIVE_LOG_WARNING: outlive_log_level = 2;
pub const OUTLIVE_LOG_INFO: outlive_log_level = 3;
pub const OUTLIVE_LOG_DEBUG: outlive_log_level = 4;
pub type outlive_log_handler =
    Option<unsafe extern "C" fn(level: outlive_log_level, message: *const c_char, context: *mut c_void)>;

// ── values ──────────────────────────────────────────────────────────────────

pub type outlive_type = c_int;
pub const OUTLIVE_TYPE_ID: outlive_type = 1;
pub const OUTLIVE_TYPE_HANDLER: outlive_type = 2;
pub const OUTLIVE_TYPE_BOOL: outlive_type = 3;
pub const OUTLIVE_TYPE_INT: outlive_type = 4;
pub const OUTLIVE_TYPE_DOUBLE: outlive_type = 5;
pub const OUTLIVE_TYPE_INTEGER: outlive_type = 6;
pub const OUTLIVE_TYPE_UINTEGER: outlive_type = 7;

pub const OUTLIVE_MAX_NAME_SIZE: usize = 128;
pub const OUTLIVE_MAX_ID_SIZE: usize = 16 * 1024 * 1024;
pub const OUTLIVE_MAX_ARGUMENTS: usize = 1024;
pub const OUTLIVE_MAX_NESTING: usize = 16;

// ── store ───────────────────────────────────────────────────────────────────

pub type outlive_durability = c_int;
pub const OUTLIVE_DURABILITY_FULL: outlive_durability = 1;
pub const OUTLIVE_DURABILITY_NORMAL: outlive_durability = 2;

pub const OUTLIVE_STORE_OPTIONS_VERSION: u32 = 2;
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct outlive_store_options {
    pub version: u32,
    pub durability: outlive_durability,
    pub busy_timeout_ms: i32,
    pub liveness_seconds: i32,
}
/// OUTLIVE_STORE_OPTIONS_INIT
pub const OUTLIVE_STORE_OPTIONS_INIT: outlive_store_options = outlive_store_options {
    version: OUTLIVE_STORE_OPTIONS_VERSION,
    durability: OUTLIVE_DURABILITY_FULL,
    busy_timeout_ms: 10000,
    liveness_seconds: 0,
};

// ── key-value ───────────────────────────────────────────────────────────────

pub const OUTLIVE_KV_MAX_KEY_SIZE: usize = 1024;
pub const OUTLIVE_KV_MAX_VALUE_SIZE: usize = 64 * 1024 * 1024;
pub type outlive_kv_modifier =
    Option<unsafe extern "C" fn(value: *mut outlive_kv_value, context: *mut c_void) -> outlive_status>;
pub type outlive_kv_observer =
    Option<unsafe extern "C" fn(key: *const c_char, bytes: *const c_void, size: usize, context: *mut c_void)>;

// ── handlers ────────────────────────────────────────────────────────────────

pub const OUTLIVE_HANDLER_MAGIC: u64 = 0x4F55544C49564548;
pub const OUTLIVE_HANDLER_DESCRIPTOR_VERSION: u32 = 1;
pub const OUTLIVE_MAX_DECLARED_PARAMETERS: usize = 16;
pub const OUTLIVE_MAX_SERIALIZED_SIZE: usize = 32 * 1024 * 1024;

pub type outlive_instance_resolver = Option<unsafe extern "C" fn(merged_arguments: *const outlive_args) -> *mut c_void>;

/// What `OUTLIVE_HANDLER` exports as `outlive_handler__NAME` (see the header).
#[repr(C)]
pub struct outlive_handler_descriptor {
    pub magic: u64,
    pub version: u32,
    pub reserved: u32,
    pub name: *const c_char,
    pub signature: *const c_char,
    pub function: Option<unsafe extern "C" fn()>,
    pub resolver: outlive_instance_resolver,
}
// A descriptor is an immutable static whose pointers point to static,
// immutable data (the name and signature strings, functions): sharing it
// between threads is safe, and a `static` needs it.
unsafe impl Sync for outlive_handler_descriptor {}

// ── tasks ───────────────────────────────────────────────────────────────────

pub const OUTLIVE_TASK_MAX_GROUP_ID_SIZE: usize = 1024;
pub const OUTLIVE_TASK_MAX_GROUP_MEMBERS: usize = 1024;
pub const OUTLIVE_TASK_MAX_BATCH: usize = 1000000;
pub const OUTLIVE_TASK_DEFAULT_COMPLETION_BATCH: usize = 32;
pub const OUTLIVE_TASK_MAX_COMPLETION_BATCH: usize = 1024;

pub const OUTLIVE_TASK_SPEC_VERSION: u32 = 1;
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct outlive_task_spec {
    pub version: u32,
    pub work: *const outlive_handler,
    pub group_start: *const c_char,
    pub group_members: *const *const c_char,
    pub group_member_count: usize,
}

pub type outlive_queue_kind = c_int;
pub const OUTLIVE_QUEUE_ORDERED: outlive_queue_kind = 1;
pub const OUTLIVE_QUEUE_PARALLEL: outlive_queue_kind = 2;

pub const OUTLIVE_QUEUE_MAX_NAME_SIZE: usize = 128;
pub const OUTLIVE_TASK_MAX_UNIQUE_KEY_SIZE: usize = 1024;

pub type outlive_delivery = c_int;
pub const OUTLIVE_DELIVERY_ONCE: outlive_delivery = 1;
pub const OUTLIVE_DELIVERY_UNTIL_TERMINATED: outlive_delivery = 2;

pub type outlive_lifetime = c_int;
pub const OUTLIVE_LIFETIME_THIS_RUN: outlive_lifetime = 1;
pub const OUTLIVE_LIFETIME_PROCESS: outlive_lifetime = 2;
pub const OUTLIVE_LIFETIME_ANY_PROCESS: outlive_lifetime = 3;

pub const OUTLIVE_TASK_OPTIONS_VERSION: u32 = 1;
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct outlive_task_options {
    pub version: u32,
    pub queue: *const c_char,
    pub priority: i32,
    pub due_at: f64,
    pub delay_seconds: f64,
    pub unique_key: *const c_char,
    pub result_signal: *const c_char,
    pub group_start: *const c_char,
    pub group_members: *const *const c_char,
    pub group_member_count: usize,
    pub result_consumer: *const outlive_handler,
    pub result_delivery: outlive_delivery,
    pub result_lifetime: outlive_lifetime,
    pub result_scope: *const c_char,
}
/// OUTLIVE_TASK_OPTIONS_INIT
pub const OUTLIVE_TASK_OPTIONS_INIT: outlive_task_options = outlive_task_options {
    version: OUTLIVE_TASK_OPTIONS_VERSION,
    queue: core::ptr::null(),
    priority: 0,
    due_at: 0.0,
    delay_seconds: 0.0,
    unique_key: core::ptr::null(),
    result_signal: core::ptr::null(),
    group_start: core::ptr::null(),
    group_members: core::ptr::null(),
    group_member_count: 0,
    result_consumer: core::ptr::null(),
    result_delivery: 0,
    result_lifetime: 0,
    result_scope: core::ptr::null(),
};

pub const OUTLIVE_QUEUE_MAX_LIMIT: usize = 1024;

pub const OUTLIVE_TASK_POLICY_VERSION: u32 = 1;
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct outlive_task_policy {
    pub version: u32,
    pub initial_backoff: f64,
    pub max_backoff: f64,
    pub max_attempts: u32,
    pub timeout: f64,
    pub max_age: f64,
}
/// OUTLIVE_TASK_POLICY_INIT
pub const OUTLIVE_TASK_POLICY_INIT: outlive_task_policy = outlive_task_policy {
    version: OUTLIVE_TASK_POLICY_VERSION,
    initial_backoff: 1.0,
    max_backoff: 3600.0,
    max_attempts: 20,
    timeout: 60.0,
    max_age: 259200.0,
};

pub type outlive_task_state = c_int;
pub const OUTLIVE_TASK_PENDING: outlive_task_state = 1;
pub const OUTLIVE_TASK_RUNNING: outlive_task_state = 2;
pub const OUTLIVE_TASK_DEAD: outlive_task_state = 3;

// ── schedules ───────────────────────────────────────────────────────────────

pub const OUTLIVE_SCHEDULE_MAX_NAME_SIZE: usize = 128;
pub const OUTLIVE_SCHEDULE_MAX_CRON_SIZE: usize = 256;
pub const OUTLIVE_SCHEDULE_MIN_INTERVAL: f64 = 0.01;
pub const OUTLIVE_SCHEDULE_MAX_INTERVAL: f64 = 1e9;

pub const OUTLIVE_SCHEDULE_PERIOD_VERSION: u32 = 1;
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct outlive_schedule_period {
    pub version: u32,
    pub interval_seconds: f64,
    pub cron: *const c_char,
}
/// OUTLIVE_SCHEDULE_PERIOD_INIT
pub const OUTLIVE_SCHEDULE_PERIOD_INIT: outlive_schedule_period = outlive_schedule_period {
    version: OUTLIVE_SCHEDULE_PERIOD_VERSION,
    interval_seconds: 0.0,
    cron: core::ptr::null(),
};

// ── signals ─────────────────────────────────────────────────────────────────

pub const OUTLIVE_SIGNAL_MAX_SCOPE_SIZE: usize = 1024;

// ── messages ────────────────────────────────────────────────────────────────

pub type outlive_choice_kind = c_int;
pub const OUTLIVE_CHOICE_REGULAR: outlive_choice_kind = 1;
pub const OUTLIVE_CHOICE_CANCEL: outlive_choice_kind = 2;
pub const OUTLIVE_CHOICE_DESTRUCTIVE: outlive_choice_kind = 3;
pub const OUTLIVE_CHOICE_DEFAULT: outlive_choice_kind = 4;

pub type outlive_presentation_result = c_int;
pub const OUTLIVE_PRESENTATION_PRESENTED: outlive_presentation_result = 1;
pub const OUTLIVE_PRESENTATION_NOT_PRESENTED: outlive_presentation_result = 2;

pub const OUTLIVE_MESSAGE_MAX_CATEGORY_SIZE: usize = 255;
pub const OUTLIVE_MESSAGE_MAX_TITLE_SIZE: usize = 64 * 1024;
pub const OUTLIVE_MESSAGE_MAX_TEXT_SIZE: usize = 1024 * 1024;
pub const OUTLIVE_MESSAGE_MAX_SCOPE_SIZE: usize = 255;
pub const OUTLIVE_MESSAGE_MAX_THREAD_SIZE: usize = 255;
pub const OUTLIVE_MESSAGE_MAX_CHOICE_ID_SIZE: usize = 63;
pub const OUTLIVE_MESSAGE_CHOICE_ID_SIZE: usize = OUTLIVE_MESSAGE_MAX_CHOICE_ID_SIZE + 1;
pub const OUTLIVE_MESSAGE_MAX_CHOICE_LABEL_SIZE: usize = 4096;
pub const OUTLIVE_MESSAGE_MAX_CHOICES: usize = 64;
pub const OUTLIVE_MESSAGE_MAX_CALLBACK_ID_SIZE: usize = 255;
pub const OUTLIVE_MESSAGES_DEFAULT_CATEGORY_LIMIT: usize = 10000;

pub const OUTLIVE_PRIORITY_WONT_PRESENT: i32 = 0;
pub const OUTLIVE_PRIORITY_LOW: i32 = 100;
pub const OUTLIVE_PRIORITY_DEFAULT: i32 = 200;
pub const OUTLIVE_PRIORITY_HIGH: i32 = 300;

pub const OUTLIVE_PRESENTER_VERSION: u32 = 1;
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct outlive_presenter {
    pub version: u32,
    pub priority: Option<unsafe extern "C" fn(message: *const outlive_message, context: *mut c_void) -> i32>,
    pub present: Option<
        unsafe extern "C" fn(
            message: *const outlive_message,
            presentation: *mut outlive_presentation,
            context: *mut c_void,
        ),
    >,
    pub end: Option<unsafe extern "C" fn(message: *const outlive_message, context: *mut c_void)>,
}
/// OUTLIVE_PRESENTER_INIT
pub const OUTLIVE_PRESENTER_INIT: outlive_presenter =
    outlive_presenter { version: OUTLIVE_PRESENTER_VERSION, priority: None, present: None, end: None };

pub type outlive_response_handler =
    Option<unsafe extern "C" fn(message: *const outlive_message, context: *mut c_void) -> bool>;
pub type outlive_auto_resolver = Option<
    unsafe extern "C" fn(message: *const outlive_message, out_choice_id: *mut c_char, context: *mut c_void) -> bool,
>;

// ── interactions ────────────────────────────────────────────────────────────

pub type outlive_interaction_fn =
    Option<unsafe extern "C" fn(interaction: *mut outlive_interaction, context: *mut c_void)>;
pub type outlive_interaction_stall_fn =
    Option<unsafe extern "C" fn(stalled: *mut outlive_interaction, seconds: f64, context: *mut c_void)>;

/// OUTLIVE_DURABLE_INTERACTION_FINISH, with its NUL.
pub const OUTLIVE_DURABLE_INTERACTION_FINISH: &core::ffi::CStr = c"outlive.durable_interaction.finish";
pub const OUTLIVE_DURABLE_INTERACTIONS_MAX_NAME_SIZE: usize = 255;
pub const OUTLIVE_DURABLE_INTERACTIONS_SUSPENDED: u32 = 1;

// ── operations ──────────────────────────────────────────────────────────────

pub type outlive_operation_state = c_int;
pub const OUTLIVE_OPERATION_NEW: outlive_operation_state = 0;
pub const OUTLIVE_OPERATION_WAITING: outlive_operation_state = 1;
pub const OUTLIVE_OPERATION_EXECUTING: outlive_operation_state = 2;
pub const OUTLIVE_OPERATION_FINISHED: outlive_operation_state = 3;

pub type outlive_operation_fn = Option<unsafe extern "C" fn(operation: *mut outlive_operation, context: *mut c_void)>;
pub type outlive_operation_completion_fn =
    Option<unsafe extern "C" fn(operation: *mut outlive_operation, cancelled: bool, context: *mut c_void)>;
pub const OUTLIVE_OPERATIONS_UNLIMITED: usize = 0;

/// Header functions this crate does not declare, each with the reason. The
/// header test accepts a missing declaration only when it is listed here.
/// (Empty: every function of the header is declared.)
pub const SKIPPED_FUNCTIONS: &[(&str, &str)] = &[];

// Every function of the header, in the header's order (sections as there).
#[link(name = "outlive")]
extern "C" {
    // ── basics ──
    pub fn outlive_last_error() -> *const c_char;
    pub fn outlive_status_name(status: outlive_status) -> *const c_char;
    pub fn outlive_version() -> *const c_char;
    pub fn outlive_version_number() -> u32;
    pub fn outlive_free(pointer: *mut c_void);
    pub fn outlive_log_set_handler(
        handler: outlive_log_handler,
        level: outlive_log_level,
        context: *mut c_void,
        release: Option<unsafe extern "C" fn(*mut c_void)>,
    ) -> outlive_status;

    // ── values ──
    pub fn outlive_object_bytes(object: *const outlive_object, out_size: *mut usize) -> *const c_void;
    pub fn outlive_object_type(object: *const outlive_object) -> *const c_char;
    pub fn outlive_object_string(object: *const outlive_object) -> *const c_char;
    pub fn outlive_args_new(out: *mut *mut outlive_args) -> outlive_status;
    pub fn outlive_args_copy(args: *const outlive_args, out: *mut *mut outlive_args) -> outlive_status;
    pub fn outlive_args_free(args: *mut outlive_args);
    pub fn outlive_args_set_id(
        args: *mut outlive_args,
        name: *const c_char,
        type_tag: *const c_char,
        bytes: *const c_void,
        size: usize,
    ) -> outlive_status;
    pub fn outlive_args_set_string(args: *mut outlive_args, name: *const c_char, utf8: *const c_char)
        -> outlive_status;
    pub fn outlive_args_set_handler(
        args: *mut outlive_args,
        name: *const c_char,
        handler: *const outlive_handler,
    ) -> outlive_status;
    pub fn outlive_args_set_bool(args: *mut outlive_args, name: *const c_char, value: bool) -> outlive_status;
    pub fn outlive_args_set_int(args: *mut outlive_args, name: *const c_char, value: i32) -> outlive_status;
    pub fn outlive_args_set_double(args: *mut outlive_args, name: *const c_char, value: f64) -> outlive_status;
    pub fn outlive_args_set_integer(args: *mut outlive_args, name: *const c_char, value: i64) -> outlive_status;
    pub fn outlive_args_set_uinteger(args: *mut outlive_args, name: *const c_char, value: u64) -> outlive_status;
    pub fn outlive_args_remove(args: *mut outlive_args, name: *const c_char) -> outlive_status;
    pub fn outlive_args_get_id(
        args: *const outlive_args,
        name: *const c_char,
        out: *mut *const outlive_object,
    ) -> outlive_status;
    pub fn outlive_args_get_string(
        args: *const outlive_args,
        name: *const c_char,
        out: *mut *const c_char,
    ) -> outlive_status;
    pub fn outlive_args_get_handler(
        args: *const outlive_args,
        name: *const c_char,
        out: *mut *const outlive_handler,
    ) -> outlive_status;
    pub fn outlive_args_get_bool(args: *const outlive_args, name: *const c_char, out: *mut bool) -> outlive_status;
    pub fn outlive_args_get_int(args: *const outlive_args, name: *const c_char, out: *mut i32) -> outlive_status;
    pub fn outlive_args_get_double(args: *const outlive_args, name: *const c_char, out: *mut f64) -> outlive_status;
    pub fn outlive_args_get_integer(args: *const outlive_args, name: *const c_char, out: *mut i64) -> outlive_status;
    pub fn outlive_args_get_uinteger(args: *const outlive_args, name: *const c_char, out: *mut u64) -> outlive_status;
    pub fn outlive_args_count(args: *const outlive_args) -> usize;
    pub fn outlive_args_name_at(args: *const outlive_args, index: usize) -> *const c_char;
    pub fn outlive_args_type_at(args: *const outlive_args, index: usize) -> outlive_type;

    // ── loop ──
    pub fn outlive_loop_new(out: *mut *mut outlive_loop) -> outlive_status;
    pub fn outlive_loop_free(loop_: *mut outlive_loop);
    pub fn outlive_loop_fd(loop_: *const outlive_loop) -> c_int;
    pub fn outlive_loop_dispatch(loop_: *mut outlive_loop, timeout_ms: c_int) -> outlive_status;
    pub fn outlive_loop_run_thread(loop_: *mut outlive_loop) -> outlive_status;

    // ── store ──
    pub fn outlive_store_open(
        directory: *const c_char,
        process_name: *const c_char,
        loop_: *mut outlive_loop,
        options: *const outlive_store_options,
        out: *mut *mut outlive_store,
    ) -> outlive_status;
    pub fn outlive_store_close(store: *mut outlive_store);
    pub fn outlive_store_run_id(store: *const outlive_store) -> *const c_char;
    pub fn outlive_store_check(store: *const outlive_store) -> outlive_status;
    pub fn outlive_store_process_name(store: *const outlive_store) -> *const c_char;
    pub fn outlive_store_loop(store: *mut outlive_store) -> *mut outlive_loop;

    // ── key-value ──
    pub fn outlive_kv_set(
        store: *mut outlive_store,
        key: *const c_char,
        bytes: *const c_void,
        size: usize,
    ) -> outlive_status;
    pub fn outlive_kv_get(
        store: *mut outlive_store,
        key: *const c_char,
        out_bytes: *mut *mut c_void,
        out_size: *mut usize,
    ) -> outlive_status;
    pub fn outlive_kv_delete(store: *mut outlive_store, key: *const c_char) -> outlive_status;
    pub fn outlive_kv_value_bytes(value: *const outlive_kv_value, out_size: *mut usize) -> *const c_void;
    pub fn outlive_kv_value_set(value: *mut outlive_kv_value, bytes: *const c_void, size: usize) -> outlive_status;
    pub fn outlive_kv_value_delete(value: *mut outlive_kv_value) -> outlive_status;
    pub fn outlive_kv_update(
        store: *mut outlive_store,
        key: *const c_char,
        modifier: outlive_kv_modifier,
        context: *mut c_void,
    ) -> outlive_status;
    pub fn outlive_kv_observe(
        store: *mut outlive_store,
        key_prefix: *const c_char,
        observer: outlive_kv_observer,
        context: *mut c_void,
        release: Option<unsafe extern "C" fn(*mut c_void)>,
        out_token: *mut u64,
    ) -> outlive_status;
    pub fn outlive_kv_unobserve(store: *mut outlive_store, token: u64) -> outlive_status;
    pub fn outlive_kv_key_list_new(
        store: *mut outlive_store,
        key_prefix: *const c_char,
        after: *const c_char,
        limit: usize,
        out: *mut *mut outlive_kv_key_list,
    ) -> outlive_status;
    pub fn outlive_kv_key_list_count(list: *const outlive_kv_key_list) -> usize;
    pub fn outlive_kv_key_list_key(list: *const outlive_kv_key_list, index: usize) -> *const c_char;
    pub fn outlive_kv_key_list_free(list: *mut outlive_kv_key_list);
    pub fn outlive_kv_count(
        store: *mut outlive_store,
        key_prefix: *const c_char,
        out_count: *mut usize,
    ) -> outlive_status;

    // ── handlers ──
    pub fn outlive_handler_register(
        name: *const c_char,
        signature: *const c_char,
        function: Option<unsafe extern "C" fn()>,
    ) -> outlive_status;
    pub fn outlive_handler_unregister(name: *const c_char) -> outlive_status;
    pub fn outlive_handler_library_load(library_path: *const c_char) -> outlive_status;
    pub fn outlive_handler_resolve(name: *const c_char) -> outlive_status;
    pub fn outlive_handler_new(
        name: *const c_char,
        invalidation_name: *const c_char,
        bound: *const outlive_args,
        out: *mut *mut outlive_handler,
    ) -> outlive_status;
    pub fn outlive_handler_copy(handler: *const outlive_handler, out: *mut *mut outlive_handler) -> outlive_status;
    pub fn outlive_handler_free(handler: *mut outlive_handler);
    pub fn outlive_handler_bind(handler: *mut outlive_handler, more: *const outlive_args) -> outlive_status;
    pub fn outlive_handler_call(handler: *const outlive_handler, call_args: *const outlive_args) -> outlive_status;
    pub fn outlive_handler_call_serialized(
        handler: *const outlive_handler,
        bytes: *const c_void,
        size: usize,
    ) -> outlive_status;
    pub fn outlive_handler_invalidate(handler: *mut outlive_handler, call_args: *const outlive_args) -> outlive_status;
    pub fn outlive_handler_is_invalidated(handler: *const outlive_handler) -> bool;
    pub fn outlive_handler_name(handler: *const outlive_handler) -> *const c_char;
    pub fn outlive_handler_invalidation_name(handler: *const outlive_handler) -> *const c_char;
    pub fn outlive_handler_bound(handler: *const outlive_handler, out: *mut *mut outlive_args) -> outlive_status;
    pub fn outlive_handler_description(handler: *const outlive_handler) -> *const c_char;
    pub fn outlive_handler_serialize(
        handler: *const outlive_handler,
        out_bytes: *mut *mut c_void,
        out_size: *mut usize,
    ) -> outlive_status;
    pub fn outlive_handler_deserialize(
        bytes: *const c_void,
        size: usize,
        out: *mut *mut outlive_handler,
    ) -> outlive_status;

    // ── tasks ──
    pub fn outlive_task_add(
        store: *mut outlive_store,
        work: *const outlive_handler,
        group_start: *const c_char,
        group_members: *const *const c_char,
        group_member_count: usize,
        out_id: *mut c_char,
    ) -> outlive_status;
    pub fn outlive_tasks_add_batch(
        store: *mut outlive_store,
        tasks: *const outlive_task_spec,
        count: usize,
        out_ids: *mut c_char,
    ) -> outlive_status;
    pub fn outlive_task_enqueue(
        store: *mut outlive_store,
        work: *const outlive_handler,
        options: *const outlive_task_options,
        out_id: *mut c_char,
        out_existing: *mut bool,
    ) -> outlive_status;
    pub fn outlive_task_enqueue_serialized(
        store: *mut outlive_store,
        work: *const c_void,
        size: usize,
        options: *const outlive_task_options,
        out_id: *mut c_char,
        out_existing: *mut bool,
    ) -> outlive_status;
    pub fn outlive_queue_declare(
        store: *mut outlive_store,
        name: *const c_char,
        kind: outlive_queue_kind,
    ) -> outlive_status;
    pub fn outlive_queue_serve(store: *mut outlive_store, name: *const c_char, limit: usize) -> outlive_status;
    pub fn outlive_queue_list_new(
        store: *mut outlive_store,
        after: *const c_char,
        limit: usize,
        out: *mut *mut outlive_queue_list,
    ) -> outlive_status;
    pub fn outlive_queue_list_count(list: *const outlive_queue_list) -> usize;
    pub fn outlive_queue_list_name(list: *const outlive_queue_list, index: usize) -> *const c_char;
    pub fn outlive_queue_list_kind(list: *const outlive_queue_list, index: usize) -> outlive_queue_kind;
    pub fn outlive_queue_list_pending(list: *const outlive_queue_list, index: usize) -> usize;
    pub fn outlive_queue_list_running(list: *const outlive_queue_list, index: usize) -> usize;
    pub fn outlive_queue_list_dead(list: *const outlive_queue_list, index: usize) -> usize;
    pub fn outlive_queue_list_free(list: *mut outlive_queue_list);
    pub fn outlive_tasks_run_now(store: *mut outlive_store) -> outlive_status;
    pub fn outlive_tasks_set_triggers(
        store: *mut outlive_store,
        pending_count: usize,
        delay_seconds: f64,
    ) -> outlive_status;
    pub fn outlive_tasks_count(store: *mut outlive_store, out_count: *mut usize) -> outlive_status;
    pub fn outlive_tasks_count_dead(store: *mut outlive_store, out_count: *mut usize) -> outlive_status;
    pub fn outlive_tasks_set_policy(store: *mut outlive_store, policy: *const outlive_task_policy) -> outlive_status;
    pub fn outlive_tasks_set_concurrency(store: *mut outlive_store, max_in_flight: usize) -> outlive_status;
    pub fn outlive_tasks_set_completion_batch(store: *mut outlive_store, max_tasks: usize) -> outlive_status;
    pub fn outlive_task_list_new(
        store: *mut outlive_store,
        after: *const c_char,
        limit: usize,
        out: *mut *mut outlive_task_list,
    ) -> outlive_status;
    pub fn outlive_task_list_count(list: *const outlive_task_list) -> usize;
    pub fn outlive_task_list_id(list: *const outlive_task_list, index: usize) -> *const c_char;
    pub fn outlive_task_list_handler_name(list: *const outlive_task_list, index: usize) -> *const c_char;
    pub fn outlive_task_list_state(list: *const outlive_task_list, index: usize) -> outlive_task_state;
    pub fn outlive_task_list_attempts(list: *const outlive_task_list, index: usize) -> u32;
    pub fn outlive_task_list_last_error(list: *const outlive_task_list, index: usize) -> *const c_char;
    pub fn outlive_task_list_next_attempt(list: *const outlive_task_list, index: usize) -> f64;
    pub fn outlive_task_list_created(list: *const outlive_task_list, index: usize) -> f64;
    pub fn outlive_task_list_group_start(list: *const outlive_task_list, index: usize) -> *const c_char;
    pub fn outlive_task_list_group_member_count(list: *const outlive_task_list, index: usize) -> usize;
    pub fn outlive_task_list_group_member(
        list: *const outlive_task_list,
        index: usize,
        member_index: usize,
    ) -> *const c_char;
    pub fn outlive_task_list_queue(list: *const outlive_task_list, index: usize) -> *const c_char;
    pub fn outlive_task_list_priority(list: *const outlive_task_list, index: usize) -> i32;
    pub fn outlive_task_list_unique_key(list: *const outlive_task_list, index: usize) -> *const c_char;
    pub fn outlive_task_list_cancelled(list: *const outlive_task_list, index: usize) -> bool;
    pub fn outlive_task_list_result_signal(list: *const outlive_task_list, index: usize) -> *const c_char;
    pub fn outlive_task_list_free(list: *mut outlive_task_list);
    pub fn outlive_task_retry(store: *mut outlive_store, task_id: *const c_char) -> outlive_status;
    pub fn outlive_task_delete(store: *mut outlive_store, task_id: *const c_char) -> outlive_status;
    pub fn outlive_task_cancel(
        store: *mut outlive_store,
        task_id: *const c_char,
        out_running: *mut bool,
    ) -> outlive_status;
    pub fn outlive_task_is_cancelled(
        store: *mut outlive_store,
        task_id: *const c_char,
        out_cancelled: *mut bool,
    ) -> outlive_status;

    // ── schedules ──
    pub fn outlive_schedule_set(
        store: *mut outlive_store,
        name: *const c_char,
        work: *const outlive_handler,
        period: *const outlive_schedule_period,
        options: *const outlive_task_options,
        out_next_fire: *mut f64,
    ) -> outlive_status;
    pub fn outlive_schedule_remove(store: *mut outlive_store, name: *const c_char) -> outlive_status;
    pub fn outlive_schedule_list_new(
        store: *mut outlive_store,
        after: *const c_char,
        limit: usize,
        out: *mut *mut outlive_schedule_list,
    ) -> outlive_status;
    pub fn outlive_schedule_list_count(list: *const outlive_schedule_list) -> usize;
    pub fn outlive_schedule_list_name(list: *const outlive_schedule_list, index: usize) -> *const c_char;
    pub fn outlive_schedule_list_handler_name(list: *const outlive_schedule_list, index: usize) -> *const c_char;
    pub fn outlive_schedule_list_interval(list: *const outlive_schedule_list, index: usize) -> f64;
    pub fn outlive_schedule_list_cron(list: *const outlive_schedule_list, index: usize) -> *const c_char;
    pub fn outlive_schedule_list_next_fire(list: *const outlive_schedule_list, index: usize) -> f64;
    pub fn outlive_schedule_list_last_fired(list: *const outlive_schedule_list, index: usize) -> f64;
    pub fn outlive_schedule_list_queue(list: *const outlive_schedule_list, index: usize) -> *const c_char;
    pub fn outlive_schedule_list_priority(list: *const outlive_schedule_list, index: usize) -> i32;
    pub fn outlive_schedule_list_free(list: *mut outlive_schedule_list);

    // ── signals ──
    pub fn outlive_signal_new_id(out_id: *mut c_char);
    pub fn outlive_signal_consume(
        store: *mut outlive_store,
        signal_id: *const c_char,
        handler: *const outlive_handler,
        delivery: outlive_delivery,
        lifetime: outlive_lifetime,
        scope: *const c_char,
        out_consumer_id: *mut c_char,
    ) -> outlive_status;
    pub fn outlive_signal_post(
        store: *mut outlive_store,
        signal_id: *const c_char,
        payload: *const outlive_args,
        terminates_consumers: bool,
    ) -> outlive_status;
    pub fn outlive_signal_consumer_remove(store: *mut outlive_store, consumer_id: *const c_char) -> outlive_status;
    pub fn outlive_signal_consumers_remove_scope(
        store: *mut outlive_store,
        scope: *const c_char,
        out_count: *mut usize,
    ) -> outlive_status;
    pub fn outlive_signal_lookup(
        store: *mut outlive_store,
        signal_id: *const c_char,
        out_version: *mut u64,
        out_consumer_count: *mut usize,
        out_terminated: *mut bool,
    ) -> outlive_status;
    pub fn outlive_signal_list_new(
        store: *mut outlive_store,
        after: *const c_char,
        limit: usize,
        out: *mut *mut outlive_signal_list,
    ) -> outlive_status;
    pub fn outlive_signal_list_count(list: *const outlive_signal_list) -> usize;
    pub fn outlive_signal_list_id(list: *const outlive_signal_list, index: usize) -> *const c_char;
    pub fn outlive_signal_list_version(list: *const outlive_signal_list, index: usize) -> u64;
    pub fn outlive_signal_list_consumer_count(list: *const outlive_signal_list, index: usize) -> usize;
    pub fn outlive_signal_list_terminated(list: *const outlive_signal_list, index: usize) -> bool;
    pub fn outlive_signal_list_free(list: *mut outlive_signal_list);
    pub fn outlive_signal_consumer_list_new(
        store: *mut outlive_store,
        signal_id: *const c_char,
        after: *const c_char,
        limit: usize,
        out: *mut *mut outlive_signal_consumer_list,
    ) -> outlive_status;
    pub fn outlive_signal_consumer_list_count(list: *const outlive_signal_consumer_list) -> usize;
    pub fn outlive_signal_consumer_list_id(list: *const outlive_signal_consumer_list, index: usize) -> *const c_char;
    pub fn outlive_signal_consumer_list_signal_id(
        list: *const outlive_signal_consumer_list,
        index: usize,
    ) -> *const c_char;
    pub fn outlive_signal_consumer_list_handler_name(
        list: *const outlive_signal_consumer_list,
        index: usize,
    ) -> *const c_char;
    pub fn outlive_signal_consumer_list_scope(list: *const outlive_signal_consumer_list, index: usize)
        -> *const c_char;
    pub fn outlive_signal_consumer_list_process(
        list: *const outlive_signal_consumer_list,
        index: usize,
    ) -> *const c_char;
    pub fn outlive_signal_consumer_list_run_id(
        list: *const outlive_signal_consumer_list,
        index: usize,
    ) -> *const c_char;
    pub fn outlive_signal_consumer_list_delivery(
        list: *const outlive_signal_consumer_list,
        index: usize,
    ) -> outlive_delivery;
    pub fn outlive_signal_consumer_list_lifetime(
        list: *const outlive_signal_consumer_list,
        index: usize,
    ) -> outlive_lifetime;
    pub fn outlive_signal_consumer_list_last_version(list: *const outlive_signal_consumer_list, index: usize) -> u64;
    pub fn outlive_signal_consumer_list_delivering_run_id(
        list: *const outlive_signal_consumer_list,
        index: usize,
    ) -> *const c_char;
    pub fn outlive_signal_consumer_list_free(list: *mut outlive_signal_consumer_list);

    // ── messages ──
    pub fn outlive_message_draft_new(
        category: *const c_char,
        title: *const c_char,
        out: *mut *mut outlive_message_draft,
    ) -> outlive_status;
    pub fn outlive_message_draft_free(draft: *mut outlive_message_draft);
    pub fn outlive_message_draft_set_text(draft: *mut outlive_message_draft, text: *const c_char) -> outlive_status;
    pub fn outlive_message_draft_set_scope(
        draft: *mut outlive_message_draft,
        scope_id: *const c_char,
    ) -> outlive_status;
    pub fn outlive_message_draft_set_thread(
        draft: *mut outlive_message_draft,
        thread_id: *const c_char,
    ) -> outlive_status;
    pub fn outlive_message_draft_add_choice(
        draft: *mut outlive_message_draft,
        choice_id: *const c_char,
        label: *const c_char,
        kind: outlive_choice_kind,
    ) -> outlive_status;
    pub fn outlive_message_draft_set_payload(
        draft: *mut outlive_message_draft,
        payload: *const outlive_args,
    ) -> outlive_status;
    pub fn outlive_message_draft_set_response_handler(
        draft: *mut outlive_message_draft,
        handler: *const outlive_handler,
    ) -> outlive_status;
    pub fn outlive_message_draft_set_auto_remove(
        draft: *mut outlive_message_draft,
        auto_remove: bool,
    ) -> outlive_status;
    pub fn outlive_message_post(
        store: *mut outlive_store,
        draft: *const outlive_message_draft,
        out_id: *mut c_char,
    ) -> outlive_status;
    pub fn outlive_message_respond(
        store: *mut outlive_store,
        message_id: *const c_char,
        choice_id: *const c_char,
    ) -> outlive_status;
    pub fn outlive_message_mute(store: *mut outlive_store, message_id: *const c_char) -> outlive_status;
    pub fn outlive_message_remove(store: *mut outlive_store, message_id: *const c_char) -> outlive_status;
    pub fn outlive_messages_remove_scope(
        store: *mut outlive_store,
        scope_id: *const c_char,
        out_count: *mut usize,
    ) -> outlive_status;
    pub fn outlive_message_list_new(
        store: *mut outlive_store,
        scope_id: *const c_char,
        category: *const c_char,
        after: *const c_char,
        limit: usize,
        out: *mut *mut outlive_message_list,
    ) -> outlive_status;
    pub fn outlive_message_list_count(list: *const outlive_message_list) -> usize;
    pub fn outlive_message_list_id(list: *const outlive_message_list, index: usize) -> *const c_char;
    pub fn outlive_message_list_free(list: *mut outlive_message_list);
    pub fn outlive_messages_count(
        store: *mut outlive_store,
        category: *const c_char,
        out_count: *mut usize,
    ) -> outlive_status;
    pub fn outlive_messages_set_category_limit(store: *mut outlive_store, limit: usize) -> outlive_status;
    pub fn outlive_message_get(
        store: *mut outlive_store,
        message_id: *const c_char,
        out: *mut *mut outlive_message,
    ) -> outlive_status;
    pub fn outlive_message_free(message: *mut outlive_message);
    pub fn outlive_message_id(message: *const outlive_message) -> *const c_char;
    pub fn outlive_message_category(message: *const outlive_message) -> *const c_char;
    pub fn outlive_message_title(message: *const outlive_message) -> *const c_char;
    pub fn outlive_message_text(message: *const outlive_message) -> *const c_char;
    pub fn outlive_message_scope(message: *const outlive_message) -> *const c_char;
    pub fn outlive_message_thread(message: *const outlive_message) -> *const c_char;
    pub fn outlive_message_choice(message: *const outlive_message) -> *const c_char;
    pub fn outlive_message_payload(message: *const outlive_message) -> *const outlive_args;
    pub fn outlive_message_date(message: *const outlive_message) -> f64;
    pub fn outlive_message_choice_count(message: *const outlive_message) -> usize;
    pub fn outlive_message_choice_at(
        message: *const outlive_message,
        index: usize,
        out_choice_id: *mut *const c_char,
        out_label: *mut *const c_char,
        out_kind: *mut outlive_choice_kind,
    ) -> outlive_status;
    pub fn outlive_message_is_presented(message: *const outlive_message) -> bool;
    pub fn outlive_message_is_handled(message: *const outlive_message) -> bool;
    pub fn outlive_message_is_removed(message: *const outlive_message) -> bool;
    pub fn outlive_message_auto_removes(message: *const outlive_message) -> bool;
    pub fn outlive_message_has_response_handler(message: *const outlive_message) -> bool;
    pub fn outlive_presenter_add(
        store: *mut outlive_store,
        presenter_id: *const c_char,
        callbacks: *const outlive_presenter,
        context: *mut c_void,
        release: Option<unsafe extern "C" fn(*mut c_void)>,
    ) -> outlive_status;
    pub fn outlive_presenter_remove(store: *mut outlive_store, presenter_id: *const c_char) -> outlive_status;
    pub fn outlive_presenter_reoffer(store: *mut outlive_store, presenter_id: *const c_char) -> outlive_status;
    pub fn outlive_presentation_finish(
        presentation: *mut outlive_presentation,
        result: outlive_presentation_result,
        requires_end_notification: bool,
        choice_id: *const c_char,
    ) -> outlive_status;
    pub fn outlive_response_handler_add(
        store: *mut outlive_store,
        id: *const c_char,
        handler: outlive_response_handler,
        context: *mut c_void,
        release: Option<unsafe extern "C" fn(*mut c_void)>,
    ) -> outlive_status;
    pub fn outlive_response_handler_remove(store: *mut outlive_store, id: *const c_char) -> outlive_status;
    pub fn outlive_auto_resolver_add(
        store: *mut outlive_store,
        id: *const c_char,
        resolver: outlive_auto_resolver,
        context: *mut c_void,
        release: Option<unsafe extern "C" fn(*mut c_void)>,
    ) -> outlive_status;
    pub fn outlive_auto_resolver_remove(store: *mut outlive_store, id: *const c_char) -> outlive_status;

    // ── interactions ──
    pub fn outlive_interactions_new(loop_: *mut outlive_loop, out: *mut *mut outlive_interactions) -> outlive_status;
    pub fn outlive_interactions_free(queue: *mut outlive_interactions);
    pub fn outlive_interactions_add(
        queue: *mut outlive_interactions,
        run: outlive_interaction_fn,
        context: *mut c_void,
        release: Option<unsafe extern "C" fn(*mut c_void)>,
    ) -> outlive_status;
    pub fn outlive_interactions_suspend(queue: *mut outlive_interactions) -> outlive_status;
    pub fn outlive_interactions_resume(queue: *mut outlive_interactions) -> outlive_status;
    pub fn outlive_interaction_finish(interaction: *mut outlive_interaction) -> outlive_status;
    pub fn outlive_interactions_unfinished(queue: *const outlive_interactions) -> usize;
    pub fn outlive_interactions_set_stall_report(
        queue: *mut outlive_interactions,
        seconds: f64,
        report: outlive_interaction_stall_fn,
        context: *mut c_void,
        release: Option<unsafe extern "C" fn(*mut c_void)>,
    ) -> outlive_status;
    pub fn outlive_durable_interactions_open(
        store: *mut outlive_store,
        queue_name: *const c_char,
        flags: u32,
        out: *mut *mut outlive_durable_interactions,
    ) -> outlive_status;
    pub fn outlive_durable_interactions_free(queue: *mut outlive_durable_interactions);
    pub fn outlive_durable_interactions_add(
        queue: *mut outlive_durable_interactions,
        interaction: *const outlive_handler,
        out_id: *mut c_char,
    ) -> outlive_status;
    pub fn outlive_durable_interactions_suspend(queue: *mut outlive_durable_interactions) -> outlive_status;
    pub fn outlive_durable_interactions_resume(queue: *mut outlive_durable_interactions) -> outlive_status;
    pub fn outlive_durable_interactions_count(
        queue: *mut outlive_durable_interactions,
        out_count: *mut usize,
    ) -> outlive_status;
    pub fn outlive_durable_interaction_list_new(
        queue: *mut outlive_durable_interactions,
        after: *const c_char,
        limit: usize,
        out: *mut *mut outlive_durable_interaction_list,
    ) -> outlive_status;
    pub fn outlive_durable_interaction_list_count(list: *const outlive_durable_interaction_list) -> usize;
    pub fn outlive_durable_interaction_list_id(
        list: *const outlive_durable_interaction_list,
        index: usize,
    ) -> *const c_char;
    pub fn outlive_durable_interaction_list_handler_name(
        list: *const outlive_durable_interaction_list,
        index: usize,
    ) -> *const c_char;
    pub fn outlive_durable_interaction_list_presentations(
        list: *const outlive_durable_interaction_list,
        index: usize,
    ) -> u32;
    pub fn outlive_durable_interaction_list_free(list: *mut outlive_durable_interaction_list);
    pub fn outlive_durable_interactions_remove(
        queue: *mut outlive_durable_interactions,
        interaction_id: *const c_char,
    ) -> outlive_status;

    // ── operations ──
    pub fn outlive_operations_new(
        loop_: *mut outlive_loop,
        max_unfinished: usize,
        out: *mut *mut outlive_operations,
    ) -> outlive_status;
    pub fn outlive_operations_free(queue: *mut outlive_operations);
    pub fn outlive_operation_new(
        run: outlive_operation_fn,
        context: *mut c_void,
        release: Option<unsafe extern "C" fn(*mut c_void)>,
        out: *mut *mut outlive_operation,
    ) -> outlive_status;
    pub fn outlive_operation_retain(operation: *mut outlive_operation) -> *mut outlive_operation;
    pub fn outlive_operation_free(operation: *mut outlive_operation);
    pub fn outlive_operation_set_completion(
        operation: *mut outlive_operation,
        completion: outlive_operation_completion_fn,
        context: *mut c_void,
        release: Option<unsafe extern "C" fn(*mut c_void)>,
    ) -> outlive_status;
    pub fn outlive_operation_add_dependency(
        operation: *mut outlive_operation,
        dependency: *mut outlive_operation,
    ) -> outlive_status;
    pub fn outlive_operations_add(queue: *mut outlive_operations, operation: *mut outlive_operation) -> outlive_status;
    pub fn outlive_operation_finish(operation: *mut outlive_operation) -> outlive_status;
    pub fn outlive_operation_cancel(operation: *mut outlive_operation) -> outlive_status;
    pub fn outlive_operation_is_cancelled(operation: *const outlive_operation) -> bool;
    pub fn outlive_operation_get_state(operation: *const outlive_operation) -> outlive_operation_state;
    pub fn outlive_operation_dependency_count(operation: *const outlive_operation) -> usize;
    pub fn outlive_operation_dependency(operation: *const outlive_operation, index: usize) -> *mut outlive_operation;
    pub fn outlive_operations_cancel_all(queue: *mut outlive_operations) -> outlive_status;
    pub fn outlive_operations_unfinished(queue: *const outlive_operations) -> usize;
    pub fn outlive_operations_set_drained(
        queue: *mut outlive_operations,
        drained: Option<unsafe extern "C" fn(*mut c_void)>,
        context: *mut c_void,
        release: Option<unsafe extern "C" fn(*mut c_void)>,
    ) -> outlive_status;
}
