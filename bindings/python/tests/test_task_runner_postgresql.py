"""PostgreSQL: a task's runner names a run the store has. Since tasks step 15
constraint triggers check it where a foreign key did (a task add queued the
key's check at every insert): a claim by a run the store does not have is
refused at commit, and a run's row goes only once no task names it, whichever
of the two transactions commits first. The rows are written from psql with
no store open, so that no liveness check ends the runs made by hand."""
import subprocess
import time

import pytest

import outlive
from conftest import psql, store_location

REFUSED_CLAIM = 'which is not in table "outlive_runs"'
REFUSED_REMOVAL = 'still runs tasks of table "outlive_tasks"'


@pytest.fixture
def location(tmp_path):
    return store_location("postgresql", tmp_path)


def stored_task(location):
    with outlive.Store(location) as store:
        return store.tasks.add(outlive.Handler("py.runner.never", label="x"))


def register(location, run):
    psql(location, f"INSERT INTO outlive_runs(run_id, process, pid, started, lock_key) "
                   f"VALUES ('{run}', 'by hand', 1, 0, nextval('outlive_run_keys'))")


def claim(task, run):
    return f"UPDATE outlive_tasks SET runner = '{run}', state = 1, claim = 'c' WHERE id = '{task}'"


def refused(location, sql):
    """Runs sql in the store's schema, expecting it to fail; psql's error."""
    with pytest.raises(subprocess.CalledProcessError) as failure:
        psql(location, sql)
    return failure.value.stderr


def task_state(location, task):
    return psql(location, f"SELECT state || ' ' || coalesce(runner, '-') FROM outlive_tasks WHERE id = '{task}'")


class Session:
    """A psql session whose statements are sent one at a time."""

    def __init__(self, location):
        server, name = location.split("?outlive_store=")
        self.process = subprocess.Popen(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", server], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.send(f"SET client_min_messages = warning; SET search_path = outlive_{name};")

    def send(self, sql):
        self.process.stdin.write(sql + "\n")
        self.process.stdin.flush()

    def end(self):
        _, errors = self.process.communicate(timeout=30)
        return errors


def test_a_claim_by_a_run_the_store_does_not_have_is_refused_and_changes_nothing(location):
    task = stored_task(location)
    assert REFUSED_CLAIM in refused(location, claim(task, "no-such-run"))
    assert task_state(location, task) == "0 -"
    # A registered run's claim is taken; its return (no runner) checks nothing.
    register(location, "r1")
    psql(location, claim(task, "r1"))
    assert task_state(location, task) == "1 r1"
    psql(location, f"UPDATE outlive_tasks SET runner = NULL, state = 0, claim = NULL WHERE id = '{task}'")
    assert task_state(location, task) == "0 -"


def test_a_runs_row_goes_only_once_no_task_names_it_as_its_runner(location):
    task = stored_task(location)
    register(location, "r1")
    psql(location, claim(task, "r1"))
    assert REFUSED_REMOVAL in refused(location, "DELETE FROM outlive_runs WHERE run_id = 'r1'")
    assert psql(location, "SELECT count(*) FROM outlive_runs WHERE run_id = 'r1'") == "1"
    # Checked at the commit: the row may go first, its claims returned after, in one transaction.
    psql(location, f"""
        BEGIN;
        DELETE FROM outlive_runs WHERE run_id = 'r1';
        UPDATE outlive_tasks SET runner = NULL, state = 0, claim = NULL WHERE runner = 'r1';
        COMMIT;""")
    assert psql(location, "SELECT count(*) FROM outlive_runs WHERE run_id = 'r1'") == "0"
    assert task_state(location, task) == "0 -"


def test_a_run_is_removed_from_a_session_on_another_search_path(location):
    stored_task(location)
    register(location, "r1")
    server, name = location.split("?outlive_store=")
    subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", server, "-c",
                    f"DELETE FROM outlive_{name}.outlive_runs WHERE run_id = 'r1'"], check=True, capture_output=True)
    assert psql(location, "SELECT count(*) FROM outlive_runs WHERE run_id = 'r1'") == "0"


def test_a_claim_whose_run_went_before_its_commit_is_refused(location):
    task = stored_task(location)
    register(location, "r1")
    claimer = Session(location)
    claimer.send("BEGIN;")
    claimer.send(claim(task, "r1") + ";")
    time.sleep(0.5)
    # The run goes while the claim is uncommitted: the removal's check does not see it.
    psql(location, "DELETE FROM outlive_runs WHERE run_id = 'r1'")
    claimer.send("COMMIT;")
    assert REFUSED_CLAIM in claimer.end()
    assert task_state(location, task) == "0 -"


def claim_during_removal(location, claim_sql, run):
    """Removes `run` in one session and, while that is uncommitted, runs
    claim_sql in another: the claim's check at its commit must wait for the
    removal (it locks the run's row), which then commits. The claimer's psql
    errors."""
    remover = Session(location)
    remover.send("BEGIN;")
    remover.send(f"DELETE FROM outlive_runs WHERE run_id = '{run}';")
    time.sleep(0.5)
    claimer = Session(location)
    claimer.send("BEGIN;")
    claimer.send(claim_sql + ";")
    claimer.send("COMMIT;")
    time.sleep(0.5)
    assert claimer.process.poll() is None
    remover.send("COMMIT;")
    assert remover.end() == ""
    assert psql(location, f"SELECT count(*) FROM outlive_runs WHERE run_id = '{run}'") == "0"
    return claimer.end()


def test_a_claim_waits_for_a_removal_under_way_of_its_run_and_is_refused_when_it_commits(location):
    task = stored_task(location)
    register(location, "r1")
    assert REFUSED_CLAIM in claim_during_removal(location, claim(task, "r1"), "r1")
    assert task_state(location, task) == "0 -"
