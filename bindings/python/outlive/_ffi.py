"""Every C function the package calls, with its argtypes and restype, declared
once. A symbol missing from the loaded library fails the import loudly. Each
opaque handle of the header has its own ctypes type (StoreP, LoopP, ...)."""
import ctypes
import os
import typing
from ctypes import (CFUNCTYPE, POINTER, c_bool, c_char_p, c_double, c_int, c_int32, c_int64, c_size_t, c_uint32,
                    c_uint64, c_void_p)

from . import _library

lib = _library.load()

status = c_int


class CallbackType(typing.Protocol):
    """A C function pointer type (CFUNCTYPE): called with a Python function,
    it makes the C callback (a decorator); called with nothing, a NULL one."""

    def __call__(self, function: typing.Callable[..., typing.Any] = ..., /) -> typing.Any: ...


def _callback_type(restype: typing.Any, *argtypes: typing.Any) -> CallbackType:
    """CFUNCTYPE, typed as a decorator for the type checker."""
    return typing.cast(CallbackType, CFUNCTYPE(restype, *argtypes))


class OpaqueHandle(c_void_p):
    """A pointer to one opaque struct of include/outlive.h. Each struct has a
    subclass of its own, and its from_param takes only that subclass or None
    (NULL, which C takes where the header says so and refuses with a status
    elsewhere): a loop where a store is expected, a bare int or a plain c_void_p
    is a ctypes.ArgumentError before C is reached."""
    c_name: typing.Optional[str] = None

    @classmethod
    def from_param(cls, value: typing.Any) -> typing.Any:
        if value is None or isinstance(value, cls):
            return value
        raise TypeError(f"{cls.__name__} ({cls.c_name} *) expected, not {type(value).__name__}")


def _opaque(c_name: str) -> typing.Type[OpaqueHandle]:
    """The handle type of one opaque struct, named after it: outlive_kv_key_list → KvKeyListP."""
    name = "".join(word.capitalize() for word in c_name[len("outlive_"):].split("_")) + "P"
    return type(name, (OpaqueHandle,), {"c_name": c_name, "__module__": __name__, "__doc__": f"A {c_name} *."})


# One handle type per opaque struct of the header (tests/test_ffi_declarations.py
# checks that every one has its type here and that every binding uses it).
ObjectP = _opaque("outlive_object")
ArgsP = _opaque("outlive_args")
HandlerP = _opaque("outlive_handler")
LoopP = _opaque("outlive_loop")
StoreP = _opaque("outlive_store")
KvValueP = _opaque("outlive_kv_value")
KvKeyListP = _opaque("outlive_kv_key_list")
TaskListP = _opaque("outlive_task_list")
QueueListP = _opaque("outlive_queue_list")
ScheduleListP = _opaque("outlive_schedule_list")
SignalListP = _opaque("outlive_signal_list")
SignalConsumerListP = _opaque("outlive_signal_consumer_list")
MessageP = _opaque("outlive_message")
MessageDraftP = _opaque("outlive_message_draft")
PresentationP = _opaque("outlive_presentation")
MessageListP = _opaque("outlive_message_list")
InteractionsP = _opaque("outlive_interactions")
InteractionP = _opaque("outlive_interaction")
DurableInteractionsP = _opaque("outlive_durable_interactions")
DurableInteractionListP = _opaque("outlive_durable_interaction_list")
OperationsP = _opaque("outlive_operations")
OperationP = _opaque("outlive_operation")
HANDLE_TYPES = {handle.c_name: handle for handle in OpaqueHandle.__subclasses__()}

