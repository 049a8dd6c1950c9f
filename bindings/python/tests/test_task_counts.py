"""The queues' counts on SQLite, where an add writes no counter (tasks schema
step 9): tasks above the counted mark are counted from their rows when counts
are read, and an add that finds enough of them folds them into the counters.
Whichever side of the mark a task is on, and whatever happens to it there
(claimed, dead, cancelled, run), every count read is exact."""
import os
import sqlite3
import uuid

import outlive
from conftest import dispatch_until
from task_steps import undo_step_13


@outlive.handler("py.counts.ok")
def ok(label: str) -> None:
    pass


@outlive.handler("py.counts.fails")
def fails(label: str) -> None:
    raise RuntimeError("fails on purpose")


def raw(directory, sql):
    db = sqlite3.connect(os.path.join(directory, "outlive.db"))
    try:
        return db.execute(sql).fetchone()[0]
    finally:
        db.close()


def counted_mark(directory):
    return raw(directory, "SELECT seq FROM outlive_task_counted WHERE slot = 0")


def counts(store):
    return {queue.name: (queue.pending, queue.running, queue.dead) for queue in store.queues}


def test_counts_stay_exact_on_both_sides_of_the_counted_mark_as_tasks_are_added_run_cancelled_and_die(tmp_path):
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        store.queues.serve("default", 0)
        store.queues.declare("jobs", "parallel")
        store.tasks.set_policy(max_attempts=1)
        expected = {"default": [0, 0, 0], "jobs": [0, 0, 0]}
        cancellable = []
        marks = set()
        for index in range(150):
            queue = "jobs" if index % 3 == 0 else "default"
            name = "py.counts.fails" if index % 10 == 0 else "py.counts.ok"
            task = store.queues.enqueue(outlive.Handler(name, label=str(index)), queue)
            if index % 25 == 7:
                cancellable.append((task, queue))
            expected[queue][0] += 1
            assert counts(store) == {name: tuple(value) for name, value in expected.items()}, index
            assert len(store.tasks) == index + 1 and store.tasks.dead_count == 0
            marks.add(counted_mark(directory))
        # The adds moved the mark (folds), and left tasks above it (counted from their rows).
        assert len(marks) >= 3 and max(marks) < raw(directory, "SELECT max(seq) FROM outlive_tasks")
        for task, queue in cancellable:
            assert store.tasks.cancel(task) is False
            expected[queue][0] -= 1
        assert counts(store) == {name: tuple(value) for name, value in expected.items()}
        left = sum(value[0] for value in expected.values())
        dying = sum(1 for index in range(0, 150, 10) if index % 25 != 7)
        store.queues.serve("default", 1)
        store.queues.serve("jobs", 2)
        assert dispatch_until(store, lambda: len(store.tasks) == 0, seconds=60)
        assert store.tasks.dead_count == dying
        assert sum(value[2] for value in counts(store).values()) == dying
        assert all(value[0] == 0 and value[1] == 0 for value in counts(store).values())
        assert left > dying
    # The counters and the rows below the mark agree, as the crash harness checks them.
    assert raw(directory, "SELECT (SELECT sum(pending + running) FROM outlive_task_queues) - (SELECT count(*) FROM outlive_tasks "
                          "WHERE state <> 2 AND seq <= (SELECT seq FROM outlive_task_counted))") == 0
    assert raw(directory, "SELECT (SELECT sum(dead) FROM outlive_task_queues) - (SELECT count(*) FROM outlive_tasks "
                          "WHERE state = 2 AND seq <= (SELECT seq FROM outlive_task_counted))") == 0


def test_a_batch_add_is_counted_and_folded_whole(tmp_path):
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        store.queues.serve("default", 0)
        store.tasks.add(outlive.Handler("py.counts.ok", label="first"))
        store.tasks.add_many([outlive.Handler("py.counts.ok", label=str(index)) for index in range(500)])
        assert len(store.tasks) == 501 and counts(store)["default"] == (501, 0, 0)
        assert counted_mark(directory) == raw(directory, "SELECT max(seq) FROM outlive_tasks")
        assert raw(directory, "SELECT pending FROM outlive_task_queues WHERE name = 'default'") == 501
        store.tasks.add(outlive.Handler("py.counts.ok", label="last"))
        assert len(store.tasks) == 502 and counts(store)["default"] == (502, 0, 0)


