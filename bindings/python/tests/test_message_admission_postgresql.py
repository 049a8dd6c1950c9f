"""A message post on PostgreSQL (messages step 6): its insert admits the
message itself (`outlive_message_admit`: its seq, its count, the category's
limit), so that a post is one round trip; and constraint triggers check the
runs of a presentation lock and of a response claim where foreign keys did
(each post queued both keys' checks). The limit and the damage a post meets
give the same statuses and words as on SQLite. Rows of runs and claims are
written from psql with no store open, so that no liveness check ends the runs
made by hand."""
import os
import sqlite3

import pytest

import outlive
from conftest import psql, store_location
from test_task_runner_postgresql import claim_during_removal, refused, register

LARGEST_SEQ = 2**63 - 1
FULL = ('category "sync" holds 2 messages, its limit; remove messages or raise the limit '
        '(outlive_messages_set_category_limit)')
REFUSED_LOCK = 'which is not in table "outlive_runs"'
REFUSED_REMOVAL = 'still holds messages of table "outlive_messages"'


@pytest.fixture
def location(tmp_path):
    return store_location("postgresql", tmp_path)


def run_sql(location, sql):
    """sql in the store's tables, on either engine."""
    if location.startswith("postgres"):
        return psql(location, sql)
    db = sqlite3.connect(os.path.join(location, "outlive.db"), isolation_level=None)
    try:
        rows = db.execute(sql).fetchall()
        return str(rows[-1][0]) if rows else None
    finally:
        db.close()


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_full_category_refuses_a_post_in_the_same_words_on_both_engines_and_stores_nothing(kind, tmp_path):
    location = store_location(kind, tmp_path)
    with outlive.Store(location) as store:
        store.messages.set_category_limit(2)
        first = store.messages.post("sync", "One", choices=[("ok", "OK")])
        store.messages.post("sync", "Two", choices=[("ok", "OK")])
        with pytest.raises(outlive.errors.LimitError) as error:
            store.messages.post("sync", "Three", choices=[("ok", "OK")])
        assert error.value.message == FULL
        assert len(store.messages.ids(category="sync")) == 2
        # Other categories are admitted on their own; a removal makes room.
        store.messages.post("auth", "Other", choices=[("ok", "OK")])
        store.messages.remove(first)
        store.messages.post("sync", "Three", choices=[("ok", "OK")])
        assert len(store.messages.ids(category="sync")) == 2
        assert len(store.messages) == 3


def test_the_admission_counts_each_post_into_its_category(location):
    with outlive.Store(location) as store:
        for index in range(5):
            store.messages.post("a" if index % 2 else "b", f"m{index}")
        assert psql(location, "SELECT string_agg(category || '=' || count, ',' ORDER BY category) FROM outlive_message_categories") == "a=2,b=3"
        # Seqs follow each other in posting order.
        assert psql(location, "SELECT string_agg(seq::text, ',' ORDER BY seq) FROM outlive_messages") == "1,2,3,4,5"


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_store_whose_newest_message_has_the_largest_seq_refuses_a_post_as_damaged(kind, tmp_path):
    location = store_location(kind, tmp_path)
    with outlive.Store(location) as store:
        store.messages.post("sync", "One")
    run_sql(location, f"UPDATE outlive_messages SET seq = {LARGEST_SEQ}")
    with outlive.Store(location) as store:
        with pytest.raises(outlive.errors.CorruptError) as error:
            store.messages.post("sync", "Two")
        assert "largest possible order number" in str(error.value)
    assert run_sql(location, "SELECT count(*) FROM outlive_messages") == "1"
    if kind == "postgresql":
        assert psql(location, "SELECT count FROM outlive_message_categories WHERE category = 'sync'") == "1"


