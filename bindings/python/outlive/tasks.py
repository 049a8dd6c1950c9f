"""`store.tasks`: durable background tasks — a handler each — run by one
runner at a time across every process, with retries, groups and dead tasks."""
from __future__ import annotations

import ctypes
import dataclasses
import datetime
import enum
import typing

from . import _ffi, results
from .errors import InvalidArgumentError, Status, check, error_for
from .handlers import Handler
from .results import TaskRef
from .signals import Lifetime, new_signal_id

if typing.TYPE_CHECKING:
    from .store import Store


class TaskState(enum.IntEnum):
    """Where a task is: PENDING (waiting or due), RUNNING, DEAD (kept after its last attempt)."""
    PENDING = 1
    RUNNING = 2
    DEAD = 3


@dataclasses.dataclass(frozen=True)
class TaskInfo:
    """One listed task (`store.tasks.list()`)."""
    id: str
    handler: str
    state: TaskState
    attempts: int
    last_error: typing.Optional[str]
    next_attempt: float
    created: float
    group_start: typing.Optional[str]
    group_members: typing.Tuple[str, ...]
    queue: str = "default"
    priority: int = 0
    unique_key: typing.Optional[str] = None
    #: Cancelled while running: its attempt's end will be the task's end ("cancelled").
    cancelled: bool = False
    result_signal: typing.Optional[str] = None


class QueueKind(enum.IntEnum):
    ORDERED = 1
    PARALLEL = 2


@dataclasses.dataclass(frozen=True)
class QueueInfo:
    name: str
    kind: QueueKind
    pending: int
    running: int
    dead: int


def _c_text(value: str, what: str) -> bytes:
    """`value` as the C string it is passed as: refused (nothing stored) when
    it holds a NUL, which C would read as its end."""
    if not isinstance(value, str):
        raise TypeError(f"{what} is a str, not {type(value).__name__}")
    if "\0" in value:
        raise InvalidArgumentError(int(Status.INVALID_ARGUMENT), f"{what} {value!r} contains a NUL character")
    return value.encode("utf-8")


def _optional_text(value: typing.Optional[str], what: str) -> typing.Optional[bytes]:
    return None if value is None else _c_text(value, what)


def _strings(values: typing.Iterable[str]) -> typing.Tuple[typing.Any, int]:
    encoded = [_c_text(value, "a group id") for value in values]
    array = (ctypes.c_char_p * max(len(encoded), 1))(*encoded)
    return array, len(encoded)


_IdBuffer = ctypes.c_char * _ffi.ID_SIZE
_enqueue = _ffi.BY_ADDRESS["outlive_task_enqueue"]
_enqueue_serialized = _ffi.task_enqueue_serialized
# The same add without ctypes where outlive._speedups is built (_ffi.speedups):
# the new task's id as a str, or the status.
_fast_enqueue = _ffi.speedups.enqueue if _ffi.speedups is not None else None
_plain_ref = results.plain_ref
_size_arg = _ffi.size_arg

ResultOption = typing.Union[bool, Lifetime, str]
"""`result=`: False (none), True or "this_run" (a consumer for this store
handle), "process" (a consumer that outlives it: a later run of a process of
the same name receives the result)."""

Time = typing.Union[float, int, datetime.datetime]


def _seconds(value: typing.Optional[Time], what: str) -> float:
    if value is None:
        return 0.0
    if isinstance(value, datetime.datetime):
        return value.timestamp()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what} is seconds (a float) or a datetime, not {type(value).__name__}")
    return float(value)


