"""A message's place (`seq`) and its category's count. On SQLite, since step 3
of the messages schema, `seq` is the table's rowid and a post writes no
counter: the newest messages, above the counted mark, are counted from their
rows and folded into the counters every few posts (MessageCounts). A store of
the previous schema migrates keeping its messages, their order, state and
counts. The counts stay exact across folds and deletions on both engines."""
import ctypes
import os
import sqlite3

import pytest

import outlive
from conftest import dispatch_until, store_location
from message_steps import undo_step_5
from outlive import _ffi

# The table and indexes as step 1 of the messages component made them (step 2
# added the triggers, which the rebuild below keeps).
MESSAGES_AT_VERSION_2 = [
    "CREATE TABLE outlive_messages(\n"
    "    id TEXT PRIMARY KEY, seq INTEGER NOT NULL, created REAL NOT NULL,\n"
    "    category TEXT NOT NULL, title TEXT NOT NULL, body TEXT, scope TEXT, thread TEXT,\n"
    "    choices BLOB NOT NULL, payload BLOB, response_handler BLOB, auto_remove INTEGER NOT NULL,\n"
    "    locking_run TEXT, locking_process TEXT, processed_by TEXT NOT NULL,\n"
    "    presented INTEGER NOT NULL, handled INTEGER NOT NULL, choice TEXT, removed INTEGER NOT NULL,\n"
    "    presenter TEXT, presenter_run TEXT, requires_end INTEGER NOT NULL, responding_run TEXT)",
    "CREATE UNIQUE INDEX outlive_messages_order ON outlive_messages(seq)",
    "CREATE INDEX outlive_messages_state ON outlive_messages(removed, handled, presented, seq)",
    "CREATE INDEX outlive_messages_scope ON outlive_messages(scope, seq)",
    "CREATE INDEX outlive_messages_category ON outlive_messages(category, seq)",
    "CREATE INDEX outlive_messages_locking ON outlive_messages(locking_run) WHERE locking_run IS NOT NULL",
    "CREATE INDEX outlive_messages_responding ON outlive_messages(responding_run) WHERE responding_run IS NOT NULL",
    "CREATE INDEX outlive_messages_presenter_run ON outlive_messages(presenter_run) WHERE presenter_run IS NOT NULL",
]


def connect(directory):
    return sqlite3.connect(os.path.join(directory, "outlive.db"), isolation_level=None)


def back_to_version_2(directory):
    """Rebuilds outlive_messages as version 2 made it (keyed by id, seq in a
    unique index, every index of step 1), rows kept; every message in the
    counters, no counted mark."""
    db = connect(directory)
    try:
        db.execute("BEGIN IMMEDIATE")
        triggers = [sql for (sql,) in db.execute(
            "SELECT sql FROM sqlite_schema WHERE tbl_name = 'outlive_messages' AND type = 'trigger'")]
        assert len(triggers) == 3
        undo_step_5(db)
        db.execute("ALTER TABLE outlive_messages RENAME TO outlive_messages_version_3")
        db.execute(MESSAGES_AT_VERSION_2[0])
        db.execute("INSERT INTO outlive_messages SELECT * FROM outlive_messages_version_3")
        db.execute("DROP TABLE outlive_messages_version_3")
        for sql in MESSAGES_AT_VERSION_2[1:] + triggers:
            db.execute(sql)
        db.execute("DELETE FROM outlive_message_categories")
        db.execute("INSERT INTO outlive_message_categories(category, count) "
                   "SELECT category, count(*) FROM outlive_messages GROUP BY category")
        db.execute("DROP TABLE outlive_message_counted")
        db.execute("UPDATE outlive_schema SET version = 2 WHERE component = 'messages'")
        db.execute("COMMIT")
    finally:
        db.close()


def category_count(store, category):
    """outlive_messages_count of one category (the binding counts all only)."""
    count = ctypes.c_size_t()
    assert _ffi.outlive_messages_count(store.handle, category.encode(), ctypes.byref(count)) == 0
    return count.value


def state(store):
    """Every stored message in order: id, category, scope, presented, handled, choice."""
    return [(m.id, m.category, m.scope, m.presented, m.handled, m.choice) for m in store.messages]


