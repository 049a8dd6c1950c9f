"""Handlers: serializable callbacks. `Handler(name, **bound)` makes one;
`@handler("name")` declares a Python function as a handler for this process
(registered at run time; its signature comes from the annotations);
`load_handlers(path)` makes a C library's declared handlers resolvable."""
import ctypes
import inspect
import logging
import os
import threading
import typing

from . import _callbacks, _ffi, results
from .errors import ClosedError, check, error_for
from .parameters import Parameter, parameters_of
from .values import Args, args_to_dict, note_checked, object_bytes, serialized_handler, value_bytes
from .values import _LENGTHS, _UNTAGGED, _checked_heads, _checked_keys, _lone_ids
from .values import serialized_arguments as _serialized_arguments

if typing.TYPE_CHECKING:
    import asyncio

_logger = logging.getLogger("outlive")
_call_serialized = _ffi.handler_call_serialized
# The same call without ctypes where outlive._speedups is built (_ffi.speedups);
# its call_lone makes the common call, one str argument of a name accepted
# before, from `_lone_ids` itself (None when the call is another).
_fast_call = _call_lone = None
if _ffi.speedups is not None:
    _ffi.speedups.bind_lone_ids(_lone_ids)
    _fast_call, _call_lone = _ffi.speedups.call, _ffi.speedups.call_lone
# A task's completion, sent from inside its handler's call (_complete_success).
_call_args = _ffi.speedups.call_args if _ffi.speedups is not None else None
_SIZES = _ffi._SIZES
_size_arg = _ffi.size_arg
_pending_threads = _callbacks.pending_threads
_free = _ffi.BY_ADDRESS["outlive_handler_free"]
_call_by_address = _ffi.BY_ADDRESS["outlive_handler_call"]
_deserialize: typing.Any = _ffi.outlive_handler_deserialize
_byref = ctypes.byref
_ONE = _LENGTHS[1]
_join = b"".join
# Held while a Handler's native handler is made from its bytes: once, whatever
# number of threads use it first at the same time.
_making = threading.Lock()


