import asyncio
import threading

import pytest

import outlive


def drain(loop, condition, rounds=200):
    for _ in range(rounds):
        if condition():
            return True
        loop.dispatch(timeout=0.05)
    return condition()


def test_interactions_start_one_at_a_time_in_order_and_finish_from_threads():
    with outlive.Loop() as loop, outlive.InteractionQueue(loop) as queue:
        started, running = [], []

        def interaction(n):
            def run(token):
                assert not running, "two interactions overlapped"
                running.append(n)
                started.append(n)

                def later():
                    running.remove(n)
                    token.finish()

                threading.Timer(0.001, later).start()
            return run

        for n in range(20):
            queue.add(interaction(n))
        assert drain(loop, lambda: len(started) == 20 and len(queue) == 0)
        assert started == list(range(20))


def test_nothing_starts_while_suspended_and_finish_twice_is_a_state_error():
    with outlive.Loop() as loop, outlive.InteractionQueue(loop) as queue:
        tokens = []
        queue.suspend()
        queue.add(tokens.append)
        loop.dispatch(timeout=0.1)
        assert tokens == [] and len(queue) == 1
        queue.resume()
        assert drain(loop, lambda: tokens)
        tokens[0].finish()
        with pytest.raises(outlive.StateError):
            tokens[0].finish()


def test_exception_in_an_interaction_is_raised_by_dispatch():
    with outlive.Loop() as loop, outlive.InteractionQueue(loop) as queue:
        def broken(token):
            token.finish()
            raise KeyError("interaction broke")

        queue.add(broken)
        with pytest.raises(KeyError):
            drain(loop, lambda: False, rounds=20)


def test_operations_respect_dependencies_and_the_limit():
    with outlive.Loop() as loop, outlive.OperationQueue(loop, max_unfinished=2) as queue:
        order, running, peak = [], set(), [0]

        def work(name):
            def run(operation):
                running.add(name)
                peak[0] = max(peak[0], len(running))
                order.append(name)

                def done():
                    running.discard(name)
                    operation.finish()

                threading.Timer(0.002, done).start()
            return run

        a, b, c, d = (outlive.Operation(work(name)) for name in "abcd")
        d.add_dependency(b).add_dependency(c)
        b.add_dependency(a)
        c.add_dependency(a)
        for operation in (d, c, b, a):
            queue.add(operation)
        assert drain(loop, lambda: len(order) == 4 and len(queue) == 0)
        assert order[0] == "a" and order[-1] == "d" and set(order[1:3]) == {"b", "c"}
        assert peak[0] <= 2
        assert all(op.state == outlive.OperationState.FINISHED for op in (a, b, c, d))


def test_cancelled_operation_never_runs_and_dependents_see_it():
    with outlive.Loop() as loop, outlive.OperationQueue(loop) as queue:
        ran = []
        first = outlive.Operation(lambda op: ran.append("first") or op.finish())
        second = outlive.Operation(lambda op: ran.append("second") or op.finish())
        second.add_dependency(first)
        first.cancel()
        completions = []
        first.on_complete(completions.append)
        queue.add(first)
        queue.add(second)
        assert drain(loop, lambda: len(queue) == 0)
        assert ran == ["second"] and first.cancelled and completions == [True]


def test_operations_can_be_awaited_from_asyncio():
    async def scenario():
        with outlive.Loop() as loop, outlive.OperationQueue(loop) as queue:
            loop.attach(asyncio.get_running_loop())
            operation = queue.add(lambda op: asyncio.get_running_loop().call_later(0.01, op.finish))
            cancelled = await asyncio.wait_for(operation, 5)
            loop.detach()
            return cancelled

    assert asyncio.run(scenario()) is False


def test_bad_uses_are_refused():
    with outlive.Loop() as loop, outlive.OperationQueue(loop) as queue:
        operation = outlive.Operation(lambda op: None)
        with pytest.raises(outlive.InvalidArgumentError):
            operation.add_dependency(operation)
        queue.add(operation)
        with pytest.raises(outlive.StateError):
            queue.add(operation)
        with pytest.raises(outlive.StateError):
            outlive.Operation(lambda op: None).finish()


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_durable_interactions_queued_before_a_restart_are_shown_after_it(kind, tmp_path):
    from conftest import run_python, store_location
    directory = store_location(kind, tmp_path)
    with outlive.Store(directory, process="app") as store:
        with outlive.DurableInteractionQueue(store, "startup", suspended=True) as queue:
            ids = [queue.add(outlive.Handler("py.prompt", text=text)) for text in ("location", "camera")]
            assert [entry[0] for entry in queue.list()] == ids and len(queue) == 2
    out = run_python("""
import sys, select, outlive
shown = []
@outlive.handler("py.prompt")
def prompt(interaction_id: str, text: str, finish: outlive.Handler) -> None:
    shown.append(text)
    finish()
with outlive.Store(sys.argv[1], process="app") as store, outlive.DurableInteractionQueue(store, "startup") as queue:
    for _ in range(200):
        if len(shown) == 2 and len(queue) == 0:
            break
        select.select([store.loop.fileno()], [], [], 0.05)
        store.loop.dispatch()
print(shown)
""", directory).stdout
    assert out.strip() == "['location', 'camera']"
