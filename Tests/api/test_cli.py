"""The `outlive` command against a store prepared by the test: tables for
people, JSON for scripts, meaningful exit codes."""
import json
import os
import pathlib
import select
import signal
import subprocess
import time

import outlive

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.path.join(ROOT, "build", "outlive")


def run(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=60)


def test_kv_lists_and_prints_values_as_table_and_json(tmp_path):
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        store.kv["config/name"] = b"dana"
        store.kv["config/blob"] = b"\x00\x01"
        store.kv["other"] = b"x"
    listed = json.loads(run("kv", directory, "--prefix", "config/", "--json").stdout)
    assert [entry["key"] for entry in listed] == ["config/blob", "config/name"]
    assert listed[0]["value"] == "0x0001" and listed[1]["value"] == "dana"
    table = run("kv", directory).stdout
    assert "KEY" in table and "config/name" in table and "other" in table
    one = run("kv", directory, "config/name")
    assert one.returncode == 0 and one.stdout.strip() == "dana"


def test_inspect_counts_and_lists_live_processes(tmp_path):
    directory = str(tmp_path / "store")
    with outlive.Store(directory, process="app") as store:
        store.kv["a"] = b"1"
        report = json.loads(run("inspect", directory, "--json").stdout)
        assert [run_["process"] for run_ in report["runs"]] == ["app"]
        assert report["runs"][0]["run_id"] == store.run_id
        assert report["counts"]["keys"] == 1
    report = json.loads(run("inspect", directory, "--json").stdout)
    assert report["runs"] == []


def test_exit_codes_say_what_went_wrong(tmp_path):
    directory = str(tmp_path / "store")
    with outlive.Store(directory):
        pass
    missing = run("kv", directory, "absent")
    assert missing.returncode == 3 and "absent" in missing.stderr
    unusable = run("kv", str(tmp_path / "no" / "such" / "dir"))
    assert unusable.returncode == 1 and "cannot create" in unusable.stderr
    assert run("kv").returncode == 64
    assert run("--version").stdout.strip() == pathlib.Path(ROOT, "VERSION").read_text().strip()


def test_handlers_lists_what_a_library_declares():
    fixture = os.path.join(ROOT, "build", "tests", "libhandlers_fixture.so")
    listed = {entry["name"]: entry for entry in json.loads(run("handlers", fixture, "--json").stdout)}
    assert listed["fixture_completion"] == {"name": "fixture_completion", "signature": "INTEGER result, ID? label",
                                            "instance": False}
    assert listed["fixture_on_key"]["instance"] is True
    assert "fixture_ping" in listed and listed["fixture_ping"]["signature"] == ""
    table = run("handlers", fixture).stdout
    assert "fixture_all_types" in table and "ID<fixture.account> account" in table
    not_elf = run("handlers", os.path.join(ROOT, "VERSION"))
    assert not_elf.returncode == 1 and "not an ELF file" in not_elf.stderr


def test_messages_lists_state_and_answers(tmp_path):
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        first = store.messages.post("sync-issue", "Conflict", text="a.txt", choices=[("keep", "Keep")])
        second = store.messages.post("notice", "Hello", choices=[("ok", "OK")])
        store.messages.respond(second, "ok")
    listed = {entry["id"]: entry for entry in json.loads(run("messages", directory, "--json").stdout)}
    assert listed[first]["state"] == "waiting" and listed[first]["choices"] == ["keep"]
    assert listed[second]["state"] == "answered" and listed[second]["choice"] == "ok"
    only = json.loads(run("messages", directory, "--category", "notice", "--json").stdout)
    assert [entry["id"] for entry in only] == [second]
    assert "Conflict" in run("messages", directory).stdout
    report = json.loads(run("inspect", directory, "--json").stdout)
    assert report["counts"]["messages"] == 2


def test_tasks_list_retry_and_delete(tmp_path):
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        first = store.tasks.add(outlive.Handler("cli.absent", n=1))
        second = store.tasks.add(outlive.Handler("cli.absent", n=2), group_start="g")
    listed = json.loads(run("tasks", directory, "--json").stdout)
    assert [task["id"] for task in listed] == [first, second]
    assert listed[0]["handler"] == "cli.absent" and listed[0]["state"] == "pending" and listed[0]["attempts"] == 0
    assert listed[1]["group_start"] == "g"
    assert "cli.absent" in run("tasks", "list", directory).stdout
    deleted = run("tasks", "delete", directory, first)
    assert deleted.returncode == 0 and first in deleted.stdout
    assert [task["id"] for task in json.loads(run("tasks", directory, "--json").stdout)] == [second]
    assert run("tasks", "delete", directory, first).returncode == 3
    not_dead = run("tasks", "retry", directory, second)
    assert not_dead.returncode != 0 and not_dead.stderr


