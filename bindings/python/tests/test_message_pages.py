"""What a post writes. On SQLite since step 5 of the messages schema a new
message is not in the state index: the index holds the messages that left the
state a post gives (presented, answered, removed), which the scans at every
open and resync read; the scans of waiting messages (a presenter or an
auto-resolver added, `reoffer`) read the table. A post then writes one page of
the write-ahead log rather than two; what presenters, response handlers and
`reoffer` find stays as it was, on both engines. A store of the previous step
migrates with its messages in every state."""
import pytest

import outlive
from conftest import dispatch_until, store_location
from message_steps import undo_step_5
from store_file import stored, take_back, wal_frames

CHOICES = [("ok", "OK"), ("no", "No")]


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path):
    return store_location(request.param, tmp_path)


def post_in_every_state(store, count):
    """Posts `count` messages; every fifth from the second is muted and every
    fifth from the third answered as it is posted (each enters the state
    index at its first change of state), and after the last post every
    seventh from the fourth that is still waiting is muted (long after its
    post, among messages posted since). Returns (ids, waiting ids, answered
    ids), in posting order."""
    ids, muted, answered = [], set(), set()
    for n in range(count):
        message = store.messages.post("pages", f"m{n}", choices=CHOICES)
        ids.append(message)
        if n % 5 == 1:
            store.messages.mute(message)
            muted.add(message)
        elif n % 5 == 2:
            store.messages.respond(message, "ok")
            answered.add(message)
    for n in range(3, count, 7):
        if ids[n] not in muted and ids[n] not in answered:
            store.messages.mute(ids[n])
            muted.add(ids[n])
    waiting = [m for m in ids if m not in muted and m not in answered]
    return ids, waiting, [m for m in ids if m in answered]


def plan(directory, stage):
    """SQLite's plan for a scan of the messages in `stage` (MessageTable.Stage)."""
    return " ".join(detail for (_, _, _, detail) in stored(
        directory, f"EXPLAIN QUERY PLAN SELECT id FROM outlive_messages WHERE {stage} ORDER BY seq"))


def test_a_handle_that_subscribes_later_finds_every_message_by_its_state(location):
    with outlive.Store(location) as store, outlive.Store(location, process="other") as other:
        # Past two folds of the counts (every 32 posts on SQLite), which the
        # scans must not depend on.
        ids, waiting, answered = post_in_every_state(store, 74)
        handled, offered = [], []
        other.messages.add_response_handler("log", lambda message: handled.append(message.id) or False)
        assert dispatch_until(other, lambda: len(handled) == len(answered))
        decline = [True]

        def present(message, presentation):
            offered.append(message.id)
            presentation.finish(presented=not decline[0])

        other.messages.add_presenter("p", present)
        assert dispatch_until(other, lambda: len(offered) == len(waiting))
        other.loop.dispatch(timeout=0.2)
        assert handled == answered
        assert offered == waiting
        # Declined, each is offered again after reoffer: it reads the waiting
        # messages (from the table, not the index) with their presenters.
        decline[0] = False
        other.messages.reoffer("p")
        assert dispatch_until(other, lambda: len(offered) == 2 * len(waiting))
        assert offered[len(waiting):] == waiting
        assert all(other.messages.get(m).presented for m in waiting)


def test_the_scans_at_every_open_read_the_state_index_and_those_of_waiting_messages_the_table(tmp_path):
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        post_in_every_state(store, 20)
    (index,) = stored(directory, "SELECT sql FROM sqlite_schema WHERE name = 'outlive_messages_state'")[0]
    assert index.endswith("WHERE presented = 1 OR handled = 1 OR removed = 1")
    # Answered and removed (every open, every resync): through the index.
    for stage in ("removed = 0 AND handled = 1", "removed = 1"):
        assert "USING INDEX outlive_messages_state" in plan(directory, stage), stage
    # Waiting and unanswered: the table in posting order, no sort.
    for stage in ("removed = 0 AND handled = 0 AND presented = 0", "removed = 0 AND handled = 0"):
        assert plan(directory, stage) == "SCAN outlive_messages", stage


def test_a_post_writes_one_page_to_the_write_ahead_log_on_sqlite(tmp_path):
    directory = str(tmp_path / "store")
    posts = 60
    with outlive.Store(directory, durability="normal") as store:
        store.messages.post("pages", "first", choices=CHOICES)
        before = wal_frames(directory)
        for n in range(posts):
            store.messages.post("pages", f"m{n}", choices=CHOICES)
        frames = wal_frames(directory) - before
    # The table's page; a fold every 32 posts writes the counter and the
    # mark, and now and then the file grows. The state index's page was a
    # second frame on every post.
    assert posts <= frames < 1.4 * posts


def test_a_store_of_the_previous_step_migrates_and_its_messages_are_found_by_their_state(tmp_path):
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        ids, waiting, answered = post_in_every_state(store, 44)
    take_back(directory, undo_step_5)

    with outlive.Store(directory) as store:
        assert store.messages.ids() == ids
        later = store.messages.post("pages", "later", choices=CHOICES)
        offered, handled = [], []
        store.messages.add_response_handler("log", lambda message: handled.append(message.id) or False)
        store.messages.add_presenter("p", lambda message, presentation: offered.append(message.id) or presentation.finish())
        assert dispatch_until(store, lambda: len(offered) == len(waiting) + 1 and len(handled) == len(answered))
        assert offered == waiting + [later]
        assert handled == answered

    assert stored(directory, "SELECT version FROM outlive_schema WHERE component = 'messages'") == [(6,)]
    (index,) = stored(directory, "SELECT sql FROM sqlite_schema WHERE name = 'outlive_messages_state'")[0]
    assert index.endswith("WHERE presented = 1 OR handled = 1 OR removed = 1")
    assert stored(directory, "PRAGMA integrity_check") == [("ok",)]
