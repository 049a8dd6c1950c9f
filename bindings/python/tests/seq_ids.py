"""What the id tests of tasks and messages share: since tasks schema step 10
and messages schema step 4, a new SQLite row's id carries its seq (a version-8
UUID: docs/tasks.md, "Task ids"; docs/messages.md, "What a post writes").
These read and change the store's file behind the library's back."""
import os
import sqlite3


def connect(directory):
    return sqlite3.connect(os.path.join(directory, "outlive.db"), isolation_level=None)


def carried_seq(row_id):
    """The seq a new-form id carries: hex digits 0-11 and 13-15 of the UUID."""
    digits = row_id.replace("-", "")
    assert digits[12] == "8", f"{row_id} is not of the new form"
    return int(digits[:12] + digits[13:16], 16)


def other_random_part(row_id):
    """The same id, its last hex digit changed: the same seq, another row."""
    return row_id[:-1] + ("0" if row_id[-1] != "0" else "1")


def stored(directory, sql, *arguments):
    db = connect(directory)
    try:
        return db.execute(sql, arguments).fetchall()
    finally:
        db.close()
