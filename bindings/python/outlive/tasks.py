"""`store.tasks`: durable background tasks — a handler each — run by one
runner at a time across every process, with retries, groups and dead tasks."""
import ctypes
import dataclasses
import enum
import typing

from . import _ffi
from .errors import check


class TaskState(enum.IntEnum):
    PENDING = 1
    RUNNING = 2
    DEAD = 3


@dataclasses.dataclass(frozen=True)
class TaskInfo:
    id: str
    handler: str
    state: TaskState
    attempts: int
    last_error: typing.Optional[str]
    next_attempt: float
    created: float
    group_start: typing.Optional[str]
    group_members: typing.Tuple[str, ...]


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


def _strings(values):
    encoded = [value.encode("utf-8") for value in values]
    array = (ctypes.c_char_p * max(len(encoded), 1))(*encoded)
    return array, len(encoded)


class Tasks:
    def __init__(self, store):
        self._store = store

    def add(self, handler, group_start: str = None, group_members=()) -> str:
        """Stores a task that runs `handler` (called with task_id, attempt and,
        when it declares it, completion). Returns the task id."""
        members, count = _strings(group_members)
        out = ctypes.create_string_buffer(_ffi.ID_SIZE)
        check(_ffi.outlive_task_add(self._store.handle, handler.handle,
                                    None if group_start is None else group_start.encode("utf-8"), members, count, out))
        return out.value.decode()

    def add_many(self, handlers) -> typing.List[str]:
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
        check(_ffi.outlive_tasks_run_now(self._store.handle))

    def set_triggers(self, pending_count: int = 10, delay: float = 30.0) -> None:
        check(_ffi.outlive_tasks_set_triggers(self._store.handle, pending_count, delay))

    def set_policy(self, *, initial_backoff=1.0, max_backoff=3600.0, max_attempts=20, timeout=60.0,
                   max_age=259200.0) -> None:
        policy = _ffi.TaskPolicy(1, initial_backoff, max_backoff, max_attempts, timeout, max_age)
        check(_ffi.outlive_tasks_set_policy(self._store.handle, ctypes.byref(policy)))

    def set_concurrency(self, max_in_flight: int) -> None:
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
        count = ctypes.c_size_t()
        check(_ffi.outlive_tasks_count_dead(self._store.handle, ctypes.byref(count)))
        return count.value

    def list(self, after: str = None, limit: int = 1000) -> typing.List[TaskInfo]:
        out = _ffi.TaskListP()
        check(_ffi.outlive_task_list_new(self._store.handle, None if after is None else after.encode(), limit,
                                         ctypes.byref(out)))
        try:
            text = lambda value: None if value is None else value.decode("utf-8")
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
                                                 for m in range(_ffi.outlive_task_list_group_member_count(tasks, i))))
                    for i in range(_ffi.outlive_task_list_count(tasks))]
        finally:
            _ffi.outlive_task_list_free(out)

    def __iter__(self):
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
        check(_ffi.outlive_task_delete(self._store.handle, task_id.encode()))


class TaskQueues:
    """`store.queues`: named task queues. `declare` one (ordered, or parallel:
    every serving process runs up to its limit at once), `serve` the ones this
    handle runs (it serves "default" under its triggers until told otherwise;
    `serve("default", 0)` makes a pure producer), `enqueue` a task into one
    with a priority and a due time, `list` them with their counts."""

    def __init__(self, store):
        self._store = store

    def declare(self, name: str, kind: "QueueKind | str" = QueueKind.ORDERED) -> None:
        if isinstance(kind, str):
            kind = QueueKind[kind.upper()]
        check(_ffi.outlive_queue_declare(self._store.handle, name.encode("utf-8"), int(kind)))

    def serve(self, name: str, limit: int = 1) -> None:
        """Runs up to `limit` tasks of the queue at once, as soon as they are due (0: stop)."""
        if limit < 0:
            raise ValueError("limit must be >= 0")
        check(_ffi.outlive_queue_serve(self._store.handle, name.encode("utf-8"), limit))

    def enqueue(self, handler, queue: typing.Optional[str] = None, *, priority: int = 0,
                due_at: typing.Optional[float] = None, delay: typing.Optional[float] = None,
                group_start: typing.Optional[str] = None, group_members=()) -> str:
        """Adds a task to `queue` (None: "default"); higher `priority` starts
        first; `due_at` (seconds since the epoch) or `delay` (seconds) makes it
        wait. Returns the task id."""
        members, count = _strings(group_members)
        options = _ffi.TaskOptions(1, None if queue is None else queue.encode("utf-8"), priority,
                                   0.0 if due_at is None else float(due_at), 0.0 if delay is None else float(delay),
                                   None, None, None if group_start is None else group_start.encode("utf-8"),
                                   members, count)
        out = ctypes.create_string_buffer(_ffi.ID_SIZE)
        existing = ctypes.c_bool(False)
        check(_ffi.outlive_task_enqueue(self._store.handle, handler.handle, ctypes.byref(options), out,
                                        ctypes.byref(existing)))
        return out.value.decode()

    def list(self, after: typing.Optional[str] = None, limit: int = 0) -> typing.List[QueueInfo]:
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

    def __iter__(self):
        return iter(self.list())
