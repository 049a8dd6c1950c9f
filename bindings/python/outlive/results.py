"""Results of tasks, as refs: `ref = f.options(result=True).delay(...)` (or
`store.tasks.add(..., result=True)`), then `ref.result(timeout=...)`, or
`await ref` in asyncio code.

A task added with a result gets a result signal and, in the add's own
transaction, a consumer of it: the handler `outlive.python.task_result`,
declared in every process that imports outlive. The final version (success,
dead, cancelled) and any progress the task's function posts
(`outlive.task_progress`) reach that consumer, which hands them to the ref
waiting in this process. With lifetime "this_run" the consumer ends with this
store handle; with "process" it outlives it: a later run of a process of the
same name that opens the store receives the result, and
`store.tasks.ref(task_id).result()` returns it there."""
from __future__ import annotations

import concurrent.futures
import contextvars
import ctypes
import datetime
import json
import pathlib
import threading
import time
import typing

from . import _callbacks, _ffi
from .errors import StateError, Status, check
from .values import ID, object_value

if typing.TYPE_CHECKING:
    import asyncio

    from .store import Store

R = typing.TypeVar("R")

CONSUMER = "outlive.python.task_result"
"""The handler that receives a task's result and progress in a Python process."""

# Waiters of "process" consumers: a final that finds no ref in this process is
# kept for store.tasks.ref(); a "this_run" one whose ref is gone is dropped.
PROCESS_PREFIX = "process:"

_SIGNATURE = ("ID signal_id, UINTEGER version, BOOL terminated, ID? waiter, ID? task_id, ID? outcome, ID? error, "
              "ID? result, ID? progress")


class TaskDeadError(Exception):
    """The task is dead: it failed its last attempt (`last_error` says why).
    It may still be retried (store.tasks.retry), but this result was final."""

    def __init__(self, task_id: str, last_error: typing.Optional[str]) -> None:
        super().__init__(f"task {task_id} is dead: {last_error}")
        self.task_id = task_id
        self.last_error = last_error


class TaskCancelledError(concurrent.futures.CancelledError):
    """The task was cancelled (store.tasks.cancel, ref.cancel, or a pending
    task deleted): it never ran, or its attempt's end was ignored."""

    def __init__(self, task_id: str) -> None:
        super().__init__(f"task {task_id} was cancelled")
        self.task_id = task_id


# ── values ──────────────────────────────────────────────────────────────────

def _plain(value: typing.Any) -> typing.Any:
    if isinstance(value, pathlib.PurePath):
        return str(value)
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON-able")


def to_json(value: typing.Any, what: str) -> ID:
    """`value` as an `ID<json>` (TypeError for a value JSON cannot carry)."""
    try:
        return ID(json.dumps(value, default=_plain, allow_nan=False, separators=(",", ":")), type="json")
    except (TypeError, ValueError) as error:
        raise TypeError(f"{what}: {error} (it travels as JSON)") from None


def _text(pointer: typing.Any) -> typing.Optional[ID]:
    return object_value(pointer) if pointer else None


def _value(raw: typing.Optional[ID]) -> typing.Any:
    """A payload value: JSON decoded, a plain ID as its text."""
    if raw is None:
        return None
    text = raw.bytes.decode("utf-8", "replace")
    if raw.type == "json":
        return json.loads(text)
    return text


# ── what arrived ────────────────────────────────────────────────────────────

class _Final(typing.NamedTuple):
    task_id: str
    outcome: str
    error: typing.Optional[str]
    result: typing.Optional[ID]


