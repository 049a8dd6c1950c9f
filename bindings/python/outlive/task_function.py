"""`@outlive.task` and `@store.task`: a function that is a task's work.

One module (say `tasks.py`) defines them; both the processes that add tasks
and the worker that runs them import it. Defining a task function does not
declare its handler: a process adds tasks with `f.delay(...)` without ever
running them, and only a process that serves the queue (`store.tasks.serve()`,
which `python -m outlive worker` calls) declares every task function as a
handler and runs their tasks. A process that is not a worker does not run
tasks."""
from __future__ import annotations

import hashlib
import inspect
import sys
import threading
import typing
import weakref

from . import results
from .errors import StateError, Status
from .handlers import Handler, declare
from .parameters import _JSON_TYPES, _NATIVE, Parameter, _from_json, _json_text, _unwrap_optional, parameters_of
from .parameters import _origin as _annotation_origin
from .results import TaskRef
from .tasks import ResultOption, Time, _enqueue_plain, enqueue

if typing.TYPE_CHECKING:
    from .store import Store

P = typing.ParamSpec("P")
R = typing.TypeVar("R")

# Arguments the library gives a task handler at call time, never the caller.
CALL_TIME = ("task_id", "attempt", "result_signal")

Unique = typing.Union[bool, typing.Callable[..., str], None]
"""`unique=`: None/False (none), True (the key is the function's name and a
hash of its arguments: one pending or running task per distinct call), or a
function of the task's arguments returning the key."""


class _Returns:
    """How a task function's return value travels as its result: JSON, checked
    against the return annotation and decoded back from it where the
    annotation is one parameters can take (dict, list, Path, datetime, int,
    str, ... or X | None); any other annotation travels as plain JSON."""

    def __init__(self, function: typing.Callable[..., typing.Any], owner: str) -> None:
        try:
            annotation = typing.get_type_hints(function).get("return", typing.Any)
        except Exception:
            annotation = typing.Any
        base, nullable = _unwrap_optional(annotation)
        typed = base in _NATIVE and base is not bytes or _annotation_origin(base) in _JSON_TYPES
        self._parameter = Parameter("return value", "JSON", base, True) if typed else None
        self._owner = owner

    def encode(self, value: typing.Any) -> typing.Any:
        if self._parameter is None:
            return results.to_json(value, f"{self._owner}: its return value")
        try:
            from .values import ID
            return ID(_json_text(self._parameter, value), type="json")
        except (TypeError, ValueError, OverflowError) as error:
            raise TypeError(f"{self._owner}: {error}") from None

    def decode(self, value: typing.Any) -> typing.Any:
        if self._parameter is None or value is None:
            return value
        return _from_json(self._parameter, value)


def only_open_store(what: str) -> "Store":
    """The one store open in this process (StateError when none or several)."""
    now = _opened[0]  # read before the walk: a store opened meanwhile changes it
    generation, found = _only_found
    if generation == now and found is not None:
        # No store was opened since this one was found the only open one: if
        # it is still open, it still is (walking the weak set cost about a
        # twentieth of a delay()).
        store: typing.Optional["Store"] = found()
        if store is not None and store._handle:
            return store
    open_now = [store for store in list(_open_stores) if store._handle]
    if len(open_now) == 1:
        _only_found[:] = [now, weakref.ref(open_now[0])]
        return open_now[0]
    if not open_now:
        raise StateError(int(Status.STATE), f"{what}: no store is open in this process "
                                            "(open one with outlive.Store(path), or pass store=)")
    raise StateError(int(Status.STATE), f"{what}: {len(open_now)} stores are open in this process; "
                                        "say which one with store=")

_functions: typing.Dict[str, "TaskFunction[typing.Any, typing.Any]"] = {}
_functions_lock = threading.Lock()
_open_stores: "weakref.WeakSet[Store]" = weakref.WeakSet()
# How many stores were opened so far, and the one only_open_store found alone
# (with that count then).
_opened = [0]
_only_found: typing.List[typing.Any] = [-1, None]


def _module_name(function: typing.Callable[..., typing.Any]) -> str:
    """The function's module as another process imports it: a module run as a
    script (`python tasks.py`, `__main__`) is named after its file, so that
    the producer and the worker agree on the handler's name."""
    module = function.__module__
    if module != "__main__":
        return module
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name:
        return str(spec.name)
    path = getattr(main, "__file__", None)
    if path:
        import os
        return str(os.path.splitext(os.path.basename(path))[0])
    return module


def _origin(function: typing.Callable[..., typing.Any]) -> typing.Tuple[str, str]:
    """Where a function is defined: the same after a module is imported again."""
    code = getattr(function, "__code__", None)
    return (getattr(code, "co_filename", ""), getattr(function, "__qualname__", repr(function)))