def test_an_admission_function_replaced_in_the_schema_is_refused_at_open(location):
    with outlive.Store(location) as store:
        store.messages.post("sync", "One")
    # One that admits every message whatever its category holds.
    psql(location, """
        CREATE OR REPLACE FUNCTION outlive_message_admit(admitted text, cap bigint) RETURNS bigint LANGUAGE plpgsql
            AS $$ BEGIN RETURN (SELECT coalesce(max(seq), 0) + 1 FROM outlive_messages); END $$""")
    with pytest.raises(outlive.errors.CorruptError, match="did not make"):
        outlive.Store(location)


def test_a_function_of_the_admissions_name_and_source_and_other_arguments_is_refused_at_open(location):
    with outlive.Store(location) as store:
        store.messages.post("sync", "One")
    # The declared source word for word, beside the declared function.
    psql(location, """
        DO $$ BEGIN
            EXECUTE format('CREATE FUNCTION outlive_message_admit(admitted text, cap integer) RETURNS bigint LANGUAGE plpgsql AS %L',
                (SELECT prosrc FROM pg_proc WHERE proname = 'outlive_message_admit'
                    AND pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())));
        END $$""")
    assert psql(location, "SELECT count(*) FROM pg_proc WHERE proname = 'outlive_message_admit' "
                          "AND pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())") == "2"
    with pytest.raises(outlive.errors.CorruptError, match="did not make"):
        outlive.Store(location)


def stored_message(location):
    with outlive.Store(location) as store:
        return store.messages.post("sync", "Claimed", choices=[("ok", "OK")])


def runs_of(location, message):
    return psql(location, f"SELECT coalesce(locking_run, '-') || ' ' || coalesce(responding_run, '-') FROM outlive_messages WHERE id = '{message}'")


@pytest.mark.parametrize("column", ["locking_run", "responding_run"])
def test_a_lock_or_claim_by_a_run_the_store_does_not_have_is_refused_and_changes_nothing(location, column):
    message = stored_message(location)
    assert REFUSED_LOCK in refused(location, f"UPDATE outlive_messages SET {column} = 'no-such-run' WHERE id = '{message}'")
    assert runs_of(location, message) == "- -"
    # A registered run's is taken; its release (NULL) checks nothing.
    register(location, "r1")
    psql(location, f"UPDATE outlive_messages SET {column} = 'r1' WHERE id = '{message}'")
    assert runs_of(location, message) == ("r1 -" if column == "locking_run" else "- r1")
    psql(location, f"UPDATE outlive_messages SET {column} = NULL WHERE id = '{message}'")
    assert runs_of(location, message) == "- -"


@pytest.mark.parametrize("column", ["locking_run", "responding_run"])
def test_a_runs_row_goes_only_once_no_message_names_it(location, column):
    message = stored_message(location)
    register(location, "r1")
    psql(location, f"UPDATE outlive_messages SET {column} = 'r1' WHERE id = '{message}'")
    assert REFUSED_REMOVAL in refused(location, "DELETE FROM outlive_runs WHERE run_id = 'r1'")
    assert psql(location, "SELECT count(*) FROM outlive_runs WHERE run_id = 'r1'") == "1"
    # Checked at the commit: the row may go first, its locks freed after, in one transaction.
    psql(location, f"""
        BEGIN;
        DELETE FROM outlive_runs WHERE run_id = 'r1';
        UPDATE outlive_messages SET {column} = NULL WHERE {column} = 'r1';
        COMMIT;""")
    assert psql(location, "SELECT count(*) FROM outlive_runs WHERE run_id = 'r1'") == "0"
    assert runs_of(location, message) == "- -"


def test_a_lock_waits_for_a_removal_under_way_of_its_run_and_is_refused_when_it_commits(location):
    message = stored_message(location)
    register(location, "r1")
    lock = f"UPDATE outlive_messages SET locking_run = 'r1' WHERE id = '{message}'"
    assert REFUSED_LOCK in claim_during_removal(location, lock, "r1")
    assert runs_of(location, message) == "- -"


