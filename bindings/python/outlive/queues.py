"""The in-process queues, on a loop: InteractionQueue (modal interactions
strictly one at a time, each finished explicitly) and OperationQueue
(operations with dependencies and a limit of unfinished ones, each finished
explicitly; `await operation` from asyncio)."""
from __future__ import annotations

import ctypes
import enum
import typing

from . import _callbacks, _ffi
from ._handle import NativeHandle
from .errors import check

if typing.TYPE_CHECKING:
    from .handlers import Handler
    from .loop import Loop
    from .store import Store


# ── interactions ───────────────────────────────────────────────────────────

class Interaction:
    """A started interaction: call finish() exactly once, from any thread."""

    __slots__ = ("_token",)

    def __init__(self, token: typing.Any) -> None:
        self._token = token

    def finish(self) -> None:
        """Ends the interaction: the next one may start."""
        check(_ffi.outlive_interaction_finish(self._token))


@_ffi.INTERACTION_FN
def _run_interaction(token: typing.Any, context: typing.Optional[int]) -> None:
    function = _callbacks.lookup(context)
    try:
        function(Interaction(token))
    except BaseException as error:
        _callbacks.keep(error)


@_ffi.STALL_FN
def _report_stall(token: typing.Any, seconds: float, context: typing.Optional[int]) -> None:
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

    def _release(self, handle: typing.Any) -> None:
        _ffi.outlive_interactions_free(handle)

    def __init__(self, loop: Loop) -> None:
        self.loop = loop
        out = _ffi.InteractionsP()
        check(_ffi.outlive_interactions_new(loop.handle, ctypes.byref(out)))
        self._handle = out

    def add(self, function: typing.Callable[[Interaction], None]) -> None:
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
        """Starts interactions again."""
        check(_ffi.outlive_interactions_resume(self.handle))

    def report_stalls(self, seconds: float, function: typing.Callable[[Interaction, float], None]) -> None:
        """function(interaction, seconds) is called once for an interaction not
        finished after `seconds` (a forgotten finish stalls the queue)."""
        key = _callbacks.register(function)
        status = _ffi.outlive_interactions_set_stall_report(self.handle, seconds, _report_stall, key, _callbacks.release)
        if status != 0:
            _callbacks.forget(key)
        check(status)

    def __len__(self) -> int:
        return int(_ffi.outlive_interactions_unfinished(self.handle))


# ── operations ─────────────────────────────────────────────────────────────

class OperationState(enum.IntEnum):
    """Where an operation is."""
    NEW = 0
    WAITING = 1
    EXECUTING = 2
    FINISHED = 3


@_ffi.OPERATION_FN
def _run_operation(handle: typing.Any, context: typing.Optional[int]) -> None:
    operation = _callbacks.lookup(context)
    try:
        operation._function(operation)
    except BaseException as error:
        _callbacks.keep(error)


@_ffi.COMPLETION_FN
def _complete_operation(handle: typing.Any, cancelled: bool, context: typing.Optional[int]) -> None:
    operation = _callbacks.lookup(context)
    if operation is None:
        return
    for function in operation._completions:
        try:
            function(bool(cancelled))
        except BaseException as error:
            _callbacks.keep(error)


@_ffi.DRAINED_FN
def _drained(context: typing.Optional[int]) -> None:
    function = _callbacks.lookup(context)
    try:
        function()
    except BaseException as error:
        _callbacks.keep(error)