class Handler:
    """A handler value: a declared handler's name, bound arguments, an optional
    invalidation handler. Calling it runs the handler in this process."""

    # The native handler; until its first use, a handler the library accepts
    # for certain (values.serialized_handler's `checked`) is only its bytes,
    # `_data`: a task add takes them as they are (tasks.py), without the two C
    # calls that make and free a native one (about a tenth of an add from
    # Python). At most one of the two is set; neither once closed.
    _handle: typing.Any = None
    _data: typing.Optional[bytes] = None

    def __init__(self, name: str, /, **bound: typing.Any) -> None:
        """The handler `name` with `bound` arguments (Python values, see outlive.values)."""
        if len(bound) == 1 and type(name) is str:
            # serialized_handler's checked way, inline for one short str (a
            # task's item, the common add; a Python call costs about a tenth of this).
            key, = bound
            value = bound[key]
            if type(value) is str:
                head, encoded_key = _checked_heads.get(name), _checked_keys.get(key)
                if head is not None and encoded_key is not None and value.isascii() and len(value) < 0x80:
                    self._data = _join((head, _ONE, encoded_key, _UNTAGGED, _LENGTHS[len(value)], value.encode()))
                    return
        data = serialized_handler(name, None, bound, True)
        if data is not None:
            self._data = data
            return
        # _make's first way, inline: a handler is made for every task added.
        data = serialized_handler(name, None, bound)
        if data is not None:
            out = _ffi.HandlerP()
            if _deserialize(data, len(data), _byref(out)) == 0:
                self._handle = out
                note_checked(name, bound)
                return
        self._make(name, None, bound, tried=True)

    def _native(self) -> typing.Any:
        """The native handler, made from `_data` at the first use that needs
        it; ClosedError once closed."""
        with _making:
            handle = self._handle
            if handle:
                return handle
            data = self._data
            if data is None:
                raise ClosedError("handler")
            out = _ffi.HandlerP()
            check(_deserialize(data, len(data), _byref(out)))
            self._handle = out
            self._data = None
            return out

    @classmethod
    def with_invalidation(cls, name: str, invalidation: str, /, **bound: typing.Any) -> "Handler":
        """A handler whose invalidation handler `invalidation` runs on invalidate()."""
        self = cls.__new__(cls)
        self._handle = None
        self._make(name, invalidation, bound)
        return self

    def _make(self, name: str, invalidation: typing.Optional[str], bound: typing.Dict[str, typing.Any],
              tried: bool = False) -> None:
        if not isinstance(name, str):
            raise TypeError("a handler name is a str")
        out = _ffi.HandlerP()
        # One C call instead of one per argument; what the decoder refuses,
        # the setters and outlive_handler_new explain.
        data = None if tried else serialized_handler(name, invalidation, bound)
        if data is not None and _deserialize(data, len(data), _byref(out)) == 0:
            self._handle = out
            return
        with Args(bound) as args:
            check(_ffi.outlive_handler_new(name.encode("utf-8"),
                                           None if invalidation is None else invalidation.encode("utf-8"),
                                           args.handle, ctypes.byref(out)))
        self._handle = out

    @classmethod
    def _adopt(cls, handle: typing.Any) -> "Handler":
        self = cls.__new__(cls)
        self._handle = handle
        return self

    @classmethod
    def _copy_of(cls, borrowed: typing.Any) -> "Handler":
        copy = _ffi.HandlerP()
        check(_ffi.outlive_handler_copy(borrowed, ctypes.byref(copy)))
        return cls._adopt(copy)

    @property
    def handle(self) -> typing.Any:
        """The native pointer; ClosedError once closed."""
        return self._handle or self._native()

    @property
    def name(self) -> str:
        """The handler's name."""
        return str(_ffi.outlive_handler_name(self.handle).decode("utf-8"))

    @property
    def invalidation(self) -> typing.Optional[str]:
        """The invalidation handler's name, if any."""
        name = _ffi.outlive_handler_invalidation_name(self.handle)
        return None if name is None else str(name.decode("utf-8"))

    @property
    def bound(self) -> typing.Dict[str, typing.Any]:
        """The bound arguments, as Python values."""
        out = _ffi.ArgsP()
        check(_ffi.outlive_handler_bound(self.handle, ctypes.byref(out)))
        try:
            return args_to_dict(out)
        finally:
            _ffi.outlive_args_free(out)

    @property
    def invalidated(self) -> bool:
        """Whether invalidate() ran."""
        return bool(_ffi.outlive_handler_is_invalidated(self.handle))

    def bind(self, **more: typing.Any) -> "Handler":
        """Binds more arguments (in place); returns the handler."""
        with Args(more) as args:
            check(_ffi.outlive_handler_bind(self.handle, args.handle))
        return self

    def __call__(self, **call_args: typing.Any) -> None:
        """Calls the handler in this process with these call-time arguments."""
        handle = self._handle or self._native()  # self.handle, without a property call
        if _call_lone is not None:
            status = _call_lone(handle.value, call_args)
            if status is not None:
                if _pending_threads:
                    _callbacks.raise_pending()
                if status:
                    raise error_for(status)
                return
        # The path of every call, where each Python step costs about what the
        # C call does: the arguments as bytes in one C call (bound without
        # argtypes, see _ffi.handler_call_serialized), nothing kept between
        # calls; the exceptions of Python handlers it runs are kept for it as
        # for a function of _callbacks.collecting_code (registered below).
        data = None
        if len(call_args) == 1:
            # serialized_arguments' first case, inline (a Python call costs
            # about a tenth of this one): a lone str argument.
            key, = call_args
            value = call_args[key]
            if type(value) is str:
                head = _lone_ids.get(key)
                if head is not None:
                    text = value.encode()
                    size = len(text)
                    if size < 0x80:
                        data = head + _LENGTHS[size] + text
        if data is None:
            data = _serialized_arguments(call_args)
            if data is None:
                self._call_through_setters(handle, call_args)
                return
        if _fast_call is not None:
            status = _fast_call(handle.value, data)
        else:
            size = len(data)
            status = _call_serialized(handle, data, _SIZES[size] if size < 512 else _size_arg(size))
        if _pending_threads:
            _callbacks.raise_pending()
        if status:
            raise error_for(status)

    @staticmethod
    def _call_through_setters(handle: typing.Any, call_args: typing.Dict[str, typing.Any]) -> None:
        """A call with what the bytes leave out (handler or ID values, ints
        past 64 bits, bad names, values past the limits): the setters raise the
        precise error, and the set is freed either way."""
        with Args(call_args) as args, _callbacks.collecting():
            status = _ffi.outlive_handler_call(handle, args.handle)
        _callbacks.raise_pending()
        if status:
            raise error_for(status)

    def invalidate(self, **call_args: typing.Any) -> None:
        """Runs the invalidation handler and marks this handler invalidated."""
        with Args(call_args) as args, _callbacks.collecting():
            status = _ffi.outlive_handler_invalidate(self.handle, args.handle)
        _callbacks.raise_pending()
        check(status)

    def __bytes__(self) -> bytes:
        if self._data is not None:
            # What the library writes for the handler it would make of them:
            # its decoder takes one encoding of a handler only.
            return self._data
        data, size = ctypes.c_void_p(), ctypes.c_size_t()
        check(_ffi.outlive_handler_serialize(self.handle, ctypes.byref(data), ctypes.byref(size)))
        try:
            return ctypes.string_at(data.value or 0, size.value)
        finally:
            _ffi.outlive_free(data)

    @classmethod
    def from_bytes(cls, blob: typing.Union[bytes, bytearray, memoryview]) -> "Handler":
        """The handler serialized as `blob` (bytes(handler))."""
        data = value_bytes(blob, "a serialized handler")
        out = _ffi.HandlerP()
        check(_ffi.outlive_handler_deserialize(data, len(data), ctypes.byref(out)))
        return cls._adopt(out)

    def copy(self) -> "Handler":
        """An independent copy."""
        data = self._data
        if data is not None:
            copy = Handler.__new__(Handler)
            copy._data = data
            return copy
        return Handler._copy_of(self.handle)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Handler) and bytes(self) == bytes(other)

    def __hash__(self) -> int:
        return hash(bytes(self))

    def __repr__(self) -> str:
        if not self._handle and self._data is None:
            return "<Handler (closed)>"
        return f"<Handler {_ffi.outlive_handler_description(self.handle).decode('utf-8', 'replace')}>"

    def close(self) -> None:
        """Frees the native handler (again: nothing)."""
        self._data = None
        handle = self._handle
        if handle:
            self._handle = None
            _free(handle.value)

    def __del__(self) -> None:
        # close(), inline: every Handler made for an add ends here, most of
        # them only their bytes (nothing to free).
        handle = self._handle
        if handle:
            self._handle = None
            try:
                _free(handle.value)
            except Exception:
                pass


