"""The queues' counts on PostgreSQL, where an add writes no counter either
(tasks schema step 12): tasks above the counted mark are counted from their
rows when counts are read, and every 64 adds of a handle fold them into the
counters. Each handle keeps its own tally, so with several handles adding
the tail is longer, never miscounted. A store whose tasks tables are at
step 11 (each add updated its queue's counter) migrates with its counts."""

import pytest

import outlive
from conftest import dispatch_until, psql, store_location


@outlive.handler("py.pgcounts.ok")
def ok(label: str) -> None:
    pass


@outlive.handler("py.pgcounts.fails")
def fails(label: str) -> None:
    raise RuntimeError("fails on purpose")


@pytest.fixture
def location(tmp_path):
    return store_location("postgresql", tmp_path)


def counted_mark(location):
    return int(psql(location, "SELECT seq FROM outlive_task_counted WHERE slot = 0"))


def counts(store):
    return {queue.name: (queue.pending, queue.running, queue.dead) for queue in store.queues}


def assert_counters_agree_with_the_rows_below_the_mark(location):
    assert psql(location, "SELECT (SELECT sum(pending + running) FROM outlive_task_queues) - (SELECT count(*) FROM outlive_tasks "
                          "WHERE state <> 2 AND seq <= (SELECT seq FROM outlive_task_counted))") == "0"
    assert psql(location, "SELECT (SELECT sum(dead) FROM outlive_task_queues) - (SELECT count(*) FROM outlive_tasks "
                          "WHERE state = 2 AND seq <= (SELECT seq FROM outlive_task_counted))") == "0"


def test_counts_on_postgresql_stay_exact_as_two_handles_add_past_their_folds_and_tasks_are_cancelled_run_and_die(location):
    with outlive.Store(location) as first, outlive.Store(location) as second:
        for store in (first, second):
            store.queues.serve("default", 0)
        first.queues.declare("jobs", "parallel")
        first.tasks.set_policy(max_attempts=1)
        expected = {"default": [0, 0, 0], "jobs": [0, 0, 0]}
        cancellable = []
        marks = set()
        for index in range(200):
            store = first if index % 2 else second
            queue = "jobs" if index % 3 == 0 else "default"
            name = "py.pgcounts.fails" if index % 10 == 0 else "py.pgcounts.ok"
            task = store.queues.enqueue(outlive.Handler(name, label=str(index)), queue)
            if index % 25 == 7:
                cancellable.append((task, queue))
            expected[queue][0] += 1
            want = {name: tuple(value) for name, value in expected.items()}
            assert counts(first) == want and counts(second) == want, index
            assert len(first.tasks) == index + 1 and second.tasks.dead_count == 0
            marks.add(counted_mark(location))
        # Each handle folded after its 64th and 128th add; tasks lie above the mark.
        assert len(marks) >= 3
        assert max(marks) < int(psql(location, "SELECT max(seq) FROM outlive_tasks"))
        assert_counters_agree_with_the_rows_below_the_mark(location)
        for task, queue in cancellable:
            assert first.tasks.cancel(task) is False
            expected[queue][0] -= 1
        want = {name: tuple(value) for name, value in expected.items()}
        assert counts(first) == want and counts(second) == want
        dying = sum(1 for index in range(0, 200, 10) if index % 25 != 7)
        first.queues.serve("default", 1)
        first.queues.serve("jobs", 2)
        assert dispatch_until(first, lambda: len(first.tasks) == 0, seconds=60)
        assert first.tasks.dead_count == dying and second.tasks.dead_count == dying
        assert sum(value[2] for value in counts(second).values()) == dying
        assert all(value[0] == 0 and value[1] == 0 for value in counts(second).values())
    assert_counters_agree_with_the_rows_below_the_mark(location)


