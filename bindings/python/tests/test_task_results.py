"""Task results as refs, and the decorator's queue options, with real
processes: this process adds tasks (a producer that serves no queue) and waits
for their results; `python -m outlive worker` in another process runs them."""
import asyncio
import os
import subprocess
import sys
import textwrap

import pytest

import outlive
from conftest import _environment, store_location


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path):
    """Each test runs on both engines: a directory, or a store on the test server."""
    return store_location(request.param, tmp_path)

RESULT_TASKS = '''
import os, pathlib, time
import outlive

@outlive.task
def double(n: int) -> dict[str, int]:
    return {"n": n, "double": n * 2}

@outlive.task
def where(name: str) -> pathlib.Path:
    return pathlib.Path("/data") / name

@outlive.task
def failing(reason: str) -> None:
    raise RuntimeError(reason)

@outlive.task
def steps(count: int, pause: float) -> str:
    for step in range(1, count + 1):
        outlive.task_progress({"step": step, "of": count})
        time.sleep(pause)
    return f"{count} steps"

@outlive.task
async def shout(text: str) -> str:
    return text.upper() + "!"

@outlive.task(queue="results.parallel", priority=7, unique=True)
def report(account: str) -> int:
    return len(account)
'''


@pytest.fixture(scope="module")
def module_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("result_tasks")
    (directory / "result_tasks.py").write_text(RESULT_TASKS)
    sys.path.insert(0, str(directory))
    yield directory
    sys.path.remove(str(directory))


@pytest.fixture
def tasks(module_dir):
    import result_tasks
    return result_tasks


def worker_environment(module_dir, location):
    env = _environment()
    env["PYTHONPATH"] = str(module_dir) + os.pathsep + env.get("PYTHONPATH", "")
    env["OUTLIVE_STORE"] = location
    return env


