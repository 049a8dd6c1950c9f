"""`store.schedules`: periodic tasks — named schedules stored in the store,
each adding a task to its queue once per period (an interval, or a cron
expression read in UTC), fired once per period whichever processes are alive."""
import ctypes
import dataclasses
import datetime
import typing

from . import _ffi
from .errors import check


@dataclasses.dataclass(frozen=True)
class ScheduleInfo:
    name: str
    handler: str
    every: typing.Optional[float]
    """Seconds between firings; None for a cron schedule."""
    cron: typing.Optional[str]
    next_fire: float
    """Seconds since the epoch of the period not yet fired."""
    last_fired: typing.Optional[float]
    """The period of the last firing; None when it never fired."""
    queue: str
    priority: int


def _text(value: typing.Optional[bytes]) -> typing.Optional[str]:
    return None if value is None else value.decode("utf-8")


class Schedules:
    def __init__(self, store: typing.Any) -> None:
        self._store = store

    def set(self, name: str, handler: typing.Any, *,
            every: typing.Union[float, datetime.timedelta, None] = None, cron: typing.Optional[str] = None,
            queue: typing.Optional[str] = None, priority: int = 0) -> float:
        """Creates the schedule `name`, or replaces it: from now on a task
        calling `handler` is added to `queue` once per period — `every`
        seconds (counted from now), or at the minutes `cron` names (five
        fields, UTC). Give one of them. A handler that declares `scheduled_at`
        (float) receives the period its task stands for. Periods missed while
        no process ran fire once, not once each. Returns the time of the first
        firing (seconds since the epoch)."""
        if isinstance(every, datetime.timedelta):
            every = every.total_seconds()
        from .tasks import _c_text, _optional_text
        period = _ffi.SchedulePeriod(1, 0.0 if every is None else float(every), _optional_text(cron, "a cron expression"))
        options = _ffi.TaskOptions(1, _optional_text(queue, "a queue name"), priority, 0.0, 0.0,
                                   None, None, None, None, 0)
        next_fire = ctypes.c_double()
        check(_ffi.outlive_schedule_set(self._store.handle, _c_text(name, "a schedule name"), handler.handle,
                                        ctypes.byref(period), ctypes.byref(options), ctypes.byref(next_fire)))
        return next_fire.value

    def remove(self, name: str) -> None:
        """Removes the schedule; the tasks it added stay. NotFoundError when there is none."""
        check(_ffi.outlive_schedule_remove(self._store.handle, name.encode("utf-8")))

    def list(self, after: typing.Optional[str] = None, limit: int = 1000) -> typing.List[ScheduleInfo]:
        """Schedules in name order, after the name `after` (None: from the first)."""
        out = _ffi.ScheduleListP()
        check(_ffi.outlive_schedule_list_new(self._store.handle, None if after is None else after.encode("utf-8"),
                                             limit, ctypes.byref(out)))
        try:
            found = []
            for i in range(_ffi.outlive_schedule_list_count(out)):
                interval = _ffi.outlive_schedule_list_interval(out, i)
                last = _ffi.outlive_schedule_list_last_fired(out, i)
                found.append(ScheduleInfo(
                    name=_text(_ffi.outlive_schedule_list_name(out, i)) or "",
                    handler=_text(_ffi.outlive_schedule_list_handler_name(out, i)) or "",
                    every=interval if interval > 0 else None,
                    cron=_text(_ffi.outlive_schedule_list_cron(out, i)),
                    next_fire=_ffi.outlive_schedule_list_next_fire(out, i),
                    last_fired=last if last > 0 else None,
                    queue=_text(_ffi.outlive_schedule_list_queue(out, i)) or "",
                    priority=_ffi.outlive_schedule_list_priority(out, i)))
            return found
        finally:
            _ffi.outlive_schedule_list_free(out)

    def __iter__(self) -> typing.Iterator[ScheduleInfo]:
        after = None
        while True:
            page = self.list(after=after)
            yield from page
            if len(page) < 1000:
                return
            after = page[-1].name
