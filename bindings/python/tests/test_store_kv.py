import asyncio

import pytest

import outlive
from conftest import dispatch_until, run_python, spawn_python, store_location


@pytest.fixture(params=["sqlite", "postgresql"])
def store_dir(request, tmp_path):
    """Every test of this module runs on both engines."""
    return store_location(request.param, tmp_path)

INCREMENT = """
import sys, outlive
with outlive.Store(sys.argv[1], process="worker") as store:
    for _ in range(int(sys.argv[2])):
        store.kv.update("counter", lambda old: str(int(old or b"0") + 1).encode())
"""

SET = """
import sys, outlive
with outlive.Store(sys.argv[1], process="writer") as store:
    store.kv[sys.argv[2]] = sys.argv[3].encode()
"""


def test_kv_behaves_like_a_mapping_of_str_to_bytes(store_dir):
    with outlive.Store(store_dir) as store:
        store.kv["a"] = b"1"
        store.kv["b/c"] = bytearray(b"2")
        store.kv["empty"] = b""
        assert store.kv["a"] == b"1" and store.kv["b/c"] == b"2" and store.kv["empty"] == b""
        assert sorted(store.kv) == ["a", "b/c", "empty"]
        assert len(store.kv) == 3
        assert list(store.kv.keys_with_prefix("b/")) == ["b/c"]
        del store.kv["a"]
        assert "a" not in store.kv
        with pytest.raises(KeyError):
            store.kv["a"]
        with pytest.raises(KeyError):
            del store.kv["a"]
        assert store.kv.get("missing", b"default") == b"default"


def test_values_survive_closing_and_reopening(store_dir):
    with outlive.Store(store_dir) as store:
        store.kv["kept"] = b"\x00\xff" * 100
    with outlive.Store(store_dir, process="other") as store:
        assert store.kv["kept"] == b"\x00\xff" * 100


def test_errors_carry_status_and_message(store_dir, tmp_path):
    with outlive.Store(store_dir) as store:
        with pytest.raises(outlive.InvalidArgumentError) as caught:
            store.kv[""] = b"x"
        assert caught.value.status is outlive.Status.INVALID_ARGUMENT
        assert "empty" in str(caught.value)
        with pytest.raises(outlive.InvalidArgumentError):
            store.kv["k" * 2000] = b"x"
        with pytest.raises(TypeError):
            store.kv[1] = b"x"
    with pytest.raises(outlive.StoreIOError) as caught:
        outlive.Store(str(tmp_path / "missing" / "store"))
    assert caught.value.status is outlive.Status.IO
    with pytest.raises(outlive.InvalidArgumentError):
        outlive.Store(store_dir, process="bad:name")


def test_update_is_atomic_and_exceptions_change_nothing(store_dir):
    with outlive.Store(store_dir) as store:
        store.kv.update("n", lambda old: b"1" if old is None else old)
        store.kv.update("n", lambda old: str(int(old) + 1).encode())
        assert store.kv["n"] == b"2"
        store.kv.update("n", lambda old: outlive.UNCHANGED)
        assert store.kv["n"] == b"2"

        def explode(old):
            raise RuntimeError("no")

        with pytest.raises(RuntimeError, match="no"):
            store.kv.update("n", explode)
        assert store.kv["n"] == b"2"
        store.kv.update("n", lambda old: None)
        assert "n" not in store.kv


def test_four_processes_increment_one_counter_exactly_2000_times(store_dir):
    with outlive.Store(store_dir) as store:
        workers = [spawn_python(INCREMENT, store_dir, "500") for _ in range(4)]
        for worker in workers:
            out, err = worker.communicate(timeout=300)
            assert worker.returncode == 0, err
        assert store.kv["counter"] == b"2000"


def test_observer_sees_a_value_set_by_another_process(store_dir):
    with outlive.Store(store_dir) as store:
        seen = []
        observation = store.kv.observe("obs/", lambda key, value: seen.append((key, value)))
        run_python(SET, store_dir, "other", "ignored")
        run_python(SET, store_dir, "obs/x", "hello")
        assert dispatch_until(store, lambda: seen)
        assert seen == [("obs/x", b"hello")]
        observation.cancel()
        run_python(SET, store_dir, "obs/y", "late")
        store.loop.dispatch(timeout=0.5)
        assert seen == [("obs/x", b"hello")]


def test_a_writer_that_found_no_other_watcher_writes_for_one_that_came_since(store_dir):
    """A handle that found no other run watching its topic skips the look
    while nothing was committed since (SQLite: the data version its commit
    left); an observer that starts watching commits, so the next set looks
    again and reaches it."""
    with outlive.Store(store_dir, process="writer") as writer, outlive.Store(store_dir, process="observer") as observer:
        for n in range(5):
            writer.kv["watched/k"] = b"before %d" % n
        seen = []
        observer.kv.observe("watched/", lambda key, value: seen.append(value))
        writer.kv["watched/k"] = b"after"
        assert dispatch_until(observer, lambda: b"after" in seen)


