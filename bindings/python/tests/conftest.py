import os
import select
import subprocess
import sys
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.dirname(HERE)


@pytest.fixture
def store_dir(tmp_path):
    return str(tmp_path / "store")


def store_location(kind, tmp_path):
    """A fresh store of `kind`: a directory under tmp_path ("sqlite"), or a new
    store (outlive_store=...) on the test server in OUTLIVE_TEST_PG ("postgresql";
    the test is skipped, saying why, without one). Suites parametrized by it run
    unchanged on both engines."""
    if kind == "sqlite":
        return str(tmp_path / "store")
    server = os.environ.get("OUTLIVE_TEST_PG")
    if not server:
        pytest.skip("OUTLIVE_TEST_PG is not set: no PostgreSQL test server (scripts/pg_cluster.py start)")
    return f"{server}{'&' if '?' in server else '?'}outlive_store=py_{uuid.uuid4().hex[:16]}"


def psql(location, sql):
    """Runs sql in the schema of the PostgreSQL store at `location`; its last value, if any."""
    server, name = location.split("?outlive_store=")
    result = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", server],
                            input=f"SET client_min_messages = warning;\nSET search_path = outlive_{name};\n{sql}\n",
                            capture_output=True, text=True, check=True, env=dict(os.environ))
    lines = result.stdout.strip().splitlines()
    return lines[-1] if lines else None


def _environment():
    env = dict(os.environ)
    # Every child Python runs in development mode with faulthandler on, as the
    # suite itself does under scripts/run_tests.py: a crash shows its stacks.
    env["PYTHONDEVMODE"] = "1"
    env["PYTHONFAULTHANDLER"] = "1"
    # Against an installed wheel (OUTLIVE_TEST_INSTALLED=1) the child imports
    # the installed package, not the source tree.
    if not os.environ.get("OUTLIVE_TEST_INSTALLED"):
        env["PYTHONPATH"] = PACKAGE_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_python(code: str, *args: str, check=True, timeout=120):
    """Runs code in a fresh Python process that imports the same package."""
    env = _environment()
    return subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True,
                          check=check, timeout=timeout)


def spawn_python(code: str, *args: str):
    env = _environment()
    return subprocess.Popen([sys.executable, "-c", code, *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def dispatch_until(store, condition, seconds=15.0):
    """Dispatches the store's loop as its fd becomes readable until condition()
    holds or the (generous) deadline passes; returns condition()."""
    for _ in range(int(seconds * 20)):
        if condition():
            return True
        ready, _, _ = select.select([store.loop.fileno()], [], [], 0.05)
        if ready:
            store.loop.dispatch()
    return condition()
