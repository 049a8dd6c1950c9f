"""The in-process queues, on a loop: InteractionQueue (modal interactions
strictly one at a time, each finished explicitly) and OperationQueue
(operations with dependencies and a limit of unfinished ones, each finished
explicitly; `await operation` from asyncio)."""
import ctypes
import enum

from . import _callbacks, _ffi
from ._handle import NativeHandle
from .errors import check


# ── interactions ───────────────────────────────────────────────────────────

class Interaction:
    """A started interaction: call finish() exactly once, from any thread."""

    __slots__ = ("_token",)

    def __init__(self, token):
        self._token = token

    def finish(self) -> None:
        check(_ffi.outlive_interaction_finish(self._token))


@_ffi.INTERACTION_FN
def _run_interaction(token, context):
    function = _callbacks.lookup(context)
    try:
        function(Interaction(token))
    except BaseException as error:
        _callbacks.keep(error)


@_ffi.STALL_FN
def _report_stall(token, seconds, context):
    function = _callbacks.lookup(context)
    try:
        function(Interaction(token), seconds)
    except BaseException as error:
        _callbacks.keep(error)


class InteractionQueue(NativeHandle):
    """Interactions start one at a time on the loop's thread, in the order added;
    each must be finished (interaction.finish()) before the next starts.
    close() frees the queue; waiting interactions are dropped without running."""

    _what = "interaction queue"

    def _release(self, handle):
        _ffi.outlive_interactions_free(handle)

    def __init__(self, loop):
        self.loop = loop
        out = ctypes.c_void_p()
        check(_ffi.outlive_interactions_new(loop.handle, ctypes.byref(out)))
        self._handle = out.value

    def add(self, function) -> None:
        """function(interaction) runs on the loop's thread when its turn comes."""
        self.loop.handle  # ClosedError once the loop (or the store that owned it) is closed: nothing would run
        key = _callbacks.register(function)
        status = _ffi.outlive_interactions_add(self.handle, _run_interaction, key, _callbacks.release)
        if status != 0:
            _callbacks.forget(key)
        check(status)

    def suspend(self) -> None:
        """Nothing starts until resume() (the view will disappear)."""
        check(_ffi.outlive_interactions_suspend(self.handle))

    def resume(self) -> None:
        check(_ffi.outlive_interactions_resume(self.handle))

    def report_stalls(self, seconds: float, function) -> None:
        """function(interaction, seconds) is called once for an interaction not
        finished after `seconds` (a forgotten finish stalls the queue)."""
        key = _callbacks.register(function)
        status = _ffi.outlive_interactions_set_stall_report(self.handle, seconds, _report_stall, key, _callbacks.release)
        if status != 0:
            _callbacks.forget(key)
        check(status)

    def __len__(self) -> int:
        return _ffi.outlive_interactions_unfinished(self.handle)


# ── operations ─────────────────────────────────────────────────────────────

class OperationState(enum.IntEnum):
    NEW = 0
    WAITING = 1
    EXECUTING = 2
    FINISHED = 3


@_ffi.OPERATION_FN
def _run_operation(handle, context):
    operation = _callbacks.lookup(context)
    try:
        operation._function(operation)
    except BaseException as error:
        _callbacks.keep(error)


@_ffi.COMPLETION_FN
def _complete_operation(handle, cancelled, context):
    operation = _callbacks.lookup(context)
    if operation is None:
        return
    for function in operation._completions:
        try:
            function(bool(cancelled))
        except BaseException as error:
            _callbacks.keep(error)


@_ffi.DRAINED_FN
def _drained(context):
    function = _callbacks.lookup(context)
    try:
        function()
    except BaseException as error:
        _callbacks.keep(error)


class Operation:
    """Work that is finished only when finish() is called (any thread).
    `function(operation)` runs on its queue's loop thread once its dependencies
    have finished. `await operation` waits for it (True when it was cancelled)."""

    def __init__(self, function):
        self._function = function
        self._completions = []
        self._key = _callbacks.register(self)
        out = ctypes.c_void_p()
        status = _ffi.outlive_operation_new(_run_operation, self._key, _callbacks.release,
                                                         ctypes.byref(out))
        if status != 0:
            _callbacks.forget(self._key)
        check(status)
        self._handle = out.value
        completion_key = _callbacks.register(self)
        check(_ffi.outlive_operation_set_completion(self._handle, _complete_operation, completion_key,
                                                    _callbacks.release))

    @property
    def handle(self):
        return self._handle

    def add_dependency(self, other: "Operation") -> "Operation":
        check(_ffi.outlive_operation_add_dependency(self._handle, other._handle))
        return self

    def on_complete(self, function) -> None:
        """function(cancelled) runs on the loop's thread when the operation completes.
        Add it before the operation is queued."""
        self._completions.append(function)

    def finish(self) -> None:
        check(_ffi.outlive_operation_finish(self._handle))

    def cancel(self) -> None:
        check(_ffi.outlive_operation_cancel(self._handle))

    @property
    def cancelled(self) -> bool:
        return bool(_ffi.outlive_operation_is_cancelled(self._handle))

    @property
    def state(self) -> OperationState:
        return OperationState(_ffi.outlive_operation_get_state(self._handle))

    def __await__(self):
        import asyncio
        if self.state == OperationState.FINISHED:
            return self.cancelled
        loop = asyncio.get_running_loop()
        future = loop.create_future()

        def done(cancelled):
            loop.call_soon_threadsafe(lambda: future.done() or future.set_result(cancelled))

        self._completions.append(done)
        if self.state == OperationState.FINISHED and not future.done():
            future.set_result(self.cancelled)
        return (yield from future.__await__())

    def __del__(self):
        try:
            if self._handle:
                _ffi.outlive_operation_free(self._handle)
                self._handle = None
        except Exception:
            pass


