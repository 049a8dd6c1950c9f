"""Message ids (docs/messages.md, "Message ids"). On SQLite since step 4 of the
messages schema a new message's id carries its seq, as task ids do (SeqID):
found by its rowid and its whole text, with no index of new ids for a post to
write. A store of the previous schema migrates keeping its (random) ids, found
through a partial index of the older ids by every call that takes one, and by
the presentation lock and the response claim. An id is found only whole: the
seq it carries does not find a message of another id, as after the newest
message is deleted and its seq taken again. PostgreSQL's ids stay random."""
import sqlite3
import threading
import uuid

import pytest

import outlive
from conftest import dispatch_until, store_location
from seq_ids import back_to_random_ids, carried_seq, other_random_part
from store_file import connect, stored


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path):
    """A directory, or a store on the test server."""
    return store_location(request.param, tmp_path)


def back_to_version_3_with_random_ids(directory):
    """Rebuilds outlive_messages as step 3 made it, every message given a
    random id as before step 4. Returns the ids in posting order."""
    return back_to_random_ids(directory, "outlive_messages", "messages", 3, "id TEXT NOT NULL, seq",
                              "id TEXT NOT NULL UNIQUE, seq", kept_count=8)


def test_new_ids_are_uuids_that_carry_their_seq_on_sqlite(tmp_path):
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        ids = [store.messages.post("c", f"m{n}") for n in range(3)]
    for message_id in ids:
        assert len(message_id) == 36 and uuid.UUID(message_id).version == 8 and str(uuid.UUID(message_id)) == message_id
    assert [carried_seq(message_id) for message_id in ids] == [
        seq for (seq,) in stored(directory, "SELECT seq FROM outlive_messages ORDER BY seq")]
    # No index of them: only the older ids are indexed.
    assert stored(directory, "SELECT count(*) FROM outlive_messages WHERE substr(id, 15, 1) <> '8'") == [(0,)]
    assert stored(directory, "SELECT sql FROM sqlite_schema WHERE name = 'outlive_messages_id'")[0][0].endswith(
        "WHERE substr(id, 15, 1) <> '8'")


def test_a_store_of_the_previous_schema_migrates_and_every_call_by_id_finds_its_older_messages(tmp_path):
    directory = str(tmp_path / "store")
    choices = [("ok", "OK"), ("no", "No")]
    with outlive.Store(directory) as store:
        for title in ("responded", "muted", "removed", "presented", "resolved", "answered", "scoped"):
            store.messages.post("c", title, choices=choices, scope="s" if title == "scoped" else None)
    old = back_to_version_3_with_random_ids(directory)
    responded, muted, removed, presented, resolved, answered, scoped = old

    with outlive.Store(directory) as store:
        assert store.messages.ids() == old
        assert [store.messages.get(message_id).title for message_id in old] == [
            "responded", "muted", "removed", "presented", "resolved", "answered", "scoped"]
        store.messages.respond(responded, "no")
        assert store.messages.get(responded).choice == "no"
        store.messages.mute(muted)
        assert store.messages.get(muted).presented is not False
        store.messages.remove(removed)
        with pytest.raises(outlive.NotFoundError):
            store.messages.get(removed)
        assert store.messages.remove_scope("s") == 1
        new = store.messages.post("c", "new", choices=choices)
        # The scoped one was the newest: its seq is taken again, by an id of the new form.
        assert carried_seq(new) == 7
        assert store.messages.ids() == [responded, muted, presented, resolved, answered, new]

        # The flow: an auto-resolver's answer, a presentation (the presentation
        # lock taken and released), a response handler (the response claim),
        # then the deletion of each answered one — older ids and the new alike.
        handled = []
        store.messages.add_auto_resolver("r", lambda m: "ok" if m.title == "resolved" else None)
        store.messages.add_response_handler("h", lambda m: handled.append((m.id, m.choice)) or True)
        shown = []
        store.messages.add_presenter(
            "p", lambda m, p: shown.append(m.id) or p.finish(choice="no" if m.title == "answered" else None))
        assert dispatch_until(store, lambda: len(handled) == 3 and len(store.messages) == 3)
        assert sorted(handled) == sorted([(responded, "no"), (resolved, "ok"), (answered, "no")])
        assert shown == [presented, answered, new]
        assert store.messages.ids() == [muted, presented, new]
        assert store.messages.get(presented).presented is not False
        store.messages.reoffer("p")
        for message_id in (muted, presented, new):
            store.messages.remove(message_id)
        assert dispatch_until(store, lambda: len(store.messages) == 0)

    # The older ids stay unique: the partial index of ids holds them.
    db = connect(directory)
    try:
        db.execute("BEGIN IMMEDIATE")
        (sql,) = db.execute("SELECT sql FROM sqlite_schema WHERE name = 'outlive_messages'").fetchone()
        assert "UNIQUE" not in sql
        row = ("INSERT INTO outlive_messages(seq, id, created, category, title, choices, auto_remove, processed_by, "
               "presented, handled, removed, requires_end) VALUES (?, ?, 0, 'c', 't', x'', 0, '', 0, 0, 0, 0)")
        db.execute(row, (100, old[0]))
        with pytest.raises(sqlite3.IntegrityError):
            db.execute(row, (101, old[0]))
        db.execute("ROLLBACK")
    finally:
        db.close()