def _enqueue_plain(store: "Store", handler: "Handler",
                   decode: typing.Optional[typing.Callable[[typing.Any], typing.Any]] = None) -> TaskRef[typing.Any]:
    """`enqueue` with every option at its default (the common add): NULL
    options, which C takes as those defaults, and no unique key, so never an
    existing task. No options struct to fill, no typed handle's from_param."""
    data = handler._data if type(handler) is Handler else None
    if data is not None and _fast_enqueue is not None:
        added = _fast_enqueue(store.handle.value, data)
        if type(added) is int:
            raise error_for(added)
        ref = _plain_ref(added, store)
        if decode is not None:
            ref._decode = decode
        return ref
    out = _IdBuffer()
    if data is not None:
        # Still its bytes (handlers.Handler): the add takes them as they are.
        status = _enqueue_serialized(store.handle, data, _size_arg(len(data)), None, out, None)
    else:
        address, work = store.handle.value, handler.handle
        if type(work) is _ffi.HandlerP:
            status = _enqueue(address, work.value, None, out, None)
        else:  # not a handler's handle: the typed binding refuses it (ctypes.ArgumentError), C is not reached
            status = _ffi.outlive_task_enqueue(store.handle, work, None, out, None)
    if status:
        raise error_for(status)
    ref = _plain_ref(out.value.decode(), store)
    if decode is not None:
        ref._decode = decode
    return ref


def enqueue(store: "Store", handler: "Handler", *, queue: typing.Optional[str] = None, priority: int = 0,
            due_at: typing.Optional[Time] = None, delay: typing.Optional[float] = None,
            unique_key: typing.Optional[str] = None, group_start: typing.Optional[str] = None,
            group_members: typing.Iterable[str] = (), result: ResultOption = False,
            decode: typing.Optional[typing.Callable[[typing.Any], typing.Any]] = None) -> TaskRef[typing.Any]:
    """Adds a task as outlive_task_enqueue does (see Tasks.add); one transaction,
    the result consumer (when `result` asks for one) included."""
    if (result is False and queue is None and due_at is None and delay is None and unique_key is None
            and group_start is None and type(priority) is int and priority == 0
            and type(group_members) in (tuple, list) and not group_members):
        return _enqueue_plain(store, handler, decode)
    lifetime: typing.Optional[Lifetime] = None
    if result is True:
        lifetime = Lifetime.THIS_RUN
    elif result is not False:
        try:
            lifetime = Lifetime(result)
        except ValueError:
            raise ValueError(f"result is True, False, 'this_run' or 'process', not {result!r}") from None
        if lifetime is Lifetime.ANY_PROCESS:
            raise ValueError("result='any_process' is not a ref's: another process would take the result")
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise TypeError(f"priority is an int, not {type(priority).__name__}")
    # No member array for no members (the common case): NULL with a count of 0.
    no_members = isinstance(group_members, (tuple, list)) and not group_members
    members, count = (None, 0) if no_members else _strings(group_members)
    options = _ffi.TaskOptions()
    options.version = 1
    options.queue = _optional_text(queue, "a queue name")
    options.priority = priority
    options.due_at = _seconds(due_at, "due_at")
    options.delay_seconds = _seconds(delay, "delay")
    options.unique_key = _optional_text(unique_key, "a unique key")
    options.group_start = _optional_text(group_start, "a group id")
    options.group_members = members
    options.group_member_count = count
    waiter: typing.Optional[str] = None
    consumer: typing.Optional["Handler"] = None
    if lifetime is not None:
        signal = new_signal_id()
        waiter = (results.PROCESS_PREFIX if lifetime is Lifetime.PROCESS else "") + signal
        consumer = Handler(results.CONSUMER, waiter=waiter)
        options.result_signal = signal.encode()
        options.result_consumer = consumer.handle
        options.result_delivery = 2   # OUTLIVE_DELIVERY_UNTIL_TERMINATED: progress, then the result
        options.result_lifetime = 1 if lifetime is Lifetime.THIS_RUN else 2
        results.new_waiter(waiter)
    out = _IdBuffer()
    existing = ctypes.c_bool(False)
    try:
        data = handler._data if type(handler) is Handler else None
        if data is not None:
            check(_enqueue_serialized(store.handle, data, _size_arg(len(data)), ctypes.byref(options), out,
                                      ctypes.byref(existing)))
        else:
            check(_ffi.outlive_task_enqueue(store.handle, handler.handle, ctypes.byref(options), out,
                                            ctypes.byref(existing)))
    except BaseException:
        if waiter is not None:
            results.forget_waiter(waiter)
        raise
    finally:
        if consumer is not None:
            consumer.close()
    return TaskRef(out.value.decode(), store, waiter=waiter, existing=existing.value, decode=decode)