_callbacks.collecting_code.add(Handler.__call__.__code__)


def load_handlers(path: "str | os.PathLike[str]") -> None:
    """dlopen()s a handler library: its OUTLIVE_HANDLER declarations become resolvable."""
    check(_ffi.outlive_handler_library_load(os.fsencode(path)))


def resolves(name: str) -> bool:
    """Whether a handler of that name is declared in this process now."""
    return bool(_ffi.outlive_handler_resolve(name.encode("utf-8")) == 0)


# ── run-time registration of Python functions ──────────────────────────────

_registered: typing.Dict[str, typing.Any] = {}
_registered_lock = threading.Lock()
# Every trampoline ever registered, kept for the life of the process: another
# thread may be inside one (the library resolved it before a re-declaration or
# an unregister replaced it), and ctypes frees a trampoline's code with its
# last reference. One small object per declaration is the price.
_trampolines: typing.List[typing.Any] = []
# Coroutines of async handlers running on an asyncio loop, kept until they end
# (asyncio keeps only weak references to its tasks); a worker waits for them.
_running: typing.Set["asyncio.Task[typing.Any]"] = set()

P = typing.ParamSpec("P")
R = typing.TypeVar("R")

# Exceptions that stop the program rather than fail one attempt: they leave
# the dispatch that ran the handler, and the attempt is left open (released
# back to pending when the store closes, or failed by its timeout).
_STOPPING = (KeyboardInterrupt, SystemExit)


