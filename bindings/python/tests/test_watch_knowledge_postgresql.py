"""PostgreSQL: a writer that knows no other run watches its changes' topics
sends no feed statement, only a check that the watchers did not change since
it read them (PostgreSQLWatchKnowledge). A watcher that came since fails the
check; the transaction, rolled back, goes again with its feed statements, so
the new watcher is reached, and the writer's call returns as if nothing had
happened. (The kv observer's case in another handle and in another process:
test_store_kv.py, "came_since".)"""
import os
import subprocess

import pytest

import outlive
from conftest import dispatch_until, psql, store_location


@outlive.handler("py.watchknowledge.ran")
def ran(label: str) -> None:
    RAN.append(label)


RAN = []


@pytest.fixture
def location(tmp_path):
    return store_location("postgresql", tmp_path)


def watcher_changes(location):
    return int(psql(location, "SELECT coalesce(pg_sequence_last_value('outlive_watcher_changes'), 0)"))


def feed_entries(location, topic):
    return int(psql(location, f"SELECT count(*) FROM outlive_feed WHERE topic = '{topic}'"))


def test_a_task_add_sent_again_after_a_runner_came_is_stored_once_with_its_id_and_reaches_the_runner(location):
    RAN.clear()
    with outlive.Store(location, process="adder") as adder:
        adder.queues.declare("jobs", "parallel")
        first = [adder.queues.enqueue(outlive.Handler("py.watchknowledge.ran", label=f"early {n}"), "jobs") for n in range(3)]
        # Nobody else watched the tasks: no entry was written.
        assert feed_entries(location, "tasks") == 0
        with outlive.Store(location, process="runner") as runner:
            runner.queues.serve("jobs", 4)
            assert dispatch_until(runner, lambda: len(RAN) == 3)
            before = watcher_changes(location)
            task = adder.queues.enqueue(outlive.Handler("py.watchknowledge.ran", label="late"), "jobs")
            # The add that found the watchers changed: stored once, under the id it returned,
            # with its feed entry for the runner, which runs it.
            assert int(psql(location, f"SELECT count(*) FROM outlive_tasks WHERE id = '{task}'")) == 1
            assert feed_entries(location, "tasks") == 1
            assert watcher_changes(location) == before
            assert dispatch_until(runner, lambda: "late" in RAN)
            assert RAN.count("late") == 1
            assert task not in first and len(set(first)) == 3
            # Known now to be watched by the runner: the next add writes its entry at once.
            adder.queues.enqueue(outlive.Handler("py.watchknowledge.ran", label="later"), "jobs")
            assert feed_entries(location, "tasks") == 2
            assert dispatch_until(runner, lambda: "later" in RAN)


def test_the_count_moves_when_a_watcher_row_comes_or_goes_and_not_for_a_subscription_already_there(location):
    with outlive.Store(location, process="writer") as writer:
        writer.kv["k"] = b"0"
        start = watcher_changes(location)
        first = writer.kv.observe("a/", lambda key, value: None)
        after_first = watcher_changes(location)
        assert after_first > start
        # The same topic again: its watcher row is there already.
        second = writer.kv.observe("b/", lambda key, value: None)
        assert watcher_changes(location) == after_first
        first.cancel()
        second.cancel()
        with outlive.Store(location, process="other") as other:
            other.kv.observe("c/", lambda key, value: None)
            came = watcher_changes(location)
            assert came > after_first
        # The other run ended: its watcher went, and the count with it.
        ended = watcher_changes(location)
        assert ended > came
        # A run deleted by an operator, from a session whose search_path is not the store's.
        server, name = location.split("?outlive_store=")
        subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", server, "-c",
                        f"DELETE FROM outlive_{name}.outlive_runs WHERE process = 'writer'"],
                       check=True, capture_output=True, env=dict(os.environ))
        assert watcher_changes(location) > ended


def test_a_writer_whose_topic_another_run_stopped_watching_writes_no_entry_and_reaches_a_later_watcher(location):
    seen = []
    with outlive.Store(location, process="writer") as writer:
        with outlive.Store(location, process="first") as first:
            first.kv.observe("w/", lambda key, value: seen.append(value))
            writer.kv["w/1"] = b"one"
            assert dispatch_until(first, lambda: b"one" in seen)
        entries = feed_entries(location, "kv")
        for n in range(5):
            writer.kv["w/x"] = b"unwatched %d" % n
        # No run watches kv any more: the sets wrote no entry.
        assert feed_entries(location, "kv") == entries
        with outlive.Store(location, process="second") as second:
            second.kv.observe("w/", lambda key, value: seen.append(value))
            writer.kv["w/2"] = b"two"
            assert dispatch_until(second, lambda: b"two" in seen)
