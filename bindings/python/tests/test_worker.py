"""The worker for Python handlers and task functions, with real processes:
one shared tasks module imported by a producer and by `python -m outlive
worker`; the producer never runs a task, the worker runs them at once, and a
stop (SIGTERM, KeyboardInterrupt) never loses one."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import outlive
from conftest import PACKAGE_ROOT, _environment, run_python, store_location

TASKS_MODULE = '''
import asyncio, os, pathlib, datetime, time
from typing import Optional
import outlive

OUT = pathlib.Path(os.environ["WORKER_TEST_OUT"])

def note(text: str) -> None:
    with open(OUT / "ran.txt", "a") as file:
        file.write(f"{text} by {os.getpid()}\\n")

@outlive.task
def upload(path: pathlib.Path, meta: dict, when: datetime.datetime, size: int | None = None,
           retries: Optional[int] = 3, label: str = "plain", tags: list = []) -> None:
    note(f"upload {path} {sorted(meta.items())} {when.isoformat()} {size} {retries} {label} {tags}")

@outlive.task
def slow(seconds: float, name: str) -> None:
    note(f"slow {name} started")
    (OUT / f"{name}.started").touch()
    time.sleep(seconds)
    note(f"slow {name} finished")

@outlive.task
async def slow_async(seconds: float, name: str) -> None:
    note(f"async {name} started")
    (OUT / f"{name}.started").touch()
    await asyncio.sleep(seconds)
    note(f"async {name} finished")

@outlive.task
def interrupt(name: str, attempt: int) -> None:
    note(f"interrupt {name} attempt {attempt}")
    if attempt == 1:
        raise KeyboardInterrupt

@outlive.task
async def failing_async(name: str, attempt: int) -> None:
    await asyncio.sleep(0)
    note(f"failing_async {name} attempt {attempt}")
    if attempt == 1:
        raise RuntimeError("first attempt fails")
'''


@pytest.fixture
def location(request, tmp_path):
    """A directory; on both engines for the tests marked `both_engines`, those
    whose store work differs (the rest is the worker's own, the same on both)."""
    return store_location(getattr(request, "param", "sqlite"), tmp_path)


both_engines = pytest.mark.parametrize("location", ["sqlite", "postgresql"], indirect=True)


@pytest.fixture
def shared(tmp_path, location):
    """A directory holding tasks.py, the environment of processes importing it."""
    (tmp_path / "tasks.py").write_text(TASKS_MODULE)
    out = tmp_path / "out"
    out.mkdir()
    env = _environment()
    env["PYTHONPATH"] = str(tmp_path) + os.pathsep + env.get("PYTHONPATH", "")
    env["WORKER_TEST_OUT"] = str(out)
    env["OUTLIVE_STORE"] = location
    return tmp_path, out, env


def start_worker(shared, *options):
    directory, _, env = shared
    return subprocess.Popen([sys.executable, "-m", "outlive", "worker", *options, "tasks"], cwd=directory, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def produce(shared, code):
    """Runs `code` in a producer process that imports tasks and has the store open as `store`."""
    directory, _, env = shared
    program = "import os, pathlib, datetime, outlive, tasks\n" \
              "with outlive.Store(os.environ['OUTLIVE_STORE'], process='producer') as store:\n" + \
              textwrap.indent(textwrap.dedent(code), "    ")
    return subprocess.run([sys.executable, "-c", program], cwd=directory, env=env, capture_output=True, text=True,
                          timeout=120, check=True)


def ran(out):
    path = out / "ran.txt"
    return path.read_text().splitlines() if path.exists() else []


def wait_for(condition, seconds=20.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def stop(worker, number=signal.SIGTERM):
    worker.send_signal(number)
    out, err = worker.communicate(timeout=60)
    return worker.returncode, err


@both_engines
def test_a_task_added_by_another_process_runs_in_the_worker_at_once(shared, location):
    _, out, _ = shared
    worker = start_worker(shared)
    try:
        # The default triggers of an app would start a run 30 s after the add;
        # a worker's runs start at once, well within this deadline.
        produce(shared, """
            print(tasks.upload.delay(pathlib.Path("/data/a.bin"), {"k": 1}, datetime.datetime(2026, 1, 2, 3, 4, 5),
                                     tags=["x"]))
        """)
        assert wait_for(lambda: ran(out), seconds=20)
    finally:
        code, err = stop(worker)
    assert code == 0, err
    [line] = ran(out)
    assert line == f"upload /data/a.bin [('k', 1)] 2026-01-02T03:04:05 None 3 plain ['x'] by {worker.pid}"
    with outlive.Store(location) as store:
        assert len(store.tasks) == 0 and store.tasks.dead_count == 0


def test_a_producer_that_dispatches_its_loop_never_runs_the_tasks_it_adds(shared, location):
    _, out, _ = shared
    # The producer is an app: it dispatches its store's loop (for signals, say)
    # with the default triggers, for longer than a run takes to start.
    produce(shared, """
        for index in range(3):
            tasks.slow.delay(0.0, f"t{index}")
        store.tasks.run_now()
        for _ in range(40):
            store.loop.dispatch(timeout=0.05)
        assert len(store.tasks) == 3, len(store.tasks)
    """)
    assert ran(out) == []
    worker = start_worker(shared)
    try:
        assert wait_for(lambda: len([line for line in ran(out) if "finished" in line]) == 3)
    finally:
        code, err = stop(worker)
    assert code == 0, err
    assert all(line.endswith(f"by {worker.pid}") for line in ran(out))


def test_sigterm_during_a_long_task_lets_it_finish_then_the_worker_exits(shared, location):
    _, out, _ = shared
    worker = start_worker(shared)
    try:
        produce(shared, "tasks.slow.delay(1.5, 'long')")
        assert wait_for(lambda: (out / "long.started").exists())
    finally:
        code, err = stop(worker)
    assert code == 0, err
    assert ran(out)[-1] == f"slow long finished by {worker.pid}"
    with outlive.Store(location) as store:
        assert len(store.tasks) == 0 and store.tasks.dead_count == 0


def test_sigterm_during_a_long_async_task_finishes_it_within_the_grace_period(shared, location):
    _, out, _ = shared
    worker = start_worker(shared, "--grace", "30")
    try:
        produce(shared, "tasks.slow_async.delay(1.0, 'graceful')")
        assert wait_for(lambda: (out / "graceful.started").exists())
    finally:
        code, err = stop(worker)
    assert code == 0, err
    assert ran(out)[-1] == f"async graceful finished by {worker.pid}"
    with outlive.Store(location) as store:
        assert len(store.tasks) == 0


@both_engines
def test_a_task_cut_short_by_the_stop_is_pending_again_and_the_next_worker_runs_it(shared, location):
    _, out, _ = shared
    worker = start_worker(shared, "--grace", "0")
    try:
        produce(shared, "tasks.slow_async.delay(600.0, 'cut')")
        assert wait_for(lambda: (out / "cut.started").exists())
    finally:
        code, err = stop(worker)
    assert code == 0, err
    with outlive.Store(location) as store:
        [task] = store.tasks.list()
        assert task.state == outlive.TaskState.PENDING and task.attempts == 1
        assert "closed during the attempt" in (task.last_error or "")
        # Made short, so that the next worker can finish it.
        store.tasks.delete(task.id)
    produce(shared, "tasks.slow_async.delay(0.0, 'cut-again')")
    worker = start_worker(shared)
    try:
        assert wait_for(lambda: any("cut-again finished" in line for line in ran(out)))
    finally:
        stop(worker)


def test_keyboard_interrupt_in_a_task_stops_the_worker_and_the_task_runs_again(shared, location):
    _, out, _ = shared
    produce(shared, "tasks.interrupt.delay('k')")
    worker = start_worker(shared)
    _, err = worker.communicate(timeout=60)
    assert worker.returncode != 0 and "KeyboardInterrupt" in err
    with outlive.Store(location) as store:
        [task] = store.tasks.list()
        assert task.state == outlive.TaskState.PENDING and task.attempts == 1
    worker = start_worker(shared)
    try:
        assert wait_for(lambda: any("attempt 2" in line for line in ran(out)))
        assert wait_for(lambda: len(outlive.Store(location).tasks) == 0)
    finally:
        code, err = stop(worker)
    assert code == 0, err


def test_an_async_task_that_raises_fails_its_attempt_and_is_retried(shared, location):
    _, out, _ = shared
    produce(shared, "tasks.failing_async.delay('f')")
    worker = start_worker(shared)
    try:
        assert wait_for(lambda: any("attempt 2" in line for line in ran(out)), seconds=30)
    finally:
        code, err = stop(worker)
    assert code == 0, err
    assert "RuntimeError: first attempt fails" in err


def test_a_misspelled_handler_is_reported_by_the_worker_and_by_outlive_tasks(shared, location):
    produce(shared, "store.tasks.add(outlive.Handler('tasks.uplaod'))")
    worker = start_worker(shared)
    try:
        time.sleep(1.0)
    finally:
        code, err = stop(worker)
    assert code == 0, err
    assert "tasks of handler tasks.uplaod are pending, but no handler of that name is declared" in err
    with outlive.Store(location) as store:
        [task] = store.tasks.list()
        assert task.attempts == 0 and "no handler named tasks.uplaod is declared in process worker" in task.last_error


@both_engines
def test_a_task_whose_stored_arguments_cannot_fit_is_dead_at_its_first_attempt(shared, location):
    # Added by hand, bypassing delay's check: the stored call lacks `name`.
    produce(shared, "store.tasks.add(outlive.Handler('tasks.slow', seconds=0.0))")
    worker = start_worker(shared)
    try:
        assert wait_for(lambda: outlive.Store(location).tasks.dead_count == 1)
    finally:
        stop(worker)
    with outlive.Store(location) as store:
        [task] = store.tasks.list()
        assert task.attempts == 1 and "cannot be called" in task.last_error


def test_the_worker_needs_a_store(shared):
    directory, _, env = shared
    env = dict(env)
    del env["OUTLIVE_STORE"]
    result = subprocess.run([sys.executable, "-m", "outlive", "worker", "tasks"], cwd=directory, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "--store" in result.stderr


def test_delay_checks_the_arguments_and_stores_nothing_on_a_mismatch(location):
    run_python('''
import datetime, pathlib, sys
import outlive

@outlive.task
def upload(path: pathlib.Path, size: int, when: datetime.datetime | None = None) -> None:
    pass

with outlive.Store(sys.argv[1]) as store:
    for args, kwargs, says in [((), {}, "missing a required argument: 'path'"),
                               ((pathlib.Path("a"), 1, None, 4), {}, "too many positional arguments"),
                               ((pathlib.Path("a"),), {"size": 1, "colour": "red"}, "unexpected keyword argument 'colour'"),
                               ((pathlib.Path("a"), "1"), {}, "argument 'size' takes int, not str"),
                               ((pathlib.Path("a"), True), {}, "argument 'size' takes int, not bool"),
                               ((3, 1), {}, "argument 'path' takes Path, not int"),
                               ((pathlib.Path("a"), 1, "2026-01-01"), {}, "argument 'when' takes datetime or None, not str")]:
        try:
            upload.delay(*args, **kwargs)
        except TypeError as error:
            assert says in str(error), (says, str(error))
        else:
            raise SystemExit(f"accepted {args} {kwargs}")
    assert len(store.tasks) == 0
    assert upload.delay(pathlib.Path("a"), 1)
    assert len(store.tasks) == 1
    # Called directly, a task function is a plain call.
    assert upload(pathlib.Path("a"), 2) is None
print("ok")
''', location)


def test_delay_adds_to_the_one_open_store_or_says_which_it_needs(location, tmp_path):
    run_python('''
import sys
import outlive

@outlive.task(name="app.ping")
def ping() -> None:
    pass

def refused(expected, otherwise):
    try:
        ping.delay()
    except outlive.StateError as error:
        assert expected in str(error), str(error)
    else:
        raise SystemExit(otherwise)

refused("no store is open", "added without a store")
with outlive.Store(sys.argv[1]) as first, outlive.Store(sys.argv[2]) as second:
    refused("2 stores are open", "chose one of two stores")
    ping.options(store=second).delay()
    assert len(first.tasks) == 0 and [t.handler for t in second.tasks] == ["app.ping"]

    @first.task
    def bound() -> None:
        pass
    bound.delay()
    assert [t.handler for t in first.tasks] == ["__main__.bound"]
with outlive.Store(sys.argv[1]) as only:
    ping.options(group_start="g").delay()
    assert [t.group_start for t in only.tasks] == [None, "g"]
    # Found alone once, it is not taken again once a second store opens,
    # nor after it closed.
    with outlive.Store(sys.argv[2]) as again:
        refused("2 stores are open", "chose one of two stores")
    ping.delay()
    assert len(only.tasks) == 3
refused("no store is open", "added to a closed store")
print("ok")
''', location, str(tmp_path / "second"))


def test_json_values_and_defaults_reach_a_handler_in_this_process(location):
    run_python('''
import asyncio, datetime, pathlib, sys
from typing import Optional
import outlive

seen = []

@outlive.task
def work(path: pathlib.Path, meta: dict, items: list, day: datetime.date, when: datetime.datetime,
         size: int | None = None, ratio: Optional[float] = 0.5, flag: bool = True, name: str = "n",
         attempt: int = 0) -> None:
    seen.append((path, meta, items, day, when, size, ratio, flag, name, attempt))

@outlive.task
async def later(value: int) -> None:
    await asyncio.sleep(0.01)
    seen.append(("async", value))

with outlive.Store(sys.argv[1]) as store:
    when = datetime.datetime(2026, 5, 6, 7, 8, 9, tzinfo=datetime.timezone.utc)
    work.delay(pathlib.Path("/x/y"), {"a": [1, 2]}, (3, 4), datetime.date(2026, 1, 1), when)
    work.delay(pathlib.Path("/z"), {}, [], datetime.date(2026, 1, 1), when, size=7, ratio=None, flag=False, name="m")
    later.delay(5)
    assert outlive.resolves(work.name) is False   # adding declares nothing
    store.tasks.serve()
    assert outlive.resolves(work.name)

    async def main():
        store.loop.attach()
        for _ in range(400):
            if len(store.tasks) == 0 and len(seen) == 3:
                break
            await asyncio.sleep(0.01)
        store.loop.detach()
    asyncio.run(main())
assert seen[0] == (pathlib.Path("/x/y"), {"a": [1, 2]}, [3, 4], datetime.date(2026, 1, 1), when, None, 0.5, True, "n", 1), seen[0]
assert seen[1] == (pathlib.Path("/z"), {}, [], datetime.date(2026, 1, 1), when, 7, None, False, "m", 1), seen[1]
assert seen[2] == ("async", 5)
print("ok")
''', location)


def test_a_handler_with_defaults_gets_them_when_the_call_leaves_them_out():
    run_python('''
import outlive
from typing import Optional

calls = []

@outlive.handler("py.defaults")
def defaults(text: str = "fallback", count: int = 3, maybe: Optional[int] = None) -> None:
    calls.append((text, count, maybe))

assert defaults.outlive_signature == "ID? text, ID<json>? count, ID<json>? maybe, HANDLER? completion"
outlive.Handler("py.defaults")()
outlive.Handler("py.defaults", text="given", count=outlive.ID("5", type="json"))()
assert calls == [("fallback", 3, None), ("given", 5, None)], calls
print("ok")
''')


def test_an_async_handler_called_outside_an_asyncio_loop_runs_to_its_end():
    run_python('''
import asyncio
import outlive

calls = []

@outlive.handler("py.async")
async def later(value: int) -> None:
    await asyncio.sleep(0)
    calls.append(value)

outlive.Handler("py.async", value=4)()
assert calls == [4], calls
print("ok")
''')


def test_outlive_worker_with_python_runs_the_python_worker_in_its_place(shared, location):
    command = os.path.join(PACKAGE_ROOT, "..", "..", "build", "outlive")
    if not os.access(command, os.X_OK):
        pytest.skip("the outlive command is not built (make cli)")
    directory, out, env = shared
    env = dict(env, OUTLIVE_PYTHON=sys.executable)
    produce(shared, "tasks.slow.delay(0.0, 'via-cli')")
    worker = subprocess.Popen([command, "worker", location, "--python", "tasks", "--until-idle"], cwd=directory,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = worker.communicate(timeout=120)
    assert worker.returncode == 0, err
    # exec: the process that ran the task is the one the command started.
    assert ran(out)[-1] == f"slow via-cli finished by {worker.pid}"
    with outlive.Store(location) as store:
        assert len(store.tasks) == 0
    refused = subprocess.run([command, "worker", location, "--python", "tasks", "--load", "x.so"], env=env,
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 64 and "--python" in refused.stderr
