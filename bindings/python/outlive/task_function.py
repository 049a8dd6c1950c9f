"""`@outlive.task` and `@store.task`: a function that is a task's work.

One module (say `tasks.py`) defines them; both the processes that add tasks
and the worker that runs them import it. Defining a task function does not
declare its handler: a process adds tasks with `f.delay(...)` without ever
running them, and only a process that serves the queue (`store.tasks.serve()`,
which `python -m outlive worker` calls) declares every task function as a
handler and runs their tasks. A process that is not a worker does not run
tasks."""
from __future__ import annotations

import inspect
import sys
import threading
import typing
import weakref

from .errors import StateError, Status
from .handlers import Handler, declare
from .parameters import Parameter, parameters_of

if typing.TYPE_CHECKING:
    from .store import Store

P = typing.ParamSpec("P")
R = typing.TypeVar("R")

# Arguments the library gives a task handler at call time, never the caller.
CALL_TIME = ("task_id", "attempt")

_functions: typing.Dict[str, "TaskFunction[typing.Any, typing.Any]"] = {}
_functions_lock = threading.Lock()
_open_stores: "weakref.WeakSet[Store]" = weakref.WeakSet()


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

    def __init__(self, function: typing.Callable[P, R], name: typing.Optional[str], store: typing.Optional["Store"]):
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
        self.__doc__ = function.__doc__
        self.__wrapped__ = function
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
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"task {self.name}: {error}") from None
        bound.apply_defaults()
        values = {}
        for parameter in self._callers:
            try:
                encoded = parameter.encode(bound.arguments[parameter.name])
            except (TypeError, ValueError, OverflowError) as error:
                raise TypeError(f"task {self.name}: {error}") from None
            if encoded is not None:
                values[parameter.name] = encoded
        return Handler(self.name, **values)

    def delay(self, *args: P.args, **kwargs: P.kwargs) -> str:
        """Stores a task that calls the function with these arguments (checked
        now against its signature: TypeError, nothing stored) in the store it
        belongs to: the `@store.task` one, or the only store open in this
        process. Returns the task's id."""
        return self.options().delay(*args, **kwargs)

    def options(self, *, store: typing.Optional["Store"] = None, group_start: typing.Optional[str] = None,
                group_members: typing.Sequence[str] = ()) -> "TaskCall[P]":
        """How the next tasks are added: in `store` (default: the task
        function's store), starting the group `group_start`, a member of
        `group_members` (docs/tasks.md, Groups). `.options(...).delay(...)`
        adds one."""
        return TaskCall(self, store, group_start, tuple(group_members))

    def declare(self) -> None:
        """Declares the function as the handler of its tasks in this process:
        from now on this process can run them (what serving does)."""
        declare(self.name, self.function, self.parameters)

    def store(self) -> "Store":
        """The store `delay` adds to."""
        if self._store is not None:
            return self._store
        open_now = [store for store in list(_open_stores) if store._handle]
        if len(open_now) == 1:
            return open_now[0]
        if not open_now:
            raise StateError(int(Status.STATE), f"task {self.name}: no store is open in this process to add the task to "
                                           "(open one with outlive.Store(path), or pass store= to options())")
        raise StateError(Status.STATE, f"task {self.name}: {len(open_now)} stores are open in this process; "
                                       "say which one with .options(store=...)")


class TaskCall(typing.Generic[P]):
    """A task function with the options of the tasks it adds (`f.options(...)`)."""

    def __init__(self, function: TaskFunction[P, typing.Any], store: typing.Optional["Store"],
                 group_start: typing.Optional[str], group_members: typing.Tuple[str, ...]):
        self._function = function
        self._store = store
        self._group_start = group_start
        self._group_members = group_members

    def delay(self, *args: P.args, **kwargs: P.kwargs) -> str:
        """Stores the task (see TaskFunction.delay); returns its id."""
        work = self._function.handler(*args, **kwargs)
        try:
            store = self._store if self._store is not None else self._function.store()
            return store.tasks.add(work, group_start=self._group_start, group_members=self._group_members)
        finally:
            work.close()


@typing.overload
def task(function: typing.Callable[P, R], /) -> TaskFunction[P, R]: ...


@typing.overload
def task(*, name: typing.Optional[str] = None) -> typing.Callable[[typing.Callable[P, R]], TaskFunction[P, R]]: ...


def task(function: typing.Optional[typing.Callable[P, R]] = None, /, *, name: typing.Optional[str] = None
         ) -> typing.Union[TaskFunction[P, R], typing.Callable[[typing.Callable[P, R]], TaskFunction[P, R]]]:
    """Makes a function a task function (`@outlive.task` or
    `@outlive.task(name=...)`), usable before any store is open. Its handler
    name defaults to `module.qualname`. Its tasks go to the store open in the
    process when `delay` is called, and run only in a process that serves the
    queue (`store.tasks.serve()`, or `python -m outlive worker MODULE`).

    Options per task function that are not available yet — a queue, a
    priority, a retry limit — are refused as unknown keywords; the retry
    policy is the serving process's (`store.tasks.set_policy`)."""
    return _decorator(function, name, None)


def _decorator(function: typing.Optional[typing.Callable[P, R]], name: typing.Optional[str], store: typing.Optional["Store"]
               ) -> typing.Union[TaskFunction[P, R], typing.Callable[[typing.Callable[P, R]], TaskFunction[P, R]]]:
    if function is not None:
        return TaskFunction(function, name, store)

    def make(function: typing.Callable[P, R]) -> TaskFunction[P, R]:
        return TaskFunction(function, name, store)
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
