"""The binding cannot crash the interpreter: every object refuses use after
close with a typed error, trampolines outlive every call that may use them,
exceptions on the library's own thread reach sys.unraisablehook, values are
never coerced silently, and a forked child neither uses nor disturbs its
parent's store. The crash-prone cases run in a child Python (with faulthandler
and -X dev, see conftest), so that a segfault fails one test, not the suite."""
import sys
import threading

import pytest

import outlive
from outlive import errors
from conftest import dispatch_until, run_python


def _run(code, *args):
    result = run_python(code, *args, check=False)
    assert result.returncode == 0, f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr[-4000:]}"
    return result


def test_loop_of_closed_store_raises_closed_error_instead_of_crashing(store_dir):
    _run("""
import sys, outlive
store = outlive.Store(sys.argv[1])
loop = store.loop
store.close()
for use in (lambda: loop.dispatch(), lambda: loop.fileno(), lambda: loop.run_thread(),
            lambda: store.kv["a"], lambda: store.kv.__setitem__("a", b"x"), lambda: len(store.kv),
            lambda: list(store.messages.ids()), lambda: store.tasks.run_now(), lambda: store.run_id):
    try:
        use()
    except outlive.ClosedError as error:
        assert error.status == outlive.Status.STATE, error
    else:
        raise SystemExit("a closed store's object was usable")
print("ok")
""", store_dir)


def test_observation_and_queues_of_closed_store_raise_typed_errors(store_dir):
    _run("""
import sys, outlive
store = outlive.Store(sys.argv[1])
observation = store.kv.observe("", lambda key, value: None)
store.close()
try:
    observation.cancel()
except outlive.ClosedError:
    pass
else:
    raise SystemExit("cancel after close did not raise")
print("ok")
""", store_dir)


def test_queues_on_the_loop_of_a_closed_store_raise_typed_errors(store_dir):
    _run("""
import sys, outlive
store = outlive.Store(sys.argv[1])
durable = outlive.DurableInteractionQueue(store, "q", suspended=True)
interactions = outlive.InteractionQueue(store.loop)
operations = outlive.OperationQueue(store.loop)
store.close()
for use, error in ((lambda: len(durable), outlive.StateError), (durable.list, outlive.StateError),
                   (lambda: interactions.add(lambda i: None), outlive.ClosedError),
                   (lambda: operations.add(lambda o: None), outlive.ClosedError)):
    try:
        use()
    except error:
        pass
    else:
        raise SystemExit("usable after its store closed")
durable.close(); interactions.close(); operations.close()
print("ok")
""", store_dir)


def test_redeclaring_a_handler_while_another_thread_calls_it_never_crashes():
    # Before trampolines were kept, about one run in two of this segfaulted.
    _run("""
import threading, time, outlive

@outlive.handler("redeclared")
def first(n: int) -> None:
    time.sleep(0.0005)  # calls in flight while the declaration is replaced

stop = threading.Event()
errors = []
def caller():
    value = outlive.Handler("redeclared", n=1)
    while not stop.is_set():
        try:
            value()
        except outlive.UnresolvedError:
            pass  # between an unregister and the next declaration
        except BaseException as error:
            errors.append(error)
            return

threads = [threading.Thread(target=caller) for _ in range(4)]
for thread in threads:
    thread.start()
for round in range(2000):
    @outlive.handler("redeclared")
    def again(n: int) -> None:
        time.sleep(0.0005)
    if round % 200 == 0:
        outlive.unregister("redeclared")
stop.set()
for thread in threads:
    thread.join()
assert not errors, errors
print("ok")
""")


def test_exception_in_callback_on_run_thread_reaches_unraisablehook(store_dir):
    seen = []
    arrived = threading.Event()
    previous = sys.unraisablehook

    def hook(unraisable):
        seen.append(unraisable.exc_value)
        arrived.set()

    sys.unraisablehook = hook
    try:
        with outlive.Store(store_dir) as store:
            def observer(key, value):
                raise RuntimeError(f"observer broke on {key}")
            store.kv.observe("", observer)
            store.loop.run_thread()
            store.kv["k"] = b"v"
            assert arrived.wait(20), "the exception never reached sys.unraisablehook"
    finally:
        sys.unraisablehook = previous
    assert isinstance(seen[0], RuntimeError) and "observer broke on k" in str(seen[0])


