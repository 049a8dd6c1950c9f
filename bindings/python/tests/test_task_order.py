"""A task's place in its queue (`seq`) on SQLite: since step 8 of the tasks
schema a plain rowid (max + 1), no longer AUTOINCREMENT (docs/tasks.md,
TaskSchema). A store of the previous schema migrates keeping its tasks, their
ids and their order; new tasks go after the stored ones however many were
deleted before, and run in the order they were added. SQLite only: PostgreSQL's
`seq` is an identity, untouched."""
import os
import sqlite3
import threading

import outlive
from conftest import dispatch_until
from task_steps import undo_step_11

ran = []
held = []


@outlive.handler("py.order.job")
def job(label: str) -> None:
    ran.append(label)


@outlive.handler("py.order.held")
def held_job(label: str, completion: outlive.Handler) -> None:
    # Keeps its completion: the attempt stays in flight until the test completes it.
    ran.append(label)
    held.append(completion)


# The table as version 7 of the tasks component left it: step 1's CREATE TABLE
# with the columns steps 3 and 5 added (SQLite appends them to the text).
TASKS_TABLE_AT_VERSION_7 = (
    "CREATE TABLE outlive_tasks(\n    seq INTEGER PRIMARY KEY AUTOINCREMENT,\n    id TEXT NOT NULL UNIQUE,\n"
    "    handler_name TEXT NOT NULL,\n    handler BLOB NOT NULL,\n    group_start TEXT,\n    group_members BLOB,\n"
    "    created REAL NOT NULL,\n    age_from REAL NOT NULL,\n    attempts INTEGER NOT NULL DEFAULT 0,\n"
    "    last_error TEXT,\n    state INTEGER NOT NULL DEFAULT 0,\n    waiting_until REAL,\n    runner TEXT,\n"
    "    claim TEXT,\n    outcome INTEGER, queue TEXT NOT NULL DEFAULT 'default', priority INTEGER NOT NULL DEFAULT 0, "
    "unique_key TEXT, cancelled INTEGER NOT NULL DEFAULT 0, result_signal TEXT, result BLOB)")


def connect(directory):
    return sqlite3.connect(os.path.join(directory, "outlive.db"), isolation_level=None)


def back_to_version_7(directory, highest_seq_used):
    """Rebuilds outlive_tasks as version 7 made it (AUTOINCREMENT, the same
    indexes, the count triggers without the counted mark of step 9), rows and
    seq kept, every task in the counters, `sqlite_sequence` remembering
    `highest_seq_used` (tasks added and deleted since)."""
    db = connect(directory)
    try:
        db.execute("BEGIN IMMEDIATE")
        undo_step_11(db)
        # Step 10's index of older ids came after version 7 (its UNIQUE column stood for it).
        kept = [sql for (sql,) in db.execute(
            "SELECT sql FROM sqlite_schema WHERE tbl_name = 'outlive_tasks' AND type IN ('index', 'trigger') AND sql IS NOT NULL "
            "AND name <> 'outlive_tasks_id'")]
        db.execute("ALTER TABLE outlive_tasks RENAME TO outlive_tasks_version_8")
        db.execute(TASKS_TABLE_AT_VERSION_7)
        db.execute("INSERT INTO outlive_tasks SELECT * FROM outlive_tasks_version_8")
        db.execute("DROP TABLE outlive_tasks_version_8")
        # Version 7 counted every task in the counters; step 9 made the mark and its triggers.
        db.execute("""UPDATE outlive_task_queues SET
            pending = (SELECT count(*) FROM outlive_tasks WHERE queue = name AND state IN (0, 3)),
            running = (SELECT count(*) FROM outlive_tasks WHERE queue = name AND state = 1),
            dead = (SELECT count(*) FROM outlive_tasks WHERE queue = name AND state = 2)""")
        db.execute("DROP TABLE outlive_task_counted")
        mark = " AND OLD.seq <= (SELECT seq FROM outlive_task_counted WHERE slot = 0)"
        for sql in kept:
            db.execute(sql.replace("\n    WHEN" + mark[4:] + " BEGIN", " BEGIN").replace(mark, ""))
        db.execute("UPDATE sqlite_sequence SET seq = ? WHERE name = 'outlive_tasks'", (highest_seq_used,))
        db.execute("UPDATE outlive_schema SET version = 7 WHERE component = 'tasks'")
        db.execute("COMMIT")
    finally:
        db.close()


def stored_seqs(directory):
    db = connect(directory)
    try:
        return [seq for (seq,) in db.execute("SELECT seq FROM outlive_tasks ORDER BY seq")]
    finally:
        db.close()


