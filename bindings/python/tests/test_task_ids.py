"""Task ids (docs/tasks.md, "Task ids"). On SQLite since step 10 of the tasks
schema a new task's id carries its seq: found by its rowid and its whole text,
with no index of new ids for an add to write. A store of the previous schema
migrates keeping its (random) ids, found through a partial index of the older
ids by every call that takes one. An id is found only whole: the seq it
carries does not find a task of another id, as after the newest task is
deleted and its seq taken again. PostgreSQL's ids stay random."""
import sqlite3
import threading
import uuid

import pytest

import outlive
from conftest import dispatch_until, store_location
from seq_ids import back_to_random_ids, carried_seq, other_random_part
from store_file import connect, stored

ran = []
held = []


@outlive.handler("py.ids.job")
def job(label: str) -> None:
    ran.append(label)


@outlive.handler("py.ids.fails")
def fails(label: str) -> None:
    raise RuntimeError("fails on purpose")


@outlive.handler("py.ids.held")
def held_job(label: str, completion: outlive.Handler) -> None:
    # Keeps its completion: the attempt stays in flight until the test completes it.
    ran.append(label)
    held.append(completion)


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path):
    """A directory, or a store on the test server."""
    return store_location(request.param, tmp_path)


def back_to_version_9_with_random_ids(directory):
    """Rebuilds outlive_tasks as version 9 made it, every task given a random
    id as before step 10. Returns the ids in queue order."""
    return back_to_random_ids(directory, "outlive_tasks", "tasks", 9, "id TEXT NOT NULL,\n",
                              "id TEXT NOT NULL UNIQUE,\n")


def test_new_ids_are_uuids_that_carry_their_seq_on_sqlite(tmp_path):
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        store.queues.serve("default", 0)
        ids = [store.tasks.add(outlive.Handler("py.ids.job", label=str(n))) for n in range(3)]
        ids += store.tasks.add_many([outlive.Handler("py.ids.job", label=str(n)) for n in range(3, 5)])
    for task_id in ids:
        assert len(task_id) == 36 and uuid.UUID(task_id).version == 8 and str(uuid.UUID(task_id)) == task_id
    assert [carried_seq(task_id) for task_id in ids] == [seq for (seq,) in stored(directory, "SELECT seq FROM outlive_tasks ORDER BY seq")]
    # No index of them: only the older ids are indexed.
    assert stored(directory, "SELECT count(*) FROM outlive_tasks WHERE substr(id, 15, 1) <> '8'") == [(0,)]
    assert stored(directory, "SELECT sql FROM sqlite_schema WHERE name = 'outlive_tasks_id'")[0][0].endswith(
        "WHERE substr(id, 15, 1) <> '8'")


def test_a_store_of_the_previous_schema_migrates_and_every_call_by_id_finds_its_older_tasks(tmp_path):
    ran.clear()
    held.clear()
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        store.queues.serve("default", 0)
        for label in ("cancelled", "deleted", "after"):
            store.tasks.add(outlive.Handler("py.ids.job", label=label))
        store.tasks.add(outlive.Handler("py.ids.fails", label="dies"))
        store.tasks.add(outlive.Handler("py.ids.held", label="held"))
    old = back_to_version_9_with_random_ids(directory)
    cancelled, deleted, after, dies, running = old

    with outlive.Store(directory) as store:
        store.queues.serve("default", 0)
        store.tasks.set_policy(max_attempts=1)
        assert [task.id for task in store.tasks.list()] == old
        assert [task.id for task in store.tasks.list(after=deleted)] == [after, dies, running]
        assert store.tasks.cancel(cancelled) is False
        store.tasks.delete(deleted)
        new = store.tasks.add(outlive.Handler("py.ids.job", label="new"))
        assert carried_seq(new) == 6
        assert [task.id for task in store.tasks.list(after=after)] == [dies, running, new]
        for gone in (cancelled, deleted):
            with pytest.raises(outlive.NotFoundError):
                store.tasks.delete(gone)

        store.queues.serve("default", 1)
        assert dispatch_until(store, lambda: ran == ["after", "held"] and store.tasks.dead_count == 1)
        assert store.tasks.is_cancelled(running) is False
        assert store.tasks.cancel(running) is True and store.tasks.is_cancelled(running) is True
        # Completed from another thread: the completion finds the task by its older id.
        finisher = threading.Thread(target=lambda: held[0](success=True))
        finisher.start()
        finisher.join()
        assert dispatch_until(store, lambda: ran == ["after", "held", "new"] and len(store.tasks) == 0)
        with pytest.raises(outlive.NotFoundError):
            store.tasks.is_cancelled(running)
        store.tasks.retry(dies)
        assert dispatch_until(store, lambda: store.tasks.dead_count == 1 and
                              [task.attempts for task in store.tasks.list() if task.id == dies] == [1])
        store.tasks.delete(dies)
        assert store.tasks.list() == [] and store.tasks.dead_count == 0

    # The older ids stay unique: the partial index of ids holds them.
    db = connect(directory)
    try:
        db.execute("BEGIN IMMEDIATE")
        (sql,) = db.execute("SELECT sql FROM sqlite_schema WHERE name = 'outlive_tasks'").fetchone()
        assert "UNIQUE" not in sql
        row = "INSERT INTO outlive_tasks(seq, id, handler_name, handler, created, age_from) VALUES (?, ?, 'h', x'00', 0, 0)"
        db.execute(row, (100, old[0]))
        with pytest.raises(sqlite3.IntegrityError):
            db.execute(row, (101, old[0]))
        db.execute("ROLLBACK")
    finally:
        db.close()


