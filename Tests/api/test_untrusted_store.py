"""A store's database file is untrusted input. This generator makes a real
store with rows in every table (build/tests/store_exerciser populate: kv,
tasks with a running attempt and the runner claim, signals and consumers,
messages with a presenter's lock, durable interactions with a claim, runs,
watchers, the change feed, schema versions), then damages it in every way an
attacker who can write the file could: each column of each table set to each
kind of wrong value (types swapped, NULL even where the schema says NOT NULL,
negatives, huge numbers, long strings, `../` paths, NUL bytes, invalid
UTF-8), extra or changed schema objects (triggers, a recursive trigger, a
view standing in for a table, indexes, tables), schema versions, run ids,
and files of the store replaced by FIFOs. For each damaged store it runs, each
in a child process with a time limit, every C entry point that reads or
consumes stored data (store_exerciser exercise) and the `outlive` command,
and checks: no death by a signal, no hang, only documented statuses and exit
codes, a key walk that ends, and no file touched outside the store (a canary
directory next to it, its files' names, sizes and mtimes compared).

`make test` runs every schema, run id and file case, and each column with a
rotating share of the value kinds (every kind appears) and the extremes on
every number (where arithmetic could trap); OUTLIVE_UNTRUSTED_FULL=1
runs the whole matrix (each column with each kind, each command)."""
import concurrent.futures
import contextlib
import os
import pathlib
import re
import shutil
import sqlite3
import stat
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build")
EXERCISER = os.path.join(BUILD, "tests", "store_exerciser")
CLI = os.path.join(BUILD, "outlive")
FULL = os.environ.get("OUTLIVE_UNTRUSTED_FULL") == "1"
TIMEOUT = 20

# Every status the header declares (a damaged store may be refused with any of
# them, e.g. a damaged category count makes a post OUTLIVE_E_LIMIT); anything
# else (a crash's garbage, an unknown number) is a failure.
STATUSES = set(re.findall(r"\b(OUTLIVE_OK|OUTLIVE_E_[A-Z_]+)\b",
                          re.search(r"typedef enum outlive_status \{(.*?)\} outlive_status;",
                                    pathlib.Path(ROOT, "include", "outlive.h").read_text(), re.S).group(1)))
# What opening a store whose rows (not schema) are damaged may answer.
OPEN_STATUSES = {"OUTLIVE_OK", "OUTLIVE_E_CORRUPT", "OUTLIVE_E_VERSION"}
CLI_EXIT_CODES = {0, 1, 3}  # docs/cli.md
COMMANDS = ["inspect", "tasks", "schedules", "signals", "messages", "kv"]

TRAVERSAL = "../../canary/victim"
# SQL expressions for each kind of damage; each is written as SQL so that the
# stored type is exactly the one named (Python's driver would convert).
VALUES = {
    "null": "NULL",
    "negative": "-1",
    "zero": "0",
    "huge": "9223372036854775807",
    "most_negative": "-9223372036854775808",
    "real": "1.5",
    "huge_real": "1e308",
    "text": "'x'",
    "long_text": "printf('%.*c', 200000, 'a')",
    "traversal": f"'{TRAVERSAL}'",
    "traversal_nul": f"CAST(x'{TRAVERSAL.encode().hex()}00782e6c6f636b' AS TEXT)",
    "invalid_utf8": "CAST(x'ff41fe' AS TEXT)",
    "nul_text": "CAST(x'61006200' AS TEXT)",
    "blob": "x'00ff'",
    "blob_of_name": "CAST('exerciser_task' AS BLOB)",
    "empty_blob": "x''",
}
TABLE_COMMANDS = {
    "outlive_kv": ["kv"], "outlive_tasks": ["tasks"], "outlive_task_runner": ["tasks"], "outlive_task_counted": ["tasks"],
    "outlive_signals": ["signals"],
    "outlive_signal_consumers": ["signals"], "outlive_messages": ["messages"],
    "outlive_message_categories": ["messages"], "outlive_message_presenters": ["messages"],
    "outlive_message_counted": ["messages"],
    "outlive_schedules": ["schedules"],
}


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    for program in (EXERCISER, CLI):
        if not os.path.exists(program):
            pytest.skip(f"{program} is not built (make c-tests cli)")
    directory = str(tmp_path_factory.mktemp("untrusted") / "base")
    result = subprocess.run([EXERCISER, "populate", directory], capture_output=True, text=True, timeout=60)
    assert result.returncode == -9, f"populate did not die by SIGKILL as planned: {result.returncode} {result.stderr}"
    with opened(os.path.join(directory, "outlive.db")) as db:
        empty = [t for (t,) in db.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")
                 if db.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] == 0]
    assert not empty, f"the populated store should have rows in every table: {empty} are empty"
    return directory


