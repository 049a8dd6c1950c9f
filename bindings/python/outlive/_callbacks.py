"""Python objects the library calls back: C never holds a Python pointer,
only an integer key into this table; trampolines are created once, at module
level. An exception raised in a callback cannot cross C: it is kept and
re-raised when the C call that ran the callback (dispatch, update) returns."""
import ctypes
import itertools
import threading

from . import _ffi

_lock = threading.Lock()
_table = {}
_keys = itertools.count(1)
_pending = threading.local()


def register(obj) -> int:
    with _lock:
        key = next(_keys)
        _table[key] = obj
        return key


def lookup(context):
    return _table.get(context or 0)


def forget(key) -> None:
    with _lock:
        _table.pop(key, None)


@_ffi.RELEASE
def release(context):
    forget(context or 0)


def keep(error: BaseException) -> None:
    errors = getattr(_pending, "errors", None)
    if errors is None:
        errors = _pending.errors = []
    errors.append(error)


def raise_pending() -> None:
    errors = getattr(_pending, "errors", None)
    if errors:
        first = errors[0]
        errors.clear()
        raise first


def as_bytes(pointer, size) -> bytes:
    return ctypes.string_at(pointer, size) if size else b""
