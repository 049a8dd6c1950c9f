"""Handlers: serializable callbacks. `Handler(name, **bound)` makes one;
`@handler("name")` declares a Python function as a handler for this process
(registered at run time; its signature comes from the annotations);
`load_handlers(path)` makes a C library's declared handlers resolvable."""
import ctypes
import inspect
import logging
import os
import threading
import types
import typing

from . import _callbacks, _ffi
from .errors import ClosedError, check, error_for
from .values import ID, Args, Int, UInteger, args_to_dict, object_value, value_bytes

_logger = logging.getLogger("outlive")


class Handler:
    """A handler value: a declared handler's name, bound arguments, an optional
    invalidation handler. Calling it runs the handler in this process."""

    def __init__(self, name: str, /, **bound):
        self._handle = None
        self._make(name, None, bound)

    @classmethod
    def with_invalidation(cls, name: str, invalidation: str, /, **bound) -> "Handler":
        """A handler whose invalidation handler `invalidation` runs on invalidate()."""
        self = cls.__new__(cls)
        self._handle = None
        self._make(name, invalidation, bound)
        return self

    def _make(self, name, invalidation, bound):
        if not isinstance(name, str):
            raise TypeError("a handler name is a str")
        out = ctypes.c_void_p()
        with Args(bound) as args:
            check(_ffi.outlive_handler_new(name.encode("utf-8"),
                                           None if invalidation is None else invalidation.encode("utf-8"),
                                           args.handle, ctypes.byref(out)))
        self._handle = out.value

    @classmethod
    def _adopt(cls, handle):
        self = cls.__new__(cls)
        self._handle = handle
        return self

    @classmethod
    def _copy_of(cls, borrowed):
        copy = ctypes.c_void_p()
        check(_ffi.outlive_handler_copy(borrowed, ctypes.byref(copy)))
        return cls._adopt(copy.value)

    @property
    def handle(self):
        if not self._handle:
            raise ClosedError("handler")
        return self._handle

    @property
    def name(self) -> str:
        return _ffi.outlive_handler_name(self.handle).decode("utf-8")

    @property
    def invalidation(self):
        name = _ffi.outlive_handler_invalidation_name(self.handle)
        return None if name is None else name.decode("utf-8")

    @property
    def bound(self) -> dict:
        out = ctypes.c_void_p()
        check(_ffi.outlive_handler_bound(self.handle, ctypes.byref(out)))
        try:
            return args_to_dict(out.value)
        finally:
            _ffi.outlive_args_free(out.value)

    @property
    def invalidated(self) -> bool:
        return bool(_ffi.outlive_handler_is_invalidated(self.handle))

    def bind(self, **more) -> "Handler":
        with Args(more) as args:
            check(_ffi.outlive_handler_bind(self.handle, args.handle))
        return self

    def __call__(self, **call_args) -> None:
        with Args(call_args) as args, _callbacks.collecting():
            status = _ffi.outlive_handler_call(self.handle, args.handle)
        _callbacks.raise_pending()
        check(status)

    def invalidate(self, **call_args) -> None:
        with Args(call_args) as args, _callbacks.collecting():
            status = _ffi.outlive_handler_invalidate(self.handle, args.handle)
        _callbacks.raise_pending()
        check(status)

    def __bytes__(self) -> bytes:
        data, size = ctypes.c_void_p(), ctypes.c_size_t()
        check(_ffi.outlive_handler_serialize(self.handle, ctypes.byref(data), ctypes.byref(size)))
        try:
            return ctypes.string_at(data.value, size.value)
        finally:
            _ffi.outlive_free(data)

    @classmethod
    def from_bytes(cls, blob) -> "Handler":
        blob = value_bytes(blob, "a serialized handler")
        out = ctypes.c_void_p()
        check(_ffi.outlive_handler_deserialize(blob, len(blob), ctypes.byref(out)))
        return cls._adopt(out.value)

    def copy(self) -> "Handler":
        return Handler._copy_of(self.handle)

    def __eq__(self, other):
        return isinstance(other, Handler) and bytes(self) == bytes(other)

    def __hash__(self):
        return hash(bytes(self))

    def __repr__(self):
        if not self._handle:
            return "<Handler (closed)>"
        return f"<Handler {_ffi.outlive_handler_description(self._handle).decode('utf-8', 'replace')}>"

    def close(self) -> None:
        if getattr(self, "_handle", None):
            handle, self._handle = self._handle, None
            _ffi.outlive_handler_free(handle)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def load_handlers(path) -> None:
    """dlopen()s a handler library: its OUTLIVE_HANDLER declarations become resolvable."""
    check(_ffi.outlive_handler_library_load(os.fsencode(path)))


def resolves(name: str) -> bool:
    """Whether a handler of that name is declared in this process now."""
    return _ffi.outlive_handler_resolve(name.encode("utf-8")) == 0


# ── run-time registration of Python functions ──────────────────────────────