def test_a_store_of_the_previous_messages_schema_migrates_keeping_its_messages_order_state_and_counts(tmp_path):
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        ids = [store.messages.post(category, f"m{i}", scope=scope, choices=[("ok", "OK"), ("no", "No")])
               for i, (category, scope) in enumerate([("sync", "a"), ("auth", None), ("sync", "b"), ("sync", "a"),
                                                      ("auth", "a"), ("info", None)])]
        store.messages.mute(ids[0])
        store.messages.respond(ids[1], "no")
        store.messages.mute(ids[3])
        before = state(store)
        counts = {c: len(store.messages.ids(category=c)) for c in ("sync", "auth", "info")}
    assert counts == {"sync": 3, "auth": 2, "info": 1}
    back_to_version_2(directory)
    db = connect(directory)
    assert "id TEXT PRIMARY KEY" in db.execute("SELECT sql FROM sqlite_schema WHERE name = 'outlive_messages'").fetchone()[0]
    db.close()

    with outlive.Store(directory) as store:
        assert state(store) == before
        assert store.messages.ids() == ids
        assert store.messages.ids(scope="a") == [ids[0], ids[3], ids[4]]
        assert store.messages.ids(category="sync") == [ids[0], ids[2], ids[3]]
        assert len(store.messages) == 6
        assert [category_count(store, c) for c in ("sync", "auth", "info", "none")] == [3, 2, 1, 0]
        store.messages.set_category_limit(3)
        with pytest.raises(outlive.LimitError):
            store.messages.post("sync", "over the limit")
        later = store.messages.post("auth", "later", choices=[("ok", "OK")])
        assert store.messages.ids() == ids + [later]
        # The waiting ones, in the order posted: the migrated before the new.
        shown = []
        store.messages.add_presenter("p", lambda m, p: shown.append(m.id) or p.finish(presented=True))
        assert dispatch_until(store, lambda: len(shown) == 4)
        assert shown == [ids[2], ids[4], ids[5], later]

    db = connect(directory)
    try:
        (sql,) = db.execute("SELECT sql FROM sqlite_schema WHERE name = 'outlive_messages'").fetchone()
        assert "seq INTEGER PRIMARY KEY" in sql
        assert db.execute("SELECT count(*) FROM sqlite_schema WHERE name = 'outlive_messages_order'").fetchone()[0] == 0
        # Migrated through step 3 and on (step 4: ids that carry their seq, test_message_ids.py;
        # step 5: waiting messages left out of the state index, test_message_pages.py; step 6 is
        # PostgreSQL's, test_message_admission_postgresql.py).
        assert db.execute("SELECT version FROM outlive_schema WHERE component = 'messages'").fetchone()[0] == 6
        # Migrated messages are counted; the one posted since is above the mark.
        migrated = max(db.execute("SELECT seq FROM outlive_messages WHERE id = ?", (i,)).fetchone()[0] for i in ids)
        assert db.execute("SELECT seq FROM outlive_message_counted WHERE slot = 0").fetchone()[0] == migrated
    finally:
        db.close()


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_counts_stay_exact_across_folds_and_deletions_and_in_another_handle(kind, tmp_path):
    location = store_location(kind, tmp_path)
    categories = ("a", "b", "c")
    with outlive.Store(location) as store, outlive.Store(location, process="other") as other:
        posted = {c: [] for c in categories}
        # Past several folds (one every 32 posts on SQLite), some deleted below
        # the counted mark and some above it, by either handle.
        for i in range(100):
            category = categories[i % 7 % 3]
            posted[category].append(store.messages.post(category, f"m{i}"))
            if i % 5 == 4:
                (store if i % 2 else other).messages.remove(posted[category].pop(0))
            if i % 11 == 10:
                (other if i % 2 else store).messages.remove(posted[category].pop())
            for handle in (store, other):
                assert len(handle.messages) == sum(len(ids) for ids in posted.values())
            assert store.messages.ids(category=category) == posted[category]
            assert [category_count(handle, c) for handle in (store, other) for c in categories] == \
                [len(posted[c]) for _ in (store, other) for c in categories]
        # The limit sees every message, counted or not.
        full = len(posted["a"])
        store.messages.set_category_limit(full)
        with pytest.raises(outlive.LimitError):
            store.messages.post("a", "one too many")
        store.messages.remove(posted["a"].pop())
        posted["a"].append(store.messages.post("a", "fits again"))
        with pytest.raises(outlive.LimitError):
            store.messages.post("a", "one too many")
        assert len(store.messages) == sum(len(ids) for ids in posted.values())
        assert category_count(store, "a") == full