def columns(database):
    """(table, column, declared type) of every column of every table."""
    with opened(database) as db:
        tables = [t for (t,) in db.execute("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")]
        return [(t, c[1], c[2].upper()) for t in tables for c in db.execute(f'PRAGMA table_info("{t}")')]


# ---------------------------------------------------------------- damaging

def opened(database):
    """A connection closed when the block ends. sqlite3's own context manager
    only commits: the connection lives on until the cyclic collector frees it,
    and that close checkpoints and deletes the -wal file at a random moment,
    under a copy of the base store running in another thread."""
    return contextlib.closing(sqlite3.connect(database))


def connect(database):
    db = sqlite3.connect(database, isolation_level=None)
    db.execute("PRAGMA foreign_keys = OFF")
    return db


def set_column(database, table, column, expression):
    """Sets `column` of the rows of `table` to `expression`, past the
    constraints Outlive's schema declares (NOT NULL is lifted for the write and
    the table's SQL put back, as an attacker with a hex editor would), with
    Outlive's triggers out of the way meanwhile."""
    db = connect(database)
    triggers = db.execute("SELECT name, sql FROM sqlite_schema WHERE type = 'trigger'").fetchall()
    for name, _ in triggers:
        db.execute(f'DROP TRIGGER "{name}"')
    original = db.execute("SELECT sql FROM sqlite_schema WHERE name = ?", (table,)).fetchone()[0]
    relaxed = original.replace("NOT NULL", "") if expression == "NULL" and original and "NOT NULL" in original else None
    if relaxed:
        rewrite_schema_sql(db, table, relaxed)
        db.close()
        db = connect(database)
    try:
        db.execute(f'UPDATE "{table}" SET "{column}" = {expression}')
    except sqlite3.IntegrityError:
        # A unique column: damage one row only (by rowid when the rows share a
        # value, as NULL unique keys of tasks do).
        try:
            db.execute(f'UPDATE "{table}" SET "{column}" = {expression} WHERE "{column}" IS '
                       f'(SELECT "{column}" FROM "{table}" ORDER BY "{column}" LIMIT 1)')
        except sqlite3.IntegrityError as error:
            if "UNIQUE" not in str(error):
                raise
            db.execute(f'UPDATE "{table}" SET "{column}" = {expression} WHERE rowid = (SELECT min(rowid) FROM "{table}")')
    if relaxed:
        rewrite_schema_sql(db, table, original)
        db.close()
        db = connect(database)
    for _, sql in triggers:
        db.execute(sql)
    db.close()


def rewrite_schema_sql(db, name, sql):
    version = db.execute("PRAGMA schema_version").fetchone()[0]
    db.execute("PRAGMA writable_schema = ON")
    db.execute("UPDATE sqlite_schema SET sql = ? WHERE name = ?", (sql, name))
    db.execute(f"PRAGMA schema_version = {version + 1}")
    db.execute("PRAGMA writable_schema = OFF")


def run_sql(*statements):
    def damage(database):
        db = connect(database)
        for statement in statements:
            db.execute(statement)
        db.close()
    return damage


def change_trigger_body(database):
    db = connect(database)
    name, sql = db.execute("SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' ORDER BY name LIMIT 1").fetchone()
    db.execute(f'DROP TRIGGER "{name}"')
    db.execute(sql.replace("RAISE(ABORT,", "RAISE(FAIL,"))
    db.close()


def drop_trigger(database):
    db = connect(database)
    (name,) = db.execute("SELECT name FROM sqlite_schema WHERE type = 'trigger' ORDER BY name LIMIT 1").fetchone()
    db.execute(f'DROP TRIGGER "{name}"')
    db.close()


def replace_table_sql(table, old, new):
    def damage(database):
        db = connect(database)
        sql = db.execute("SELECT sql FROM sqlite_schema WHERE name = ?", (table,)).fetchone()[0]
        assert old in sql
        rewrite_schema_sql(db, table, sql.replace(old, new))
        db.close()
    return damage


RECURSION = "(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c)"
DEAD_RUN = "(SELECT run_id FROM outlive_runs LIMIT 1)"

