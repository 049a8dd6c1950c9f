"""Every C function the package calls, with its argtypes and restype, declared
once. A symbol missing from the loaded library fails the import loudly."""
import ctypes
from ctypes import (CFUNCTYPE, POINTER, c_bool, c_char_p, c_double, c_int, c_int32, c_int64, c_size_t, c_uint32,
                    c_uint64, c_void_p)

from . import _library

lib = _library.load()

status = c_int
# OUTLIVE_ID_SIZE: an id's 36 characters and the NUL (checked against the header by the tests).
ID_SIZE = 37
# OUTLIVE_DURABLE_INTERACTIONS_SUSPENDED, the flag of outlive_durable_interactions_open.
DURABLE_INTERACTIONS_SUSPENDED = 1
KV_MODIFIER = CFUNCTYPE(c_int, c_void_p, c_void_p)
KV_OBSERVER = CFUNCTYPE(None, c_char_p, c_void_p, c_size_t, c_void_p)
RELEASE = CFUNCTYPE(None, c_void_p)
LOG_HANDLER = CFUNCTYPE(None, c_int, c_char_p, c_void_p)
INTERACTION_FN = CFUNCTYPE(None, c_void_p, c_void_p)
STALL_FN = CFUNCTYPE(None, c_void_p, c_double, c_void_p)
OPERATION_FN = CFUNCTYPE(None, c_void_p, c_void_p)
COMPLETION_FN = CFUNCTYPE(None, c_void_p, c_bool, c_void_p)
DRAINED_FN = CFUNCTYPE(None, c_void_p)
PRIORITY_FN = CFUNCTYPE(c_int32, c_void_p, c_void_p)
PRESENT_FN = CFUNCTYPE(None, c_void_p, c_void_p, c_void_p)
END_FN = CFUNCTYPE(None, c_void_p, c_void_p)
RESPONSE_FN = CFUNCTYPE(c_bool, c_void_p, c_void_p)
AUTO_RESOLVER_FN = CFUNCTYPE(c_bool, c_void_p, c_void_p, c_void_p)


class TaskSpec(ctypes.Structure):
    _fields_ = [("version", c_uint32), ("work", c_void_p), ("group_start", c_char_p),
                ("group_members", POINTER(c_char_p)), ("group_member_count", c_size_t)]


class TaskPolicy(ctypes.Structure):
    _fields_ = [("version", c_uint32), ("initial_backoff", c_double), ("max_backoff", c_double),
                ("max_attempts", c_uint32), ("timeout", c_double), ("max_age", c_double)]


class Presenter(ctypes.Structure):
    _fields_ = [("version", c_uint32), ("priority", PRIORITY_FN), ("present", PRESENT_FN), ("end", END_FN)]


class StoreOptions(ctypes.Structure):
    _fields_ = [("version", c_uint32), ("durability", c_int), ("busy_timeout_ms", c_int32)]


