"""Undoes steps of the tasks schema in a store's file (SQLite), for the tests
that make a store of an earlier version: each helper runs inside the caller's
transaction, the newest step first."""

READY_INDEX_BEFORE_STEP_11 = (
    "CREATE INDEX outlive_tasks_ready ON outlive_tasks(queue, handler_name, priority DESC, seq) WHERE state = 0")
RUNNING_INDEX_BEFORE_STEP_11 = "CREATE INDEX outlive_tasks_running ON outlive_tasks(runner) WHERE state = 1"

# The count triggers as steps 9 and 10 made them, in the exact text the schema
# check at open compares (the store's SQL, byte for byte).
COUNT_TRIGGERS_BEFORE_STEP_13 = [
    "CREATE TRIGGER outlive_tasks_queue_count_delete AFTER DELETE ON outlive_tasks\n"
    "    WHEN OLD.seq <= (SELECT seq FROM outlive_task_counted WHERE slot = 0) BEGIN\n"
    "    UPDATE outlive_task_queues SET pending = ifnull(pending, 0) - (OLD.state IN (0, 3)), "
    "running = ifnull(running, 0) - (OLD.state = 1),\n"
    "        dead = ifnull(dead, 0) - (OLD.state = 2) WHERE name = OLD.queue;\nEND",
    "CREATE TRIGGER outlive_tasks_queue_count_update AFTER UPDATE OF state, queue ON outlive_tasks\n"
    "    WHEN OLD.queue = NEW.queue AND ((OLD.state = 1) != (NEW.state = 1) OR (OLD.state = 2) != (NEW.state = 2)\n"
    "        OR (OLD.state IN (0, 3)) != (NEW.state IN (0, 3))) "
    "AND OLD.seq <= (SELECT seq FROM outlive_task_counted WHERE slot = 0) BEGIN\n"
    "    UPDATE outlive_task_queues SET pending = ifnull(pending, 0) - (OLD.state IN (0, 3)) + (NEW.state IN (0, 3)),\n"
    "        running = ifnull(running, 0) - (OLD.state = 1) + (NEW.state = 1),\n"
    "        dead = ifnull(dead, 0) - (OLD.state = 2) + (NEW.state = 2) WHERE name = NEW.queue;\nEND",
    "CREATE TRIGGER outlive_tasks_queue_count_move AFTER UPDATE OF state, queue ON outlive_tasks\n"
    "    WHEN OLD.queue != NEW.queue AND OLD.seq <= (SELECT seq FROM outlive_task_counted WHERE slot = 0) BEGIN\n"
    "    UPDATE outlive_task_queues SET pending = ifnull(pending, 0) - (OLD.state IN (0, 3)), "
    "running = ifnull(running, 0) - (OLD.state = 1),\n"
    "        dead = ifnull(dead, 0) - (OLD.state = 2) WHERE name = OLD.queue;\n"
    "    UPDATE outlive_task_queues SET pending = ifnull(pending, 0) + (NEW.state IN (0, 3)), "
    "running = ifnull(running, 0) + (NEW.state = 1),\n"
    "        dead = ifnull(dead, 0) + (NEW.state = 2) WHERE name = NEW.queue;\nEND",
]


UNIQUE_KEY_INDEX_BEFORE_STEP_14 = (
    "CREATE UNIQUE INDEX outlive_tasks_unique_key ON outlive_tasks(queue, unique_key)\n"
    "    WHERE unique_key IS NOT NULL AND cancelled = 0 AND state IN (0, 1, 3)")


def undo_step_14(db):
    """The unique keys' index as step 13 left it (its state as an IN list),
    the schema at version 13."""
    db.execute("DROP INDEX outlive_tasks_unique_key")
    db.execute(UNIQUE_KEY_INDEX_BEFORE_STEP_14)
    db.execute("UPDATE outlive_schema SET version = 13 WHERE component = 'tasks'")


def undo_step_13(db):
    """The counts as step 12 left them: the running tasks below the counted
    mark in `running` rather than in `pending`, and the triggers that moved
    a task between the two at its claim, the schema at version 12."""
    undo_step_14(db)
    for name in ("delete", "update", "move"):
        db.execute(f"DROP TRIGGER outlive_tasks_queue_count_{name}")
    for sql in COUNT_TRIGGERS_BEFORE_STEP_13:
        db.execute(sql)
    running = ("(SELECT count(*) FROM outlive_tasks t WHERE t.queue = outlive_task_queues.name AND t.state = 1 "
               "AND t.seq <= (SELECT seq FROM outlive_task_counted WHERE slot = 0))")
    db.execute(f"UPDATE outlive_task_queues SET running = {running}, pending = ifnull(pending, 0) - {running}")
    db.execute("UPDATE outlive_schema SET version = 12 WHERE component = 'tasks'")


def undo_step_11(db):
    """The tasks as step 10 left them: every ready task in the ready index,
    no `unindexed` column, the running index limited to state 1, the schema
    at version 10."""
    undo_step_13(db)
    db.execute("DROP INDEX outlive_tasks_ready")
    db.execute("DROP INDEX outlive_tasks_running")
    db.execute("ALTER TABLE outlive_tasks DROP COLUMN unindexed")
    db.execute(READY_INDEX_BEFORE_STEP_11)
    db.execute(RUNNING_INDEX_BEFORE_STEP_11)
    db.execute("UPDATE outlive_schema SET version = 10 WHERE component = 'tasks'")