# Schema objects an attacker adds or changes: open refuses each (CORRUPT)
# before anything could fire.
SCHEMA_CASES = {
    "trigger_on_kv_writes": run_sql("CREATE TRIGGER evil AFTER INSERT ON outlive_kv BEGIN DELETE FROM outlive_tasks; END"),
    "trigger_on_runs": run_sql("CREATE TRIGGER evil BEFORE INSERT ON outlive_runs BEGIN DELETE FROM outlive_kv; END"),
    "recursive_trigger_at_open": run_sql(f"CREATE TRIGGER evil BEFORE INSERT ON outlive_runs BEGIN SELECT {RECURSION}; END"),
    "trigger_on_delete_of_runs": run_sql("CREATE TRIGGER evil AFTER DELETE ON outlive_runs BEGIN INSERT INTO outlive_runs SELECT * FROM outlive_runs; END"),
    "view_for_kv": run_sql("DROP TABLE outlive_kv", "CREATE VIEW outlive_kv AS SELECT 'k' AS key, x'00' AS value"),
    "recursive_view_for_schema": run_sql("ALTER TABLE outlive_schema RENAME TO kept",
                                         f"CREATE VIEW outlive_schema AS SELECT component, version FROM kept WHERE {RECURSION} > 0"),
    "recursive_view_for_runs": run_sql("DROP TABLE outlive_runs",
                                       f"CREATE VIEW outlive_runs AS SELECT 'r' AS run_id, 'p' AS process, 1 AS pid, {RECURSION} AS started"),
    "extra_view": run_sql("CREATE VIEW evil AS SELECT * FROM outlive_kv"),
    "extra_table": run_sql("CREATE TABLE evil(x)"),
    "extra_index_on_expression": run_sql("CREATE INDEX evil ON outlive_kv(length(value))"),
    "extra_index_on_tasks": run_sql("CREATE INDEX evil ON outlive_tasks(handler_name, id)"),
    "dropped_index": run_sql("DROP INDEX outlive_tasks_ready"),
    "dropped_trigger": drop_trigger,
    "changed_trigger_body": change_trigger_body,
    "changed_table_sql": replace_table_sql("outlive_kv", "value BLOB NOT NULL", "value BLOB NOT NULL, extra"),
    "kv_table_without_primary_key": run_sql("DROP TABLE outlive_kv", "CREATE TABLE outlive_kv(key TEXT, value BLOB)"),
    "no_schema_table": run_sql("DROP TABLE outlive_schema"),
    "component_at_version_0_with_its_tables": run_sql("UPDATE outlive_schema SET version = 0 WHERE component = 'kv'"),
    "component_at_version_minus_1": run_sql("UPDATE outlive_schema SET version = -1 WHERE component = 'kv'"),
    "component_version_text": run_sql("UPDATE outlive_schema SET version = 'abc' WHERE component = 'tasks'"),
    "component_version_real": run_sql("UPDATE outlive_schema SET version = 1.5 WHERE component = 'tasks'"),
    "component_version_blob": run_sql("UPDATE outlive_schema SET version = x'01' WHERE component = 'store'"),
    "component_name_blob": run_sql("UPDATE outlive_schema SET component = CAST(component AS BLOB) WHERE component = 'kv'"),
    "component_missing": run_sql("DELETE FROM outlive_schema WHERE component = 'signals'"),
    "application_id_foreign": run_sql("PRAGMA application_id = 5"),
}
# Stored versions a newer Outlive could have written: VERSION, not CORRUPT.
VERSION_CASES = {
    "component_from_the_future": run_sql("UPDATE outlive_schema SET version = 1000000 WHERE component = 'kv'"),
    "component_version_huge": run_sql("UPDATE outlive_schema SET version = 9223372036854775807 WHERE component = 'kv'"),
    "unknown_component": run_sql("INSERT INTO outlive_schema(component, version) VALUES ('evil', 1)"),
    "format_from_the_future": run_sql("PRAGMA user_version = 99"),
}
# Registered runs whose ids are no run id Outlive writes: open succeeds, ends
# them in the database, and never names a file after them.
RUN_ID_CASES = {
    f"run_id_{name}": run_sql(f"INSERT INTO outlive_runs(run_id, process, pid, started) VALUES ({value}, 'evil', 1, 0)")
    for name, value in {
        "traversal": f"'{TRAVERSAL}'",
        "traversal_nul": VALUES["traversal_nul"],
        "traversal_slash": "'../../../../../../../../tmp/x'",
        "uppercase_uuid": "'2FCA755F-4C1B-4A2B-852D-FA96A8D35271'",
        "blob": "x'2e2e2f2e2e2f63616e6172792f76696374696d'",
        "integer": "42",
        "invalid_utf8": VALUES["invalid_utf8"],
    }.items()
}
# One of the base's dead runs (it has two: the seed and a watcher of it).
RUN_ID_CASES["dead_run_id_traversal"] = run_sql(
    f"UPDATE outlive_runs SET run_id = '{TRAVERSAL}' WHERE run_id = (SELECT min(run_id) FROM outlive_runs)")
