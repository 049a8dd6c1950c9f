"""A store: a directory shared by every process that opens it."""
from __future__ import annotations

import ctypes
import enum
import os
import typing
from collections.abc import MutableMapping

from . import _callbacks, _ffi
from ._handle import NativeHandle
from .errors import NotFoundError, Status, check
from .loop import Loop
from .values import value_bytes

if typing.TYPE_CHECKING:
    from .messages import Messages
    from .signals import Signals
    from .task_function import TaskFunction, Unique
    from .tasks import ResultOption, Tasks

P = typing.ParamSpec("P")
R = typing.TypeVar("R")

UNCHANGED = object()
"""Returned by an update function: leave the value as it is."""



class Durability(str, enum.Enum):
    """FULL: a commit survives power loss (synchronous=FULL). NORMAL: it
    survives a crash of the process, not of the machine, and is faster."""
    FULL = "full"
    NORMAL = "normal"


# The C values of OUTLIVE_DURABILITY_*.
_DURABILITY_CODES = {Durability.FULL: 1, Durability.NORMAL: 2}


def _encode(text: str, what: str) -> bytes:
    if not isinstance(text, str):
        raise TypeError(f"{what} must be str, not {type(text).__name__}")
    return text.encode("utf-8")


class Store(NativeHandle):
    """Opens (creating if needed) the store at `path` as a run of `process`:
    a directory, or a ``postgresql://`` (``postgres://``) URI for processes on
    several hosts (see outlive_store_open in outlive.h and docs/postgresql.md;
    `liveness`: the PostgreSQL liveness bound in seconds, None for the URI's
    ``outlive_liveness`` or 10). loop=None: the store makes its own loop
    (`store.loop`). close() ends this run (its this-run signal consumers go,
    its claims are released)."""

    _what = "store"

    def _release(self, handle: typing.Any) -> None:
        loop = self.__dict__.get("loop")
        if loop is not None and not loop._owned:
            # The store's own loop goes with it: the Python Loop object forgets
            # the pointer first, so that its later use raises ClosedError
            # instead of dispatching freed memory.
            loop._detach(loop._handle) if loop._handle else None
            loop._handle = None
        _ffi.outlive_store_close(handle)

    def __init__(self, path: "str | os.PathLike[str]", process: str = "app", loop: typing.Optional[Loop] = None,
                 durability: "Durability | str" = Durability.FULL, busy_timeout: float = 10.0,
                 liveness: typing.Optional[int] = None) -> None:
        try:
            durability = Durability(durability)
        except ValueError:
            raise ValueError(f"durability is 'full' or 'normal', not {durability!r}") from None
        if liveness is not None and (isinstance(liveness, bool) or not isinstance(liveness, int)):
            raise TypeError(f"liveness must be a whole number of seconds or None, not {type(liveness).__name__}")
        options = _ffi.StoreOptions(2, _DURABILITY_CODES[durability], int(busy_timeout * 1000), liveness or 0)
        handle = _ffi.StoreP()
        check(_ffi.outlive_store_open(os.fsencode(path), _encode(process, "process"),
                                      loop.handle if loop else None, ctypes.byref(options), ctypes.byref(handle)))
        self._handle = handle
        self.path: str = os.fspath(path)
        self.loop: Loop = loop if loop is not None else Loop(_handle=_ffi.outlive_store_loop(self._handle))
        self.kv: KeyValue = KeyValue(self)
        from .messages import Messages
        from .signals import Signals
        from .schedules import Schedules
        from .task_function import opened
        from .tasks import TaskQueues, Tasks
        self.messages: Messages = Messages(self)
        self.signals: Signals = Signals(self)
        self.tasks: Tasks = Tasks(self)
        self.queues: TaskQueues = TaskQueues(self)
        self.schedules: Schedules = Schedules(self)
        opened(self)

    @property
    def run_id(self) -> str:
        """This run's id (a new one each time the store is opened)."""
        return str(_ffi.outlive_store_run_id(self.handle).decode())

    def check(self) -> None:
        """Raises StateError when this handle no longer acts as a live run:
        its run ended while it was open (PostgreSQL: its connection to the
        server was lost) or it was inherited across fork(). No I/O; the handle
        learns it while its loop dispatches. Close it and open the store again."""
        check(_ffi.outlive_store_check(self.handle))

    @property
    def process(self) -> str:
        """The process name this run was opened as."""
        return str(_ffi.outlive_store_process_name(self.handle).decode())

    @typing.overload
    def task(self, function: typing.Callable[P, R], /) -> "TaskFunction[P, R]": ...

    @typing.overload
    def task(self, *, name: typing.Optional[str] = None, queue: typing.Optional[str] = None, priority: int = 0,
             unique: "Unique" = None, result: "ResultOption" = False
             ) -> typing.Callable[[typing.Callable[P, R]], "TaskFunction[P, R]"]: ...

    def task(self, function: typing.Optional[typing.Callable[..., typing.Any]] = None, *,
             name: typing.Optional[str] = None, queue: typing.Optional[str] = None, priority: int = 0,
             unique: "Unique" = None, result: "ResultOption" = False) -> typing.Any:
        """`@store.task`: as `@outlive.task` (same options), its tasks added
        to this store. Its tasks run in a process that serves
        (`store.tasks.serve()`)."""
        from .task_function import _decorator
        return _decorator(function, name, self, queue, priority, unique, result)



