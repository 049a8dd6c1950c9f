import threading

import pytest

import outlive
from conftest import dispatch_until, store_location


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path):
    """Each test runs on both engines: a directory, or a store on the test server."""
    return store_location(request.param, tmp_path)


seen = []


@outlive.handler("py.lifecycle.wait")
def wait(task_id: str, completion: outlive.Handler) -> None:
    # Keeps its completion: the test cancels the task, then completes it (from another thread).
    seen.append((task_id, completion))


def test_a_pending_task_cancelled_is_removed_and_a_second_cancel_finds_nothing(location):
    with outlive.Store(location) as store:
        task = store.tasks.add(outlive.Handler("py.lifecycle.never"))
        [info] = store.tasks.list()
        assert info.queue == "default" and info.priority == 0 and info.unique_key is None
        assert info.cancelled is False and info.result_signal is None
        assert store.tasks.cancel(task) is False
        assert len(store.tasks) == 0 and store.tasks.list() == []
        with pytest.raises(outlive.NotFoundError):
            store.tasks.cancel(task)
        with pytest.raises(outlive.NotFoundError):
            store.tasks.is_cancelled(task)
        with pytest.raises(outlive.InvalidArgumentError):
            store.tasks.cancel("not-a-task-id")


def test_a_running_task_is_told_listed_and_ends_cancelled(location):
    seen.clear()
    with outlive.Store(location) as store:
        task = store.tasks.add(outlive.Handler("py.lifecycle.wait"))
        store.tasks.run_now()
        assert dispatch_until(store, lambda: len(seen) == 1)
        assert store.tasks.is_cancelled(task) is False
        assert store.tasks.cancel(task) is True
        with pytest.raises(outlive.StateError):
            store.tasks.cancel(task)
        [info] = store.tasks.list()
        assert info.cancelled is True and info.state is outlive.TaskState.RUNNING
        assert store.tasks.is_cancelled(task) is True
        finisher = threading.Thread(target=lambda: seen[0][1](success=True))
        finisher.start()
        finisher.join()
        assert dispatch_until(store, lambda: len(store.tasks) == 0)
        assert store.tasks.dead_count == 0


def test_a_cancel_that_meets_a_claim_under_way_tells_the_task_it_now_runs(location):
    """On PostgreSQL a parallel queue's claim takes no store lock: a cancel may
    read a task as pending while a claim is starting it. Here psql plays the
    claimer (the claim's row update, uncommitted); the cancel waits for it and
    sees the task running: it is told, not removed from under its run."""
    if not location.startswith("postgres"):
        pytest.skip("SQLite has one writer at a time: a cancel and a claim never overlap there")
    import subprocess
    server, store_name = location.split("?outlive_store=")
    with outlive.Store(location) as store:
        store.queues.serve("default", 0)
        task = store.tasks.add(outlive.Handler("py.lifecycle.never"))
        with subprocess.Popen(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", server], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as claimer:
            claimer.stdin.write(f"SET search_path = outlive_{store_name};\nBEGIN;\n"
                                f"UPDATE outlive_tasks SET state = 1, runner = '{store.run_id}', claim = 'psql', attempts = 1 "
                                f"WHERE id = '{task}';\n\\echo claimed\n")
            claimer.stdin.flush()
            assert claimer.stdout.readline().strip() == "claimed"
            cancelled = []
            canceller = threading.Thread(target=lambda: cancelled.append(store.tasks.cancel(task)))
            canceller.start()
            canceller.join(0.5)
            assert canceller.is_alive(), "the cancel did not wait for the claim under way"
            claimer.stdin.write("COMMIT;\n")
            claimer.stdin.close()
            assert claimer.wait(timeout=30) == 0
        canceller.join(30)
        assert cancelled == [True]
        [info] = store.tasks.list()
        assert info.state is outlive.TaskState.RUNNING and info.cancelled is True