RUN_ID_CASES["task_runner_traversal"] = lambda database: set_column(database, "outlive_task_runner", "run_id", f"'{TRAVERSAL}'")


def fifo(name):
    def damage(database):
        path = os.path.join(os.path.dirname(database), name)
        if os.path.exists(path):
            os.unlink(path)
        os.mkfifo(path, 0o600)
    return damage


def lock_fifo(database):
    with opened(database) as db:
        (run,) = db.execute("SELECT run_id FROM outlive_runs").fetchone()
    path = os.path.join(os.path.dirname(database), "runs", run + ".lock")
    os.unlink(path)
    os.mkfifo(path, 0o600)


# Files of the store replaced: open never blocks; PERMISSION for its own files.
FILE_CASES = {
    "doorbell_fifo": (fifo("doorbell"), {"OUTLIVE_E_PERMISSION"}),
    "database_wal_fifo": (fifo("outlive.db-wal"), {"OUTLIVE_E_PERMISSION"}),
    "dead_run_lock_fifo": (lock_fifo, {"OUTLIVE_OK"}),
}


# ---------------------------------------------------------------- running

def snapshot(directory):
    found = {}
    for parent, _, files in os.walk(directory):
        for name in files:
            info = os.lstat(os.path.join(parent, name))
            found[os.path.relpath(os.path.join(parent, name), directory)] = (info.st_size, info.st_mtime_ns)
    return found