class OperationQueue(NativeHandle):
    """Runs operations on `loop` once their dependencies finished, with at most
    max_unfinished started and unfinished at once (0: no limit)."""

    _what = "operation queue"

    def _release(self, handle):
        _ffi.outlive_operations_free(handle)

    def __init__(self, loop, max_unfinished: int = 0):
        self.loop = loop
        out = ctypes.c_void_p()
        check(_ffi.outlive_operations_new(loop.handle, max_unfinished, ctypes.byref(out)))
        self._handle = out.value
        self._queued = []

    def add(self, operation) -> Operation:
        """Queues an Operation (or a function, made into one) and returns it."""
        self.loop.handle  # ClosedError once the loop (or the store that owned it) is closed: nothing would run
        if not isinstance(operation, Operation):
            operation = Operation(operation)
        check(_ffi.outlive_operations_add(self.handle, operation.handle))
        # Keep the Python object (and its callbacks) alive while queued.
        self._queued.append(operation)
        operation.on_complete(lambda cancelled, op=operation: self._queued.remove(op) if op in self._queued else None)
        return operation

    def cancel_all(self) -> None:
        check(_ffi.outlive_operations_cancel_all(self.handle))

    def on_drained(self, function) -> None:
        """function() runs each time the unfinished operations drop to zero."""
        key = _callbacks.register(function)
        status = _ffi.outlive_operations_set_drained(self.handle, _drained, key, _callbacks.release)
        if status != 0:
            _callbacks.forget(key)
        check(status)

    def __len__(self) -> int:
        return _ffi.outlive_operations_unfinished(self.handle)


# ── durable interactions ───────────────────────────────────────────────────

class DurableInteractionQueue(NativeHandle):
    """A named interaction queue kept in the store: interactions are handlers,
    shown one at a time by one process, and those queued before a restart are
    shown after it. Each is called with `interaction_id` and `finish` (a
    Handler: call it once when the interaction is over)."""

    _what = "durable interaction queue"

    def _release(self, handle):
        _ffi.outlive_durable_interactions_free(handle)

    def __init__(self, store, name: str, *, suspended: bool = False):
        self.store = store
        out = ctypes.c_void_p()
        check(_ffi.outlive_durable_interactions_open(store.handle, name.encode("utf-8"),
                                                     _ffi.DURABLE_INTERACTIONS_SUSPENDED if suspended else 0,
                                                     ctypes.byref(out)))
        self._handle = out.value

    def add(self, handler) -> str:
        out = ctypes.create_string_buffer(_ffi.ID_SIZE)
        check(_ffi.outlive_durable_interactions_add(self.handle, handler.handle, out))
        return out.value.decode()

    def suspend(self) -> None:
        check(_ffi.outlive_durable_interactions_suspend(self.handle))

    def resume(self) -> None:
        check(_ffi.outlive_durable_interactions_resume(self.handle))

    def __len__(self) -> int:
        count = ctypes.c_size_t()
        check(_ffi.outlive_durable_interactions_count(self.handle, ctypes.byref(count)))
        return count.value

    def list(self):
        """(id, handler name, times presented) of each stored interaction, first first."""
        out = ctypes.c_void_p()
        check(_ffi.outlive_durable_interaction_list_new(self.handle, None, 0, ctypes.byref(out)))
        try:
            return [(_ffi.outlive_durable_interaction_list_id(out, i).decode(),
                     _ffi.outlive_durable_interaction_list_handler_name(out, i).decode("utf-8"),
                     _ffi.outlive_durable_interaction_list_presentations(out, i))
                    for i in range(_ffi.outlive_durable_interaction_list_count(out))]
        finally:
            _ffi.outlive_durable_interaction_list_free(out)

    def remove(self, interaction_id: str) -> None:
        check(_ffi.outlive_durable_interactions_remove(self.handle, interaction_id.encode()))
