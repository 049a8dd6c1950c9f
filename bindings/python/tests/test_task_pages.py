"""What an add writes (docs/tasks.md, "What an add writes"). On SQLite since
step 11 of the tasks schema a new ready task is left out of the ready index
(`unindexed` = 1) and indexed later with the tasks after it: when the tail of
uncounted tasks is folded, or when a run looks for its next tasks. An add then
writes one page of the write-ahead log rather than two; the order in which
tasks run, their counts and what a run finds stay as they were. A store of the
previous step migrates with its tasks in every state."""
import pytest

import outlive
from conftest import dispatch_until, spawn_python, store_location
from store_file import stored, take_back, wal_frames
from task_steps import UNIQUE_KEY_INDEX_BEFORE_STEP_14, undo_step_11, undo_step_14

ran = []
failing = {"dies": True}

# The fold of the uncounted tail (TaskSchema.foldAfter).
FOLD_AFTER = 64


@outlive.handler("py.pages.job")
def job(label: str) -> None:
    if failing.get(label):
        raise RuntimeError("fails on purpose")
    ran.append(label)


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path):
    return store_location(request.param, tmp_path)


def take_back_to_step_10(directory):
    """The store's tasks tables as the step before 11 left them."""
    take_back(directory, undo_step_11)


# A process serving only the queue "held", whose task's attempt never ends.
HOLDS_ITS_TASK = """
import sys, time
import outlive

@outlive.handler("py.pages.held")
def held(label: str) -> None:
    print("started", flush=True)
    time.sleep(120)

store = outlive.Store(sys.argv[1])
store.queues.serve("default", 0)
store.queues.serve("held", 1)
while True:
    store.loop.dispatch(0.1)
"""


def test_tasks_added_one_by_one_run_in_priority_then_queue_order_across_the_folds(location):
    ran.clear()
    with outlive.Store(location) as store:
        store.queues.serve("default", 0)
        # Past two folds, and a tail left unindexed on SQLite.
        count = 2 * FOLD_AFTER + 20
        labels = [f"{n}" for n in range(count)]
        priority = {label: n % 3 for n, label in enumerate(labels)}
        for label in labels:
            store.tasks.add(outlive.Handler("py.pages.job", label=label), priority=priority[label])
        if not location.startswith("postgresql"):
            (left_out,) = stored(location, "SELECT count(*) FROM outlive_tasks WHERE unindexed = 1")[0]
            assert 0 < left_out < FOLD_AFTER
        assert len(store.tasks) == count
        store.queues.serve("default", 1)
        assert dispatch_until(store, lambda: len(ran) == count)
        assert ran == sorted(labels, key=lambda label: (-priority[label], int(label)))
        assert len(store.tasks) == 0 and store.tasks.dead_count == 0


def test_a_task_added_while_a_run_is_under_way_is_found_by_its_next_step(location):
    ran.clear()
    with outlive.Store(location) as store, outlive.Store(location) as other:
        other.queues.serve("default", 0)
        store.queues.serve("default", 1)
        # Added through the serving handle, then through another (its own
        # connection), in turns: each step that follows finds them.
        for round_ in range(4):
            adder = store if round_ % 2 == 0 else other
            for n in range(5):
                adder.tasks.add(outlive.Handler("py.pages.job", label=f"{round_}-{n}"))
            # Not yet folded: the run's step indexes them before it looks.
            assert dispatch_until(store, lambda: len(ran) == 5 * (round_ + 1))
        assert ran == [f"{r}-{n}" for r in range(4) for n in range(5)]
        if not location.startswith("postgresql"):
            assert stored(location, "SELECT count(*) FROM outlive_tasks") == [(0,)]


def test_an_add_writes_one_page_to_the_write_ahead_log_on_sqlite(tmp_path):
    directory = str(tmp_path / "store")
    adds = 40
    with outlive.Store(directory, durability="normal") as store:
        store.queues.serve("default", 0)
        store.tasks.add(outlive.Handler("py.pages.job", label="first"))
        before = wal_frames(directory)
        for n in range(adds):
            store.tasks.add(outlive.Handler("py.pages.job", label=str(n)))
        frames = wal_frames(directory) - before
    # The table's page, and now and then the database's first page as the file
    # grows; the ready index's page was a second frame on every add.
    assert adds <= frames < 1.5 * adds


