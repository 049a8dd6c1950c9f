import pytest

import outlive
from conftest import dispatch_until, run_python, store_location


ran = []


@outlive.handler("py.task.work")
def work(task_id: str, attempt: int, item: str) -> None:
    ran.append((item, attempt, task_id))


@outlive.handler("py.task.flaky")
def flaky(task_id: str, completion: outlive.Handler) -> None:
    completion(success=False, error="remote said no")


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path):
    """The task and signal tests run on both engines."""
    return store_location(request.param, tmp_path)


def test_tasks_run_in_order_with_task_id_and_attempt(location):
    ran.clear()
    with outlive.Store(location) as store:
        ids = [store.tasks.add(outlive.Handler("py.task.work", item=f"item{i}")) for i in range(3)]
        ids += store.tasks.add_many([outlive.Handler("py.task.work", item="batch")])
        assert len(store.tasks) == 4
        store.tasks.run_now()
        assert dispatch_until(store, lambda: len(ran) == 4 and len(store.tasks) == 0)
        assert [item for item, _, _ in ran] == ["item0", "item1", "item2", "batch"]
        assert [task for _, _, task in ran] == ids and all(attempt == 1 for _, attempt, _ in ran)


def test_tasks_completed_in_batches_run_once_each_in_order(location):
    ran.clear()
    with outlive.Store(location) as store:
        store.tasks.set_completion_batch(8)
        store.tasks.add_many([outlive.Handler("py.task.work", item=f"item{i}") for i in range(50)])
        store.tasks.run_now()
        assert dispatch_until(store, lambda: len(store.tasks) == 0)
        assert [item for item, _, _ in ran] == [f"item{i}" for i in range(50)]
        assert all(attempt == 1 for _, attempt, _ in ran)


def test_completion_batch_out_of_range_is_refused(location):
    with outlive.Store(location) as store:
        for bad in (0, 1025):
            with pytest.raises(outlive.InvalidArgumentError, match="completion batch"):
                store.tasks.set_completion_batch(bad)


def test_failing_task_becomes_dead_is_listed_and_can_be_retried(location):
    with outlive.Store(location) as store:
        store.tasks.set_policy(max_attempts=1)
        task = store.tasks.add(outlive.Handler("py.task.flaky"))
        store.tasks.run_now()
        assert dispatch_until(store, lambda: store.tasks.dead_count == 1)
        [info] = store.tasks.list()
        assert info.id == task and info.state is outlive.TaskState.DEAD and info.last_error == "remote said no"
        assert info.handler == "py.task.flaky" and info.attempts == 1
        store.tasks.retry(task)
        assert store.tasks.list()[0].state is outlive.TaskState.PENDING
        store.tasks.delete(task)
        assert store.tasks.list() == [] and len(store.tasks) == 0
        with pytest.raises(outlive.NotFoundError):
            store.tasks.retry(task)


raised = []


@outlive.handler("py.task.raises")
def raises(task_id: str) -> None:
    raised.append(task_id)
    raise RuntimeError("upload failed")


def test_task_handler_that_raises_fails_its_attempt_and_is_not_raised_into_the_loop(location, caplog):
    raised.clear()
    with outlive.Store(location) as store:
        store.tasks.set_policy(max_attempts=2, initial_backoff=0.01, max_backoff=0.01)
        task = store.tasks.add(outlive.Handler("py.task.raises"))
        store.tasks.run_now()
        with caplog.at_level("WARNING", logger="outlive"):
            assert dispatch_until(store, lambda: store.tasks.dead_count == 1)
        [info] = store.tasks.list()
        assert raised == [task, task], "retried after the first failure, dead after the second"
        assert info.id == task and info.attempts == 2 and info.last_error == "RuntimeError: upload failed"
        assert any("py.task.raises failed" in record.getMessage() for record in caplog.records)


def test_handler_that_raises_outside_a_task_still_raises_to_its_caller():
    with pytest.raises(RuntimeError, match="upload failed"):
        outlive.Handler("py.task.raises", task_id="direct")()


