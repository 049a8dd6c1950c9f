"""A task added from a Handler still held as its bytes (handlers.Handler._data)
goes to the library as those bytes (outlive_task_enqueue_serialized): it must
be stored and run exactly as one added from a native handler, with every
option, on both engines."""
import typing

import pytest

import outlive
from conftest import dispatch_until, store_location


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path):
    return store_location(request.param, tmp_path)


ran: typing.List[typing.Tuple[str, int, bool]] = []


@outlive.handler("py.add_bytes.note")
def note(item: str, number: int, flag: bool) -> None:
    ran.append((item, number, flag))


def kept(**bound: typing.Any) -> outlive.Handler:
    """A Handler of py.add_bytes.note held as its bytes."""
    outlive.Handler("py.add_bytes.note", **bound).close()  # its names accepted once
    handler = outlive.Handler("py.add_bytes.note", **bound)
    assert handler._data is not None and not handler._handle
    return handler


def test_tasks_added_as_bytes_are_stored_and_run_as_tasks_added_as_handlers(location):
    ran.clear()
    with outlive.Store(location) as store:
        store.queues.declare("py_add_bytes", outlive.QueueKind.ORDERED)
        store.queues.serve("py_add_bytes", 1)
        first = store.tasks.add(kept(item="plain", number=1, flag=True))
        native = outlive.Handler("py.add_bytes.note", item="native", number=2, flag=False)
        native.handle  # made native: added through outlive_task_enqueue
        second = store.tasks.add(native)
        third = store.tasks.add(kept(item="queued", number=3, flag=True), queue="py_add_bytes", priority=5,
                                unique_key="one")
        held = store.tasks.add(kept(item="held", number=4, flag=True), queue="py_add_bytes", unique_key="one")
        assert held.existing and held == third and not third.existing
        later = store.tasks.add(kept(item="with result", number=5, flag=False), result=True)
        listed = {task.id: task for task in store.tasks.list()}
        assert set(listed) == {first, second, third, later}
        assert listed[third].queue == "py_add_bytes" and listed[third].priority == 5
        assert listed[third].unique_key == "one"
        assert all(task.handler == "py.add_bytes.note" for task in listed.values())
        store.tasks.run_now()
        assert dispatch_until(store, lambda: len(store.tasks) == 0 and len(ran) == 4)
        assert later.result(timeout=10) is None
    assert sorted(ran) == [("native", 2, False), ("plain", 1, True), ("queued", 3, True), ("with result", 5, False)]


def test_a_closed_kept_handler_adds_nothing(location):
    with outlive.Store(location) as store:
        handler = kept(item="closed", number=0, flag=False)
        handler.close()
        with pytest.raises(outlive.ClosedError):
            store.tasks.add(handler)
        with pytest.raises(outlive.ClosedError):
            store.tasks.add(handler, priority=1)
        assert len(store.tasks) == 0
