"""What the id tests of tasks and messages share: since tasks schema step 10
and messages schema step 4, a new SQLite row's id carries its seq (a version-8
UUID: docs/tasks.md, "Task ids"; docs/messages.md, "What a post writes").
These read and change the store's file behind the library's back."""
import uuid

from message_steps import undo_step_5 as undo_messages_step_5
from store_file import connect
from task_steps import undo_step_11


def carried_seq(row_id):
    """The seq a new-form id carries: hex digits 0-11 and 13-15 of the UUID."""
    digits = row_id.replace("-", "")
    assert digits[12] == "8", f"{row_id} is not of the new form"
    return int(digits[:12] + digits[13:16], 16)


def other_random_part(row_id):
    """The same id, its last hex digit changed: the same seq, another row."""
    return row_id[:-1] + ("0" if row_id[-1] != "0" else "1")


def back_to_random_ids(directory, table, component, version, id_column, unique_id_column, kept_count=None):
    """Rebuilds `table` as the step before seq-carrying ids made it (its id
    column UNIQUE: `id_column` in the table's SQL becomes `unique_id_column`;
    no partial index of ids), every row given a random (version 4) id as every
    row had before, and the component's schema version set back to `version`.
    Returns the ids in seq order."""
    db = connect(directory)
    try:
        db.execute("BEGIN IMMEDIATE")
        if table == "outlive_tasks":
            undo_step_11(db)
        if table == "outlive_messages":
            undo_messages_step_5(db)
        (sql,) = db.execute("SELECT sql FROM sqlite_schema WHERE name = ?", (table,)).fetchone()
        assert id_column in sql
        kept = [sql for (sql,) in db.execute(
            "SELECT sql FROM sqlite_schema WHERE tbl_name = ? AND type IN ('index', 'trigger') "
            "AND sql IS NOT NULL AND name <> ?", (table, table + "_id"))]
        if kept_count is not None:
            assert len(kept) == kept_count
        db.execute(f"ALTER TABLE {table} RENAME TO {table}_seq_ids")
        db.execute(sql.replace(id_column, unique_id_column))
        db.execute(f"INSERT INTO {table} SELECT * FROM {table}_seq_ids")
        db.execute(f"DROP TABLE {table}_seq_ids")
        for index_or_trigger in kept:
            db.execute(index_or_trigger)
        ids = []
        for (seq,) in db.execute(f"SELECT seq FROM {table} ORDER BY seq").fetchall():
            ids.append(str(uuid.uuid4()))
            db.execute(f"UPDATE {table} SET id = ? WHERE seq = ?", (ids[-1], seq))
        db.execute("UPDATE outlive_schema SET version = ? WHERE component = ?", (version, component))
        db.execute("COMMIT")
        return ids
    finally:
        db.close()
