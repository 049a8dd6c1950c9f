"""docs/postgresql.md, "Operating a PostgreSQL store", run as written against
the test server: the two ways to set up a role, the autovacuum settings, rows
deleted by hand with the store's schema on the search_path, the systemd unit's
command line with a password file, and a worker that exits when
its run ends under it (what lets the unit restart it after a server restart)."""
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from urllib.parse import urlsplit, urlunsplit

import pytest

import outlive as outlive_package

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build")
OUTLIVE = os.path.join(BUILD, "outlive")
DOC = os.path.join(ROOT, "docs", "postgresql.md")
UNIT = os.path.join(ROOT, "Examples", "systemd", "outlive-worker-postgresql@.service")
SERVER = os.environ.get("OUTLIVE_TEST_PG")

pytestmark = pytest.mark.skipif(not SERVER, reason="OUTLIVE_TEST_PG is not set: no PostgreSQL test server")


def operating_section():
    text = open(DOC).read()
    start = text.index("## Operating a PostgreSQL store")
    return text[start:text.index("\n## ", start + 1)]


def sql_blocks():
    return re.findall(r"```sql\n(.*?)```", operating_section(), re.S)


def uri(database=None, user=None, query=""):
    parts = urlsplit(SERVER)
    netloc = parts.netloc.split("@", 1)[-1]
    if user:
        netloc = f"{user}@{netloc}"
    elif "@" in parts.netloc:
        netloc = parts.netloc
    return urlunsplit((parts.scheme, netloc, "/" + (database or parts.path.lstrip("/")), query, ""))


def psql(sql, database="postgres"):
    subprocess.run(["psql", "-v", "ON_ERROR_STOP=1", "-qAt", uri(database)], input=sql, text=True, check=True,
                   capture_output=True)


def query(sql, database):
    return subprocess.run(["psql", "-qAt", uri(database), "-c", sql], text=True, check=True,
                          capture_output=True).stdout.strip()


def outlive(*arguments, env=None, timeout=60):
    return subprocess.run([OUTLIVE, *arguments], capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})))


@pytest.fixture
def names():
    """A role and a database of this test's own, dropped afterwards."""
    suffix = uuid.uuid4().hex[:8]
    made = {"role": f"app_{suffix}", "database": f"db_{suffix}"}
    yield made
    subprocess.run(["psql", "-qAt", uri("postgres"), "-c", f"DROP DATABASE IF EXISTS {made['database']} WITH (FORCE)"],
                   capture_output=True)
    subprocess.run(["psql", "-qAt", uri("postgres"), "-c", f"DROP ROLE IF EXISTS {made['role']}"], capture_output=True)


def as_written(block, names):
    return block.replace("myapp", names["role"]).replace("shared", names["database"])


def test_a_role_that_owns_its_database_opens_a_store(names):
    owner_block = sql_blocks()[0]
    assert "CREATE DATABASE myapp OWNER myapp" in owner_block
    psql(as_written(owner_block, names).replace(f"CREATE DATABASE {names['role']}", f"CREATE DATABASE {names['database']}"))
    opened = outlive("inspect", uri(names["database"], names["role"]))
    assert opened.returncode == 0, opened.stderr
    assert query("SELECT nspowner::regrole FROM pg_namespace WHERE nspname = 'outlive_main'", names["database"]) == names["role"]


def test_a_role_without_create_uses_the_schema_made_for_it_and_no_other(names):
    shared_block = sql_blocks()[1]
    assert "GRANT CONNECT ON DATABASE shared TO myapp" in shared_block
    psql(f"CREATE DATABASE {names['database']}; REVOKE ALL ON DATABASE {names['database']} FROM PUBLIC;")
    psql(f"REVOKE CREATE ON SCHEMA public FROM PUBLIC;", database=names["database"])
    psql(as_written(shared_block, names), database=names["database"])
    role_uri = uri(names["database"], names["role"])

    opened = outlive("inspect", role_uri)
    assert opened.returncode == 0, opened.stderr
    assert outlive("kv", role_uri).returncode == 0
    assert query("SELECT count(*) FROM pg_tables WHERE schemaname = 'outlive_main' AND tableowner = current_user",
                 names["database"]) == "0", "the tables belong to the role, not to the administrator"

    # A store whose schema nobody made for the role: refused, saying both ways.
    other = outlive("inspect", role_uri + "?outlive_store=other")
    assert other.returncode != 0
    assert "CREATE on the database" in other.stderr and "CREATE SCHEMA outlive_other AUTHORIZATION" in other.stderr
    assert query("SELECT count(*) FROM pg_namespace WHERE nspname = 'outlive_other'", names["database"]) == "0"


def test_the_autovacuum_settings_apply_to_a_store_with_every_system(names):
    psql(f"CREATE DATABASE {names['database']}")
    store = uri(names["database"])
    opened = outlive("inspect", store)
    assert opened.returncode == 0, opened.stderr
    block = sql_blocks()[2]
    tables = re.findall(r"ALTER TABLE outlive_main\.(\w+)", block)
    assert {"outlive_tasks", "outlive_feed", "outlive_signals", "outlive_messages"} <= set(tables)
    psql(block, database=names["database"])
    for table in tables:
        options = query(f"SELECT reloptions FROM pg_class WHERE oid = 'outlive_main.{table}'::regclass", names["database"])
        assert "autovacuum_vacuum_scale_factor=0" in options, (table, options)
    # The store still opens: the settings are not objects Outlive refuses.
    assert outlive("inspect", store).returncode == 0


