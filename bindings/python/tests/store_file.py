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


WAL_MAGIC = (0x377F0682, 0x377F0683)


def wal_header(directory):
    """The 32 bytes at the start of the store's write-ahead log."""
    with open(os.path.join(directory, "outlive.db-wal"), "rb") as log:
        return log.read(32)


def wal_frames(directory):
    """The frames of the store's write-ahead log since it last started over:
    those that carry its header's salts. A store keeps its log filled ahead
    with zeros (docs/store.md, "The log is kept and filled ahead"), so the
    file's size does not tell; frames past them are zeros or left from an
    earlier pass over the file, with other salts."""
    with open(os.path.join(directory, "outlive.db-wal"), "rb") as log:
        header = log.read(32)
        if len(header) < 32 or int.from_bytes(header[:4], "big") not in WAL_MAGIC:
            return 0
        page_size = int.from_bytes(header[8:12], "big")
        frames = 0
        while True:
            log.seek(32 + frames * (page_size + 24))
            frame = log.read(24)
            if len(frame) < 24 or frame[8:16] != header[16:24]:
                return frames
            frames += 1


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