def test_a_store_of_the_previous_tasks_schema_migrates_keeping_its_tasks_ids_order_and_counts(tmp_path):
    ran.clear()
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        store.queues.serve("default", 0)
        ids = [store.tasks.add(outlive.Handler("py.order.job", label=label)) for label in ("a", "b", "c")]
    seqs = stored_seqs(directory)
    back_to_version_7(directory, highest_seq_used=seqs[-1] + 100)
    db = connect(directory)
    assert "AUTOINCREMENT" in db.execute("SELECT sql FROM sqlite_schema WHERE name = 'outlive_tasks'").fetchone()[0]
    db.close()

    with outlive.Store(directory) as store:
        store.queues.serve("default", 0)
        assert [task.id for task in store.tasks.list()] == ids
        assert len(store.tasks) == 3 and store.queues.list()[0].pending == 3
        later = store.tasks.add(outlive.Handler("py.order.job", label="d"))
        assert [task.id for task in store.tasks.list()] == ids + [later]
        store.queues.serve("default", 1)
        assert dispatch_until(store, lambda: len(ran) == 4)
        assert ran == ["a", "b", "c", "d"]
        assert dispatch_until(store, lambda: len(store.tasks) == 0)
        assert store.queues.list()[0].pending == 0 and store.tasks.dead_count == 0

    db = connect(directory)
    try:
        (sql,) = db.execute("SELECT sql FROM sqlite_schema WHERE name = 'outlive_tasks'").fetchone()
        assert "AUTOINCREMENT" not in sql
        assert db.execute("SELECT count(*) FROM sqlite_sequence WHERE name = 'outlive_tasks'").fetchone()[0] == 0
        assert db.execute("SELECT version FROM outlive_schema WHERE component = 'tasks'").fetchone()[0] >= 9
    finally:
        db.close()


def test_tasks_added_after_the_queue_emptied_run_after_the_ones_still_stored_in_the_order_added(tmp_path):
    ran.clear()
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        store.queues.serve("default", 0)
        for label in ("a", "b", "c"):
            store.tasks.add(outlive.Handler("py.order.job", label=label))
        # A task no process resolves stays stored, before the ones that run and go.
        kept = store.tasks.add(outlive.Handler("py.order.unresolved"), priority=-1)
        store.queues.serve("default", 1)
        assert dispatch_until(store, lambda: len(store.tasks) == 1)
    assert ran == ["a", "b", "c"]
    ran.clear()
    with outlive.Store(directory) as store:
        store.queues.serve("default", 0)
        added = [store.tasks.add(outlive.Handler("py.order.job", label=label)) for label in ("d", "e", "f")]
        assert [task.id for task in store.tasks.list()] == [kept] + added
        store.queues.serve("default", 1)
        assert dispatch_until(store, lambda: len(ran) == 3)
        assert ran == ["d", "e", "f"]
        assert [task.id for task in store.tasks.list()] == [kept]
    ran.clear()
    with outlive.Store(directory) as store:
        store.queues.serve("default", 0)
        store.tasks.cancel(kept)
        added = [store.tasks.add(outlive.Handler("py.order.job", label=label)) for label in ("g", "h")]
        assert [task.id for task in store.tasks.list()] == added
        store.queues.serve("default", 1)
        assert dispatch_until(store, lambda: len(ran) == 2)
        assert ran == ["g", "h"]


def test_a_task_given_the_seq_of_one_just_deleted_runs_while_the_run_is_under_way(tmp_path):
    """The newest task done and deleted while an older one is still in flight:
    the next add takes its seq again (max + 1), at the run's cursor. The run
    under way still starts it, without waiting for the one in flight."""
    ran.clear()
    held.clear()
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        store.queues.serve("default", 0)
        store.tasks.add(outlive.Handler("py.order.held", label="held"))
        store.tasks.add(outlive.Handler("py.order.job", label="first"))
        newest = stored_seqs(directory)[-1]
        store.queues.serve("default", 2)
        assert dispatch_until(store, lambda: ran == ["held", "first"] and len(store.tasks) == 1)
        store.tasks.add(outlive.Handler("py.order.job", label="again"))
        assert stored_seqs(directory)[-1] == newest, "the add did not take the deleted task's seq: the test proves nothing"
        assert dispatch_until(store, lambda: ran == ["held", "first", "again"])
        assert len(held) == 1
        finisher = threading.Thread(target=lambda: held[0](success=True))
        finisher.start()
        finisher.join()
        assert dispatch_until(store, lambda: len(store.tasks) == 0)