@_ffi.KV_MODIFIER
def _modifier_trampoline(value: typing.Any, context: typing.Optional[int]) -> int:
    function = _callbacks.lookup(context)
    size = ctypes.c_size_t()
    pointer = _ffi.outlive_kv_value_bytes(value, ctypes.byref(size))
    current = None if pointer is None else _callbacks.as_bytes(pointer, size.value)
    try:
        result = function(current)
        if result is UNCHANGED:
            return 0
        if result is None:
            return int(_ffi.outlive_kv_value_delete(value)) if current is not None else 0
        data = value_bytes(result, "the update function's result")
        return int(_ffi.outlive_kv_value_set(value, data, len(data)))
    except BaseException as error:
        _callbacks.keep(error)
        return Status.STATE  # the update is abandoned, the exception re-raised


@_ffi.KV_OBSERVER
def _observer_trampoline(key: bytes, pointer: typing.Any, size: int, context: typing.Optional[int]) -> None:
    function = _callbacks.lookup(context)
    if function is None:
        return
    try:
        function(key.decode("utf-8"), None if pointer is None else _callbacks.as_bytes(pointer, size))
    except BaseException as error:
        _callbacks.keep(error)


class Observation:
    """An observer registration; `cancel()` stops it."""

    def __init__(self, kv: "KeyValue", token: int) -> None:
        self._kv = kv
        self.token: typing.Optional[int] = token

    def cancel(self) -> None:
        """Stops the observer (again: nothing)."""
        if self.token is not None:
            check(_ffi.outlive_kv_unobserve(self._kv._store.handle, self.token))
            self.token = None


class KeyValue(MutableMapping[str, bytes]):
    """`store.kv`: a mutable mapping of str to bytes, shared by every process."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def __getitem__(self, key: str) -> bytes:
        data, size = ctypes.c_void_p(), ctypes.c_size_t()
        try:
            check(_ffi.outlive_kv_get(self._store.handle, _encode(key, "key"), ctypes.byref(data), ctypes.byref(size)))
        except NotFoundError:
            raise KeyError(key) from None
        try:
            return _callbacks.as_bytes(data.value, size.value)
        finally:
            _ffi.outlive_free(data)

    def __setitem__(self, key: str, value: typing.Union[bytes, bytearray, memoryview]) -> None:
        data = value_bytes(value, "a value")
        check(_ffi.outlive_kv_set(self._store.handle, _encode(key, "key"), data, len(data)))

    def __delitem__(self, key: str) -> None:
        try:
            check(_ffi.outlive_kv_delete(self._store.handle, _encode(key, "key")))
        except NotFoundError:
            raise KeyError(key) from None

    def keys_with_prefix(self, prefix: str = "") -> typing.Iterator[str]:
        """The keys under `prefix`, in order, a page at a time."""
        after = None
        encoded = _encode(prefix, "prefix")
        while True:
            # One page of keys per snapshot; the next starts after its last key.
            out = _ffi.KvKeyListP()
            check(_ffi.outlive_kv_key_list_new(self._store.handle, encoded, after, 1000, ctypes.byref(out)))
            try:
                page = [_ffi.outlive_kv_key_list_key(out, i) for i in range(_ffi.outlive_kv_key_list_count(out))]
            finally:
                _ffi.outlive_kv_key_list_free(out)
            if not page:
                return
            after = page[-1]
            for key in page:
                yield str(key.decode("utf-8"))

    def __iter__(self) -> typing.Iterator[str]:
        return self.keys_with_prefix("")

    def __len__(self) -> int:
        count = ctypes.c_size_t()
        check(_ffi.outlive_kv_count(self._store.handle, b"", ctypes.byref(count)))
        return count.value

    def update(self, *args: typing.Any, **kwargs: typing.Any) -> None:
        """update(key, fn): atomic read-modify-write across processes. fn gets
        the current bytes (None if absent) and returns new bytes, None to delete,
        or outlive.UNCHANGED. It runs exactly once; if it raises, nothing changes
        and the exception propagates. Other forms behave like dict.update."""
        if len(args) == 2 and callable(args[1]) and isinstance(args[0], str) and not kwargs:
            key, function = args
            handle = _callbacks.register(function)
            try:
                with _callbacks.collecting():
                    status = _ffi.outlive_kv_update(self._store.handle, _encode(key, "key"), _modifier_trampoline, handle)
            finally:
                _callbacks.forget(handle)
            _callbacks.raise_pending()
            check(status)
            return
        MutableMapping.update(self, *args, **kwargs)

    def observe(self, prefix: str, function: typing.Callable[[str, typing.Optional[bytes]], None]) -> Observation:
        """Calls function(key, value_or_None) on the store's loop for keys under
        prefix changed by any process."""
        token = ctypes.c_uint64()
        handle = _callbacks.register(function)
        status = _ffi.outlive_kv_observe(self._store.handle, _encode(prefix, "prefix"),
                                                      _observer_trampoline, handle, _callbacks.release,
                                                      ctypes.byref(token))
        if status != 0:
            _callbacks.forget(handle)
        check(status)
        return Observation(self, token.value)