_CTYPES = {"ID": ctypes.c_void_p, "HANDLER": ctypes.c_void_p, "BOOL": ctypes.c_bool, "INT": ctypes.c_int32,
           "DOUBLE": ctypes.c_double, "INTEGER": ctypes.c_int64, "UINTEGER": ctypes.c_uint64}
_registered = {}
_registered_lock = threading.Lock()
# Every trampoline ever registered, kept for the life of the process: another
# thread may be inside one (the library resolved it before a re-declaration or
# an unregister replaced it), and ctypes frees a trampoline's code with its
# last reference. One small object per declaration is the price.
_trampolines = []


def _unwrap_optional(annotation):
    origin = typing.get_origin(annotation)
    union_types = (typing.Union,) + ((types.UnionType,) if hasattr(types, "UnionType") else ())
    if origin in union_types:
        members = [member for member in typing.get_args(annotation) if member is not type(None)]
        if len(members) == 1 and len(typing.get_args(annotation)) == 2:
            return members[0], True
    return annotation, False


def _kind(annotation, parameter):
    base, optional = _unwrap_optional(annotation)
    if base is bool:
        kind = "BOOL"
    elif base is Int:
        kind = "INT"
    elif base is UInteger:
        kind = "UINTEGER"
    elif base is int:
        kind = "INTEGER"
    elif base is float:
        kind = "DOUBLE"
    elif base in (str, bytes, ID):
        kind = "ID"
    elif base is Handler:
        kind = "HANDLER"
    else:
        raise TypeError(f"parameter {parameter!r}: annotate it with bool, int, float, str, bytes, outlive.ID, "
                        f"outlive.Handler, outlive.Int or outlive.UInteger (Optional[...] for ID and Handler)")
    if optional and kind not in ("ID", "HANDLER"):
        raise TypeError(f"parameter {parameter!r}: only ID and Handler parameters can be optional")
    return kind, optional, base


def _converter(kind, base):
    if kind == "ID":
        def convert(pointer):
            if not pointer:
                return None
            value = object_value(pointer)
            return value.bytes.decode("utf-8") if base is str else value.bytes if base is bytes else value
        return convert
    if kind == "HANDLER":
        return lambda pointer: Handler._copy_of(pointer) if pointer else None
    if kind == "INT":
        return Int
    if kind == "UINTEGER":
        return UInteger
    return lambda value: value


def handler(name: str = None):
    """Declares the decorated function as the handler `name` in this process.
    Its parameters, from the annotations, become the declared signature.

    An exception it raises is re-raised by the Python call that ran it (a
    Handler call, or the loop's dispatch) — except when it runs as a task: a
    function that does not declare `completion` itself ends its task's attempt
    when it returns, and an exception fails the attempt (the task is retried
    with backoff, its error the exception's text) and is logged to the
    "outlive" logger instead of being raised into the loop. To do that the
    registered signature carries a trailing optional `completion` the function
    does not see."""
    def register(function):
        handler_name = name or function.__name__
        hints = typing.get_type_hints(function)
        parameters, converters = [], []
        for parameter in inspect.signature(function).parameters.values():
            if parameter.name not in hints:
                raise TypeError(f"handler {handler_name}: parameter {parameter.name!r} has no annotation")
            kind, optional, base = _kind(hints[parameter.name], parameter.name)
            parameters.append((parameter.name, kind, optional))
            converters.append(_converter(kind, base))
        ends_attempt = all(parameter != "completion" for parameter, _, _ in parameters)
        if ends_attempt:
            parameters.append(("completion", "HANDLER", True))
        signature = ", ".join(f"{kind}{'?' if optional else ''} {parameter}" for parameter, kind, optional in parameters)
        prototype = ctypes.CFUNCTYPE(None, *[_CTYPES[kind] for _, kind, _ in parameters])

        def trampoline(*raw):
            completion = raw[-1] if ends_attempt else None
            values = raw[:-1] if ends_attempt else raw
            try:
                function(*[convert(value) for convert, value in zip(converters, values)])
            except BaseException as error:
                if not completion:
                    _callbacks.keep(error)
                    return
                _logger.warning("handler %s failed its task's attempt", handler_name, exc_info=error)
                _complete(completion, success=False, error=f"{type(error).__name__}: {error}")
                return
            if completion:
                _complete(completion, success=True)

        c_function = prototype(trampoline)
        with _registered_lock:
            check(_ffi.outlive_handler_register(handler_name.encode("utf-8"), signature.encode("utf-8"),
                                        ctypes.cast(c_function, ctypes.c_void_p)))
            _registered[handler_name] = c_function
            _trampolines.append(c_function)
        function.outlive_name = handler_name
        function.outlive_signature = signature
        return function

    return register


def _complete(completion, **outcome) -> None:
    """Ends a task's attempt through its borrowed completion handler."""
    with Args(outcome) as args:
        status = _ffi.outlive_handler_call(completion, args.handle)
    if status != 0:
        _logger.warning("completing a task's attempt failed: %s", error_for(status))


def unregister(name: str) -> None:
    with _registered_lock:
        check(_ffi.outlive_handler_unregister(name.encode("utf-8")))
        _registered.pop(name, None)