def test_tasks_lists_the_unique_key_and_cancels(tmp_path):
    import ctypes
    from outlive import _ffi
    from outlive.errors import check
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        options = _ffi.TaskOptions(version=1, unique_key=b"report:A")
        out = ctypes.create_string_buffer(_ffi.ID_SIZE)
        work = outlive.Handler("cli.absent")
        check(_ffi.outlive_task_enqueue(store.handle, work.handle, ctypes.byref(options), out, None))
        task = out.value.decode()
    [listed] = json.loads(run("tasks", directory, "--json").stdout)
    assert listed["unique_key"] == "report:A" and listed["cancelled"] is False and listed["result_signal"] is None
    assert "report:A" in run("tasks", directory).stdout
    cancelled = run("tasks", "cancel", directory, task, "--json")
    assert cancelled.returncode == 0 and json.loads(cancelled.stdout) == {"cancelled": task, "was_running": False}
    assert json.loads(run("tasks", directory, "--json").stdout) == []
    assert run("tasks", "cancel", directory, task).returncode == 3
    assert run("tasks", "cancel", directory, "not-an-id").returncode == 64
def test_schedules_list_and_remove(tmp_path):
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        store.schedules.set("nightly", outlive.Handler("cli.report"), cron="30 2 * * *", priority=2)
        store.schedules.set("poll", outlive.Handler("cli.poll"), every=300)
    listed = json.loads(run("schedules", directory, "--json").stdout)
    assert [(s["name"], s["handler"], s["cron"], s["interval"], s["priority"]) for s in listed] == [
        ("nightly", "cli.report", "30 2 * * *", None, 2), ("poll", "cli.poll", None, 300, 0)]
    assert listed[0]["next_fire"] % 86400 == 2 * 3600 + 1800 and listed[0]["last_fired"] is None
    table = run("schedules", "list", directory).stdout
    assert "cron 30 2 * * *" in table and "every 300 s" in table and " 02:30:00" in table
    removed = run("schedules", "remove", directory, "poll")
    assert removed.returncode == 0 and removed.stdout.strip() == "schedule poll removed"
    assert [s["name"] for s in json.loads(run("schedules", directory, "--json").stdout)] == ["nightly"]
    assert run("schedules", "remove", directory, "poll").returncode == 3
    assert run("schedules", "remove", directory, "bad name").returncode == 64


def test_signals_lists_signals_and_consumers(tmp_path):
    directory = str(tmp_path / "store")
    sid = outlive.new_signal_id()
    with outlive.Store(directory, process="app") as store:
        store.signals.consume(sid, outlive.Handler("cli.later"), delivery="until_terminated", lifetime="process",
                              scope="acct")
        store.signals.post(sid, terminates=False, result="half")
    report = json.loads(run("signals", directory, "--json").stdout)
    assert report["signals"] == [{"id": sid, "version": 1, "terminated": False, "consumers": 1}]
    [consumer] = report["consumers"]
    assert consumer["handler"] == "cli.later" and consumer["lifetime"] == "process" and consumer["scope"] == "acct"
    assert consumer["delivery"] == "until_terminated" and consumer["process"] == "app" and consumer["last_version"] == 0
    assert "cli.later" in run("signals", directory).stdout


def test_worker_runs_tasks_from_a_handler_library_and_exits_when_idle(tmp_path):
    directory = str(tmp_path / "store")
    library = os.path.join(ROOT, "build", "tests", "libhandlers_fixture.so")
    with outlive.Store(directory, process="app") as store:
        store.tasks.add(outlive.Handler("fixture_completion", result=7))
        store.tasks.add(outlive.Handler("fixture_ping"))
    result = run("worker", directory, "--load", library, "--until-idle", "--verbose")
    assert result.returncode == 0, result.stderr
    assert "fixture_completion: result=7" in result.stdout and "fixture_ping" in result.stdout
    assert "succeeded" in result.stderr
    assert json.loads(run("tasks", directory, "--json").stdout) == []
    missing = run("worker", directory, "--load", "/nonexistent/lib.so", "--until-idle")
    assert missing.returncode == 3 and "does not exist" in missing.stderr