# OUTLIVE_ID_SIZE: an id's 36 characters and the NUL (checked against the header by the tests).
ID_SIZE = 37
# OUTLIVE_DURABLE_INTERACTIONS_SUSPENDED, the flag of outlive_durable_interactions_open.
DURABLE_INTERACTIONS_SUSPENDED = 1
KV_MODIFIER = _callback_type(c_int, KvValueP, c_void_p)
KV_OBSERVER = _callback_type(None, c_char_p, c_void_p, c_size_t, c_void_p)
RELEASE = _callback_type(None, c_void_p)
LOG_HANDLER = _callback_type(None, c_int, c_char_p, c_void_p)
INTERACTION_FN = _callback_type(None, InteractionP, c_void_p)
STALL_FN = _callback_type(None, InteractionP, c_double, c_void_p)
OPERATION_FN = _callback_type(None, OperationP, c_void_p)
COMPLETION_FN = _callback_type(None, OperationP, c_bool, c_void_p)
DRAINED_FN = _callback_type(None, c_void_p)
PRIORITY_FN = _callback_type(c_int32, MessageP, c_void_p)
PRESENT_FN = _callback_type(None, MessageP, PresentationP, c_void_p)
END_FN = _callback_type(None, MessageP, c_void_p)
RESPONSE_FN = _callback_type(c_bool, MessageP, c_void_p)
AUTO_RESOLVER_FN = _callback_type(c_bool, MessageP, c_void_p, c_void_p)


class TaskSpec(ctypes.Structure):
    _fields_ = [("version", c_uint32), ("work", HandlerP), ("group_start", c_char_p),
                ("group_members", POINTER(c_char_p)), ("group_member_count", c_size_t)]


class TaskOptions(ctypes.Structure):
    _fields_ = [("version", c_uint32), ("queue", c_char_p), ("priority", ctypes.c_int32), ("due_at", c_double),
                ("delay_seconds", c_double), ("unique_key", c_char_p), ("result_signal", c_char_p),
                ("group_start", c_char_p), ("group_members", POINTER(c_char_p)), ("group_member_count", c_size_t),
                ("result_consumer", HandlerP), ("result_delivery", c_int), ("result_lifetime", c_int),
                ("result_scope", c_char_p)]


class SchedulePeriod(ctypes.Structure):
    _fields_ = [("version", c_uint32), ("interval_seconds", c_double), ("cron", c_char_p)]


class TaskPolicy(ctypes.Structure):
    _fields_ = [("version", c_uint32), ("initial_backoff", c_double), ("max_backoff", c_double),
                ("max_attempts", c_uint32), ("timeout", c_double), ("max_age", c_double)]


class Presenter(ctypes.Structure):
    _fields_ = typing.cast(typing.Any, [("version", c_uint32), ("priority", PRIORITY_FN), ("present", PRESENT_FN),
                                        ("end", END_FN)])


class StoreOptions(ctypes.Structure):
    _fields_ = [("version", c_uint32), ("durability", c_int), ("busy_timeout_ms", c_int32), ("liveness_seconds", c_int32)]