def test_a_postgresql_batch_add_is_folded_whole(location):
    with outlive.Store(location) as store:
        store.queues.serve("default", 0)
        store.tasks.add(outlive.Handler("py.pgcounts.ok", label="first"))
        store.tasks.add(outlive.Handler("py.pgcounts.ok", label="second"))
        # A new handle folds at its first add, not at its second.
        assert counted_mark(location) == 1
        store.tasks.add_many([outlive.Handler("py.pgcounts.ok", label=str(index)) for index in range(500)])
        assert len(store.tasks) == 502 and counts(store)["default"] == (502, 0, 0)
        assert counted_mark(location) == int(psql(location, "SELECT max(seq) FROM outlive_tasks"))
        assert psql(location, "SELECT pending FROM outlive_task_queues WHERE name = 'default'") == "502"
        store.tasks.add(outlive.Handler("py.pgcounts.ok", label="last"))
        assert len(store.tasks) == 503 and counts(store)["default"] == (503, 0, 0)


# What a process of the previous library sends with each add, beside the
# task's INSERT: the raise of its queue's counter that step 12 stopped.
OLDER_ADDS_RAISE = "UPDATE outlive_task_queues SET pending = coalesce(pending, 0) + {count} WHERE name = '{queue}'"


def test_handles_that_each_add_one_task_leave_no_growing_tail_on_postgresql(location):
    for index in range(5):
        with outlive.Store(location) as store:
            store.tasks.add(outlive.Handler("py.pgcounts.ok", label=str(index)))
    assert counted_mark(location) == int(psql(location, "SELECT max(seq) FROM outlive_tasks"))
    with outlive.Store(location) as store:
        assert len(store.tasks) == 5 and counts(store)["default"] == (5, 0, 0)
    assert_counters_agree_with_the_rows_below_the_mark(location)


def test_an_older_library_still_adding_beside_this_one_during_an_upgrade_gets_its_tasks_counted_once(location):
    with outlive.Store(location) as store:
        store.queues.serve("default", 0)
        store.queues.declare("jobs", "parallel")
        for index in range(10):
            store.queues.enqueue(outlive.Handler("py.pgcounts.ok", label=str(index)), "jobs" if index % 2 else "default")
        # The older process's adds: its rows (as ours, above the mark) and its raises.
        psql(location, OLDER_ADDS_RAISE.format(count=5, queue="default"))
        psql(location, "BEGIN;\n" + OLDER_ADDS_RAISE.format(count=1, queue="jobs") + ";\n"
                       + OLDER_ADDS_RAISE.format(count=4, queue="jobs") + ";\nCOMMIT")
        assert counts(store) == {"default": (5, 0, 0), "jobs": (5, 0, 0)}
        # A fold (this handle's 64th add) counts the tail once.
        for index in range(60):
            store.queues.enqueue(outlive.Handler("py.pgcounts.ok", label=f"more {index}"), "jobs" if index % 2 else "default")
        assert counted_mark(location) >= 64
        assert counts(store) == {"default": (35, 0, 0), "jobs": (35, 0, 0)}
        assert_counters_agree_with_the_rows_below_the_mark(location)
        # Lowering a counter (the count triggers' way, any depth) is left alone.
        psql(location, "UPDATE outlive_task_queues SET pending = pending - 1 WHERE name = 'jobs'")
        assert counts(store)["jobs"] == (34, 0, 0)