def test_exception_in_dispatch_is_still_raised_by_dispatch_not_unraisable(store_dir):
    seen = []
    previous = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: seen.append(unraisable)
    try:
        with outlive.Store(store_dir) as store:
            def observer(key, value):
                raise KeyError("raised by dispatch")
            store.kv.observe("", observer)
            store.kv["k"] = b"v"
            with pytest.raises(KeyError, match="raised by dispatch"):
                dispatch_until(store, lambda: False, seconds=3)
    finally:
        sys.unraisablehook = previous
    assert seen == []


@pytest.mark.parametrize("value", [3, "text", 2.5, None, [1, 2]])
def test_kv_set_of_a_non_bytes_value_raises_type_error_and_stores_nothing(store_dir, value):
    with outlive.Store(store_dir) as store:
        with pytest.raises(TypeError):
            store.kv["k"] = value
        assert "k" not in store.kv


def test_kv_update_returning_a_non_bytes_value_raises_type_error_and_changes_nothing(store_dir):
    with outlive.Store(store_dir) as store:
        store.kv["k"] = b"before"
        with pytest.raises(TypeError):
            store.kv.update("k", lambda current: 3)
        assert store.kv["k"] == b"before"


def test_value_constructors_never_coerce_silently():
    with pytest.raises(TypeError):
        outlive.ID(3)
    with pytest.raises(TypeError):
        outlive.ID(b"x", type=3)
    with pytest.raises(TypeError):
        outlive.Int(2.5)
    with pytest.raises(TypeError):
        outlive.Int("5")
    with pytest.raises(TypeError):
        outlive.UInteger(1.0)
    with pytest.raises(TypeError):
        outlive.Handler.from_bytes(3)
    assert outlive.Int(5) == 5 and outlive.ID(bytearray(b"ab")).bytes == b"ab"


def test_presenter_priority_that_is_no_int_raises_type_error(store_dir):
    with outlive.Store(store_dir) as store:
        with pytest.raises(TypeError):
            store.messages.add_presenter("p", lambda message, presentation: None, priority=2.5)


def test_unknown_status_still_carries_the_library_message():
    # A status this package does not know (a newer library) keeps its number and message.
    with pytest.raises(outlive.InvalidArgumentError):
        outlive.Store("", "app")
    error = errors.error_for(99)
    assert isinstance(error, outlive.OutliveError)
    assert error.status == 99 and error.message and "status 99" in str(error)


def test_forked_child_exiting_leaves_the_parent_seeing_other_processes(store_dir):
    _run("""
import os, select, subprocess, sys, outlive
path = sys.argv[1]
store = outlive.Store(path, "parent")
seen = []
store.kv.observe("", lambda key, value: seen.append(key))

pid = os.fork()
if pid == 0:
    # The child may not dispatch the parent's loop, nor use its store ...
    try:
        store.loop.dispatch(0.2)
        os._exit(3)
    except outlive.StateError:
        pass
    try:
        store.kv["from-child"] = b"x"
        os._exit(4)
    except outlive.StateError:
        pass
    # ... and simply exits: finalizers close its copies.
    sys.exit(0)
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0, status

subprocess.run([sys.executable, "-c",
                "import sys, outlive; s = outlive.Store(sys.argv[1], 'writer'); s.kv['from-writer'] = b'1'; s.close()",
                path], check=True)
for _ in range(400):
    if "from-writer" in seen:
        break
    if select.select([store.loop.fileno()], [], [], 0.05)[0]:
        store.loop.dispatch()
assert "from-writer" in seen, "the parent stopped seeing other processes after its child exited"
assert "from-child" not in store.kv
store.close()
print("ok")
""", store_dir)
