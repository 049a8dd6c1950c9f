import subprocess
import sys
import time

import pytest

import outlive
from conftest import _environment, dispatch_until, store_location


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


held = []


@outlive.handler("py.queue.held")
def held_job(n: int, completion: outlive.Handler) -> None:
    # Completed by the test once the store's lock is free again.
    held.append(completion)


# Holds the store's write lock (a kv update whose modifier waits) until told
# on stdin, or for 20 s at most; says which.
LOCK_HOLDER = """
import select, sys, outlive
store = outlive.Store(sys.argv[1], process="holder")
store.queues.serve("default", 0)
how = []
def hold(value):
    print("holding", flush=True)
    told, _, _ = select.select([sys.stdin], [], [], 20.0)
    how.append("told" if told else "timed out")
    return b"held"
store.kv.update("held", hold)
print("released: " + how[0], flush=True)
store.close()
"""


def test_parallel_claims_on_postgresql_go_on_while_a_writer_holds_the_store_lock(location):
    if not location.startswith("postgres"):
        pytest.skip("SQLite has one writer at a time: a claim is a write like any other there")
    held.clear()
    with outlive.Store(location, process="runner") as store:
        store.queues.serve("default", 0)
        store.queues.declare("wide", "parallel")
        for n in range(3):
            store.queues.enqueue(outlive.Handler("py.queue.held", n=n), "wide")
        holder = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, location], env=_environment(),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout.readline().strip() == "holding"
            store.queues.serve("wide", 4)
            # Claimed and started while another process holds the lock (which
            # a claim took first, and waited for, before SKIP LOCKED claims).
            started = dispatch_until(store, lambda: len(held) == 3)
            holder.stdin.write("release\n")
            holder.stdin.flush()
            assert holder.stdout.readline().strip() == "released: told"
            assert started
        finally:
            holder.stdin.close()
            holder.wait(timeout=30)
            holder.stdout.close()
        for completion in held:
            completion(success=True)
        assert dispatch_until(store, lambda: len(store.tasks) == 0)
        assert store.tasks.dead_count == 0 and store.kv["held"] == b"held"