class Tasks:
    """The store's task queue (docs/tasks.md)."""

    def __init__(self, store: "Store") -> None:
        self._store = store

    def add(self, handler: "Handler", group_start: typing.Optional[str] = None,
            group_members: typing.Iterable[str] = (), *, queue: typing.Optional[str] = None, priority: int = 0,
            due_at: typing.Optional[Time] = None, delay: typing.Optional[float] = None,
            unique_key: typing.Optional[str] = None, result: ResultOption = False) -> TaskRef[typing.Any]:
        """Stores a task that runs `handler` (called with task_id, attempt and,
        when it declares them, completion and result_signal) in `queue`
        (None: "default"; a declared one) with `priority`, due at `due_at`
        (seconds since the epoch, or a datetime) or after `delay` seconds,
        with at most one pending or running task per `unique_key` in its
        queue (held: nothing is added, and the ref is the holder's, its
        `existing` True). `result=True` registers, in the same transaction, a
        consumer of its result for this store handle, so that
        `ref.result()` / `await ref` return it; `result="process"` one that
        outlives the handle (docs/tasks.md, "Results in Python").
        Returns a TaskRef: the task's id, a str."""
        if (group_start is None and queue is None and result is False and due_at is None and delay is None
                and unique_key is None and type(priority) is int and priority == 0
                and type(group_members) is tuple and not group_members):
            return _enqueue_plain(self._store, handler)
        return enqueue(self._store, handler, queue=queue, priority=priority, due_at=due_at, delay=delay,
                       unique_key=unique_key, group_start=group_start, group_members=group_members, result=result)

    def ref(self, task_id: str) -> TaskRef[typing.Any]:
        """A ref to a task this process did not add in this run: its result
        arrives through a consumer registered with result="process" by an
        earlier run of a process of this name (delivered when this run
        dispatches the store's loop, even after the task finished)."""
        return results.claim(task_id, self._store)

    def add_many(self, handlers: typing.Iterable["Handler"]) -> typing.List[str]:
        """Adds handlers as tasks in one transaction: all or none."""
        handlers = list(handlers)
        if not handlers:
            return []
        specs = (_ffi.TaskSpec * len(handlers))(*[_ffi.TaskSpec(1, h.handle, None, None, 0) for h in handlers])
        out = ctypes.create_string_buffer(_ffi.ID_SIZE * len(handlers))
        check(_ffi.outlive_tasks_add_batch(self._store.handle, specs, len(handlers), out))
        raw = out.raw
        return [raw[i * _ffi.ID_SIZE:i * _ffi.ID_SIZE + _ffi.ID_SIZE - 1].decode() for i in range(len(handlers))]

    def run_now(self) -> None:
        """Asks for a run now (at the loop's next dispatch, or once another process's run ends)."""
        check(_ffi.outlive_tasks_run_now(self._store.handle))

    def set_triggers(self, pending_count: int = 10, delay: float = 30.0) -> None:
        """When this handle starts a run by itself: `pending_count` tasks pending
        (0: never by count), `delay` seconds after it sees a task added."""
        check(_ffi.outlive_tasks_set_triggers(self._store.handle, pending_count, delay))

    def set_policy(self, *, initial_backoff: float = 1.0, max_backoff: float = 3600.0, max_attempts: int = 20,
                   timeout: float = 60.0, max_age: float = 259200.0) -> None:
        """How this handle's runs retry failed attempts and when a task is dead."""
        policy = _ffi.TaskPolicy(1, initial_backoff, max_backoff, max_attempts, timeout, max_age)
        check(_ffi.outlive_tasks_set_policy(self._store.handle, ctypes.byref(policy)))

    def set_concurrency(self, max_in_flight: int) -> None:
        """How many attempts this handle's runs keep in flight at once (default 1)."""
        check(_ffi.outlive_tasks_set_concurrency(self._store.handle, max_in_flight))

    def set_completion_batch(self, max_tasks: int) -> None:
        """At most how many tasks a run claims and ends in one transaction
        (1 to 1024, default 32); a crash reruns at most that batch."""
        check(_ffi.outlive_tasks_set_completion_batch(self._store.handle, max_tasks))

    def __len__(self) -> int:
        """Tasks not yet done (dead ones excluded)."""
        count = ctypes.c_size_t()
        check(_ffi.outlive_tasks_count(self._store.handle, ctypes.byref(count)))
        return count.value

    @property
    def dead_count(self) -> int:
        """How many tasks are dead."""
        count = ctypes.c_size_t()
        check(_ffi.outlive_tasks_count_dead(self._store.handle, ctypes.byref(count)))
        return count.value

    def list(self, after: typing.Optional[str] = None, limit: int = 1000) -> typing.List[TaskInfo]:
        """At most `limit` tasks (0: all) in queue order, after the task `after`."""
        out = _ffi.TaskListP()
        check(_ffi.outlive_task_list_new(self._store.handle, None if after is None else after.encode(), limit,
                                         ctypes.byref(out)))
        try:
            def text(value: typing.Optional[bytes]) -> typing.Any:
                return None if value is None else value.decode("utf-8")
            tasks = out
            return [TaskInfo(id=text(_ffi.outlive_task_list_id(tasks, i)),
                             handler=text(_ffi.outlive_task_list_handler_name(tasks, i)),
                             state=TaskState(_ffi.outlive_task_list_state(tasks, i)),
                             attempts=_ffi.outlive_task_list_attempts(tasks, i),
                             last_error=text(_ffi.outlive_task_list_last_error(tasks, i)),
                             next_attempt=_ffi.outlive_task_list_next_attempt(tasks, i),
                             created=_ffi.outlive_task_list_created(tasks, i),
                             group_start=text(_ffi.outlive_task_list_group_start(tasks, i)),
                             group_members=tuple(text(_ffi.outlive_task_list_group_member(tasks, i, m))
                                                 for m in range(_ffi.outlive_task_list_group_member_count(tasks, i))),
                             queue=text(_ffi.outlive_task_list_queue(tasks, i)),
                             priority=_ffi.outlive_task_list_priority(tasks, i),
                             unique_key=text(_ffi.outlive_task_list_unique_key(tasks, i)),
                             cancelled=bool(_ffi.outlive_task_list_cancelled(tasks, i)),
                             result_signal=text(_ffi.outlive_task_list_result_signal(tasks, i)))
                    for i in range(_ffi.outlive_task_list_count(tasks))]
        finally:
            _ffi.outlive_task_list_free(out)

    def __iter__(self) -> typing.Iterator[TaskInfo]:
        """Every task, in queue order, a page at a time."""
        after = None
        while True:
            page = self.list(after=after)
            yield from page
            if len(page) < 1000:
                return
            after = page[-1].id

    def retry(self, task_id: str) -> None:
        """Makes a dead task pending again, with its attempts reset."""
        check(_ffi.outlive_task_retry(self._store.handle, task_id.encode()))

    def delete(self, task_id: str) -> None:
        """Deletes a task that is not running."""
        check(_ffi.outlive_task_delete(self._store.handle, task_id.encode()))

    def cancel(self, task_id: str) -> bool:
        """Cancels a task: a pending one is removed and never runs (False is
        returned); a running one is told (`is_cancelled`) and ends as cancelled
        whatever it completes with (True is returned)."""
        running = ctypes.c_bool()
        check(_ffi.outlive_task_cancel(self._store.handle, task_id.encode(), ctypes.byref(running)))
        return running.value

    def is_cancelled(self, task_id: str) -> bool:
        """Whether a running task was cancelled (what its handler asks); raises
        NotFoundError once the task is gone."""
        cancelled = ctypes.c_bool()
        check(_ffi.outlive_task_is_cancelled(self._store.handle, task_id.encode(), ctypes.byref(cancelled)))
        return cancelled.value
    def serve(self, concurrency: int = 1,
              queues: typing.Optional[typing.Mapping[str, int]] = None) -> typing.List[str]:
        """Makes this process run the store's tasks, as a worker does: declares
        every task function defined so far (`@outlive.task`, `@store.task`) as
        a handler in this process, so that its runs can call them, and serves
        `queues` (name → limit; None: {"default": concurrency}) through
        outlive_queue_serve: their tasks run as soon as they are due, whichever
        process added them. A worker naming queues without "default" stops
        serving it (limit 0). NotFoundError for a queue never declared.
        Runs happen where the store's loop is dispatched. Returns the names
        of the handlers declared.

        A process that never serves adds tasks without running those of task
        functions: their handlers are not declared in it, and a run leaves a
        task whose handler does not resolve for a process that declares it."""
        from .task_function import declare_all
        served = dict(queues) if queues is not None else {"default": concurrency}
        served.setdefault("default", 0)
        # Checked before anything is served: an unknown queue changes nothing.
        declared = {queue.name for queue in self._store.queues.list()}
        for name in served:
            if name not in declared:
                from .errors import NotFoundError
                raise NotFoundError(int(Status.NOT_FOUND), f"no task queue named {name!r} was declared "
                                                           "(store.queues.declare)")
        names = declare_all()
        for name, limit in served.items():
            self._store.queues.serve(name, limit)
        return names

