"""Reads of a SQLite store's file behind the library's back, for the tests of
what the library stores and writes."""
import os
import sqlite3


def connect(directory):
    return sqlite3.connect(os.path.join(directory, "outlive.db"), isolation_level=None)


def stored(directory, sql, *arguments):
    db = connect(directory)
    try:
        return db.execute(sql, arguments).fetchall()
    finally:
        db.close()


def wal_frames(directory):
    """The frames in the store's write-ahead log."""
    size = os.path.getsize(os.path.join(directory, "outlive.db-wal"))
    (page_size,) = stored(directory, "PRAGMA page_size")[0]
    return (size - 32) // (page_size + 24) if size else 0


def take_back(directory, undo):
    """The store's file as `undo(db)` leaves it (a step of its schema undone,
    say), in one transaction."""
    db = connect(directory)
    try:
        db.execute("BEGIN IMMEDIATE")
        undo(db)
        db.execute("COMMIT")
    finally:
        db.close()