_DECLARATIONS: typing.Dict[str, typing.Any] = {
    # basics
    "outlive_last_error": (c_char_p, []),
    "outlive_status_name": (c_char_p, [c_int]),
    "outlive_version": (c_char_p, []),
    "outlive_version_number": (c_uint32, []),
    "outlive_free": (None, [c_void_p]),
    "outlive_log_set_handler": (status, [LOG_HANDLER, c_int, c_void_p, RELEASE]),
    # loop
    "outlive_loop_new": (status, [POINTER(LoopP)]),
    "outlive_loop_free": (None, [LoopP]),
    "outlive_loop_fd": (c_int, [LoopP]),
    "outlive_loop_dispatch": (status, [LoopP, c_int]),
    "outlive_loop_run_thread": (status, [LoopP]),
    # store
    "outlive_store_open": (status, [c_char_p, c_char_p, LoopP, POINTER(StoreOptions), POINTER(StoreP)]),
    "outlive_store_close": (None, [StoreP]),
    "outlive_store_run_id": (c_char_p, [StoreP]),
    "outlive_store_process_name": (c_char_p, [StoreP]),
    "outlive_store_loop": (LoopP, [StoreP]),
    "outlive_store_check": (status, [StoreP]),
    # key-value
    "outlive_kv_set": (status, [StoreP, c_char_p, c_void_p, c_size_t]),
    "outlive_kv_get": (status, [StoreP, c_char_p, POINTER(c_void_p), POINTER(c_size_t)]),
    "outlive_kv_delete": (status, [StoreP, c_char_p]),
    "outlive_kv_value_bytes": (c_void_p, [KvValueP, POINTER(c_size_t)]),
    "outlive_kv_value_set": (status, [KvValueP, c_void_p, c_size_t]),
    "outlive_kv_value_delete": (status, [KvValueP]),
    "outlive_kv_update": (status, [StoreP, c_char_p, KV_MODIFIER, c_void_p]),
    "outlive_kv_observe": (status, [StoreP, c_char_p, KV_OBSERVER, c_void_p, RELEASE, POINTER(c_uint64)]),
    "outlive_kv_unobserve": (status, [StoreP, c_uint64]),
    "outlive_kv_key_list_new": (status, [StoreP, c_char_p, c_char_p, c_size_t, POINTER(KvKeyListP)]),
    "outlive_kv_key_list_count": (c_size_t, [KvKeyListP]),
    "outlive_kv_key_list_key": (c_char_p, [KvKeyListP, c_size_t]),
    "outlive_kv_key_list_free": (None, [KvKeyListP]),
    "outlive_kv_count": (status, [StoreP, c_char_p, POINTER(c_size_t)]),
    # values
    "outlive_object_bytes": (c_void_p, [ObjectP, POINTER(c_size_t)]),
    "outlive_object_type": (c_char_p, [ObjectP]),
    "outlive_object_string": (c_char_p, [ObjectP]),
    "outlive_args_new": (status, [POINTER(ArgsP)]),
    "outlive_args_copy": (status, [ArgsP, POINTER(ArgsP)]),
    "outlive_args_free": (None, [ArgsP]),
    "outlive_args_set_id": (status, [ArgsP, c_char_p, c_char_p, c_void_p, c_size_t]),
    "outlive_args_set_string": (status, [ArgsP, c_char_p, c_char_p]),
    "outlive_args_set_handler": (status, [ArgsP, c_char_p, HandlerP]),
    "outlive_args_set_bool": (status, [ArgsP, c_char_p, c_bool]),
    "outlive_args_set_int": (status, [ArgsP, c_char_p, c_int32]),
    "outlive_args_set_double": (status, [ArgsP, c_char_p, c_double]),
    "outlive_args_set_integer": (status, [ArgsP, c_char_p, c_int64]),
    "outlive_args_set_uinteger": (status, [ArgsP, c_char_p, c_uint64]),
    "outlive_args_remove": (status, [ArgsP, c_char_p]),
    "outlive_args_get_id": (status, [ArgsP, c_char_p, POINTER(ObjectP)]),
    "outlive_args_get_handler": (status, [ArgsP, c_char_p, POINTER(HandlerP)]),
    "outlive_args_get_bool": (status, [ArgsP, c_char_p, POINTER(c_bool)]),
    "outlive_args_get_int": (status, [ArgsP, c_char_p, POINTER(c_int32)]),
    "outlive_args_get_double": (status, [ArgsP, c_char_p, POINTER(c_double)]),
    "outlive_args_get_integer": (status, [ArgsP, c_char_p, POINTER(c_int64)]),
    "outlive_args_get_uinteger": (status, [ArgsP, c_char_p, POINTER(c_uint64)]),
    "outlive_args_count": (c_size_t, [ArgsP]),
    "outlive_args_name_at": (c_char_p, [ArgsP, c_size_t]),
    "outlive_args_type_at": (c_int, [ArgsP, c_size_t]),
    # interactions
    "outlive_interactions_new": (status, [LoopP, POINTER(InteractionsP)]),
    "outlive_interactions_free": (None, [InteractionsP]),
    "outlive_interactions_add": (status, [InteractionsP, INTERACTION_FN, c_void_p, RELEASE]),
    "outlive_interactions_suspend": (status, [InteractionsP]),
    "outlive_interactions_resume": (status, [InteractionsP]),
    "outlive_interaction_finish": (status, [InteractionP]),
    "outlive_interactions_unfinished": (c_size_t, [InteractionsP]),
    "outlive_interactions_set_stall_report": (status, [InteractionsP, c_double, STALL_FN, c_void_p, RELEASE]),
    "outlive_durable_interactions_open": (status, [StoreP, c_char_p, c_uint32, POINTER(DurableInteractionsP)]),
    "outlive_durable_interactions_free": (None, [DurableInteractionsP]),
    "outlive_durable_interactions_add": (status, [DurableInteractionsP, HandlerP, c_char_p]),
    "outlive_durable_interactions_suspend": (status, [DurableInteractionsP]),
    "outlive_durable_interactions_resume": (status, [DurableInteractionsP]),
    "outlive_durable_interactions_count": (status, [DurableInteractionsP, POINTER(c_size_t)]),
    "outlive_durable_interaction_list_new": (status, [DurableInteractionsP, c_char_p, c_size_t,
                                                      POINTER(DurableInteractionListP)]),
    "outlive_durable_interaction_list_count": (c_size_t, [DurableInteractionListP]),
    "outlive_durable_interaction_list_id": (c_char_p, [DurableInteractionListP, c_size_t]),
    "outlive_durable_interaction_list_handler_name": (c_char_p, [DurableInteractionListP, c_size_t]),
    "outlive_durable_interaction_list_presentations": (c_uint32, [DurableInteractionListP, c_size_t]),
    "outlive_durable_interaction_list_free": (None, [DurableInteractionListP]),
    "outlive_durable_interactions_remove": (status, [DurableInteractionsP, c_char_p]),
    # operations
    "outlive_operations_new": (status, [LoopP, c_size_t, POINTER(OperationsP)]),
    "outlive_operations_free": (None, [OperationsP]),
    "outlive_operation_new": (status, [OPERATION_FN, c_void_p, RELEASE, POINTER(OperationP)]),
    "outlive_operation_free": (None, [OperationP]),
    "outlive_operation_set_completion": (status, [OperationP, COMPLETION_FN, c_void_p, RELEASE]),
    "outlive_operation_add_dependency": (status, [OperationP, OperationP]),
    "outlive_operations_add": (status, [OperationsP, OperationP]),
    "outlive_operation_finish": (status, [OperationP]),
    "outlive_operation_cancel": (status, [OperationP]),
    "outlive_operation_is_cancelled": (c_bool, [OperationP]),
    "outlive_operation_get_state": (c_int, [OperationP]),
    "outlive_operations_cancel_all": (status, [OperationsP]),
    "outlive_operations_unfinished": (c_size_t, [OperationsP]),
    "outlive_operations_set_drained": (status, [OperationsP, DRAINED_FN, c_void_p, RELEASE]),
    # tasks
    "outlive_task_add": (status, [StoreP, HandlerP, c_char_p, POINTER(c_char_p), c_size_t, c_char_p]),
    "outlive_tasks_add_batch": (status, [StoreP, POINTER(TaskSpec), c_size_t, c_char_p]),
    "outlive_task_enqueue": (status, [StoreP, HandlerP, POINTER(TaskOptions), c_char_p, POINTER(ctypes.c_bool)]),
    "outlive_task_enqueue_serialized": (status, [StoreP, c_void_p, c_size_t, POINTER(TaskOptions), c_char_p,
                                                 POINTER(ctypes.c_bool)]),
    "outlive_queue_declare": (status, [StoreP, c_char_p, c_int]),
    "outlive_queue_serve": (status, [StoreP, c_char_p, c_size_t]),
    "outlive_queue_list_new": (status, [StoreP, c_char_p, c_size_t, POINTER(QueueListP)]),
    "outlive_queue_list_count": (c_size_t, [QueueListP]),
    "outlive_queue_list_name": (c_char_p, [QueueListP, c_size_t]),
    "outlive_queue_list_kind": (c_int, [QueueListP, c_size_t]),
    "outlive_queue_list_pending": (c_size_t, [QueueListP, c_size_t]),
    "outlive_queue_list_running": (c_size_t, [QueueListP, c_size_t]),
    "outlive_queue_list_dead": (c_size_t, [QueueListP, c_size_t]),
    "outlive_queue_list_free": (None, [QueueListP]),
    "outlive_tasks_run_now": (status, [StoreP]),
    "outlive_tasks_set_triggers": (status, [StoreP, c_size_t, c_double]),
    "outlive_tasks_count": (status, [StoreP, POINTER(c_size_t)]),
    "outlive_tasks_count_dead": (status, [StoreP, POINTER(c_size_t)]),
    "outlive_tasks_set_policy": (status, [StoreP, POINTER(TaskPolicy)]),
    "outlive_tasks_set_concurrency": (status, [StoreP, c_size_t]),
    "outlive_tasks_set_completion_batch": (status, [StoreP, c_size_t]),
    "outlive_task_list_new": (status, [StoreP, c_char_p, c_size_t, POINTER(TaskListP)]),
    "outlive_task_list_count": (c_size_t, [TaskListP]),
    "outlive_task_list_id": (c_char_p, [TaskListP, c_size_t]),
    "outlive_task_list_handler_name": (c_char_p, [TaskListP, c_size_t]),
    "outlive_task_list_state": (c_int, [TaskListP, c_size_t]),
    "outlive_task_list_attempts": (c_uint32, [TaskListP, c_size_t]),
    "outlive_task_list_last_error": (c_char_p, [TaskListP, c_size_t]),
    "outlive_task_list_next_attempt": (c_double, [TaskListP, c_size_t]),
    "outlive_task_list_created": (c_double, [TaskListP, c_size_t]),
    "outlive_task_list_group_start": (c_char_p, [TaskListP, c_size_t]),
    "outlive_task_list_group_member_count": (c_size_t, [TaskListP, c_size_t]),
    "outlive_task_list_group_member": (c_char_p, [TaskListP, c_size_t, c_size_t]),
    "outlive_task_list_queue": (c_char_p, [TaskListP, c_size_t]),
    "outlive_task_list_priority": (ctypes.c_int32, [TaskListP, c_size_t]),
    "outlive_task_list_unique_key": (c_char_p, [TaskListP, c_size_t]),
    "outlive_task_list_cancelled": (ctypes.c_bool, [TaskListP, c_size_t]),
    "outlive_task_list_result_signal": (c_char_p, [TaskListP, c_size_t]),
    "outlive_task_list_free": (None, [TaskListP]),
    # schedules
    "outlive_schedule_set": (status, [StoreP, c_char_p, HandlerP, POINTER(SchedulePeriod), POINTER(TaskOptions),
                                      POINTER(c_double)]),
    "outlive_schedule_remove": (status, [StoreP, c_char_p]),
    "outlive_schedule_list_new": (status, [StoreP, c_char_p, c_size_t, POINTER(ScheduleListP)]),
    "outlive_schedule_list_count": (c_size_t, [ScheduleListP]),
    "outlive_schedule_list_name": (c_char_p, [ScheduleListP, c_size_t]),
    "outlive_schedule_list_handler_name": (c_char_p, [ScheduleListP, c_size_t]),
    "outlive_schedule_list_interval": (c_double, [ScheduleListP, c_size_t]),
    "outlive_schedule_list_cron": (c_char_p, [ScheduleListP, c_size_t]),
    "outlive_schedule_list_next_fire": (c_double, [ScheduleListP, c_size_t]),
    "outlive_schedule_list_last_fired": (c_double, [ScheduleListP, c_size_t]),
    "outlive_schedule_list_queue": (c_char_p, [ScheduleListP, c_size_t]),
    "outlive_schedule_list_priority": (ctypes.c_int32, [ScheduleListP, c_size_t]),
    "outlive_schedule_list_free": (None, [ScheduleListP]),
    "outlive_task_retry": (status, [StoreP, c_char_p]),
    "outlive_task_delete": (status, [StoreP, c_char_p]),
    "outlive_task_cancel": (status, [StoreP, c_char_p, POINTER(ctypes.c_bool)]),
    "outlive_task_is_cancelled": (status, [StoreP, c_char_p, POINTER(ctypes.c_bool)]),
    # signals
    "outlive_signal_new_id": (None, [c_char_p]),
    "outlive_signal_consume": (status, [StoreP, c_char_p, HandlerP, c_int, c_int, c_char_p, c_char_p]),
    "outlive_signal_post": (status, [StoreP, c_char_p, ArgsP, c_bool]),
    "outlive_signal_consumer_remove": (status, [StoreP, c_char_p]),
    "outlive_signal_consumers_remove_scope": (status, [StoreP, c_char_p, POINTER(c_size_t)]),
    "outlive_signal_lookup": (status, [StoreP, c_char_p, POINTER(c_uint64), POINTER(c_size_t), POINTER(c_bool)]),
    "outlive_signal_consumer_list_new": (status, [StoreP, c_char_p, c_char_p, c_size_t, POINTER(SignalConsumerListP)]),
    "outlive_signal_consumer_list_count": (c_size_t, [SignalConsumerListP]),
    "outlive_signal_consumer_list_id": (c_char_p, [SignalConsumerListP, c_size_t]),
    "outlive_signal_consumer_list_signal_id": (c_char_p, [SignalConsumerListP, c_size_t]),
    "outlive_signal_consumer_list_handler_name": (c_char_p, [SignalConsumerListP, c_size_t]),
    "outlive_signal_consumer_list_scope": (c_char_p, [SignalConsumerListP, c_size_t]),
    "outlive_signal_consumer_list_process": (c_char_p, [SignalConsumerListP, c_size_t]),
    "outlive_signal_consumer_list_delivery": (c_int, [SignalConsumerListP, c_size_t]),
    "outlive_signal_consumer_list_lifetime": (c_int, [SignalConsumerListP, c_size_t]),
    "outlive_signal_consumer_list_last_version": (c_uint64, [SignalConsumerListP, c_size_t]),
    "outlive_signal_consumer_list_free": (None, [SignalConsumerListP]),
    # messages
    "outlive_message_draft_new": (status, [c_char_p, c_char_p, POINTER(MessageDraftP)]),
    "outlive_message_draft_free": (None, [MessageDraftP]),
    "outlive_message_draft_set_text": (status, [MessageDraftP, c_char_p]),
    "outlive_message_draft_set_scope": (status, [MessageDraftP, c_char_p]),
    "outlive_message_draft_set_thread": (status, [MessageDraftP, c_char_p]),
    "outlive_message_draft_add_choice": (status, [MessageDraftP, c_char_p, c_char_p, c_int]),
    "outlive_message_draft_set_payload": (status, [MessageDraftP, ArgsP]),
    "outlive_message_draft_set_response_handler": (status, [MessageDraftP, HandlerP]),
    "outlive_message_draft_set_auto_remove": (status, [MessageDraftP, c_bool]),
    "outlive_message_post": (status, [StoreP, MessageDraftP, c_char_p]),
    "outlive_message_respond": (status, [StoreP, c_char_p, c_char_p]),
    "outlive_message_mute": (status, [StoreP, c_char_p]),
    "outlive_message_remove": (status, [StoreP, c_char_p]),
    "outlive_messages_remove_scope": (status, [StoreP, c_char_p, POINTER(c_size_t)]),
    "outlive_message_list_new": (status, [StoreP, c_char_p, c_char_p, c_char_p, c_size_t, POINTER(MessageListP)]),
    "outlive_message_list_count": (c_size_t, [MessageListP]),
    "outlive_message_list_id": (c_char_p, [MessageListP, c_size_t]),
    "outlive_message_list_free": (None, [MessageListP]),
    "outlive_messages_count": (status, [StoreP, c_char_p, POINTER(c_size_t)]),
    "outlive_messages_set_category_limit": (status, [StoreP, c_size_t]),
    "outlive_message_get": (status, [StoreP, c_char_p, POINTER(MessageP)]),
    "outlive_message_free": (None, [MessageP]),
    "outlive_message_id": (c_char_p, [MessageP]),
    "outlive_message_category": (c_char_p, [MessageP]),
    "outlive_message_title": (c_char_p, [MessageP]),
    "outlive_message_text": (c_char_p, [MessageP]),
    "outlive_message_scope": (c_char_p, [MessageP]),
    "outlive_message_thread": (c_char_p, [MessageP]),
    "outlive_message_choice": (c_char_p, [MessageP]),
    "outlive_message_payload": (ArgsP, [MessageP]),
    "outlive_message_date": (c_double, [MessageP]),
    "outlive_message_choice_count": (c_size_t, [MessageP]),
    "outlive_message_choice_at": (status, [MessageP, c_size_t, POINTER(c_char_p), POINTER(c_char_p), POINTER(c_int)]),
    "outlive_message_is_presented": (c_bool, [MessageP]),
    "outlive_message_is_handled": (c_bool, [MessageP]),
    "outlive_message_is_removed": (c_bool, [MessageP]),
    "outlive_message_auto_removes": (c_bool, [MessageP]),
    "outlive_message_has_response_handler": (c_bool, [MessageP]),
    "outlive_presenter_add": (status, [StoreP, c_char_p, POINTER(Presenter), c_void_p, RELEASE]),
    "outlive_presenter_remove": (status, [StoreP, c_char_p]),
    "outlive_presenter_reoffer": (status, [StoreP, c_char_p]),
    "outlive_presentation_finish": (status, [PresentationP, c_int, c_bool, c_char_p]),
    "outlive_response_handler_add": (status, [StoreP, c_char_p, RESPONSE_FN, c_void_p, RELEASE]),
    "outlive_response_handler_remove": (status, [StoreP, c_char_p]),
    "outlive_auto_resolver_add": (status, [StoreP, c_char_p, AUTO_RESOLVER_FN, c_void_p, RELEASE]),
    "outlive_auto_resolver_remove": (status, [StoreP, c_char_p]),
    # handlers
    "outlive_handler_register": (status, [c_char_p, c_char_p, c_void_p]),
    "outlive_handler_unregister": (status, [c_char_p]),
    "outlive_handler_library_load": (status, [c_char_p]),
    "outlive_handler_resolve": (status, [c_char_p]),
    "outlive_handler_new": (status, [c_char_p, c_char_p, ArgsP, POINTER(HandlerP)]),
    "outlive_handler_copy": (status, [HandlerP, POINTER(HandlerP)]),
    "outlive_handler_free": (None, [HandlerP]),
    "outlive_handler_bind": (status, [HandlerP, ArgsP]),
    "outlive_handler_call": (status, [HandlerP, ArgsP]),
    "outlive_handler_call_serialized": (status, [HandlerP, c_void_p, c_size_t]),
    "outlive_handler_invalidate": (status, [HandlerP, ArgsP]),
    "outlive_handler_is_invalidated": (c_bool, [HandlerP]),
    "outlive_handler_name": (c_char_p, [HandlerP]),
    "outlive_handler_invalidation_name": (c_char_p, [HandlerP]),
    "outlive_handler_bound": (status, [HandlerP, POINTER(ArgsP)]),
    "outlive_handler_description": (c_char_p, [HandlerP]),
    "outlive_handler_serialize": (status, [HandlerP, POINTER(c_void_p), POINTER(c_size_t)]),
    "outlive_handler_deserialize": (status, [c_void_p, c_size_t, POINTER(HandlerP)]),
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
    "outlive_task_options": TaskOptions,
    "outlive_task_policy": TaskPolicy,
    "outlive_schedule_period": SchedulePeriod,
    "outlive_presenter": Presenter,
    "outlive_store_options": StoreOptions,
}