class Operation:
    """Work that is finished only when finish() is called (any thread).
    `function(operation)` runs on its queue's loop thread once its dependencies
    have finished. `await operation` waits for it (True when it was cancelled)."""

    def __init__(self, function: typing.Callable[["Operation"], None]) -> None:
        self._function = function
        self._completions: typing.List[typing.Callable[[bool], None]] = []
        self._key = _callbacks.register(self)
        out = _ffi.OperationP()
        status = _ffi.outlive_operation_new(_run_operation, self._key, _callbacks.release,
                                                         ctypes.byref(out))
        if status != 0:
            _callbacks.forget(self._key)
        check(status)
        self._handle: typing.Any = out
        completion_key = _callbacks.register(self)
        check(_ffi.outlive_operation_set_completion(self._handle, _complete_operation, completion_key,
                                                    _callbacks.release))

    @property
    def handle(self) -> typing.Any:
        """The native pointer."""
        return self._handle

    def add_dependency(self, other: "Operation") -> "Operation":
        """This operation starts only once `other` finished; returns self."""
        check(_ffi.outlive_operation_add_dependency(self._handle, other._handle))
        return self

    def on_complete(self, function: typing.Callable[[bool], None]) -> None:
        """function(cancelled) runs on the loop's thread when the operation completes.
        Add it before the operation is queued."""
        self._completions.append(function)

    def finish(self) -> None:
        """Ends the operation (from any thread)."""
        check(_ffi.outlive_operation_finish(self._handle))

    def cancel(self) -> None:
        """Cancels the operation."""
        check(_ffi.outlive_operation_cancel(self._handle))

    @property
    def cancelled(self) -> bool:
        """Whether it was cancelled."""
        return bool(_ffi.outlive_operation_is_cancelled(self._handle))

    @property
    def state(self) -> OperationState:
        """Where it is now."""
        return OperationState(_ffi.outlive_operation_get_state(self._handle))

    def __await__(self) -> typing.Generator[typing.Any, None, bool]:
        import asyncio
        if self._finished():
            return self.cancelled
        loop = asyncio.get_running_loop()
        future: asyncio.Future[bool] = loop.create_future()

        def settle(cancelled: bool) -> None:
            if not future.done():
                future.set_result(cancelled)

        def done(cancelled: bool) -> None:
            loop.call_soon_threadsafe(settle, cancelled)

        self._completions.append(done)
        if self._finished() and not future.done():
            future.set_result(self.cancelled)
        return (yield from future.__await__())

    def _finished(self) -> bool:
        return self.state == OperationState.FINISHED

    def __del__(self) -> None:
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

    def _release(self, handle: typing.Any) -> None:
        _ffi.outlive_operations_free(handle)

    def __init__(self, loop: Loop, max_unfinished: int = 0) -> None:
        self.loop = loop
        out = _ffi.OperationsP()
        check(_ffi.outlive_operations_new(loop.handle, max_unfinished, ctypes.byref(out)))
        self._handle = out
        self._queued: typing.List[Operation] = []

    def add(self, operation: typing.Union[Operation, typing.Callable[[Operation], None]]) -> Operation:
        """Queues an Operation (or a function, made into one) and returns it."""
        self.loop.handle  # ClosedError once the loop (or the store that owned it) is closed: nothing would run
        queued = operation if isinstance(operation, Operation) else Operation(operation)
        check(_ffi.outlive_operations_add(self.handle, queued.handle))
        # Keep the Python object (and its callbacks) alive while queued.
        self._queued.append(queued)

        def unqueue(cancelled: bool) -> None:
            if queued in self._queued:
                self._queued.remove(queued)
        queued.on_complete(unqueue)
        return queued

    def cancel_all(self) -> None:
        """Cancels every queued operation."""
        check(_ffi.outlive_operations_cancel_all(self.handle))

    def on_drained(self, function: typing.Callable[[], None]) -> None:
        """function() runs each time the unfinished operations drop to zero."""
        key = _callbacks.register(function)
        status = _ffi.outlive_operations_set_drained(self.handle, _drained, key, _callbacks.release)
        if status != 0:
            _callbacks.forget(key)
        check(status)

    def __len__(self) -> int:
        return int(_ffi.outlive_operations_unfinished(self.handle))


# ── durable interactions ───────────────────────────────────────────────────

class DurableInteractionQueue(NativeHandle):
    """A named interaction queue kept in the store: interactions are handlers,
    shown one at a time by one process, and those queued before a restart are
    shown after it. Each is called with `interaction_id` and `finish` (a
    Handler: call it once when the interaction is over)."""

    _what = "durable interaction queue"

    def _release(self, handle: typing.Any) -> None:
        _ffi.outlive_durable_interactions_free(handle)

    def __init__(self, store: Store, name: str, *, suspended: bool = False) -> None:
        self.store = store
        out = _ffi.DurableInteractionsP()
        check(_ffi.outlive_durable_interactions_open(store.handle, name.encode("utf-8"),
                                                     _ffi.DURABLE_INTERACTIONS_SUSPENDED if suspended else 0,
                                                     ctypes.byref(out)))
        self._handle = out

    def add(self, handler: Handler) -> str:
        """Stores an interaction (a handler); returns its id."""
        out = ctypes.create_string_buffer(_ffi.ID_SIZE)
        check(_ffi.outlive_durable_interactions_add(self.handle, handler.handle, out))
        return str(out.value.decode())

    def suspend(self) -> None:
        """This process presents none until resume()."""
        check(_ffi.outlive_durable_interactions_suspend(self.handle))

    def resume(self) -> None:
        """Presents them again."""
        check(_ffi.outlive_durable_interactions_resume(self.handle))

    def __len__(self) -> int:
        count = ctypes.c_size_t()
        check(_ffi.outlive_durable_interactions_count(self.handle, ctypes.byref(count)))
        return count.value

    def list(self) -> typing.List[typing.Tuple[str, str, int]]:
        """(id, handler name, times presented) of each stored interaction, first first."""
        out = _ffi.DurableInteractionListP()
        check(_ffi.outlive_durable_interaction_list_new(self.handle, None, 0, ctypes.byref(out)))
        try:
            return [(_ffi.outlive_durable_interaction_list_id(out, i).decode(),
                     _ffi.outlive_durable_interaction_list_handler_name(out, i).decode("utf-8"),
                     _ffi.outlive_durable_interaction_list_presentations(out, i))
                    for i in range(_ffi.outlive_durable_interaction_list_count(out))]
        finally:
            _ffi.outlive_durable_interaction_list_free(out)

    def remove(self, interaction_id: str) -> None:
        """Removes a stored interaction."""
        check(_ffi.outlive_durable_interactions_remove(self.handle, interaction_id.encode()))