def test_task_added_where_its_handler_is_unknown_runs_in_a_process_that_knows_it(location):
    with outlive.Store(location, process="app") as store:
        store.tasks.add(outlive.Handler("py.only.in.worker", n=41))
        store.tasks.run_now()
        store.loop.dispatch(timeout=0.2)
        assert len(store.tasks) == 1
    out = run_python("""
import sys, select, outlive
done = []
@outlive.handler("py.only.in.worker")
def only(n: int) -> None:
    done.append(n + 1)
with outlive.Store(sys.argv[1], process="worker") as store:
    store.tasks.run_now()
    for _ in range(200):
        if done and len(store.tasks) == 0:
            break
        select.select([store.loop.fileno()], [], [], 0.05)
        store.loop.dispatch()
print(done)
""", location).stdout
    assert out.strip() == "[42]"


received = []


@outlive.handler("py.signal.result")
def on_result(signal_id: str, version: outlive.UInteger, terminated: bool, result: str | None) -> None:
    received.append((version, terminated, result))


def test_signal_posted_by_another_process_reaches_this_runs_consumer(location):
    received.clear()
    with outlive.Store(location) as store:
        sid = outlive.new_signal_id()
        consumer = store.signals.consume(sid, outlive.Handler("py.signal.result"), delivery="until_terminated")
        assert [c.id for c in store.signals.consumers(sid)] == [consumer]
        for step, terminates in (("half", False), ("done", True)):
            run_python("import sys, outlive\nwith outlive.Store(sys.argv[1], process='worker') as s: "
                       "s.signals.post(sys.argv[2], terminates=sys.argv[4] == '1', result=sys.argv[3])",
                       location, sid, step, "1" if terminates else "0")
            assert dispatch_until(store, lambda: received and received[-1][2] == step)
        assert received == [(1, False, "half"), (2, True, "done")]
        assert store.signals.consumers(sid) == []
        with pytest.raises(outlive.NotFoundError):
            store.signals.lookup(sid)


def test_process_consumer_is_delivered_in_the_next_run(location):
    code = """
import sys, select, outlive
got = []
@outlive.handler("py.signal.later")
def later(result: str) -> None:
    got.append(result)
with outlive.Store(sys.argv[1], process="app") as store:
    if sys.argv[2] == "register":
        store.signals.consume(sys.argv[3], outlive.Handler("py.signal.later"), lifetime="process")
    else:
        for _ in range(200):
            if got:
                break
            select.select([store.loop.fileno()], [], [], 0.05)
            store.loop.dispatch()
print(got)
"""
    sid = outlive.new_signal_id()
    run_python(code, location, "register", sid)
    with outlive.Store(location, process="worker") as store:
        store.signals.post(sid, result="for the next run")
    assert run_python(code, location, "wait", sid).stdout.strip() == "['for the next run']"


def test_signal_bad_input_is_refused(location):
    with outlive.Store(location) as store:
        with pytest.raises(outlive.InvalidArgumentError):
            store.signals.post("not-an-id", result="x")
        with pytest.raises(ValueError):
            store.signals.consume(outlive.new_signal_id(), outlive.Handler("x"), delivery="sometimes")
        store.signals.post(outlive.new_signal_id(), result="nobody listens")
        assert store.signals.consumers() == []


def test_delivery_and_lifetime_are_enums_that_also_accept_their_names(location):
    with outlive.Store(location, durability=outlive.Durability.NORMAL) as store:
        sid = outlive.new_signal_id()
        store.signals.consume(sid, outlive.Handler("py.signal.result"), delivery=outlive.Delivery.UNTIL_TERMINATED,
                              lifetime=outlive.Lifetime.PROCESS)
        store.signals.consume(sid, outlive.Handler("py.signal.result"), delivery="once", lifetime="any_process")
        listed = sorted((c.delivery, c.lifetime) for c in store.signals.consumers(sid))
        assert listed == [(outlive.Delivery.ONCE, outlive.Lifetime.ANY_PROCESS),
                          (outlive.Delivery.UNTIL_TERMINATED, outlive.Lifetime.PROCESS)]
        assert all(isinstance(c.lifetime, outlive.Lifetime) for c in store.signals.consumers(sid))
        with pytest.raises(ValueError, match="lifetime is one of"):
            store.signals.consume(sid, outlive.Handler("py.signal.result"), lifetime="forever")
        assert len(store.signals.consumers(sid)) == 2
    with pytest.raises(ValueError, match="durability"):
        outlive.Store(location, durability="sometimes")