_DECLARATIONS = {
    # basics
    "outlive_last_error": (c_char_p, []),
    "outlive_status_name": (c_char_p, [c_int]),
    "outlive_version": (c_char_p, []),
    "outlive_version_number": (c_uint32, []),
    "outlive_free": (None, [c_void_p]),
    "outlive_log_set_handler": (status, [LOG_HANDLER, c_int, c_void_p, RELEASE]),
    # loop
    "outlive_loop_new": (status, [POINTER(c_void_p)]),
    "outlive_loop_free": (None, [c_void_p]),
    "outlive_loop_fd": (c_int, [c_void_p]),
    "outlive_loop_dispatch": (status, [c_void_p, c_int]),
    "outlive_loop_run_thread": (status, [c_void_p]),
    # store
    "outlive_store_open": (status, [c_char_p, c_char_p, c_void_p, POINTER(StoreOptions), POINTER(c_void_p)]),
    "outlive_store_close": (None, [c_void_p]),
    "outlive_store_run_id": (c_char_p, [c_void_p]),
    "outlive_store_process_name": (c_char_p, [c_void_p]),
    "outlive_store_loop": (c_void_p, [c_void_p]),
    # key-value
    "outlive_kv_set": (status, [c_void_p, c_char_p, c_void_p, c_size_t]),
    "outlive_kv_get": (status, [c_void_p, c_char_p, POINTER(c_void_p), POINTER(c_size_t)]),
    "outlive_kv_delete": (status, [c_void_p, c_char_p]),
    "outlive_kv_value_bytes": (c_void_p, [c_void_p, POINTER(c_size_t)]),
    "outlive_kv_value_set": (status, [c_void_p, c_void_p, c_size_t]),
    "outlive_kv_value_delete": (status, [c_void_p]),
    "outlive_kv_update": (status, [c_void_p, c_char_p, KV_MODIFIER, c_void_p]),
    "outlive_kv_observe": (status, [c_void_p, c_char_p, KV_OBSERVER, c_void_p, RELEASE, POINTER(c_uint64)]),
    "outlive_kv_unobserve": (status, [c_void_p, c_uint64]),
    "outlive_kv_key_list_new": (status, [c_void_p, c_char_p, c_char_p, c_size_t, POINTER(c_void_p)]),
    "outlive_kv_key_list_count": (c_size_t, [c_void_p]),
    "outlive_kv_key_list_key": (c_char_p, [c_void_p, c_size_t]),
    "outlive_kv_key_list_free": (None, [c_void_p]),
    "outlive_kv_count": (status, [c_void_p, c_char_p, POINTER(c_size_t)]),
    # values
    "outlive_object_bytes": (c_void_p, [c_void_p, POINTER(c_size_t)]),
    "outlive_object_type": (c_char_p, [c_void_p]),
    "outlive_object_string": (c_char_p, [c_void_p]),
    "outlive_args_new": (status, [POINTER(c_void_p)]),
    "outlive_args_copy": (status, [c_void_p, POINTER(c_void_p)]),
    "outlive_args_free": (None, [c_void_p]),
    "outlive_args_set_id": (status, [c_void_p, c_char_p, c_char_p, c_void_p, c_size_t]),
    "outlive_args_set_string": (status, [c_void_p, c_char_p, c_char_p]),
    "outlive_args_set_handler": (status, [c_void_p, c_char_p, c_void_p]),
    "outlive_args_set_bool": (status, [c_void_p, c_char_p, c_bool]),
    "outlive_args_set_int": (status, [c_void_p, c_char_p, c_int32]),
    "outlive_args_set_double": (status, [c_void_p, c_char_p, c_double]),
    "outlive_args_set_integer": (status, [c_void_p, c_char_p, c_int64]),
    "outlive_args_set_uinteger": (status, [c_void_p, c_char_p, c_uint64]),
    "outlive_args_remove": (status, [c_void_p, c_char_p]),
    "outlive_args_get_id": (status, [c_void_p, c_char_p, POINTER(c_void_p)]),
    "outlive_args_get_handler": (status, [c_void_p, c_char_p, POINTER(c_void_p)]),
    "outlive_args_get_bool": (status, [c_void_p, c_char_p, POINTER(c_bool)]),
    "outlive_args_get_int": (status, [c_void_p, c_char_p, POINTER(c_int32)]),
    "outlive_args_get_double": (status, [c_void_p, c_char_p, POINTER(c_double)]),
    "outlive_args_get_integer": (status, [c_void_p, c_char_p, POINTER(c_int64)]),
    "outlive_args_get_uinteger": (status, [c_void_p, c_char_p, POINTER(c_uint64)]),
    "outlive_args_count": (c_size_t, [c_void_p]),
    "outlive_args_name_at": (c_char_p, [c_void_p, c_size_t]),
    "outlive_args_type_at": (c_int, [c_void_p, c_size_t]),
    # interactions
    "outlive_interactions_new": (status, [c_void_p, POINTER(c_void_p)]),
    "outlive_interactions_free": (None, [c_void_p]),
    "outlive_interactions_add": (status, [c_void_p, INTERACTION_FN, c_void_p, RELEASE]),
    "outlive_interactions_suspend": (status, [c_void_p]),
    "outlive_interactions_resume": (status, [c_void_p]),
    "outlive_interaction_finish": (status, [c_void_p]),
    "outlive_interactions_unfinished": (c_size_t, [c_void_p]),
    "outlive_interactions_set_stall_report": (status, [c_void_p, c_double, STALL_FN, c_void_p, RELEASE]),
    "outlive_durable_interactions_open": (status, [c_void_p, c_char_p, c_uint32, POINTER(c_void_p)]),
    "outlive_durable_interactions_free": (None, [c_void_p]),
    "outlive_durable_interactions_add": (status, [c_void_p, c_void_p, c_char_p]),
    "outlive_durable_interactions_suspend": (status, [c_void_p]),
    "outlive_durable_interactions_resume": (status, [c_void_p]),
    "outlive_durable_interactions_count": (status, [c_void_p, POINTER(c_size_t)]),
    "outlive_durable_interaction_list_new": (status, [c_void_p, c_char_p, c_size_t, POINTER(c_void_p)]),
    "outlive_durable_interaction_list_count": (c_size_t, [c_void_p]),
    "outlive_durable_interaction_list_id": (c_char_p, [c_void_p, c_size_t]),
    "outlive_durable_interaction_list_handler_name": (c_char_p, [c_void_p, c_size_t]),
    "outlive_durable_interaction_list_presentations": (c_uint32, [c_void_p, c_size_t]),
    "outlive_durable_interaction_list_free": (None, [c_void_p]),
    "outlive_durable_interactions_remove": (status, [c_void_p, c_char_p]),
    # operations
    "outlive_operations_new": (status, [c_void_p, c_size_t, POINTER(c_void_p)]),
    "outlive_operations_free": (None, [c_void_p]),
    "outlive_operation_new": (status, [OPERATION_FN, c_void_p, RELEASE, POINTER(c_void_p)]),
    "outlive_operation_free": (None, [c_void_p]),
    "outlive_operation_set_completion": (status, [c_void_p, COMPLETION_FN, c_void_p, RELEASE]),
    "outlive_operation_add_dependency": (status, [c_void_p, c_void_p]),
    "outlive_operations_add": (status, [c_void_p, c_void_p]),
    "outlive_operation_finish": (status, [c_void_p]),
    "outlive_operation_cancel": (status, [c_void_p]),
    "outlive_operation_is_cancelled": (c_bool, [c_void_p]),
    "outlive_operation_get_state": (c_int, [c_void_p]),
    "outlive_operations_cancel_all": (status, [c_void_p]),
    "outlive_operations_unfinished": (c_size_t, [c_void_p]),
    "outlive_operations_set_drained": (status, [c_void_p, DRAINED_FN, c_void_p, RELEASE]),
    # tasks
    "outlive_task_add": (status, [c_void_p, c_void_p, c_char_p, POINTER(c_char_p), c_size_t, c_char_p]),
    "outlive_tasks_add_batch": (status, [c_void_p, POINTER(TaskSpec), c_size_t, c_char_p]),
    "outlive_tasks_run_now": (status, [c_void_p]),
    "outlive_tasks_set_triggers": (status, [c_void_p, c_size_t, c_double]),
    "outlive_tasks_count": (status, [c_void_p, POINTER(c_size_t)]),
    "outlive_tasks_count_dead": (status, [c_void_p, POINTER(c_size_t)]),
    "outlive_tasks_set_policy": (status, [c_void_p, POINTER(TaskPolicy)]),
    "outlive_tasks_set_concurrency": (status, [c_void_p, c_size_t]),
    "outlive_task_list_new": (status, [c_void_p, c_char_p, c_size_t, POINTER(c_void_p)]),
    "outlive_task_list_count": (c_size_t, [c_void_p]),
    "outlive_task_list_id": (c_char_p, [c_void_p, c_size_t]),
    "outlive_task_list_handler_name": (c_char_p, [c_void_p, c_size_t]),
    "outlive_task_list_state": (c_int, [c_void_p, c_size_t]),
    "outlive_task_list_attempts": (c_uint32, [c_void_p, c_size_t]),
    "outlive_task_list_last_error": (c_char_p, [c_void_p, c_size_t]),
    "outlive_task_list_next_attempt": (c_double, [c_void_p, c_size_t]),
    "outlive_task_list_created": (c_double, [c_void_p, c_size_t]),
    "outlive_task_list_group_start": (c_char_p, [c_void_p, c_size_t]),
    "outlive_task_list_group_member_count": (c_size_t, [c_void_p, c_size_t]),
    "outlive_task_list_group_member": (c_char_p, [c_void_p, c_size_t, c_size_t]),
    "outlive_task_list_free": (None, [c_void_p]),
    "outlive_task_retry": (status, [c_void_p, c_char_p]),
    "outlive_task_delete": (status, [c_void_p, c_char_p]),
    # signals
    "outlive_signal_new_id": (None, [c_char_p]),
    "outlive_signal_consume": (status, [c_void_p, c_char_p, c_void_p, c_int, c_int, c_char_p, c_char_p]),
    "outlive_signal_post": (status, [c_void_p, c_char_p, c_void_p, c_bool]),
    "outlive_signal_consumer_remove": (status, [c_void_p, c_char_p]),
    "outlive_signal_consumers_remove_scope": (status, [c_void_p, c_char_p, POINTER(c_size_t)]),
    "outlive_signal_lookup": (status, [c_void_p, c_char_p, POINTER(c_uint64), POINTER(c_size_t), POINTER(c_bool)]),
    "outlive_signal_consumer_list_new": (status, [c_void_p, c_char_p, c_char_p, c_size_t, POINTER(c_void_p)]),
    "outlive_signal_consumer_list_count": (c_size_t, [c_void_p]),
    "outlive_signal_consumer_list_id": (c_char_p, [c_void_p, c_size_t]),
    "outlive_signal_consumer_list_signal_id": (c_char_p, [c_void_p, c_size_t]),
    "outlive_signal_consumer_list_handler_name": (c_char_p, [c_void_p, c_size_t]),
    "outlive_signal_consumer_list_scope": (c_char_p, [c_void_p, c_size_t]),
    "outlive_signal_consumer_list_process": (c_char_p, [c_void_p, c_size_t]),
    "outlive_signal_consumer_list_delivery": (c_int, [c_void_p, c_size_t]),
    "outlive_signal_consumer_list_lifetime": (c_int, [c_void_p, c_size_t]),
    "outlive_signal_consumer_list_last_version": (c_uint64, [c_void_p, c_size_t]),
    "outlive_signal_consumer_list_free": (None, [c_void_p]),
    # messages
    "outlive_message_draft_new": (status, [c_char_p, c_char_p, POINTER(c_void_p)]),
    "outlive_message_draft_free": (None, [c_void_p]),
    "outlive_message_draft_set_text": (status, [c_void_p, c_char_p]),
    "outlive_message_draft_set_scope": (status, [c_void_p, c_char_p]),
    "outlive_message_draft_set_thread": (status, [c_void_p, c_char_p]),
    "outlive_message_draft_add_choice": (status, [c_void_p, c_char_p, c_char_p, c_int]),
    "outlive_message_draft_set_payload": (status, [c_void_p, c_void_p]),
    "outlive_message_draft_set_response_handler": (status, [c_void_p, c_void_p]),
    "outlive_message_draft_set_auto_remove": (status, [c_void_p, c_bool]),
    "outlive_message_post": (status, [c_void_p, c_void_p, c_char_p]),
    "outlive_message_respond": (status, [c_void_p, c_char_p, c_char_p]),
    "outlive_message_mute": (status, [c_void_p, c_char_p]),
    "outlive_message_remove": (status, [c_void_p, c_char_p]),
    "outlive_messages_remove_scope": (status, [c_void_p, c_char_p, POINTER(c_size_t)]),
    "outlive_message_list_new": (status, [c_void_p, c_char_p, c_char_p, c_char_p, c_size_t, POINTER(c_void_p)]),
    "outlive_message_list_count": (c_size_t, [c_void_p]),
    "outlive_message_list_id": (c_char_p, [c_void_p, c_size_t]),
    "outlive_message_list_free": (None, [c_void_p]),
    "outlive_messages_count": (status, [c_void_p, c_char_p, POINTER(c_size_t)]),
    "outlive_messages_set_category_limit": (status, [c_void_p, c_size_t]),
    "outlive_message_get": (status, [c_void_p, c_char_p, POINTER(c_void_p)]),
    "outlive_message_free": (None, [c_void_p]),
    "outlive_message_id": (c_char_p, [c_void_p]),
    "outlive_message_category": (c_char_p, [c_void_p]),
    "outlive_message_title": (c_char_p, [c_void_p]),
    "outlive_message_text": (c_char_p, [c_void_p]),
    "outlive_message_scope": (c_char_p, [c_void_p]),
    "outlive_message_thread": (c_char_p, [c_void_p]),
    "outlive_message_choice": (c_char_p, [c_void_p]),
    "outlive_message_payload": (c_void_p, [c_void_p]),
    "outlive_message_date": (c_double, [c_void_p]),
    "outlive_message_choice_count": (c_size_t, [c_void_p]),
    "outlive_message_choice_at": (status, [c_void_p, c_size_t, POINTER(c_char_p), POINTER(c_char_p), POINTER(c_int)]),
    "outlive_message_is_presented": (c_bool, [c_void_p]),
    "outlive_message_is_handled": (c_bool, [c_void_p]),
    "outlive_message_is_removed": (c_bool, [c_void_p]),
    "outlive_message_auto_removes": (c_bool, [c_void_p]),
    "outlive_message_has_response_handler": (c_bool, [c_void_p]),
    "outlive_presenter_add": (status, [c_void_p, c_char_p, POINTER(Presenter), c_void_p, RELEASE]),
    "outlive_presenter_remove": (status, [c_void_p, c_char_p]),
    "outlive_presenter_reoffer": (status, [c_void_p, c_char_p]),
    "outlive_presentation_finish": (status, [c_void_p, c_int, c_bool, c_char_p]),
    "outlive_response_handler_add": (status, [c_void_p, c_char_p, RESPONSE_FN, c_void_p, RELEASE]),
    "outlive_response_handler_remove": (status, [c_void_p, c_char_p]),
    "outlive_auto_resolver_add": (status, [c_void_p, c_char_p, AUTO_RESOLVER_FN, c_void_p, RELEASE]),
    "outlive_auto_resolver_remove": (status, [c_void_p, c_char_p]),
    # handlers
    "outlive_handler_register": (status, [c_char_p, c_char_p, c_void_p]),
    "outlive_handler_unregister": (status, [c_char_p]),
    "outlive_handler_library_load": (status, [c_char_p]),
    "outlive_handler_resolve": (status, [c_char_p]),
    "outlive_handler_new": (status, [c_char_p, c_char_p, c_void_p, POINTER(c_void_p)]),
    "outlive_handler_copy": (status, [c_void_p, POINTER(c_void_p)]),
    "outlive_handler_free": (None, [c_void_p]),
    "outlive_handler_bind": (status, [c_void_p, c_void_p]),
    "outlive_handler_call": (status, [c_void_p, c_void_p]),
    "outlive_handler_invalidate": (status, [c_void_p, c_void_p]),
    "outlive_handler_is_invalidated": (c_bool, [c_void_p]),
    "outlive_handler_name": (c_char_p, [c_void_p]),
    "outlive_handler_invalidation_name": (c_char_p, [c_void_p]),
    "outlive_handler_bound": (status, [c_void_p, POINTER(c_void_p)]),
    "outlive_handler_description": (c_char_p, [c_void_p]),
    "outlive_handler_serialize": (status, [c_void_p, POINTER(c_void_p), POINTER(c_size_t)]),
    "outlive_handler_deserialize": (status, [c_void_p, c_size_t, POINTER(c_void_p)]),
}


