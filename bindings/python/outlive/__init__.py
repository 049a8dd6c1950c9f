"""Outlive: callbacks that outlive the process.

Durable handlers, a key-value store, messages, signals and tasks shared by
every process that opens the same store directory. A ctypes binding of
liboutlive; see the C header (outlive.h) for the full semantics."""
from . import _ffi, results
from .errors import (BusyError, ClosedError, CorruptError, InvalidArgumentError, InvalidatedError, MissingArgumentError,
                     LimitError, NoMemoryError, NotFoundError, OutliveError, PermissionDeniedError, StateError, Status,
                     StoreIOError, TypeMismatchError, UnresolvedError, VersionError)
from .handlers import Handler, handler, load_handlers, resolves, unregister
from .logs import set_log_level
from .loop import Loop
from .values import ID, Int, UInteger
from .messages import Message, Messages, Presentation
from .signals import Consumer, Delivery, Lifetime, Signals, new_signal_id
from .tasks import QueueInfo, QueueKind, TaskInfo, TaskQueues, Tasks, TaskState
from .task_function import TaskCall, TaskFunction, task
from .results import TaskCancelledError, TaskDeadError, TaskRef, task_progress
from .schedules import ScheduleInfo, Schedules
from .queues import DurableInteractionQueue, Interaction, InteractionQueue, Operation, OperationQueue, OperationState
from .store import UNCHANGED, Durability, KeyValue, Observation, Store

from ._version import __version__

results.register_consumer()


def library_version() -> str:
    """The version of the loaded liboutlive."""
    return str(_ffi.outlive_version().decode())


__all__ = [
    "Handler", "handler", "load_handlers", "resolves", "unregister", "ID", "Int", "UInteger",
    "task", "TaskFunction", "TaskCall", "TaskRef", "TaskDeadError", "TaskCancelledError", "task_progress", "Consumer", "Delivery", "Lifetime", "Signals", "new_signal_id", "TaskInfo", "Tasks", "TaskState", "QueueInfo", "QueueKind", "TaskQueues", "ScheduleInfo", "Schedules", "Message", "Messages", "Presentation", "set_log_level", "Loop", "Store", "DurableInteractionQueue", "Interaction", "InteractionQueue", "Operation", "OperationQueue",
    "OperationState", "Durability", "KeyValue", "Observation", "UNCHANGED", "OutliveError", "Status", "library_version",
    "BusyError", "ClosedError", "CorruptError", "InvalidArgumentError", "InvalidatedError", "MissingArgumentError", "LimitError", "NoMemoryError",
    "NotFoundError", "PermissionDeniedError", "StateError", "StoreIOError", "TypeMismatchError", "UnresolvedError",
    "VersionError",
]