def handler(name: typing.Optional[str] = None) -> typing.Callable[[typing.Callable[P, R]], typing.Callable[P, R]]:
    """Declares the decorated function as the handler `name` (default: the
    function's name) in this process, now. Its parameters, from the
    annotations, become the declared signature (see outlive.parameters: the
    seven Outlive types, and JSON-able values such as dict, list, Path,
    datetime or `int | None` as `ID<json>`; a parameter with a default is
    optional and gets its default when absent). The function is returned
    unchanged.

    An exception it raises is re-raised by the Python call that ran it (a
    Handler call, or the loop's dispatch) — except when it runs as a task: a
    function that does not declare `completion` itself ends its task's attempt
    when it returns, and an exception fails the attempt (the task is retried
    with backoff, its error the exception's text) and is logged to the
    "outlive" logger instead of being raised into the loop. KeyboardInterrupt
    and SystemExit are never an attempt's failure: they leave the dispatch,
    and the attempt stays open until the store closes (the task is then
    pending again) or its timeout. An `async def` function is awaited: on the
    asyncio loop running on the thread that dispatches (Loop.attach), its
    task's attempt ending when the coroutine does; with no running asyncio
    loop, to its end within the call. To end attempts, the registered
    signature carries a trailing optional `completion` the function does not
    see."""
    def register(function: typing.Callable[P, R]) -> typing.Callable[P, R]:
        handler_name = name or function.__name__
        signature = declare(handler_name, function)
        setattr(function, "outlive_name", handler_name)
        setattr(function, "outlive_signature", signature)
        return function

    return register


def declare(handler_name: str, function: typing.Callable[..., typing.Any],
            parameters: typing.Optional[typing.List[Parameter]] = None,
            returns: typing.Optional[typing.Callable[[typing.Any], typing.Any]] = None) -> str:
    """Registers `function` as the handler `handler_name` in this process;
    returns the declared signature. With `returns` (a task function's), the
    signature also takes the call-time `result_signal` the function does not
    see: while it runs, outlive.task_progress posts there, and the attempt's
    success carries `result` = returns(return value) when the task has one."""
    if parameters is None:
        parameters = parameters_of(function, f"handler {handler_name}")
    ends_attempt = all(parameter.name != "completion" for parameter in parameters)
    declared = [parameter.declaration() for parameter in parameters]
    ctypes_of = [parameter.ctype for parameter in parameters]
    names = [parameter.name for parameter in parameters]
    hidden_signal = returns is not None and "result_signal" not in names
    if hidden_signal:
        declared.append("ID? result_signal")
        ctypes_of.append(_ffi.ObjectP)
    if ends_attempt:
        declared.append("HANDLER? completion")
        ctypes_of.append(_ffi.HandlerP)
    signature = ", ".join(declared)
    prototype = ctypes.CFUNCTYPE(None, *ctypes_of)

    # Each parameter's decoder, made once; the raw values after the
    # parameters' (the hidden result signal, the completion) are left out by zip.
    decoders = [parameter.decoder() for parameter in parameters]
    count = len(parameters)

    def trampoline(*raw: typing.Any) -> None:
        completion = raw[-1] if ends_attempt else None
        signal: typing.Optional[str] = None
        if hidden_signal:
            pointer = raw[count]
            signal = object_bytes(pointer).decode("utf-8") if pointer else None
        token = None
        try:
            arguments = [decode(value) for decode, value in zip(decoders, raw)]
            if returns is not None:
                if not hidden_signal:
                    given = arguments[names.index("result_signal")]
                    signal = None if given is None else str(given)
                token = results.current_signal.set(signal)
            result = function(*arguments)
            if result is not None and inspect.iscoroutine(result):
                _await(result, handler_name, completion, _outcome(returns, signal))
                return
        except _STOPPING as error:
            _callbacks.keep(error)
            return
        except BaseException as error:
            if not completion:
                _callbacks.keep(error)
                return
            _failed(handler_name, completion, error)
            return
        finally:
            if token is not None:
                results.current_signal.reset(token)
        if completion:
            if returns is None:
                _complete_success(completion)  # what _succeed does for it, without its steps
            else:
                _succeed(handler_name, completion, _outcome(returns, signal), result)

    c_function = prototype(trampoline)
    with _registered_lock:
        check(_ffi.outlive_handler_register(handler_name.encode("utf-8"), signature.encode("utf-8"),
                                            ctypes.cast(c_function, ctypes.c_void_p)))
        _registered[handler_name] = c_function
        _trampolines.append(c_function)
    return signature