# An older library's post (before step 6), in the store's schema: the
# newest seq read, the row inserted with the next one, its category counted.
OLDER_POST = """
    SELECT pg_advisory_xact_lock(oid::integer, 0) FROM pg_namespace WHERE nspname = current_schema();
    INSERT INTO outlive_messages(id, seq, created, category, title, choices, auto_remove, processed_by,
        presented, handled, removed, requires_end)
        SELECT gen_random_uuid()::text, coalesce((SELECT max(seq) FROM outlive_messages), 0) + 1, 0, 'sync', 'older', '', 0, '', 0, 0, 0, 0;
    INSERT INTO outlive_message_categories(category, count) VALUES ('sync', 1)
        ON CONFLICT(category) DO UPDATE SET count = outlive_message_categories.count + 1;
"""


def test_an_older_librarys_posts_beside_this_ones_during_an_upgrade_are_numbered_and_counted_once(location):
    with outlive.Store(location) as store:
        store.messages.set_category_limit(6)
        mine = [store.messages.post("sync", "mine")]
        psql(location, "BEGIN;" + OLDER_POST + "COMMIT;")
        mine.append(store.messages.post("sync", "mine"))
        psql(location, "BEGIN;" + OLDER_POST + "COMMIT;")
        mine.append(store.messages.post("sync", "mine"))
        assert psql(location, "SELECT string_agg(title, ',' ORDER BY seq) FROM outlive_messages") == "mine,older,mine,older,mine"
        assert psql(location, "SELECT string_agg(seq::text, ',' ORDER BY seq) FROM outlive_messages") == "1,2,3,4,5"
        assert psql(location, "SELECT count FROM outlive_message_categories WHERE category = 'sync'") == "5"
        # The limit counts the older library's posts too.
        store.messages.post("sync", "mine")
        with pytest.raises(outlive.errors.LimitError):
            store.messages.post("sync", "mine")


# Messages step 5 on PostgreSQL, as step 6 found it: the runs' foreign keys,
# every message in the scope's index, no admission.
STEP_5 = """
    DROP TRIGGER outlive_messages_runs_registered ON outlive_messages;
    DROP FUNCTION outlive_messages_runs_registered();
    DROP TRIGGER outlive_runs_messages_released ON outlive_runs;
    DROP FUNCTION outlive_runs_messages_released();
    DROP FUNCTION outlive_message_admit(text, bigint);
    ALTER TABLE outlive_messages ADD FOREIGN KEY (locking_run) REFERENCES outlive_runs(run_id) DEFERRABLE INITIALLY DEFERRED;
    ALTER TABLE outlive_messages ADD FOREIGN KEY (responding_run) REFERENCES outlive_runs(run_id) DEFERRABLE INITIALLY DEFERRED;
    DROP INDEX outlive_messages_scope;
    CREATE INDEX outlive_messages_scope ON outlive_messages(scope, seq);
    UPDATE outlive_schema SET version = 5 WHERE component = 'messages';
"""


def test_a_postgresql_store_at_messages_step_5_migrates_keeping_its_messages_counts_and_order(location):
    with outlive.Store(location) as store:
        kept = [store.messages.post("sync", f"m{index}", scope="account") for index in range(3)]
    psql(location, STEP_5)
    assert psql(location, "SELECT count(*) FROM pg_constraint WHERE conrelid = 'outlive_messages'::regclass AND contype = 'f'") == "2"
    with outlive.Store(location) as store:
        added = store.messages.post("sync", "after", scope="account")
        assert store.messages.ids(scope="account") == kept + [added]
        assert len(store.messages.ids(category="sync")) == 4
    assert psql(location, "SELECT version FROM outlive_schema WHERE component = 'messages'") == "6"
    assert psql(location, "SELECT count(*) FROM pg_constraint WHERE conrelid = 'outlive_messages'::regclass AND contype = 'f'") == "0"
    assert psql(location, "SELECT count FROM outlive_message_categories WHERE category = 'sync'") == "4"
    assert psql(location, f"SELECT seq FROM outlive_messages WHERE id = '{added}'") == "4"
    assert psql(location, "SELECT indexdef LIKE '%WHERE (scope IS NOT NULL)' FROM pg_indexes WHERE indexname = 'outlive_messages_scope'") == "t"