class _Waiter:
    """What one ref has received so far; filled on the thread that dispatches."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.arrived = threading.Event()
        self.progress: typing.List[typing.Any] = []
        self.callbacks: typing.List[typing.Callable[[typing.Any], None]] = []
        self.final: typing.Optional[_Final] = None
        self.futures: typing.List[typing.Tuple["asyncio.AbstractEventLoop", "asyncio.Future[_Final]"]] = []

    def settle(self, final: _Final) -> None:
        with self.lock:
            if self.final is not None:
                return
            self.final = final
            futures, self.futures = self.futures, []
        self.arrived.set()
        for loop, future in futures:
            loop.call_soon_threadsafe(_resolve, future, final)


def _resolve(future: "asyncio.Future[_Final]", final: _Final) -> None:
    if not future.done():
        future.set_result(final)


_lock = threading.Lock()
_waiters: typing.Dict[str, _Waiter] = {}
# Finals delivered to this process for no ref of it (a "process" consumer
# registered by an earlier run), by task id, until store.tasks.ref() claims them.
_unclaimed: typing.Dict[str, _Final] = {}
_unclaimed_event = threading.Condition(_lock)


def _receive(signal_id: typing.Any, version: int, terminated: bool, waiter: typing.Any, task_id: typing.Any,
             outcome: typing.Any, error: typing.Any, result: typing.Any, progress: typing.Any) -> None:
    try:
        key = _value(_text(waiter))
        with _lock:
            found = _waiters.get(key) if isinstance(key, str) else None
        if not terminated:
            if found is None:
                return
            value = _value(_text(progress))
            with found.lock:
                found.progress.append(value)
                callbacks = list(found.callbacks)
            for callback in callbacks:
                callback(value)
            return
        final = _Final(str(_value(_text(task_id)) or ""), str(_value(_text(outcome)) or "success"),
                       _value(_text(error)), _text(result))
        if found is not None:
            found.settle(final)
        elif isinstance(key, str) and key.startswith(PROCESS_PREFIX):
            with _lock:
                _unclaimed[final.task_id] = final
                _unclaimed_event.notify_all()
    except BaseException as failure:
        _callbacks.keep(failure)


_prototype = ctypes.CFUNCTYPE(None, _ffi.ObjectP, ctypes.c_uint64, ctypes.c_bool, _ffi.ObjectP, _ffi.ObjectP,
                              _ffi.ObjectP, _ffi.ObjectP, _ffi.ObjectP, _ffi.ObjectP)
_trampoline = _prototype(_receive)


def register_consumer() -> None:
    """Declares the result consumer in this process (at import of outlive)."""
    check(_ffi.outlive_handler_register(CONSUMER.encode(), _SIGNATURE.encode(),
                                        ctypes.cast(_trampoline, ctypes.c_void_p)))


# Keys of waiters whose ref was freed while _lock was taken, dropped by the
# next new_waiter (list.append and list.pop need no lock of ours).
_forgotten: typing.List[str] = []


def new_waiter(key: str) -> None:
    waiter = _Waiter()
    with _lock:
        while _forgotten:
            _waiters.pop(_forgotten.pop(), None)
        _waiters[key] = waiter


def forget_waiter(key: str) -> None:
    # Called by TaskRef.__del__, which the garbage collector runs on whichever
    # thread allocates, maybe one that holds _lock (a collection can start at
    # any allocation under it): never wait for the lock there, or the thread
    # waits for itself for ever. The key is dropped later instead.
    if not _lock.acquire(blocking=False):
        _forgotten.append(key)
        return
    try:
        _waiters.pop(key, None)
    finally:
        _lock.release()


# ── progress, from a running task ───────────────────────────────────────────

current_signal: "contextvars.ContextVar[typing.Optional[str]]" = contextvars.ContextVar("outlive_result_signal",
                                                                                        default=None)


def task_progress(value: typing.Any, *, store: typing.Optional["Store"] = None) -> bool:
    """Posts `value` (JSON-able) as progress of the task whose function is
    running (a task function called as a task): every ref waiting for its
    result receives it, in order, before the result. Returns False, posting
    nothing, when the task was added without a result (or outside a task).
    The post goes through `store`, default the only store open in this
    process (a worker's)."""
    signal = current_signal.get()
    if signal is None:
        return False
    payload = to_json(value, "progress")
    if store is None:
        from .task_function import only_open_store
        store = only_open_store("task_progress")
    from .values import Args
    with Args({"progress": payload}) as args:
        check(_ffi.outlive_signal_post(store.handle, signal.encode(), args.handle, False))
    return True


# ── the ref ─────────────────────────────────────────────────────────────────

class TaskRef(str, typing.Generic[R]):
    """A task added: its id (a `str`, so it goes wherever an id does) and,
    when it was added with a result, the way to wait for it.

    `result(timeout)` blocks, dispatching the store's loop (or, when another
    thread dispatches it, waiting for that thread), and returns the task's
    return value — raises TaskDeadError (with the last error) for a dead task,
    TaskCancelledError for a cancelled one, TimeoutError after `timeout`
    seconds. `await ref` (or `await ref.result_async(timeout)`) waits on the
    running asyncio loop, attaching the store's loop to it meanwhile when
    nothing dispatches it. `progress()` lists the progress received so far;
    `on_progress(callback)` calls back for each on the dispatching thread.
    `existing` is True when a unique key was held: the ref is then the
    holder's, and waits for its result (if it was added with one)."""

    _store: typing.Optional["Store"]
    # Defaults on the class: a plain add sets only its store (each attribute
    # set on a new ref cost about a tenth of what store.tasks.add does in Python).
    _waiter: typing.Optional[str] = None
    _decode: typing.Callable[[typing.Any], R]
    _final: typing.Optional[_Final] = None
    existing: bool = False

    def __new__(cls, task_id: str, store: typing.Optional["Store"] = None, *, waiter: typing.Optional[str] = None,
                existing: bool = False,
                decode: typing.Optional[typing.Callable[[typing.Any], R]] = None) -> "TaskRef[R]":
        self = str.__new__(cls, task_id)
        self._store = store
        if waiter is not None:
            self._waiter = waiter
        # Not typing.cast(Callable[[Any], R], ...): its subscript is built on
        # every call, a tenth of what store.tasks.add costs in Python.
        self._decode = decode if decode is not None else _identity
        if existing:
            self.existing = existing
        return self

    @property
    def id(self) -> str:
        """The task's id."""
        return str.__str__(self)

    def __repr__(self) -> str:
        return f"<TaskRef {self.id}{' (existing)' if self.existing else ''}>"

    def __reduce__(self) -> typing.Tuple[typing.Any, ...]:
        return (str, (self.id,))

    def _entry(self) -> typing.Optional[_Waiter]:
        if self._waiter is None:
            return None
        with _lock:
            return _waiters.get(self._waiter)

    def _store_or_fail(self) -> "Store":
        if self._store is None:
            raise StateError(int(Status.STATE), f"task {self.id}: this ref has no store")
        return self._store

    def _arrived(self) -> typing.Optional[_Final]:
        if self._final is not None:
            return self._final
        entry = self._entry()
        if entry is not None:
            final = entry.final
        else:
            with _lock:
                final = _unclaimed.pop(self.id, None)
        if final is not None:
            if entry is not None:
                with entry.lock:
                    self._progress = list(entry.progress)
            self._final = final
            if self._waiter is not None:
                forget_waiter(self._waiter)
        return final

    def _check_waitable(self) -> None:
        if self._waiter is None and self._store is not None and not getattr(self, "_claimable", False):
            raise StateError(int(Status.STATE), f"task {self.id} was added without a result: add it with result=True "
                                                "(or .options(result=True)) to wait for it")

    def _outcome(self, final: _Final) -> R:
        if final.outcome == "dead":
            raise TaskDeadError(final.task_id or self.id, final.error)
        if final.outcome == "cancelled":
            raise TaskCancelledError(final.task_id or self.id)
        return self._decode(_value(final.result))

    def done(self) -> bool:
        """Whether the result has arrived in this process (no dispatch)."""
        return self._arrived() is not None

    def result(self, timeout: typing.Optional[float] = None) -> R:
        """The task's result, waiting up to `timeout` seconds (None: for ever)."""
        self._check_waitable()
        store = self._store_or_fail()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            final = self._arrived()
            if final is not None:
                return self._outcome(final)
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError(f"task {self.id}: no result within {timeout} s")
            step = 0.5 if left is None else min(left, 0.5)
            if store.loop._dispatched_elsewhere():
                entry = self._entry()
                if entry is not None:
                    entry.arrived.wait(step)
                else:
                    with _unclaimed_event:
                        _unclaimed_event.wait(step)
            else:
                store.loop.dispatch(timeout=step)

    async def result_async(self, timeout: typing.Optional[float] = None) -> R:
        """The task's result, awaited on the running asyncio loop (see the class)."""
        import asyncio
        self._check_waitable()
        store = self._store_or_fail()
        final = self._arrived()
        if final is not None:
            return self._outcome(final)
        loop = asyncio.get_running_loop()
        attached = store.loop._borrow(loop)
        try:
            entry = self._entry()
            if entry is not None:
                future: "asyncio.Future[_Final]" = loop.create_future()
                with entry.lock:
                    if entry.final is None:
                        entry.futures.append((loop, future))
                    else:
                        future.set_result(entry.final)
                try:
                    await asyncio.wait_for(future, timeout)
                except asyncio.TimeoutError:
                    raise TimeoutError(f"task {self.id}: no result within {timeout} s") from None
            else:
                deadline = None if timeout is None else loop.time() + timeout
                while self._arrived() is None:
                    if deadline is not None and loop.time() >= deadline:
                        raise TimeoutError(f"task {self.id}: no result within {timeout} s")
                    await asyncio.sleep(0.05)
        finally:
            if attached:
                store.loop._unborrow()
        final = self._arrived()
        assert final is not None
        return self._outcome(final)

    def __await__(self) -> typing.Generator[typing.Any, None, R]:
        return self.result_async().__await__()

    def progress(self) -> typing.List[typing.Any]:
        """The progress values received so far, in order (JSON values)."""
        entry = self._entry()
        if entry is None:
            return list(getattr(self, "_progress", []))
        with entry.lock:
            return list(entry.progress)

    def on_progress(self, callback: typing.Callable[[typing.Any], None]) -> None:
        """Calls `callback(value)` for each progress value received from now
        on, on the thread that dispatches the store's loop."""
        self._check_waitable()
        entry = self._entry()
        if entry is not None:
            with entry.lock:
                entry.callbacks.append(callback)

    def cancel(self) -> bool:
        """Cancels the task (store.tasks.cancel): True when it was running and
        is told, False when it was pending and is removed."""
        return self._store_or_fail().tasks.cancel(self.id)

    def __del__(self) -> None:
        try:
            if self._waiter is not None:
                forget_waiter(self._waiter)
        except Exception:
            pass


def claim(task_id: str, store: "Store") -> "TaskRef[typing.Any]":
    """A ref for a task whose result reaches this process through a "process"
    consumer registered by an earlier run."""
    ref: TaskRef[typing.Any] = TaskRef(task_id, store)
    ref._claimable = True  # type: ignore[attr-defined]
    return ref


def _identity(value: typing.Any) -> typing.Any:
    return value


_new_str = str.__new__


def plain_ref(task_id: str, store: "Store") -> "TaskRef[typing.Any]":
    """TaskRef(task_id, store), made without TaskRef.__new__'s keyword
    arguments: the ref of every plain add (half of what its Python costs
    beside the C call was that call)."""
    ref: TaskRef[typing.Any] = _new_str(TaskRef, task_id)
    ref._store = store
    ref._decode = _identity
    return ref