def _declare(declarations: typing.Dict[str, typing.Any]) -> None:
    for name, (restype, argtypes) in declarations.items():
        try:
            function = getattr(lib, name)
        except AttributeError:
            raise ImportError(f"liboutlive lacks {name}: the library is older than this package") from None
        function.restype = restype
        function.argtypes = argtypes
        globals()[name] = function


_declare(_DECLARATIONS)


# The calls of the hot paths (a handler call, a task added, a signal posted),
# bound a second time (lib[name] makes a function object of its own) with their
# handles as plain addresses: a typed handle's from_param is a Python call per
# argument, which costs about as much as the C function. Only the package calls
# these, with handles it holds itself (a Store's, a Handler's, its thread's
# reused outlive_args), and C checks every handle's kind again
# (OUTLIVE_E_INVALID_ARGUMENT). Their other argtypes are the declarations' own
# (tests/test_ffi_declarations.py checks both).
_BY_ADDRESS = ("outlive_handler_call", "outlive_args_set_id", "outlive_args_set_string", "outlive_args_set_integer",
               "outlive_args_set_double", "outlive_args_set_bool", "outlive_args_remove", "outlive_task_enqueue",
               "outlive_handler_free", "outlive_signal_post", "outlive_object_bytes")


def _by_address(name: str) -> typing.Any:
    restype, argtypes = _DECLARATIONS[name]
    function = lib[name]
    function.restype = restype
    function.argtypes = [c_void_p if isinstance(argtype, type) and issubclass(argtype, OpaqueHandle) else argtype
                         for argtype in argtypes]
    return function


