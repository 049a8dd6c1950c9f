"""Python objects the library calls back: C never holds a Python pointer,
only an integer key into this table; trampolines are created once, at module
level. An exception raised in a callback cannot cross C: it is kept and
re-raised when the C call that ran the callback (dispatch, update, a handler
call) returns — on a thread inside such a call (`collecting`, or a function
of `collecting_code` on its stack). On any other thread (the loop's own, from
run_thread; a C thread calling a handler) nobody would ever re-raise it, so it
goes to sys.unraisablehook at once."""
import ctypes
import itertools
import sys
import threading
import types
import typing

from . import _ffi

_lock = threading.Lock()
_table: typing.Dict[int, typing.Any] = {}
_keys = itertools.count(1)


class _State:
    """A thread's callback state: how deep it is in C calls whose callbacks'
    exceptions it re-raises, and those exceptions."""
    __slots__ = ("depth", "errors", "unraisable")

    def __init__(self) -> None:
        self.depth = 0
        self.errors: typing.List[BaseException] = []
        self.unraisable: typing.Optional[BaseException] = None


class _Local(threading.local):
    """Each thread's _State, present from its first use, as a plain object
    behind one thread-local read: every attribute access of a threading.local
    costs about 30 ns (a handler call from Python made five), and reading one
    a thread never set (getattr with a default) raises and catches an
    AttributeError inside, which costs more than a handler call."""

    def __init__(self) -> None:
        self.state = _State()


_local = _Local()


# For a caller that does what collecting() and raise_pending() do, inline
# (Handler.__call__): `local.state`, read once per call.
local = _local


def register(obj: typing.Any) -> int:
    with _lock:
        key = next(_keys)
        _table[key] = obj
        return key


def lookup(context: typing.Optional[int]) -> typing.Any:
    return _table.get(context or 0)


def forget(key: int) -> None:
    # A release callback can come from C while the interpreter shuts down,
    # after this module's globals were cleared: nothing is left to forget.
    lock, table = _lock, _table
    if lock is None or table is None:
        return
    with lock:
        table.pop(key, None)


@_ffi.RELEASE
def release(context: typing.Optional[int]) -> None:
    forget(context or 0)


class _Collecting:
    """Around a C call that may run callbacks on this thread: their exceptions
    are kept for raise_pending() instead of being reported as unraisable.
    (A plain class: it is around every dispatch and handler call, where a
    generator-based context manager costs more than the call.)"""
    __slots__ = ()

    def __enter__(self) -> None:
        _local.state.depth += 1

    def __exit__(self, *exc: object) -> None:
        _local.state.depth -= 1


_collecting = _Collecting()


def collecting() -> _Collecting:
    """The context manager around such a call (one object, used by every thread)."""
    return _collecting


_NO_ARGUMENTS = _ffi._callback_type(None)


@_NO_ARGUMENTS
def _raise_unraisable() -> None:
    # Raising inside a ctypes callback is how CPython's own machinery
    # (PyErr_WriteUnraisable) reports it to sys.unraisablehook.
    error = _local.state.unraisable
    if error is not None:
        raise error


def report_unraisable(error: BaseException) -> None:
    state = _local.state
    state.unraisable = error
    try:
        _raise_unraisable()
    finally:
        state.unraisable = None


# Functions that re-raise what the callbacks of their C call keep without
# counting themselves in the thread's depth (Handler.__call__: on the path of
# every handler call, where the two thread-local updates cost a tenth of the
# call): an exception is kept while one of them is on its thread's stack,
# which only an exception looks for.
collecting_code: typing.Set[types.CodeType] = set()
# The threads that kept an exception not raised yet. Such a function calls
# raise_pending() only while this is not empty: one test of a set instead of a
# thread-local read. (A thread that ended with an exception kept stays in it,
# which costs the others that raise_pending() per call, and nothing else.)
pending_threads: typing.Set[int] = set()


def _collected_on_this_thread() -> bool:
    frame: typing.Optional[types.FrameType] = sys._getframe(1)
    while frame is not None:
        if frame.f_code in collecting_code:
            return True
        frame = frame.f_back
    return False


def keep(error: BaseException) -> None:
    state = _local.state
    if not state.depth and not _collected_on_this_thread():
        report_unraisable(error)
        return
    state.errors.append(error)
    pending_threads.add(threading.get_ident())


def raise_pending() -> None:
    errors = _local.state.errors
    if errors:
        first = errors[0]
        errors.clear()
        pending_threads.discard(threading.get_ident())
        raise first


def as_bytes(pointer: typing.Any, size: int) -> bytes:
    return ctypes.string_at(pointer, size) if size else b""