OBSERVE_AND_SAY = """
import select, sys, outlive
with outlive.Store(sys.argv[1], process="observer") as store:
    seen = []
    store.kv.observe("watched/", lambda key, value: seen.append(value))
    print("watching", flush=True)
    for _ in range(300):
        if b"after" in seen:
            print("seen after", flush=True)
            break
        if select.select([store.loop.fileno()], [], [], 0.05)[0]:
            store.loop.dispatch()
"""


def test_a_writer_that_found_no_other_watcher_writes_for_another_process_that_came_since(store_dir):
    with outlive.Store(store_dir, process="writer") as writer:
        for n in range(5):
            writer.kv["watched/k"] = b"before %d" % n
        child = spawn_python(OBSERVE_AND_SAY, store_dir)
        try:
            assert child.stdout.readline().strip() == "watching"
            writer.kv["watched/k"] = b"after"
            out, err = child.communicate(timeout=60)
        finally:
            if child.poll() is None:
                child.kill()
        assert out.strip() == "seen after", err


def test_exception_in_observer_is_raised_by_dispatch(store_dir):
    with outlive.Store(store_dir) as store:
        def broken(key, value):
            raise ValueError("observer broke")

        store.kv.observe("", broken)
        store.kv["x"] = b"1"
        with pytest.raises(ValueError, match="observer broke"):
            for _ in range(50):
                store.loop.dispatch(timeout=0.1)


def test_loop_attaches_to_asyncio(store_dir):
    async def scenario():
        with outlive.Store(store_dir) as store:
            store.loop.attach(asyncio.get_running_loop())
            arrived = asyncio.get_running_loop().create_future()
            store.kv.observe("a/", lambda key, value: arrived.done() or arrived.set_result((key, value)))
            await asyncio.get_running_loop().run_in_executor(None, run_python, SET, store_dir, "a/1", "async")
            result = await asyncio.wait_for(arrived, 10)
            store.loop.detach()
            return result

    assert asyncio.run(scenario()) == ("a/1", b"async")


def test_shared_loop_serves_two_stores(store_dir, tmp_path):
    with outlive.Loop() as loop:
        with outlive.Store(store_dir, loop=loop) as first, outlive.Store(str(tmp_path / "b"), loop=loop) as second:
            assert first.loop is loop and second.loop is loop
            seen = []
            first.kv.observe("", lambda k, v: seen.append(("first", k)))
            second.kv.observe("", lambda k, v: seen.append(("second", k)))
            first.kv["x"] = b"1"
            second.kv["y"] = b"2"
            assert dispatch_until(first, lambda: len(seen) == 2)
            assert sorted(seen) == [("first", "x"), ("second", "y")]


def test_library_log_lines_reach_python_logging(store_dir, caplog):
    import logging
    import signal
    worker = spawn_python("""
import sys, time, outlive
store = outlive.Store(sys.argv[1], process="doomed")
print("open", flush=True)
time.sleep(60)
""", store_dir)
    assert worker.stdout.readline().strip() == "open"
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    outlive.set_log_level(logging.INFO)
    try:
        with caplog.at_level(logging.INFO, logger="outlive"):
            with outlive.Store(store_dir, process="survivor"):
                pass
    finally:
        outlive.set_log_level(logging.WARNING)
    assert any("doomed" in record.getMessage() and "no longer alive" in record.getMessage() for record in caplog.records)


def test_postgresql_liveness_option(tmp_path):
    location = store_location("postgresql", tmp_path)
    with pytest.raises(outlive.InvalidArgumentError, match="liveness_seconds"):
        outlive.Store(location, liveness=1)
    with pytest.raises(TypeError):
        outlive.Store(location, liveness=2.5)
    with outlive.Store(location, liveness=3) as store:
        store.kv["k"] = b"v"
        assert len(store.tasks) == 0
        assert store.kv["k"] == b"v"


def test_check_passes_while_the_run_lives_and_raises_once_its_liveness_connection_is_gone(tmp_path):
    import glob
    import subprocess

    location = store_location("postgresql", tmp_path)
    psql = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))
    if not psql:
        pytest.skip("no psql to end the run's session with")
    schema = "outlive_" + location.rsplit("outlive_store=", 1)[1]
    with outlive.Store(location, process="victim") as store:
        store.check()
        # The server ends the session holding the run's lock, as a restart would.
        ended = subprocess.run([psql[-1], location.split("?")[0], "-Atqc",
                                f"SELECT pg_terminate_backend(l.pid) FROM pg_locks l JOIN {schema}.outlive_runs r "
                                f"ON l.locktype = 'advisory' AND l.objsubid = 2 AND l.objid = r.lock_key::bigint::oid "
                                f"AND l.classid = '{schema}'::regnamespace::oid WHERE r.process = 'victim'"],
                               capture_output=True, text=True, timeout=30)
        assert ended.stdout.strip() == "t", ended.stderr

        def run_ended():
            try:
                store.check()
                return False
            except outlive.StateError as error:
                return "this run ended" in str(error)
        assert dispatch_until(store, run_ended)