BY_ADDRESS: typing.Dict[str, typing.Any] = {name: _by_address(name) for name in _BY_ADDRESS}

# The call of every Handler call from Python, bound a third time without
# argtypes: ctypes then passes each argument as what it is, without the
# from_param call an argtype makes per argument (together about a third of
# the ctypes call). It is therefore only ever called with the header's exact
# types — (HandlerP, bytes, c_size_t): `size_arg(n)` makes the last — where a
# Python int would go as a C int (tests/test_ffi_declarations.py checks the
# binding and size_arg; Handler.__call__ is its one caller).
handler_call_serialized = lib["outlive_handler_call_serialized"]
handler_call_serialized.restype = status
# The add of a Handler still held as bytes (handlers.Handler), bound the same
# way: called only as (StoreP, bytes, c_size_t, TaskOptions pointer or None,
# the id buffer, c_bool pointer or None) — tasks.py, its one caller.
task_enqueue_serialized = lib["outlive_task_enqueue_serialized"]
task_enqueue_serialized.restype = status
# The c_size_t of the sizes most calls have, made once and never changed
# (several threads pass the same objects).
_SIZES = tuple(c_size_t(size) for size in range(512))


def size_arg(size: int) -> c_size_t:
    """`size` as a c_size_t argument of handler_call_serialized."""
    return _SIZES[size] if size < 512 else c_size_t(size)