class TaskFunction(typing.Generic[P, R]):
    """A function whose calls can be stored as tasks. Calling it runs it here
    and now; `delay(...)` stores a task that a worker runs."""

    def __init__(self, function: typing.Callable[P, R], name: typing.Optional[str], store: typing.Optional["Store"],
                 queue: typing.Optional[str] = None, priority: int = 0, unique: Unique = None,
                 result: ResultOption = False):
        if not callable(function):
            raise TypeError(f"a task function must be callable, not {type(function).__name__}")
        self.function = function
        self.name: str = name or f"{_module_name(function)}.{function.__qualname__}"
        self._store = store
        owner = f"task {self.name}"
        self.parameters: typing.List[Parameter] = parameters_of(function, owner)
        if any(parameter.name == "completion" for parameter in self.parameters):
            raise TypeError(f"{owner}: a task function ends its attempt by returning (or raising); it takes no "
                            "completion (declare such a handler with @outlive.handler)")
        self._callers = [parameter for parameter in self.parameters if parameter.name not in CALL_TIME]
        # What the caller binds: the function's signature without the call-time arguments.
        signature = inspect.signature(function)
        self._signature = signature.replace(
            parameters=[parameter for name, parameter in signature.parameters.items() if name not in CALL_TIME])
        # A call that passes every parameter by position binds without
        # inspect's bind (a fifth of what delay() costs in Python): the
        # names in order, when every parameter may be passed by position.
        plain = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        self._positional: typing.Optional[typing.Tuple[str, ...]] = (
            tuple(self._signature.parameters)
            if all(parameter.kind in plain for parameter in self._signature.parameters.values()) else None)
        self.__doc__ = function.__doc__
        self.__wrapped__ = function
        self._returns = _Returns(function, owner)
        self._defaults = _Defaults(queue, priority, unique, result)
        self._plain_call: typing.Optional["TaskCall[P, R]"] = None
        with _functions_lock:
            known = _functions.get(self.name)
            if known is not None and _origin(known.function) != _origin(function):
                raise ValueError(f"two task functions are named {self.name}: give one another name (name=...)")
            _functions[self.name] = self

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Runs the function here and now, as a plain call."""
        return self.function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<task function {self.name}>"

    def handler(self, *args: P.args, **kwargs: P.kwargs) -> Handler:
        """The handler value a task of this call stores. Raises TypeError when
        the arguments do not fit the function's signature (a missing or extra
        argument, a value of the wrong type): nothing is stored."""
        positional = self._positional
        if not kwargs and positional is not None and len(args) == len(positional):
            arguments: typing.Mapping[str, typing.Any] = dict(zip(positional, args))
        else:
            try:
                bound = self._signature.bind(*args, **kwargs)
            except TypeError as error:
                raise TypeError(f"task {self.name}: {error}") from None
            bound.apply_defaults()
            arguments = bound.arguments
        values = {}
        for parameter in self._callers:
            try:
                encoded = parameter.encode(arguments[parameter.name])
            except (TypeError, ValueError, OverflowError) as error:
                raise TypeError(f"task {self.name}: {error}") from None
            if encoded is not None:
                values[parameter.name] = encoded
        return Handler(self.name, **values)

    def delay(self, *args: P.args, **kwargs: P.kwargs) -> TaskRef[R]:
        """Stores a task that calls the function with these arguments (checked
        now against its signature: TypeError, nothing stored) in the store it
        belongs to: the `@store.task` one, or the only store open in this
        process, with the decorator's options. Returns a TaskRef: the task's
        id (a str), whose `result()` returns the function's return value when
        the task was added with a result (`result=True`)."""
        call = self._plain_call
        if call is None:
            call = self._plain_call = self.options()
        return call.delay(*args, **kwargs)

    def options(self, *, store: typing.Optional["Store"] = None, queue: typing.Optional[str] = None,
                priority: typing.Optional[int] = None, delay: typing.Optional[float] = None,
                due_at: typing.Optional[Time] = None, unique_key: typing.Optional[str] = None,
                unique: Unique = None, result: typing.Optional[ResultOption] = None,
                group_start: typing.Optional[str] = None,
                group_members: typing.Sequence[str] = ()) -> "TaskCall[P, R]":
        """How the next tasks are added: in `store` (default: the task
        function's store), to `queue` with `priority` (default: the
        decorator's), due after `delay` seconds or at `due_at` (seconds since
        the epoch, or a datetime), with `unique_key` (or `unique`, as the
        decorator's), with a result (`result=True`, or "process": see
        store.tasks.add), starting the group `group_start`, a member of
        `group_members` (docs/tasks.md). `.options(...).delay(...)` adds one."""
        defaults = self._defaults
        return TaskCall(self, store, _Defaults(
            defaults.queue if queue is None else queue, defaults.priority if priority is None else priority,
            defaults.unique if unique is None else unique, defaults.result if result is None else result,
            delay=delay, due_at=due_at, unique_key=unique_key, group_start=group_start,
            group_members=tuple(group_members)))

    def declare(self) -> None:
        """Declares the function as the handler of its tasks in this process:
        from now on this process can run them (what serving does)."""
        declare(self.name, self.function, self.parameters, returns=self._returns.encode)

    def store(self) -> "Store":
        """The store `delay` adds to."""
        if self._store is not None:
            return self._store
        return only_open_store(f"task {self.name}")


class _Defaults(typing.NamedTuple):
    queue: typing.Optional[str]
    priority: int
    unique: Unique
    result: ResultOption
    delay: typing.Optional[float] = None
    due_at: typing.Optional[Time] = None
    unique_key: typing.Optional[str] = None
    group_start: typing.Optional[str] = None
    group_members: typing.Tuple[str, ...] = ()


class TaskCall(typing.Generic[P, R]):
    """A task function with the options of the tasks it adds (`f.options(...)`)."""

    def __init__(self, function: TaskFunction[P, R], store: typing.Optional["Store"], options: _Defaults):
        self._function = function
        self._store = store
        self._options = options
        # Every option at its default (a plain `f.delay(...)`): the add goes
        # straight to what `enqueue` would pick for it, without its keywords.
        self._plain = (options.queue is None and type(options.priority) is int and options.priority == 0
                       and not options.unique and options.result is False and options.delay is None
                       and options.due_at is None and options.unique_key is None and options.group_start is None
                       and not options.group_members)

    def delay(self, *args: P.args, **kwargs: P.kwargs) -> TaskRef[R]:
        """Stores the task (see TaskFunction.delay); returns its TaskRef."""
        options = self._options
        work = self._function.handler(*args, **kwargs)
        try:
            key = options.unique_key
            if key is None and options.unique:
                if callable(options.unique):
                    key = options.unique(*args, **kwargs)
                    if not isinstance(key, str):
                        raise TypeError(f"task {self._function.name}: unique= returned {type(key).__name__}, not str")
                else:
                    key = f"{self._function.name}:{hashlib.sha256(bytes(work)).hexdigest()}"
            store = self._store if self._store is not None else self._function.store()
            if self._plain:
                return _enqueue_plain(store, work, self._function._returns.decode)
            return enqueue(store, work, queue=options.queue, priority=options.priority, due_at=options.due_at,
                           delay=options.delay, unique_key=key, group_start=options.group_start,
                           group_members=options.group_members, result=options.result,
                           decode=self._function._returns.decode)
        finally:
            work.close()


@typing.overload
def task(function: typing.Callable[P, R], /) -> TaskFunction[P, R]: ...


@typing.overload
def task(*, name: typing.Optional[str] = None, queue: typing.Optional[str] = None, priority: int = 0,
         unique: Unique = None, result: ResultOption = False
         ) -> typing.Callable[[typing.Callable[P, R]], TaskFunction[P, R]]: ...


def task(function: typing.Optional[typing.Callable[P, R]] = None, /, *, name: typing.Optional[str] = None,
         queue: typing.Optional[str] = None, priority: int = 0, unique: Unique = None, result: ResultOption = False
         ) -> typing.Union[TaskFunction[P, R], typing.Callable[[typing.Callable[P, R]], TaskFunction[P, R]]]:
    """Makes a function a task function (`@outlive.task` or
    `@outlive.task(name=..., queue=..., priority=..., unique=..., result=...)`),
    usable before any store is open. Its handler name defaults to
    `module.qualname`. Its tasks go to the store open in the process when
    `delay` is called — to `queue` (a declared one; default "default") with
    `priority`, unique per `unique` (True: per distinct arguments; or a
    function of the arguments returning the key), with a result when
    `result` says so — and run only in a process that serves the queue
    (`store.tasks.serve()`, or `python -m outlive worker MODULE`). The
    retry policy is the serving process's (`store.tasks.set_policy`)."""
    return _decorator(function, name, None, queue, priority, unique, result)


def _decorator(function: typing.Optional[typing.Callable[P, R]], name: typing.Optional[str],
               store: typing.Optional["Store"], queue: typing.Optional[str] = None, priority: int = 0,
               unique: Unique = None, result: ResultOption = False
               ) -> typing.Union[TaskFunction[P, R], typing.Callable[[typing.Callable[P, R]], TaskFunction[P, R]]]:
    if function is not None:
        return TaskFunction(function, name, store, queue, priority, unique, result)

    def make(function: typing.Callable[P, R]) -> TaskFunction[P, R]:
        return TaskFunction(function, name, store, queue, priority, unique, result)
    return make


def declare_all() -> typing.List[str]:
    """Declares every task function defined so far as a handler in this
    process; returns their names."""
    with _functions_lock:
        functions = list(_functions.values())
    for function in functions:
        function.declare()
    return [function.name for function in functions]


def task_functions() -> typing.List[TaskFunction[typing.Any, typing.Any]]:
    """Every task function defined in this process so far."""
    with _functions_lock:
        return list(_functions.values())


def opened(store: "Store") -> None:
    """Called by Store: `delay` finds the open stores here."""
    _open_stores.add(store)
    _opened[0] += 1  # after the add: see only_open_store