def test_an_id_is_found_only_whole_and_never_finds_the_task_that_took_its_seq_again(location):
    with outlive.Store(location) as store:
        store.queues.serve("default", 0)
        first = store.tasks.add(outlive.Handler("py.ids.job", label="first"))
        newest = store.tasks.add(outlive.Handler("py.ids.job", label="newest"))
        store.tasks.delete(newest)
        again = store.tasks.add(outlive.Handler("py.ids.job", label="again"))
        assert again != newest
        if not location.startswith("postgres"):
            assert carried_seq(again) == carried_seq(newest), "the seq was not taken again: the test proves less"
        # Ids that parse, none of them a stored task's: the same seq with another
        # random part, the deleted task's, the largest seq an id carries, an older form.
        strangers = [other_random_part(first), newest, "ffffffff-ffff-8fff-bfff-ffffffffffff",
                     str(uuid.uuid4()), first[:14] + ("4" if first[14] != "4" else "8") + first[15:]]
        for stranger in strangers:
            for call in (store.tasks.delete, store.tasks.retry, store.tasks.cancel, store.tasks.is_cancelled,
                         lambda task_id: store.tasks.list(after=task_id)):
                with pytest.raises(outlive.NotFoundError):
                    call(stranger)
        assert [task.id for task in store.tasks.list()] == [first, again]
        assert [task.id for task in store.tasks.list(after=first)] == [again]


def test_a_stored_id_that_does_not_match_its_seq_is_not_found_and_breaks_nothing(tmp_path):
    """The store is untrusted: a row whose id carries another seq (or is not
    an id) is found by no id; listing and the other tasks work on."""
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        store.queues.serve("default", 0)
        moved, kept, garbled = (store.tasks.add(outlive.Handler("py.ids.job", label=str(n))) for n in range(3))
    moved_to = moved[:17] + "9" + moved[18:]
    db = connect(directory)
    db.execute("UPDATE outlive_tasks SET id = ? WHERE id = ?", (moved_to, moved))
    db.execute("UPDATE outlive_tasks SET id = 'not an id' WHERE seq = ?", (carried_seq(garbled),))
    db.close()
    with outlive.Store(directory) as store:
        store.queues.serve("default", 0)
        assert [task.id for task in store.tasks.list()] == [moved_to, kept, "not an id"]
        for stranger in (moved, moved_to, garbled):
            with pytest.raises(outlive.NotFoundError):
                store.tasks.cancel(stranger)
        with pytest.raises(outlive.InvalidArgumentError):
            store.tasks.cancel("not an id")
        store.tasks.delete(kept)
        assert [task.id for task in store.tasks.list()] == [moved_to, "not an id"]


def test_adders_on_two_handles_taking_turns_give_every_task_a_new_seq_and_id(location):
    """An add reuses the seqs its handle's last add left while the store's
    data version says nothing was committed since: the other handle's adds,
    its deletes and its folds of the counts are commits that make it read
    them again."""
    with outlive.Store(location) as one, outlive.Store(location) as other:
        for store in (one, other):
            store.queues.serve("default", 0)
        added = []
        for n in range(150):
            added.append(one.tasks.add(outlive.Handler("py.ids.job", label=f"one {n}")))
            if n % 3 == 0:
                added.append(other.tasks.add(outlive.Handler("py.ids.job", label=f"other {n}")))
            if n % 7 == 0:
                other.tasks.delete(added.pop())
        assert len(set(added)) == len(added)
        for store in (one, other):
            assert [task.id for task in store.tasks.list(limit=0)] == added
            assert len(store.tasks) == len(added) and store.queues.list()[0].pending == len(added)
        if not location.startswith("postgres"):
            assert [carried_seq(task_id) for task_id in added] == sorted(carried_seq(task_id) for task_id in added)


def test_ids_carry_seqs_up_to_60_bits_and_a_task_of_a_larger_seq_gets_a_random_id(tmp_path):
    """The seq comes from the counted mark here (an empty queue whose mark
    was moved up): every bit of the seq is in the id, and past 60 bits the
    task is found through the index of the other ids."""
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        store.tasks.delete(store.tasks.add(outlive.Handler("py.ids.job", label="first")))
    for mark in (2**40 + 4094, 2**60 - 2, 2**60 + 6):
        db = connect(directory)
        db.execute("UPDATE outlive_task_counted SET seq = ?", (mark,))
        db.close()
        with outlive.Store(directory) as store:
            store.queues.serve("default", 0)
            task_id = store.tasks.add(outlive.Handler("py.ids.job", label=str(mark)))
            assert stored(directory, "SELECT seq, id FROM outlive_tasks") == [(mark + 1, task_id)]
            if mark + 1 < 2**60:
                assert carried_seq(task_id) == mark + 1
            else:
                assert uuid.UUID(task_id).version == 4
            assert [task.id for task in store.tasks.list()] == [task_id]
            assert store.tasks.cancel(task_id) is False
            with pytest.raises(outlive.NotFoundError):
                store.tasks.cancel(task_id)
