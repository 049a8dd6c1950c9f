import time

import pytest

import outlive
from conftest import dispatch_until, store_location


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path):
    """Each test runs on both engines: a directory, or a store on the test server."""
    return store_location(request.param, tmp_path)

ran = []


@outlive.handler("py.queue.job")
def job(label: str) -> None:
    ran.append((label, time.time()))


def test_a_parallel_queue_runs_by_priority_and_a_due_task_waits_for_its_time(location):
    ran.clear()
    with outlive.Store(location, process="app") as store:
        store.queues.serve("default", 0)
        store.queues.declare("jobs", "parallel")
        due = time.time() + 0.3
        store.queues.enqueue(outlive.Handler("py.queue.job", label="later"), "jobs", due_at=due)
        store.queues.enqueue(outlive.Handler("py.queue.job", label="low"), "jobs", priority=-1)
        store.queues.enqueue(outlive.Handler("py.queue.job", label="high"), "jobs", priority=3)
        listed = {queue.name: queue for queue in store.queues}
        assert listed["jobs"].kind == outlive.QueueKind.PARALLEL and listed["jobs"].pending == 3
        assert listed["default"].kind == outlive.QueueKind.ORDERED
        store.queues.serve("jobs", 1)
        assert dispatch_until(store, lambda: len(ran) == 3)
        assert [label for label, _ in ran] == ["high", "low", "later"]
        assert ran[2][1] >= due
        assert store.queues.list()[1].pending == 0


def test_bad_queue_input_raises_precise_errors(location):
    with outlive.Store(location, process="app") as store:
        with pytest.raises(outlive.NotFoundError):
            store.queues.serve("undeclared", 1)
        with pytest.raises(outlive.NotFoundError):
            store.queues.enqueue(outlive.Handler("py.queue.job", label="x"), "undeclared")
        with pytest.raises(outlive.InvalidArgumentError):
            store.queues.declare("bad name", "parallel")
        with pytest.raises(outlive.InvalidArgumentError):
            store.queues.enqueue(outlive.Handler("py.queue.job", label="x"), due_at=float("nan"))
        with pytest.raises(outlive.StateError):
            store.queues.declare("default", "parallel")
        assert len(store.tasks) == 0
        assert [queue.name for queue in store.queues] == ["default"]
