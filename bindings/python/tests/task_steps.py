"""Undoes steps of the tasks schema in a store's file (SQLite), for the tests
that make a store of an earlier version: each helper runs inside the caller's
transaction, the newest step first."""

READY_INDEX_BEFORE_STEP_11 = (
    "CREATE INDEX outlive_tasks_ready ON outlive_tasks(queue, handler_name, priority DESC, seq) WHERE state = 0")
RUNNING_INDEX_BEFORE_STEP_11 = "CREATE INDEX outlive_tasks_running ON outlive_tasks(runner) WHERE state = 1"


def undo_step_11(db):
    """The tasks as step 10 left them: every ready task in the ready index,
    no `unindexed` column, the running index limited to state 1, the schema
    at version 10."""
    db.execute("DROP INDEX outlive_tasks_ready")
    db.execute("DROP INDEX outlive_tasks_running")
    db.execute("ALTER TABLE outlive_tasks DROP COLUMN unindexed")
    db.execute(READY_INDEX_BEFORE_STEP_11)
    db.execute(RUNNING_INDEX_BEFORE_STEP_11)
    db.execute("UPDATE outlive_schema SET version = 10 WHERE component = 'tasks'")