Outcome = typing.Optional[typing.Callable[[typing.Any], typing.Dict[str, typing.Any]]]


def _outcome(returns: typing.Optional[typing.Callable[[typing.Any], typing.Any]],
             signal: typing.Optional[str]) -> Outcome:
    """What a success completes with beyond success=True: the return value as
    `result`, for a task that has a result signal (nobody receives it otherwise)."""
    if returns is None or signal is None:
        return None

    def outcome(value: typing.Any) -> typing.Dict[str, typing.Any]:
        return {} if value is None else {"result": returns(value)}
    return outcome


def _succeed(handler_name: str, completion: typing.Any, outcome: Outcome, value: typing.Any) -> None:
    try:
        extra = outcome(value) if outcome is not None else {}
    except Exception as error:
        _failed(handler_name, completion, error)
        return
    _complete(completion, success=True, **extra)


def _failed(handler_name: str, completion: typing.Any, error: BaseException) -> None:
    _logger.warning("handler %s failed its task's attempt", handler_name, exc_info=error)
    _complete(completion, success=False, error=f"{type(error).__name__}: {error}")


def _await(coroutine: typing.Coroutine[typing.Any, typing.Any, typing.Any], handler_name: str,
           completion: typing.Any, outcome: Outcome = None) -> None:
    """Runs an async handler's coroutine; its task's attempt (if it runs as
    one) ends when the coroutine does."""
    import asyncio
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    if loop is None:
        # No asyncio loop on this thread: the coroutine runs to its end here.
        try:
            value = asyncio.run(coroutine)
        except _STOPPING as error:
            _callbacks.keep(error)
            return
        except BaseException as error:
            if not completion:
                _callbacks.keep(error)
                return
            _failed(handler_name, completion, error)
            return
        if completion:
            _succeed(handler_name, completion, outcome, value)
        return
    # The completion is borrowed for the call only: the coroutine ends later.
    kept = Handler._copy_of(completion) if completion else None
    task = loop.create_task(coroutine)
    _running.add(task)

    def finished(task: "asyncio.Task[typing.Any]") -> None:
        _running.discard(task)
        if task.cancelled():
            return  # stopped by a worker's shutdown: the attempt is released when the store closes
        error = task.exception()
        if error is not None and isinstance(error, _STOPPING):
            return  # asyncio raises it out of the loop itself
        if kept is None:
            if error is not None:
                _logger.error("async handler %s raised", handler_name, exc_info=error)
            return
        if error is not None:
            _failed(handler_name, kept.handle, error)
        else:
            _succeed(handler_name, kept.handle, outcome, task.result())
        kept.close()

    task.add_done_callback(finished)


def running_coroutines() -> typing.Set["asyncio.Task[typing.Any]"]:
    """The coroutines of async handlers that have not ended yet."""
    return set(_running)


_succeeded = threading.local()


def _complete_success(completion: typing.Any) -> None:
    """Ends a task's attempt as a success through its borrowed completion
    handler. Its arguments (success=True) are the same every time: made once
    per thread, and passed by address (see _ffi.BY_ADDRESS)."""
    address = getattr(_succeeded, "address", None)
    if address is None:
        _succeeded.args = Args({"success": True})
        address = _succeeded.address = _succeeded.args.handle.value
    status = _call_args(completion.value, address) if _call_args is not None else _call_by_address(completion, address)
    if status != 0:
        _logger.warning("completing a task's attempt failed: %s", error_for(status))


def _complete(completion: typing.Any, **outcome: typing.Any) -> None:
    """Ends a task's attempt through its borrowed completion handler."""
    if len(outcome) == 1 and outcome.get("success") is True:
        _complete_success(completion)
        return
    with Args(outcome) as args:
        status = _ffi.outlive_handler_call(completion, args.handle)
    if status != 0:
        _logger.warning("completing a task's attempt failed: %s", error_for(status))


def unregister(name: str) -> None:
    """Removes the run-time registration of `name` in this process."""
    with _registered_lock:
        check(_ffi.outlive_handler_unregister(name.encode("utf-8")))
        _registered.pop(name, None)