def test_an_id_is_found_only_whole_and_never_finds_the_message_that_took_its_seq_again(location):
    with outlive.Store(location) as store:
        first = store.messages.post("c", "first", choices=[("ok", "OK")])
        newest = store.messages.post("c", "newest", choices=[("ok", "OK")])
        store.messages.remove(newest)
        again = store.messages.post("c", "again", choices=[("ok", "OK")])
        assert again != newest
        if not location.startswith("postgres"):
            assert carried_seq(again) == carried_seq(newest), "the seq was not taken again: the test proves less"
        # Ids that parse, none of them a stored message's: the same seq with
        # another random part, the deleted message's, the largest seq an id
        # carries, an older form.
        strangers = [other_random_part(first), newest, "ffffffff-ffff-8fff-bfff-ffffffffffff",
                     str(uuid.uuid4()), first[:14] + ("4" if first[14] != "4" else "8") + first[15:]]
        for stranger in strangers:
            for call in (store.messages.get, store.messages.mute, store.messages.remove,
                         lambda message_id: store.messages.respond(message_id, "ok")):
                with pytest.raises(outlive.NotFoundError):
                    call(stranger)
        assert store.messages.ids() == [first, again]
        assert [store.messages.get(message_id).title for message_id in (first, again)] == ["first", "again"]


def test_a_stored_id_that_does_not_match_its_seq_is_not_found_and_breaks_nothing(tmp_path):
    """The store is untrusted: a row whose id carries another seq (or is not
    an id) is found by no id; listing and the other messages work on."""
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        moved, kept, garbled = (store.messages.post("c", str(n)) for n in range(3))
    moved_to = moved[:17] + "9" + moved[18:]
    db = connect(directory)
    db.execute("UPDATE outlive_messages SET id = ? WHERE id = ?", (moved_to, moved))
    db.execute("UPDATE outlive_messages SET id = 'not an id' WHERE seq = ?", (carried_seq(garbled),))
    db.close()
    with outlive.Store(directory) as store:
        assert store.messages.ids() == [moved_to, kept, "not an id"]
        for stranger in (moved, moved_to, garbled):
            with pytest.raises(outlive.NotFoundError):
                store.messages.get(stranger)
            with pytest.raises(outlive.NotFoundError):
                store.messages.remove(stranger)
        with pytest.raises(outlive.InvalidArgumentError):
            store.messages.get("not an id")
        store.messages.remove(kept)
        assert store.messages.ids() == [moved_to, "not an id"]
        assert len(store.messages) == 2


def test_ids_carry_seqs_up_to_60_bits_and_a_message_of_a_larger_seq_gets_a_random_id(tmp_path):
    """The seq comes from the counted mark here (an empty queue whose mark
    was moved up): every bit of the seq is in the id, and past 60 bits the
    message is found through the index of the other ids."""
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        store.messages.remove(store.messages.post("c", "first"))
    for mark in (2**40 + 4094, 2**60 - 2, 2**60 + 6):
        db = connect(directory)
        db.execute("UPDATE outlive_message_counted SET seq = ?", (mark,))
        db.close()
        with outlive.Store(directory) as store:
            message_id = store.messages.post("c", str(mark), choices=[("ok", "OK")])
            assert stored(directory, "SELECT seq, id FROM outlive_messages") == [(mark + 1, message_id)]
            if mark + 1 < 2**60:
                assert carried_seq(message_id) == mark + 1
            else:
                assert uuid.UUID(message_id).version == 4
            assert store.messages.ids() == [message_id]
            assert store.messages.get(message_id).title == str(mark)
            store.messages.respond(message_id, "ok")
            store.messages.remove(message_id)
            with pytest.raises(outlive.NotFoundError):
                store.messages.get(message_id)
            assert len(store.messages) == 0


def test_posters_on_two_handles_and_threads_give_every_message_a_new_seq_and_id_and_exact_counts(location):
    """A post reuses what its handle's last post read while the store's data
    version says nothing was committed since: the other handle's posts, its
    removals and the folds of the counts are commits that make it read them
    again; posts of threads sharing one commit (a group) read them too."""
    with outlive.Store(location) as one, outlive.Store(location) as other:
        posted, in_b = [], set()
        for n in range(120):
            posted.append(one.messages.post("a" if n % 5 else "b", f"one {n}"))
            if n % 5 == 0:
                in_b.add(posted[-1])
            if n % 3 == 0:
                posted.append(other.messages.post("a", f"other {n}"))
            if n % 7 == 0:
                other.messages.remove(posted.pop())
        errors = []

        def poster(label):
            try:
                for n in range(40):
                    posted.append(one.messages.post("a", f"{label} {n}"))
            except Exception as error:  # reported below
                errors.append(error)

        threads = [threading.Thread(target=poster, args=(label,)) for label in ("x", "y", "z")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert len(set(posted)) == len(posted)
        for store in (one, other):
            assert sorted(store.messages.ids()) == sorted(posted)
            assert len(store.messages) == len(posted)
            assert sorted(store.messages.ids(category="b")) == sorted(in_b.intersection(posted))
        if not location.startswith("postgres"):
            seqs = [carried_seq(message_id) for message_id in one.messages.ids()]
            assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        # The cap counts them all: the category is full at what it holds.
        held = len(one.messages.ids(category="a"))
        for store in (one, other):
            store.messages.set_category_limit(held)
            with pytest.raises(outlive.LimitError):
                store.messages.post("a", "over the limit")
        other.messages.set_category_limit(held + 1)
        other.messages.post("a", "the last one")
        with pytest.raises(outlive.LimitError):
            other.messages.post("a", "over the limit")