def _load_speedups() -> typing.Any:
    """outlive._speedups (_speedups.c) bound to four functions of this
    library (the two serialized calls above, outlive_object_bytes and
    outlive_handler_call), or None: not built (`make` builds it where Python's
    headers are), built from another version of the .c, or
    OUTLIVE_PYTHON_SPEEDUPS=0 (the tests run the ctypes way that way too).
    Its `call(address, data)` and `enqueue(address, data)` are the serialized
    calls without ctypes, each about 0.5 µs less; `object_bytes`/`object_text`
    and `call_args` serve a Python task handler's call (its ID arguments, its
    completion)."""
    if os.environ.get("OUTLIVE_PYTHON_SPEEDUPS", "1") == "0":
        return None
    try:
        from . import _speedups  # type: ignore[attr-defined]
        # A module built from another version of _speedups.c (not rebuilt by
        # `make`) may lack a function or bind differently: ctypes then.
        if not all(callable(getattr(_speedups, name, None)) for name in _SPEEDUPS_FUNCTIONS):
            return None
        _speedups.bind(*(ctypes.cast(function, c_void_p).value for function in (
            handler_call_serialized, task_enqueue_serialized, lib["outlive_object_bytes"], lib["outlive_handler_call"])))
    except (ImportError, TypeError, ValueError):
        return None
    return _speedups


_SPEEDUPS_FUNCTIONS = ("bind", "bind_lone_ids", "call", "call_lone", "call_args", "enqueue", "object_bytes",
                       "object_text")


speedups = _load_speedups()


if typing.TYPE_CHECKING:
    # The C functions are set by _declare above: to a type checker, each is
    # an attribute of this module whose calls it does not check (the header
    # is the reference, tests/test_ffi_declarations.py the check).
    def __getattr__(name: str) -> typing.Any: ...

# Keep the unused imports available to the modules that declare callbacks.
__all__ = ["lib", "c_bool", "c_double", "c_int64", "c_uint64", "c_void_p", "c_char_p", "c_size_t", "c_int32"]