def start_worker(module_dir, location, *options):
    return subprocess.Popen([sys.executable, "-m", "outlive", "worker", *options, "result_tasks"], cwd=module_dir,
                            env=worker_environment(module_dir, location), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def run_worker_until_idle(module_dir, location, *options):
    return subprocess.run([sys.executable, "-m", "outlive", "worker", "--until-idle", *options, "result_tasks"],
                          cwd=module_dir, env=worker_environment(module_dir, location), capture_output=True,
                          text=True, timeout=120)


@pytest.fixture
def worker(module_dir, location):
    with outlive.Store(location) as store:
        store.queues.declare("results.parallel", "parallel")
    process = start_worker(module_dir, location, "--queue", "default=2", "--queue", "results.parallel=2")
    yield process
    process.terminate()
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err


def producer(location):
    store = outlive.Store(location, process="producer")
    # This process may have served task functions in other tests: serve nothing.
    store.queues.serve("default", 0)
    return store


def test_a_result_added_here_comes_back_from_the_worker_process(tasks, worker, location):
    with producer(location) as store:
        ref = tasks.double.options(result=True).delay(21)
        assert isinstance(ref, str) and ref.id == str(ref) and not ref.existing
        assert ref.result(timeout=10) == {"n": 21, "double": 42}
        path = tasks.where.options(result=True).delay("report.pdf")
        assert path.result(timeout=10) == __import__("pathlib").Path("/data/report.pdf")
        assert ref.result() == {"n": 21, "double": 42}, "a ref keeps its result"
        assert store.signals.consumers() == [], "the this-run consumers ended with the final version"


def test_a_dead_task_raises_its_last_error_and_a_cancelled_one_raises_cancelled(tasks, module_dir, location):
    with producer(location) as store:
        pending = tasks.double.options(result=True).delay(1)
        assert pending.cancel() is False
        with pytest.raises(outlive.TaskCancelledError) as cancelled:
            pending.result(timeout=10)
        assert cancelled.value.task_id == pending.id
        dead = tasks.failing.options(result=True).delay("the disk is full")
        # A worker in another process whose policy gives each task one attempt.
        code = ("import sys, outlive, result_tasks, asyncio\n"
                "from outlive import worker\n"
                "with outlive.Store(sys.argv[1], process='worker') as store:\n"
                "    store.tasks.set_policy(max_attempts=1)\n"
                "    asyncio.run(worker.serve(store, until_idle=True, idle_seconds=0.3))\n")
        subprocess.run([sys.executable, "-c", code, location], cwd=module_dir,
                       env=worker_environment(module_dir, location), check=True, timeout=120)
        with pytest.raises(outlive.TaskDeadError) as error:
            dead.result(timeout=10)
        assert error.value.last_error == "RuntimeError: the disk is full"
        assert error.value.task_id == dead.id


def test_progress_arrives_in_order_before_the_result(tasks, worker, location):
    with producer(location) as store:
        ref = tasks.steps.options(result=True).delay(5, 0.1)
        seen = []
        ref.on_progress(seen.append)
        assert ref.result(timeout=20) == "5 steps"
        steps = [value["step"] for value in seen]
        # A consumer that is behind skips to the newest version, never back.
        assert steps and steps == sorted(set(steps)) and all(value["of"] == 5 for value in seen)
        assert ref.progress() == seen


def test_await_a_ref_on_an_asyncio_loop(tasks, worker, location):
    async def main():
        with producer(location) as store:
            first = tasks.shout.options(result=True).delay("hello")
            second = tasks.double.options(result=True).delay(4)
            # Awaited as a ref is; bounded so that a lost wake-up fails here instead of hanging.
            values = await asyncio.wait_for(asyncio.gather(first, second.result_async(timeout=10)), 30)
            assert store.loop._asyncio_loop is None, "the store's loop was attached only while waiting"
            return values
    assert asyncio.run(main()) == ["HELLO!", {"n": 4, "double": 8}]


def test_a_process_started_after_the_task_completed_gets_its_result(module_dir, location):
    env = worker_environment(module_dir, location)
    add = textwrap.dedent("""
        import sys, outlive, result_tasks
        with outlive.Store(sys.argv[1], process="reporting") as store:
            store.queues.serve("default", 0)
            print(result_tasks.double.options(result="process").delay(50))
    """)
    task_id = subprocess.run([sys.executable, "-c", add, location], cwd=module_dir, env=env, capture_output=True,
                             text=True, check=True, timeout=120).stdout.strip()
    # The adding process is gone; the worker runs the task and exits.
    finished = run_worker_until_idle(module_dir, location)
    assert finished.returncode == 0, finished.stderr
    with outlive.Store(location) as store:
        assert len(store.tasks) == 0
        [consumer] = store.signals.consumers()
        assert consumer.process == "reporting" and consumer.handler == "outlive.python.task_result"
    wait = textwrap.dedent("""
        import sys, outlive
        with outlive.Store(sys.argv[1], process="reporting") as store:
            print(store.tasks.ref(sys.argv[2]).result(timeout=10))
            print(store.signals.consumers())
    """)
    out = subprocess.run([sys.executable, "-c", wait, location, task_id], cwd=module_dir, env=env,
                         capture_output=True, text=True, check=True, timeout=120).stdout.splitlines()
    assert out == ["{'n': 50, 'double': 100}", "[]"]


def test_the_decorators_queue_priority_and_unique_key(tasks, location):
    with producer(location) as store:
        store.queues.declare("results.parallel", "parallel")
        first = tasks.report.delay("account-42")
        again = tasks.report.delay("account-42")
        other = tasks.report.delay("account-7")
        assert not first.existing and again.existing and again == first and other != first
        listed = {task.id: task for task in store.tasks}
        assert set(listed) == {first, other}
        assert listed[first].queue == "results.parallel" and listed[first].priority == 7
        assert listed[first].unique_key and listed[first].unique_key.startswith("result_tasks.report:")
        later = tasks.double.options(queue="results.parallel", priority=-3, delay=3600, unique_key="nightly").delay(1)
        info = {task.id: task for task in store.tasks}[later]
        assert (info.queue, info.priority, info.unique_key) == ("results.parallel", -3, "nightly")
        assert info.next_attempt > 0


def test_a_ref_freed_while_its_thread_holds_the_results_lock_does_not_hang_it():
    # The garbage collector runs a ref's __del__ on whichever thread allocates,
    # as when enqueue makes a waiter under the results lock: freeing the ref
    # there once made the thread wait for its own lock (a CI run hung so).
    import threading
    from outlive import results
    results.new_waiter("freed-waiter")
    done = threading.Event()

    def free_under_the_lock():
        ref = outlive.TaskRef("00000000-0000-4000-8000-000000000000", None, waiter="freed-waiter")
        with results._lock:
            del ref
        done.set()

    threading.Thread(target=free_under_the_lock, daemon=True).start()
    assert done.wait(10), "freeing a ref under the results lock hung its thread"
    results.new_waiter("next-waiter")
    assert "freed-waiter" not in results._waiters
    results.forget_waiter("next-waiter")
    assert "next-waiter" not in results._waiters


def test_refused_options_store_nothing(tasks, location):
    with producer(location) as store:
        with pytest.raises(outlive.InvalidArgumentError, match="NUL"):
            tasks.double.options(unique_key="report\0:42", result=True).delay(1)
        with pytest.raises(outlive.NotFoundError):
            tasks.double.options(queue="never-declared", result=True).delay(1)
        with pytest.raises(outlive.NotFoundError):
            store.tasks.add(outlive.Handler("result_tasks.double", n=1), queue="never-declared", result="process")
        with pytest.raises(ValueError):
            tasks.double.options(result="any_process").delay(1)
        with pytest.raises(outlive.StateError, match="without a result"):
            tasks.double.delay(1).result(timeout=1)
        assert len(store.tasks) == 1
        assert store.signals.consumers() == [], "no consumer without its task"


def test_a_worker_naming_an_unknown_queue_exits_with_status_3(module_dir, location):
    finished = run_worker_until_idle(module_dir, location, "--queue", "never-declared=2")
    assert finished.returncode == 3 and "never-declared" in finished.stderr
    finished = run_worker_until_idle(module_dir, location, "--queue", "x=0")
    assert finished.returncode == 2 and "1 to 1024" in finished.stderr


def test_a_nul_in_a_schedule_or_queue_name_is_refused_not_truncated(location):
    with outlive.Store(location) as store:
        with pytest.raises(outlive.InvalidArgumentError, match="NUL"):
            store.schedules.set("poll\0extra", outlive.Handler("app.report"), every=60)
        with pytest.raises(outlive.InvalidArgumentError, match="NUL"):
            store.queues.declare("uploads\0x", "parallel")
        assert store.schedules.list() == [] and [queue.name for queue in store.queues] == ["default"]