def test_worker_runs_the_task_queues_named_with_queue_and_tasks_shows_queue_priority_and_due(tmp_path):
    directory = str(tmp_path / "store")
    library = os.path.join(ROOT, "build", "tests", "libhandlers_fixture.so")
    due = time.time() + 3600
    with outlive.Store(directory, process="app") as store:
        store.queues.declare("jobs", "parallel")
        store.queues.declare("other", "ordered")
        store.queues.enqueue(outlive.Handler("fixture_ping"), "jobs", priority=1)
        store.queues.enqueue(outlive.Handler("fixture_ping"), "jobs")
        later = store.queues.enqueue(outlive.Handler("fixture_ping"), "other", priority=-2, due_at=due)
        left = store.tasks.add(outlive.Handler("fixture_ping"))
    listed = {task["id"]: task for task in json.loads(run("tasks", directory, "--json").stdout)}
    assert listed[later]["queue"] == "other" and listed[later]["priority"] == -2
    assert abs(listed[later]["next_attempt"] - due) < 0.01 and listed[later]["state"] == "waiting"
    table = run("tasks", directory).stdout
    assert "QUEUE" in table and "PRIORITY" in table and "DUE" in table and " UTC" in table
    result = run("worker", directory, "--load", library, "--queue", "jobs=2", "--until-idle")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("fixture_ping") == 2
    # Only the queue it was told to run: the default queue and "other" are left.
    assert sorted(task["id"] for task in json.loads(run("tasks", directory, "--json").stdout)) == sorted([later, left])
    queues = {queue["name"]: queue for queue in json.loads(run("tasks", "queues", directory, "--json").stdout)}
    assert queues["jobs"] == {"name": "jobs", "kind": "parallel", "pending": 0, "running": 0, "dead": 0}
    assert queues["other"]["pending"] == 1 and queues["default"]["pending"] == 1
    assert "parallel" in run("tasks", "queues", directory).stdout
    for bad in ("bad name", "jobs=0", "jobs=x", "jobs=1025"):
        refused = run("worker", directory, "--queue", bad, "--until-idle")
        assert refused.returncode == 64 and "--queue" in refused.stderr, (bad, refused.stderr)
    undeclared = run("worker", directory, "--queue", "nowhere", "--until-idle")
    assert undeclared.returncode == 3 and "nowhere" in undeclared.stderr


def test_worker_presents_durable_interaction_queues_it_can_resolve_and_leaves_the_rest(tmp_path):
    directory = str(tmp_path / "store")
    library = os.path.join(ROOT, "build", "tests", "libhandlers_fixture.so")
    with outlive.Store(directory, process="app") as store:
        with outlive.DurableInteractionQueue(store, "dialogs", suspended=True) as dialogs, \
                outlive.DurableInteractionQueue(store, "notices", suspended=True) as notices, \
                outlive.DurableInteractionQueue(store, "elsewhere", suspended=True) as elsewhere:
            dialogs.add(outlive.Handler("fixture_interaction", text="first"))
            dialogs.add(outlive.Handler("fixture_interaction", text="second"))
            notices.add(outlive.Handler("fixture_interaction", text="notice"))
            elsewhere.add(outlive.Handler("app.only", text="not in the library"))

    only = run("worker", directory, "--load", library, "--interaction-queue", "notices", "--until-idle")
    assert only.returncode == 0, only.stderr
    assert only.stdout.splitlines() == ["fixture_interaction: notice (36-character id)"]

    every = run("worker", directory, "--load", library, "--until-idle", "--verbose")
    assert every.returncode == 0, every.stderr
    assert every.stdout.splitlines() == ["fixture_interaction: first (36-character id)",
                                         "fixture_interaction: second (36-character id)"]
    assert 'presenting durable interaction queue "elsewhere"' in every.stderr
    with outlive.Store(directory, process="app") as store:
        with outlive.DurableInteractionQueue(store, "elsewhere", suspended=True) as elsewhere:
            assert len(elsewhere) == 1, "an interaction the worker cannot resolve is left in its queue"
        with outlive.DurableInteractionQueue(store, "dialogs", suspended=True) as dialogs:
            assert len(dialogs) == 0

    none = run("worker", directory, "--load", library, "--no-interactions", "--interaction-queue", "x", "--until-idle")
    assert none.returncode != 0 and "exclude each other" in none.stderr
    bad = run("worker", directory, "--interaction-queue", "", "--until-idle")
    assert bad.returncode != 0 and "queue name is empty" in bad.stderr