def test_a_damaged_counted_mark_is_refused_as_corrupt_and_the_tasks_stay_as_they_were(tmp_path):
    """The store is untrusted: a mark that is missing, text, a real or too
    large to leave room for new seqs failed adds with a datatype mismatch or a
    seq conflict, or left every new task out of every count."""
    for damage in ("DELETE FROM outlive_task_counted",
                   "UPDATE outlive_task_counted SET seq = 9223372036854775807",
                   "UPDATE outlive_task_counted SET seq = 'x'",
                   "UPDATE outlive_task_counted SET seq = 2.5"):
        directory = str(tmp_path / f"store{abs(hash(damage))}")
        with outlive.Store(directory) as store:
            for n in range(3):
                store.tasks.add(outlive.Handler("py.counts.ok", label=str(n)))
        db = sqlite3.connect(os.path.join(directory, "outlive.db"))
        db.execute(damage)
        db.commit()
        db.close()
        with outlive.Store(directory) as store:
            try:
                for n in range(70):  # past a fold
                    store.tasks.add(outlive.Handler("py.counts.ok", label=f"new {n}"))
            except outlive.CorruptError:
                pass
            else:
                raise AssertionError(f"{damage}: adds went on")
        assert raw(directory, "SELECT count(*) FROM outlive_tasks") == 3, damage


def test_a_store_of_step_12_migrates_with_its_running_tasks_counted_as_not_ended(tmp_path):
    """Step 13: a claim no longer moves a task from `pending` to `running`;
    `pending` counts every task not ended. A store whose counters still hold
    claimed tasks in `running` (below the counted mark) migrates with them
    added to `pending`: when the dead run's claims return to ready, and when
    the tasks then run, every count read is exact."""
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        store.queues.serve("default", 0)
        for index in range(70):
            store.tasks.add(outlive.Handler("py.counts.ok", label=str(index)))
    mark = counted_mark(directory)
    assert mark >= 64
    db = sqlite3.connect(os.path.join(directory, "outlive.db"), isolation_level=None)
    try:
        db.execute("BEGIN IMMEDIATE")
        # A run that claimed three counted tasks, then died without a trace in runs/.
        run = str(uuid.uuid4())
        db.execute("INSERT INTO outlive_runs(run_id, process, pid, started) VALUES (?, 'gone', 1, 0)", (run,))
        db.execute("UPDATE outlive_tasks SET state = 1, runner = ?, claim = ?, attempts = 1 WHERE seq <= 3",
                   (run, str(uuid.uuid4())))
        undo_step_13(db)
        db.execute("COMMIT")
    finally:
        db.close()
    assert raw(directory, "SELECT running FROM outlive_task_queues WHERE name = 'default'") == 3
    assert raw(directory, "SELECT pending FROM outlive_task_queues WHERE name = 'default'") == mark - 3
    with outlive.Store(directory) as store:
        store.queues.serve("default", 0)
        assert raw(directory, "SELECT version FROM outlive_schema WHERE component = 'tasks'") == 15
        assert len(store.tasks) == 70
        assert counts(store)["default"][0] + counts(store)["default"][1] == 70
        store.queues.serve("default", 1)
        assert dispatch_until(store, lambda: len(store.tasks) == 0, seconds=60)
        assert counts(store) == {"default": (0, 0, 0)}
    assert raw(directory, "SELECT pending + running FROM outlive_task_queues WHERE name = 'default'") == 0


def test_counts_stay_exact_when_a_batch_ends_plain_tasks_and_tasks_that_post_their_results(tmp_path):
    """A batch's plain successes go in one delete per chunk
    (TaskBatchSQL.deleteSucceeded); a task the delete does not match (here
    each that posts its result) ends on its own. Every chunk here holds both
    kinds, and both ends leave their queue's counts exact, below the counted
    mark as above it."""
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        store.queues.serve("default", 0)
        for index in range(130):
            handler = outlive.Handler("py.counts.ok", label=str(index))
            if index % 7 == 3:
                store.tasks.add(handler, result=True)
            else:
                store.tasks.add(handler)
        mark = counted_mark(directory)
        assert mark >= 64
        assert counts(store) == {"default": (130, 0, 0)}
        store.queues.serve("default", 1)
        assert dispatch_until(store, lambda: len(store.tasks) == 0, seconds=60)
        assert counts(store) == {"default": (0, 0, 0)}
    # The mark as the adds left it; the counters hold no task.
    assert counted_mark(directory) == mark
    assert raw(directory, "SELECT pending + running FROM outlive_task_queues WHERE name = 'default'") == 0