# The tasks tables as the previous version left them (steps 1 to 11): the
# count trigger of step 7, no counted mark; each add updated its counter.
STEP_11 = """
DROP TRIGGER outlive_tasks_runner_registered ON outlive_tasks;
DROP FUNCTION outlive_tasks_runner_registered();
DROP TRIGGER outlive_runs_tasks_released ON outlive_runs;
DROP FUNCTION outlive_runs_tasks_released();
ALTER TABLE outlive_tasks ADD FOREIGN KEY (runner) REFERENCES outlive_runs(run_id) DEFERRABLE INITIALLY DEFERRED;
DROP TRIGGER outlive_task_queues_older_adds ON outlive_task_queues;
DROP FUNCTION outlive_task_queues_older_adds();
DROP TRIGGER outlive_tasks_counted_count_delete ON outlive_tasks;
DROP TRIGGER outlive_tasks_counted_count_update ON outlive_tasks;
DROP FUNCTION outlive_tasks_counted_count();
UPDATE outlive_task_queues q SET
    pending = (SELECT count(*) FROM outlive_tasks t WHERE t.queue = q.name AND t.state <> 2),
    dead = (SELECT count(*) FROM outlive_tasks t WHERE t.queue = q.name AND t.state = 2);
DROP TABLE outlive_task_counted;
CREATE FUNCTION outlive_tasks_unended_count() RETURNS trigger LANGUAGE plpgsql AS $outlive$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.queue = NEW.queue THEN
        UPDATE outlive_task_queues SET pending = coalesce(pending, 0) - (OLD.state IN (0, 1, 3))::int + (NEW.state IN (0, 1, 3))::int,
            dead = coalesce(dead, 0) - (OLD.state = 2)::int + (NEW.state = 2)::int WHERE name = NEW.queue;
        RETURN NULL;
    END IF;
    UPDATE outlive_task_queues SET pending = coalesce(pending, 0) - (OLD.state IN (0, 1, 3))::int,
        dead = coalesce(dead, 0) - (OLD.state = 2)::int WHERE name = OLD.queue;
    IF TG_OP = 'UPDATE' THEN
        UPDATE outlive_task_queues SET pending = coalesce(pending, 0) + (NEW.state IN (0, 1, 3))::int,
            dead = coalesce(dead, 0) + (NEW.state = 2)::int WHERE name = NEW.queue;
    END IF;
    RETURN NULL;
END
$outlive$;
CREATE TRIGGER outlive_tasks_unended_count_delete AFTER DELETE ON outlive_tasks FOR EACH ROW
    EXECUTE FUNCTION outlive_tasks_unended_count();
CREATE TRIGGER outlive_tasks_unended_count_update AFTER UPDATE OF state, queue ON outlive_tasks FOR EACH ROW
    WHEN (OLD.queue <> NEW.queue OR (OLD.state IN (0, 1, 3)) <> (NEW.state IN (0, 1, 3)) OR (OLD.state = 2) <> (NEW.state = 2))
    EXECUTE FUNCTION outlive_tasks_unended_count();
UPDATE outlive_schema SET version = 11 WHERE component = 'tasks';
"""


def test_a_postgresql_store_at_tasks_step_11_migrates_with_exact_counts_and_keeps_counting(location):
    with outlive.Store(location) as store:
        store.queues.declare("jobs", "parallel")
        store.tasks.set_policy(max_attempts=1)
        for index in range(30):
            store.queues.enqueue(outlive.Handler("py.pgcounts.ok", label=str(index)), "jobs" if index % 2 else "default")
        store.tasks.add(outlive.Handler("py.pgcounts.fails", label="dies"))
        store.queues.serve("default", 1)
        assert dispatch_until(store, lambda: store.tasks.dead_count == 1 and len(store.tasks) == 15, seconds=30)
        store.queues.serve("default", 0)
    psql(location, STEP_11)
    assert psql(location, "SELECT version FROM outlive_schema WHERE component = 'tasks'") == "11"
    with outlive.Store(location) as store:
        store.queues.serve("default", 0)
        # Step 12, then 13 and 14 (SQLite's alone, empty here), then 15 (the runner's foreign key as triggers).
        assert psql(location, "SELECT version FROM outlive_schema WHERE component = 'tasks'") == "15"
        # Every task stored before the migration is below the mark: counted by its counter.
        assert counted_mark(location) == int(psql(location, "SELECT max(seq) FROM outlive_tasks"))
        assert counts(store) == {"default": (0, 0, 1), "jobs": (15, 0, 0)}
        for index in range(100):
            store.queues.enqueue(outlive.Handler("py.pgcounts.ok", label=f"after {index}"), "jobs" if index % 2 else "default")
        assert counts(store) == {"default": (50, 0, 1), "jobs": (65, 0, 0)}
        store.queues.serve("default", 2)
        store.queues.serve("jobs", 2)
        assert dispatch_until(store, lambda: len(store.tasks) == 0, seconds=60)
        assert counts(store) == {"default": (0, 0, 1), "jobs": (0, 0, 0)}
    assert_counters_agree_with_the_rows_below_the_mark(location)