def test_a_store_of_the_previous_step_with_tasks_in_every_state_migrates_and_keeps_them(tmp_path):
    ran.clear()
    failing["dies"] = True
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        store.queues.serve("default", 0)
        store.queues.declare("held")
        store.tasks.set_policy(max_attempts=1)
        dies = store.tasks.add(outlive.Handler("py.pages.job", label="dies"))
        store.queues.serve("default", 1)
        assert dispatch_until(store, lambda: store.tasks.dead_count == 1)
        store.queues.serve("default", 0)
        held = store.tasks.add(outlive.Handler("py.pages.held", label="held"), queue="held")
        for n in range(5):
            store.tasks.add(outlive.Handler("py.pages.job", label=f"ready-{n}"), priority=n % 2)
        keyed = store.tasks.add(outlive.Handler("py.pages.job", label="keyed"), unique_key="k")
        cancelled = store.tasks.add(outlive.Handler("py.pages.job", label="cancelled"))
        assert store.tasks.cancel(cancelled) is False
        waiting = store.tasks.add(outlive.Handler("py.pages.job", label="waiting"), delay=3600)
        counts = (len(store.tasks), store.tasks.dead_count)

    # A process that dies (kill -9) while its attempt runs: the task stays
    # claimed, running, in the file.
    victim = spawn_python(HOLDS_ITS_TASK, directory)
    try:
        assert victim.stdout.readline().strip() == "started"
    finally:
        victim.kill()
        victim.wait()
    before = stored(directory, "SELECT seq, id, state, attempts, priority, queue, unique_key, cancelled FROM outlive_tasks ORDER BY seq")
    assert {state for (_, _, state, *_) in before} == {0, 1, 2, 3}
    assert [row[1] for row in before if row[2] == 1] == [held]

    take_back_to_step_10(directory)

    with outlive.Store(directory) as store:
        store.queues.serve("default", 0)
        store.queues.serve("held", 0)
        # Steps 11 to 15 (12 and 15 PostgreSQL's alone, empty here).
        assert stored(directory, "SELECT version FROM outlive_schema WHERE component = 'tasks'") == [(15,)]
        # Every row as it was (the dead run's task back to ready, its attempt counted).
        after = stored(directory, "SELECT seq, id, state, attempts, priority, queue, unique_key, cancelled FROM outlive_tasks ORDER BY seq")
        assert [row for row in after if row[1] != held] == [row for row in before if row[1] != held]
        assert [row[2:4] for row in after if row[1] == held] == [(0, 1)]
        assert stored(directory, "SELECT count(*) FROM outlive_tasks WHERE unindexed IS NOT NULL") == [(0,)]
        assert (len(store.tasks), store.tasks.dead_count) == counts
        # The key is still held; a new task is added, left out of the index.
        assert store.tasks.add(outlive.Handler("py.pages.job", label="again"), unique_key="k") == keyed
        later = store.tasks.add(outlive.Handler("py.pages.job", label="later"), priority=1)
        assert stored(directory, "SELECT unindexed FROM outlive_tasks WHERE id = ?", later) == [(1,)]
        assert len(store.tasks) == counts[0] + 1

        failing["dies"] = False
        store.tasks.retry(dies)
        store.queues.serve("default", 1)
        # Priority first, then the order added (the retried task keeps its
        # place); the cancelled task ends without running.
        expected = ["ready-1", "ready-3", "later", "dies", "ready-0", "ready-2", "ready-4", "keyed"]
        assert dispatch_until(store, lambda: len(ran) == len(expected) and len(store.tasks) == 2)
        assert ran == expected
        assert [task.id for task in store.tasks.list()] == [held, waiting]
        assert store.tasks.dead_count == 0


def test_a_store_of_step_13_gets_the_unique_key_index_as_equalities_and_keeps_every_key(tmp_path):
    # Step 14 makes the unique keys' index again with its state tested as
    # equalities (SQLite built `IN (0, 1, 3)` as a temporary b-tree for every
    # keyed row written): the same rule, held across the migration.
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        store.queues.serve("default", 0)
        pending = store.tasks.add(outlive.Handler("py.pages.job", label="pending"), unique_key="pending")
        later = store.tasks.add(outlive.Handler("py.pages.job", label="later"), unique_key="later", delay=3600)
        cancelled = store.tasks.add(outlive.Handler("py.pages.job", label="cancelled"), unique_key="cancelled")
        assert store.tasks.cancel(cancelled) is False
    take_back(directory, undo_step_14)
    index = "SELECT sql FROM sqlite_schema WHERE name = 'outlive_tasks_unique_key'"
    assert stored(directory, index) == [(UNIQUE_KEY_INDEX_BEFORE_STEP_14,)]
    with outlive.Store(directory) as store:
        store.queues.serve("default", 0)
        assert stored(directory, "SELECT version FROM outlive_schema WHERE component = 'tasks'") == [(15,)]
        [(sql,)] = stored(directory, index)
        assert sql.endswith("AND cancelled = 0 AND (state = 0 OR state = 1 OR state = 3)")
        # Held keys stay held, a cancelled task's key is free, new keys are taken.
        for key, holder in (("pending", pending), ("later", later)):
            again = store.tasks.add(outlive.Handler("py.pages.job", label="again"), unique_key=key)
            assert again == holder and again.existing
        free = store.tasks.add(outlive.Handler("py.pages.job", label="free"), unique_key="cancelled")
        assert not free.existing and free != cancelled
        new = store.tasks.add(outlive.Handler("py.pages.job", label="new"), unique_key="new")
        assert not new.existing
        assert store.tasks.add(outlive.Handler("py.pages.job", label="new again"), unique_key="new") == new
        assert len(store.tasks) == 4


@outlive.handler("py.pages.held")
def held_again(label: str) -> None:
    ran.append(label)


def test_the_task_a_dead_run_held_runs_again_after_the_migration(tmp_path):
    # The held task of the test above, served here: at-least-once across the step.
    ran.clear()
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        store.queues.declare("held")
        store.queues.serve("default", 0)
        store.tasks.add(outlive.Handler("py.pages.held", label="held"), queue="held")
    victim = spawn_python(HOLDS_ITS_TASK, directory)
    try:
        assert victim.stdout.readline().strip() == "started"
    finally:
        victim.kill()
        victim.wait()
    take_back_to_step_10(directory)
    with outlive.Store(directory) as store:
        store.queues.serve("default", 0)
        store.queues.serve("held", 1)
        assert dispatch_until(store, lambda: ran == ["held"] and len(store.tasks) == 0)