def test_worker_presents_a_durable_queue_that_appears_while_it_runs_and_stops_on_sigterm(tmp_path):
    directory = str(tmp_path / "store")
    library = os.path.join(ROOT, "build", "tests", "libhandlers_fixture.so")
    outlive.Store(directory).close()
    worker = subprocess.Popen([CLI, "worker", directory, "--load", library, "--verbose"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with outlive.Store(directory, process="app") as store:
            deadline = time.monotonic() + 30
            while not any(run_["process"] == "worker" for run_ in json.loads(run("inspect", directory, "--json").stdout)["runs"]):
                assert time.monotonic() < deadline, "the worker never opened the store"
                time.sleep(0.05)
            with outlive.DurableInteractionQueue(store, "later", suspended=True) as later:
                later.add(outlive.Handler("fixture_interaction", text="after the start"))
            ready, _, _ = select.select([worker.stdout], [], [], 30)
            line = worker.stdout.readline() if ready else "(nothing within 30 s)"
        assert line == "fixture_interaction: after the start (36-character id)\n"
    finally:
        worker.send_signal(signal.SIGTERM)
        out, err = worker.communicate(timeout=30)
    assert worker.returncode == 0, err


def _store_with_hostile_keys(tmp_path):
    """A store holding a key with terminal escapes and bidi overrides, a value
    with escapes, and (written behind the library's back) a key that is not UTF-8."""
    import sqlite3
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        store.kv["evil\x1b[31mred\u202e"] = b"v\x1b[2J"
        store.kv["plain"] = b"ok"
    connection = sqlite3.connect(os.path.join(directory, "outlive.db"))
    connection.execute("INSERT INTO outlive_kv(key, value) VALUES (CAST(X'61ff62' AS TEXT), X'01')")
    connection.commit()
    connection.close()
    return directory


def test_kv_table_escapes_control_characters_and_bytes_that_are_not_utf8(tmp_path):
    directory = _store_with_hostile_keys(tmp_path)
    result = subprocess.run([CLI, "kv", directory], capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for raw in (b"\x1b", b"\xe2\x80\xae", b"\xff"):
        assert raw not in out, f"{raw!r} reached the terminal raw"
    assert b"evil\\u{1b}[31mred\\u{202e}" in out
    assert b"a\\xffb" in out and b"plain" in out


def test_kv_json_is_valid_exact_for_utf8_keys_and_lists_other_keys_by_their_bytes(tmp_path):
    directory = _store_with_hostile_keys(tmp_path)
    result = subprocess.run([CLI, "kv", directory, "--json"], capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert b"\x1b" not in result.stdout and b"\xff" not in result.stdout
    listed = json.loads(result.stdout.decode("utf-8"))
    by_key = {entry["key"]: entry for entry in listed}
    assert "evil\x1b[31mred\u202e" in by_key  # exact: JSON escaped it
    assert by_key["a\\xffb"]["key_hex"] == "61ff62"
    assert "key_hex" not in by_key["plain"]


def test_argument_that_is_not_utf8_fails_and_touches_no_other_directory(tmp_path):
    # The byte \xff would become U+FFFD: the command must not act on "store\ufffd".
    mangled = tmp_path / "store\ufffd"
    result = subprocess.run([CLI, "kv", os.fsencode(str(tmp_path)) + b"/store\xff"], capture_output=True, timeout=60)
    assert result.returncode == 64
    assert b"not UTF-8" in result.stderr and b"\\xff" in result.stderr
    assert not mangled.exists() and not os.path.exists(os.fsencode(str(tmp_path)) + b"/store\xff")
    key = subprocess.run([CLI, "kv", str(tmp_path / "other"), b"k\xfe"], capture_output=True, timeout=60)
    assert key.returncode == 64 and not (tmp_path / "other").exists()


def test_exit_codes_match_the_documentation(tmp_path):
    directory = str(tmp_path / "store")
    with outlive.Store(directory):
        pass
    missing_task = "00000000-0000-4000-8000-000000000000"
    not_a_library = tmp_path / "notes.so"
    not_a_library.write_text("not an ELF file")
    cases = [
        (("handlers", str(tmp_path / "missing.so")), 3),
        (("worker", directory, "--load", str(tmp_path / "missing.so")), 3),
        (("kv", directory, "absent"), 3),
        (("tasks", "retry", directory, missing_task), 3),
        (("tasks", "delete", directory, missing_task), 3),
        (("tasks", "retry", directory, "not-an-id"), 64),
        (("inspect", directory, "--process", "a/b"), 64),
        (("worker", directory, "--process", "a:b"), 64),
        (("kv", directory, "--bogus"), 64),
        (("inspect",), 64),
        (("inspect", str(tmp_path / "no" / "parent")), 1),
        (("handlers", str(not_a_library)), 1),
        (("inspect", directory), 0),
    ]
    wrong = []
    for args, expected in cases:
        result = run(*args)
        if result.returncode != expected:
            wrong.append(f"outlive {' '.join(args)}: exit {result.returncode}, documented {expected}: {result.stderr[:200]}")
    assert not wrong, "\n".join(wrong)
