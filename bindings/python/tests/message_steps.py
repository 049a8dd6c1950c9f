"""Undoes steps of the messages schema in a store's file (SQLite), for the
tests that make a store of an earlier version: each helper runs inside the
caller's transaction, the newest step first."""

# The state index as steps 3 and 4 made it, in the exact text the schema
# check at open compares.
STATE_INDEX_BEFORE_STEP_5 = "CREATE INDEX outlive_messages_state ON outlive_messages(removed, handled, presented)"


def undo_step_5(db):
    """Every message in the state index again, the waiting ones too."""
    db.execute("DROP INDEX outlive_messages_state")
    db.execute(STATE_INDEX_BEFORE_STEP_5)
    db.execute("UPDATE outlive_schema SET version = 4 WHERE component = 'messages'")