@outlive_package.handler("api.pg_operations.never_run")
def never_run(label: str) -> None:
    pass


def test_tasks_deleted_by_hand_as_written_keep_the_queues_counts(names):
    psql(f"CREATE DATABASE {names['database']}")
    store = uri(names["database"])
    with outlive_package.Store(store) as opened:
        opened.queues.declare("abandoned", "parallel")
        for n in range(3):
            opened.queues.enqueue(outlive_package.Handler("api.pg_operations.never_run", label=str(n)), "abandoned")
        opened.queues.enqueue(outlive_package.Handler("api.pg_operations.never_run", label="kept"), "default")
    # Without the store's schema on the search_path, the count triggers cannot find their tables: nothing changes.
    with pytest.raises(subprocess.CalledProcessError):
        psql("DELETE FROM outlive_main.outlive_tasks WHERE queue = 'abandoned'", database=names["database"])
    assert query("SELECT count(*) FROM outlive_main.outlive_tasks", names["database"]) == "4"
    psql(sql_blocks()[3], database=names["database"])
    with outlive_package.Store(store) as opened:
        pending = {queue.name: queue.pending for queue in opened.queues}
        assert pending["abandoned"] == 0 and pending["default"] == 1
        assert len(opened.tasks) == 1


def unit_command(env_file_store, host="hosta"):
    """The unit's ExecStart with systemd's specifiers and environment expanded."""
    line = next(l for l in open(UNIT).read().splitlines() if l.startswith("ExecStart="))
    words = line[len("ExecStart="):].split()
    assert words[0] == "/usr/local/bin/outlive" and words[1] == "worker"
    expanded = []
    for word in words[2:]:
        word = word.replace("${OUTLIVE_STORE}", env_file_store).replace("%H", host).replace("%i", "myapp")
        expanded.append(word)
    return ["worker", *expanded]


def test_the_systemd_units_command_runs_a_worker_with_the_password_file(tmp_path):
    password = uuid.uuid4().hex
    psql(f"DO $$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'outlive_password') THEN "
         f"CREATE ROLE outlive_password LOGIN; END IF; END$$; ALTER ROLE outlive_password PASSWORD '{password}'; "
         f"GRANT CREATE ON DATABASE {urlsplit(SERVER).path.lstrip('/')} TO outlive_password;")
    host, port = urlsplit(SERVER).hostname, urlsplit(SERVER).port
    database = urlsplit(SERVER).path.lstrip("/")
    passfile = tmp_path / "myapp.pgpass"
    passfile.write_text(f"{host}:{port}:{database}:outlive_password:{password}\n")
    passfile.chmod(0o600)
    name = f"unit_{uuid.uuid4().hex[:8]}"
    store = uri(database, "outlive_password", f"outlive_store={name}&outlive_liveness=10")
    command = unit_command(store)
    assert "--load" in command
    # The application's handler library is not needed by a worker with nothing to run.
    load = command.index("--load")
    del command[load:load + 2]
    try:
        ran = outlive(*command, "--until-idle", env={"PGPASSFILE": str(passfile)})
        assert ran.returncode == 0, ran.stderr
        assert password not in ran.stderr
        # Without the password file the same command is refused for want of a password.
        refused = outlive(*command, "--until-idle", env={"PGPASSFILE": str(tmp_path / "missing")})
        assert refused.returncode != 0 and password not in refused.stderr
    finally:
        # Nothing left owned by or granted to the shared role, which other tests drop and make again.
        psql(f"DROP SCHEMA IF EXISTS outlive_{name} CASCADE; REVOKE CREATE ON DATABASE {database} FROM outlive_password;",
             database=database)


def worker_command(kind, store):
    if kind == "c":
        return [OUTLIVE, "worker", store, "--verbose"], None
    # Python's worker, serving a module that defines no task (json will do).
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "bindings", "python"),
               OUTLIVE_LIBRARY=os.environ.get("OUTLIVE_LIBRARY", os.path.join(BUILD, "liboutlive.so")))
    return [sys.executable, "-m", "outlive", "worker", "--store", store, "json"], env


@pytest.mark.parametrize("kind", ["c", "python"])
def test_a_worker_whose_run_ends_under_it_exits_with_the_reason(kind):
    name = f"ended_{uuid.uuid4().hex[:8]}"
    store = uri(query_database(), query=f"outlive_store={name}")
    command, env = worker_command(kind, store)
    worker = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        held = ""
        deadline = time.monotonic() + 30
        while not held and time.monotonic() < deadline and worker.poll() is None:
            time.sleep(0.1)
            # The run's lock, not the store's write lock (objid 0) that a
            # write transaction of the worker may hold at that moment: ending
            # that session would only fail the transaction.
            held = query(f"SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2 "
                         f"AND objid <> 0 AND classid = (SELECT oid FROM pg_namespace WHERE nspname = 'outlive_{name}')::int",
                         query_database())
        assert held, "the worker never held its run's lock: " + (worker.stderr.read() if worker.poll() is not None else "")
        query(f"SELECT pg_terminate_backend({held.split()[0]})", query_database())
        _, errors = worker.communicate(timeout=30)
        assert worker.returncode == 1, errors
        assert "this run ended while the store was open" in errors
    finally:
        if worker.poll() is None:
            worker.send_signal(signal.SIGKILL)
            worker.wait()


def query_database():
    return urlsplit(SERVER).path.lstrip("/")