# Functions of include/outlive.h this package deliberately does not bind, and
# why; tests/test_ffi_declarations.py checks that every header function is
# either declared above or listed here.
SKIPPED = {
    "outlive_args_get_string": "values are read as bytes (outlive_args_get_id) and decoded in Python",
    "outlive_operation_retain": "a Python Operation holds exactly one reference",
    "outlive_operation_dependency": "a Python Operation keeps its own dependency objects",
    "outlive_operation_dependency_count": "a Python Operation keeps its own dependency objects",
    "outlive_signal_consumer_list_run_id": "not exposed by Consumer yet",
    "outlive_signal_consumer_list_delivering_run_id": "not exposed by Consumer yet",
    "outlive_signal_list_new": "signal listing is not exposed in Python yet",
    "outlive_signal_list_count": "signal listing is not exposed in Python yet",
    "outlive_signal_list_id": "signal listing is not exposed in Python yet",
    "outlive_signal_list_version": "signal listing is not exposed in Python yet",
    "outlive_signal_list_consumer_count": "signal listing is not exposed in Python yet",
    "outlive_signal_list_terminated": "signal listing is not exposed in Python yet",
    "outlive_signal_list_free": "signal listing is not exposed in Python yet",
}

# The C struct each ctypes Structure mirrors (layouts checked against the header).
C_STRUCTS = {
    "outlive_task_spec": TaskSpec,
    "outlive_task_policy": TaskPolicy,
    "outlive_presenter": Presenter,
    "outlive_store_options": StoreOptions,
}


def _declare(declarations):
    for name, (restype, argtypes) in declarations.items():
        try:
            function = getattr(lib, name)
        except AttributeError:
            raise ImportError(f"liboutlive lacks {name}: the library is older than this package") from None
        function.restype = restype
        function.argtypes = argtypes
        globals()[name] = function


_declare(_DECLARATIONS)

# Keep the unused imports available to the modules that declare callbacks.
__all__ = ["lib", "c_bool", "c_double", "c_int64", "c_uint64", "c_void_p", "c_char_p", "c_size_t", "c_int32"]