class TaskQueues:
    """`store.queues`: named task queues. `declare` one (ordered, or parallel:
    every serving process runs up to its limit at once), `serve` the ones this
    handle runs (it serves "default" under its triggers until told otherwise;
    `serve("default", 0)` makes a pure producer), `enqueue` a task into one
    with a priority and a due time, `list` them with their counts."""

    def __init__(self, store: "Store") -> None:
        self._store = store

    def declare(self, name: str, kind: "QueueKind | str" = QueueKind.ORDERED) -> None:
        """Declares queue `name` in the store (every process sees it) with its kind."""
        if isinstance(kind, str):
            kind = QueueKind[kind.upper()]
        check(_ffi.outlive_queue_declare(self._store.handle, _c_text(name, "a queue name"), int(kind)))

    def serve(self, name: str, limit: int = 1) -> None:
        """Runs up to `limit` tasks of the queue at once, as soon as they are due (0: stop)."""
        if limit < 0:
            raise ValueError("limit must be >= 0")
        check(_ffi.outlive_queue_serve(self._store.handle, _c_text(name, "a queue name"), limit))

    def enqueue(self, handler: "Handler", queue: typing.Optional[str] = None, *, priority: int = 0,
                due_at: typing.Optional[Time] = None, delay: typing.Optional[float] = None,
                group_start: typing.Optional[str] = None, group_members: typing.Iterable[str] = (),
                unique_key: typing.Optional[str] = None, result: ResultOption = False) -> TaskRef[typing.Any]:
        """Adds a task to `queue` (None: "default"); higher `priority` starts
        first; `due_at` (seconds since the epoch, or a datetime) or `delay`
        (seconds) makes it wait; `unique_key` and `result` as in
        store.tasks.add. Returns a TaskRef (the task id, a str)."""
        return enqueue(self._store, handler, queue=queue, priority=priority, due_at=due_at, delay=delay,
                       unique_key=unique_key, group_start=group_start, group_members=group_members, result=result)

    def list(self, after: typing.Optional[str] = None, limit: int = 0) -> typing.List[QueueInfo]:
        """The declared queues in name order, with their counts."""
        out = _ffi.QueueListP()
        check(_ffi.outlive_queue_list_new(self._store.handle, None if after is None else after.encode("utf-8"), limit,
                                          ctypes.byref(out)))
        try:
            return [QueueInfo(name=_ffi.outlive_queue_list_name(out, i).decode("utf-8"),
                              kind=QueueKind(_ffi.outlive_queue_list_kind(out, i)),
                              pending=_ffi.outlive_queue_list_pending(out, i),
                              running=_ffi.outlive_queue_list_running(out, i),
                              dead=_ffi.outlive_queue_list_dead(out, i))
                    for i in range(_ffi.outlive_queue_list_count(out))]
        finally:
            _ffi.outlive_queue_list_free(out)

    def __iter__(self) -> typing.Iterator[QueueInfo]:
        return iter(self.list())