def run_case(base, work, name, damage, commands, open_statuses):
    """Damages a copy of the base store and runs everything on it; returns
    the list of what went wrong (empty: nothing)."""
    case = os.path.join(work, name)
    store = os.path.join(case, "store")
    canary = os.path.join(case, "canary")
    shutil.copytree(base, store)
    os.makedirs(canary)
    for file in ("victim", "victim.lock", "x.lock"):
        with open(os.path.join(canary, file), "w") as out:
            out.write("canary\n")
    before = snapshot(canary)
    problems = []
    try:
        damage(os.path.join(store, "outlive.db"))
    except sqlite3.Error as error:
        # A value SQLite cannot store there at all (a rowid that is no
        # integer, NULL in a WITHOUT ROWID key) is no damage a file can hold.
        if "datatype mismatch" in str(error) or ("NOT NULL" in str(error) and "=null" in name):
            shutil.rmtree(case, ignore_errors=True)
            return []
        return [f"{name}: the damage could not be written: {error}"]
    runs = [("exerciser", [EXERCISER, "exercise", store])] + [(c, [CLI, c, store]) for c in commands]
    for label, command in runs:
        try:
            result = subprocess.run(command, capture_output=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            problems.append(f"{name}: {label} did not end within {TIMEOUT} s (a hang)")
            continue
        output = result.stdout.decode(errors="replace")
        if result.returncode < 0:
            problems.append(f"{name}: {label} died by signal {-result.returncode}: "
                            f"{output[-300:]} {result.stderr.decode(errors='replace')[-300:]}")
            continue
        if label == "exerciser":
            lines = [line.split() for line in output.splitlines()]
            statuses = {words[0]: words[1] for words in lines if len(words) == 2}
            if result.returncode != 0:
                problems.append(f"{name}: exerciser exited {result.returncode}: {result.stderr.decode(errors='replace')[-300:]}")
            if statuses.get("open") not in open_statuses:
                problems.append(f"{name}: open returned {statuses.get('open')}, expected one of {sorted(open_statuses)}")
            unknown = {call: status for call, status in statuses.items() if status not in STATUSES}
            if unknown:
                problems.append(f"{name}: undocumented statuses {unknown}")
            if any(words[:2] == ["kv_walk", "LOOPED"] for words in lines):
                problems.append(f"{name}: the key walk did not end")
            if statuses.get("open") == "OUTLIVE_OK" and "closed" not in output:
                problems.append(f"{name}: the exerciser did not get to close the store")
        elif result.returncode not in CLI_EXIT_CODES:
            problems.append(f"{name}: outlive {label} exited {result.returncode}: {result.stderr.decode(errors='replace')[-300:]}")
    if snapshot(canary) != before:
        problems.append(f"{name}: files outside the store changed: {before} -> {snapshot(canary)}")
    outside = sorted(set(os.listdir(case)) - {"store", "canary"})
    if outside:
        problems.append(f"{name}: files created next to the store: {outside}")
    shutil.rmtree(case, ignore_errors=True)
    return problems


def run_all(base, tmp_path, cases):
    """cases: (name, damage, commands, open statuses); two at a time."""
    work = str(tmp_path)
    problems = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for found in pool.map(lambda case: run_case(base, work, *case), cases):
            problems.extend(found)
    return problems


def test_every_column_of_every_table_damaged_in_every_way_crashes_hangs_and_touches_nothing(base, tmp_path):
    kinds = list(VALUES)
    cases = []
    for index, (table, column, declared) in enumerate(columns(os.path.join(base, "outlive.db"))):
        # A rotating share of the kinds per column (each kind on about every 5th column), and the
        # extremes on every number (where arithmetic could trap); all kinds with FULL.
        chosen = kinds if FULL else [kinds[(index + step * 5) % len(kinds)] for step in range(3)]
        if not FULL and declared in ("INTEGER", "REAL", ""):
            chosen += [kind for kind in ("huge", "most_negative") if kind not in chosen]
        commands = COMMANDS if FULL else ["inspect"] + TABLE_COMMANDS.get(table, [])
        for kind in chosen:
            damage = (lambda t, c, e: lambda database: set_column(database, t, c, e))(table, column, VALUES[kind])
            cases.append((f"{table}.{column}={kind}", damage, commands, OPEN_STATUSES))
    assert len(cases) > 300 or not FULL
    problems = run_all(base, tmp_path, cases)
    assert not problems, f"{len(problems)} of {len(cases)} damaged stores went wrong:\n" + "\n".join(problems[:40])


def test_schema_objects_outlive_did_not_make_are_refused_at_open_as_corrupt(base, tmp_path):
    cases = [(name, damage, COMMANDS, {"OUTLIVE_E_CORRUPT"}) for name, damage in SCHEMA_CASES.items()]
    problems = run_all(base, tmp_path, cases)
    assert not problems, "\n".join(problems)


def test_schema_versions_of_a_newer_outlive_are_refused_as_version(base, tmp_path):
    cases = [(name, damage, ["inspect"], {"OUTLIVE_E_VERSION"}) for name, damage in VERSION_CASES.items()]
    problems = run_all(base, tmp_path, cases)
    assert not problems, "\n".join(problems)


def test_run_ids_that_are_no_run_id_never_name_a_file(base, tmp_path):
    cases = [(name, damage, COMMANDS, {"OUTLIVE_OK"}) for name, damage in RUN_ID_CASES.items()]
    problems = run_all(base, tmp_path, cases)
    assert not problems, "\n".join(problems)


def test_store_files_replaced_by_fifos_never_block_an_open(base, tmp_path):
    cases = [(name, damage, ["inspect"], statuses) for name, (damage, statuses) in FILE_CASES.items()]
    problems = run_all(base, tmp_path, cases)
    assert not problems, "\n".join(problems)


def test_a_run_ended_in_the_database_is_gone_and_the_canary_kept(base, tmp_path):
    """The traversal run id is removed from outlive_runs by the open (ended in
    the database only), and the store still works for the next open."""
    store = str(tmp_path / "store")
    shutil.copytree(base, store)
    canary = tmp_path / "canary"
    canary.mkdir()
    (canary / "victim.lock").write_text("canary\n")
    RUN_ID_CASES["run_id_traversal"](os.path.join(store, "outlive.db"))
    for _ in range(2):
        result = subprocess.run([EXERCISER, "exercise", store], capture_output=True, text=True, timeout=TIMEOUT)
        assert "open OUTLIVE_OK" in result.stdout, result.stdout + result.stderr
    with opened(os.path.join(store, "outlive.db")) as db:
        assert db.execute("SELECT count(*) FROM outlive_runs WHERE run_id = ?", (TRAVERSAL,)).fetchone()[0] == 0
    assert (canary / "victim.lock").read_text() == "canary\n"


def test_a_task_whose_handler_name_is_a_blob_is_skipped_and_the_store_stays_writable(base, tmp_path):
    """The runner walks the handler names of ready tasks; a name stored as a
    blob sorted after every text and was found again for ever inside the write
    transaction (100 % CPU, every other process BUSY)."""
    store = str(tmp_path / "store")
    shutil.copytree(base, store)
    set_column(os.path.join(store, "outlive.db"), "outlive_tasks", "handler_name", VALUES["blob_of_name"])
    result = subprocess.run([EXERCISER, "exercise", store], capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 0 and "closed" in result.stdout, result.stdout + result.stderr
    assert "tasks_run_now OUTLIVE_OK" in result.stdout and "kv_set OUTLIVE_OK" in result.stdout
    # The damaged rows are still there, pending, for a person to look at.
    with opened(os.path.join(store, "outlive.db")) as db:
        assert db.execute("SELECT count(*) FROM outlive_tasks WHERE typeof(handler_name) = 'blob'").fetchone()[0] >= 1


def test_keys_that_are_not_utf8_or_hold_nul_are_skipped_by_the_key_walk(base, tmp_path):
    store = str(tmp_path / "store")
    shutil.copytree(base, store)
    run_sql("INSERT INTO outlive_kv VALUES (CAST(x'6b6579ff' AS TEXT), x'01')",
            "INSERT INTO outlive_kv VALUES (CAST(x'6100620063' AS TEXT), x'01')",
            "INSERT INTO outlive_kv VALUES (x'6b6579', x'01')",
            "INSERT INTO outlive_kv VALUES ('zz-after', x'01')")(os.path.join(store, "outlive.db"))
    result = subprocess.run([EXERCISER, "exercise", store], capture_output=True, text=True, timeout=TIMEOUT)
    # config/blob, config/name, other and zz-after: the damaged keys are skipped, the walk goes past them.
    assert "kv_walk ended after 4 keys" in result.stdout, result.stdout + result.stderr


def test_schema_versions_that_cannot_be_name_the_damage(base, tmp_path):
    """-1 trapped (SIGILL); 0 and 'abc' gave OUTLIVE_E_IO. Each is CORRUPT now,
    with a message that says what is wrong."""
    for damage, words in [("-1", "version -1"), ("0", "schema is not the one Outlive made"), ("'abc'", "text where")]:
        store = str(tmp_path / f"store{damage}")
        shutil.copytree(base, store)
        run_sql(f"UPDATE outlive_schema SET version = {damage} WHERE component = 'kv'")(os.path.join(store, "outlive.db"))
        result = subprocess.run([CLI, "inspect", store], capture_output=True, text=True, timeout=TIMEOUT)
        assert result.returncode == 1 and words in result.stderr, (damage, result.stderr)


def test_a_store_reached_through_a_symlinked_parent_opens(base, tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    result = subprocess.run([EXERCISER, "exercise", str(tmp_path / "link" / "store")], capture_output=True, text=True, timeout=TIMEOUT)
    assert "open OUTLIVE_OK" in result.stdout and "closed" in result.stdout, result.stdout + result.stderr
    assert "outlive.db" in os.listdir(real / "store")


def test_a_failing_open_leaves_nothing_it_created(base, tmp_path):
    """A planted link for the -wal file makes the open fail after it created
    the database, runs/ and so on: all of it goes again; what was there stays."""
    store = tmp_path / "store"
    store.mkdir(mode=0o700)
    (store / "outlive.db-wal").symlink_to(tmp_path / "elsewhere")
    result = subprocess.run([EXERCISER, "exercise", str(store)], capture_output=True, text=True, timeout=TIMEOUT)
    assert "open OUTLIVE_E_PERMISSION" in result.stdout, result.stdout + result.stderr
    assert sorted(os.listdir(store)) == ["outlive.db-wal"]
    assert not (tmp_path / "elsewhere").exists()
    # A FIFO for the doorbell in a new store: refused, and again nothing left.
    fresh = tmp_path / "fresh"
    fresh.mkdir(mode=0o700)
    os.mkfifo(fresh / "doorbell", 0o600)
    result = subprocess.run([EXERCISER, "exercise", str(fresh)], capture_output=True, text=True, timeout=TIMEOUT)
    assert "open OUTLIVE_E_PERMISSION" in result.stdout, result.stdout + result.stderr
    assert sorted(os.listdir(fresh)) == ["doorbell"] and stat.S_ISFIFO(os.lstat(fresh / "doorbell").st_mode)
