"""A store keeps its write-ahead log between opens, filled ahead with zeros
(docs/store.md, "The log is kept and filled ahead"): a commit's sync then
writes over blocks already written instead of growing the file. The last
close clears the log's header instead of deleting the file, so no frame of it
is read again, and cuts a log that grew larger back to the kept size. SQLite
only: a PostgreSQL store has no log file of its own."""
import os
import signal
import sqlite3

import outlive
from conftest import run_python
from store_file import connect, stored, wal_frames, wal_header

# SQLiteBackend.keptLogBytes: the header and 1,064 frames of a 4,096-byte page.
KEPT = 32 + (1000 + 64) * (4096 + 24)


def log_size(directory):
    return os.path.getsize(os.path.join(directory, "outlive.db-wal"))


def test_a_new_store_fills_its_log_ahead(store_dir):
    store = outlive.Store(store_dir)
    try:
        assert log_size(store_dir) == KEPT
        # The schema's frames are there, and the zeros after them are no frames.
        assert 0 < wal_frames(store_dir) < 200
    finally:
        store.close()


def test_the_last_close_keeps_the_log_with_its_header_cleared(store_dir):
    store = outlive.Store(store_dir)
    for n in range(20):
        store.kv[f"k{n}"] = b"v%d" % n
    store.close()
    assert log_size(store_dir) == KEPT
    assert wal_header(store_dir) == bytes(32)
    # Everything is in the database itself: a program that reads the file
    # finds no frame in the log, and every value.
    db = connect(store_dir)
    try:
        assert db.execute("PRAGMA wal_checkpoint").fetchone() == (0, 0, 0)
        assert db.execute("SELECT count(*) FROM outlive_kv WHERE key LIKE 'k%'").fetchone() == (20,)
    finally:
        db.close()


def test_a_reopened_store_writes_over_its_kept_log(store_dir):
    store = outlive.Store(store_dir)
    store.kv["before"] = b"1"
    store.close()
    store = outlive.Store(store_dir)
    try:
        assert store.kv["before"] == b"1"
        for n in range(30):
            store.kv[f"again{n}"] = os.urandom(16)
        assert log_size(store_dir) == KEPT
        # The log started over at its first frame: the frames of this open only.
        assert 30 <= wal_frames(store_dir) < 100
    finally:
        store.close()


def test_a_log_grown_past_the_kept_size_is_cut_back_at_the_last_close(store_dir):
    store = outlive.Store(store_dir, durability="normal")
    store.kv["first"] = b"1"
    # A reader holding its snapshot keeps the log from starting over.
    reader = connect(store_dir)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM outlive_kv").fetchone()
    for n in range(1_200):
        store.kv[f"k{n}"] = b"v" * 100
    assert log_size(store_dir) > KEPT
    reader.execute("COMMIT")
    reader.close()  # not the last connection: SQLite leaves the log alone
    store.close()
    assert log_size(store_dir) == KEPT
    assert wal_header(store_dir) == bytes(32)
    assert stored(store_dir, "SELECT count(*) FROM outlive_kv WHERE key LIKE 'k%'") == [(1_200,)]
    store = outlive.Store(store_dir)
    try:
        assert store.kv["k1199"] == b"v" * 100
    finally:
        store.close()


def test_a_log_that_another_program_deleted_is_filled_again(store_dir):
    outlive.Store(store_dir).close()
    # The sqlite3 shell, closing the store last, deletes the log as SQLite does.
    db = connect(store_dir)
    db.execute("SELECT count(*) FROM outlive_kv").fetchone()
    db.close()
    assert not os.path.exists(os.path.join(store_dir, "outlive.db-wal"))
    store = outlive.Store(store_dir)
    try:
        assert log_size(store_dir) == KEPT
        store.kv["k"] = b"v"
        assert store.kv["k"] == b"v"
    finally:
        store.close()


FULL_DISK_OPEN = """
import os, resource, signal, sys
import outlive
# The file system has room for the store's files but not for its log filled ahead.
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (2 * 1024 * 1024, resource.RLIM_INFINITY))
store = outlive.Store(sys.argv[1])
print(os.path.getsize(os.path.join(sys.argv[1], "outlive.db-wal")))
for n in range(50):
    store.kv[f"k{n}"] = b"v" * 100
store.close()
"""


def test_an_open_that_cannot_fill_the_log_still_opens_and_the_log_grows_as_written(store_dir):
    result = run_python(FULL_DISK_OPEN, store_dir)
    # The fill failed and gave its space back: the log holds what SQLite wrote.
    assert 0 < int(result.stdout) < 2 * 1024 * 1024
    store = outlive.Store(store_dir)
    try:
        assert all(store.kv[f"k{n}"] == b"v" * 100 for n in range(50))
        assert log_size(store_dir) == KEPT
    finally:
        store.close()


KILLED = """
import os, signal, sys
import outlive
store = outlive.Store(sys.argv[1])
for n in range(40):
    store.kv[f"k{n}"] = b"v%d" % n
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_process_leaves_its_frames_for_the_next_open(store_dir):
    outlive.Store(store_dir).close()
    result = run_python(KILLED, store_dir, check=False)
    assert result.returncode == -signal.SIGKILL
    # No close ran: the log's header is valid and its frames hold the sets.
    assert wal_frames(store_dir) >= 40
    store = outlive.Store(store_dir)
    try:
        assert [store.kv[f"k{n}"] for n in range(40)] == [b"v%d" % n for n in range(40)]
    finally:
        store.close()
    assert wal_header(store_dir) == bytes(32)


def test_a_plain_sqlite3_program_reads_a_store_whose_log_is_kept(store_dir):
    store = outlive.Store(store_dir)
    store.kv["k"] = b"v"
    store.close()
    db = sqlite3.connect(f"file:{os.path.join(store_dir, 'outlive.db')}?mode=ro", uri=True)
    try:
        assert db.execute("SELECT value FROM outlive_kv WHERE key = 'k'").fetchone() == (b"v",)
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        db.close()


def test_a_fifo_planted_in_place_of_the_log_is_not_written_through_at_the_last_close(store_dir):
    store = outlive.Store(store_dir)
    store.kv["k"] = b"v"
    log = os.path.join(store_dir, "outlive.db-wal")
    planted = log + ".planted"
    os.mkfifo(planted, 0o600)
    os.replace(planted, log)  # SQLite keeps writing the log it opened
    store.close()  # would block for ever opening a FIFO for writing without O_NONBLOCK
    assert not os.path.exists(log)
    store = outlive.Store(store_dir)
    try:
        assert store.kv["k"] == b"v"
        assert log_size(store_dir) == KEPT
    finally:
        store.close()
