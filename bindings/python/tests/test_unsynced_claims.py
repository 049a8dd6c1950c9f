"""Claims taken before a handler are committed without a sync of the log
(StoreBackend `unsyncedWrite`, docs/store.md "Claims are not synced"): at
durability FULL a delivery to a shared consumer syncs once (its record), not
twice, a message reaches its presenter and a task its handler with no sync
after the post or the add, while every write a caller is told of still syncs,
and so does a claim step that dead-letters a task. A power loss that takes a
claim back is the death of its run before the record: the work is done again.

The syncs are counted by a library preloaded into the child process that
wraps fdatasync(2) and fsync(2) and counts the calls on the store's log
(a file whose name ends in "-wal"). SQLite only: a PostgreSQL store's syncs
are the server's."""
import subprocess

import pytest

from conftest import run_python, store_location

COUNTER = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static long log_syncs;

static void count(int fd) {
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t length = readlink(link, path, sizeof path - 1);
    if (length > 4 && memcmp(path + length - 4, "-wal", 4) == 0) __atomic_add_fetch(&log_syncs, 1, __ATOMIC_SEQ_CST);
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    count(fd);
    return real(fd);
}

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    count(fd);
    return real(fd);
}

long outlive_test_log_syncs(void) { return __atomic_load_n(&log_syncs, __ATOMIC_SEQ_CST); }
"""

# What every child starts with: the counter (argv[1], preloaded) and a loop
# dispatched as an application does, until a condition holds.
PROLOGUE = r"""
import ctypes, select, sys, outlive
counter = ctypes.CDLL(sys.argv[1])
counter.outlive_test_log_syncs.restype = ctypes.c_long
syncs = counter.outlive_test_log_syncs

def dispatch_until(store, condition):
    for _ in range(400):
        if condition():
            return True
        select.select([store.loop.fileno()], [], [], 0.05)
        store.loop.dispatch()
    return condition()
"""

# A FULL (or NORMAL) store, a consumer of the given lifetime, one post, its
# delivery; prints the log's syncs of the post, the delivery and a kv set
# after it.
DELIVERY_CHILD = PROLOGUE + r"""
got = []

@outlive.handler("py.claims.got")
def got_it(n: int) -> None:
    got.append(n)

with outlive.Store(sys.argv[2], durability=sys.argv[3]) as store:
    sid = outlive.new_signal_id()
    store.signals.consume(sid, outlive.Handler("py.claims.got"), lifetime=sys.argv[4])
    before = syncs()
    store.signals.post(sid, n=7)
    posted = syncs()
    dispatch_until(store, lambda: got)
    delivered = syncs()
    store.kv["after"] = b"1"
    print(got, posted - before, delivered - posted, syncs() - delivered, len(store.signals.consumers()))
"""


@pytest.fixture(scope="module")
def counter(tmp_path_factory):
    directory = tmp_path_factory.mktemp("sync_counter")
    source = directory / "sync_counter.c"
    source.write_text(COUNTER)
    library = directory / "libsync_counter.so"
    subprocess.run(["cc", "-O1", "-fPIC", "-shared", "-o", str(library), str(source), "-ldl"], check=True)
    return str(library)


def counted(counter, monkeypatch, child, *args):
    """What `child` prints, run with the counter preloaded, split in words."""
    monkeypatch.setenv("LD_PRELOAD", counter)
    return run_python(child, counter, *args).stdout.split()


def deliver(counter, store_dir, durability, lifetime, monkeypatch):
    out = counted(counter, monkeypatch, DELIVERY_CHILD, store_dir, durability, lifetime)
    got, post, delivery, kv_set, consumers = " ".join(out[:-4]), *map(int, out[-4:])
    return got, post, delivery, kv_set, consumers


@pytest.mark.parametrize("lifetime", ["any_process", "process"])
def test_a_shared_consumers_delivery_syncs_its_record_not_its_claim(counter, store_dir, lifetime, monkeypatch):
    got, post, delivery, kv_set, consumers = deliver(counter, store_dir, "full", lifetime, monkeypatch)
    assert got == "[7]"
    assert consumers == 0, "the once consumer went with its record"
    # The post and the record are what a caller is told of: each synced.
    # The claim between them is not.
    assert post == 1
    assert delivery == 1, f"{delivery} syncs of the log for one delivery: the claim was synced too"
    # The connection is back at FULL after the unsynced claim.
    assert kv_set == 1


# A message presented and answered: the syncs from the post's return to the
# presenter's call (the presentation lock), and from its answer to the
# response handler's (the answer, with the response claim in its commit).
MESSAGE_CHILD = PROLOGUE + r"""
marks = {}

def present(message, presentation):
    marks["presented"] = syncs()
    presentation.finish(choice="ok")

def respond(message):
    marks["responded"] = syncs()
    return True

with outlive.Store(sys.argv[2]) as store:
    store.messages.add_presenter("p", present)
    store.messages.add_response_handler("r", respond)
    store.messages.post("claims", "a question", choices=[("ok", "OK")])
    posted = syncs()
    dispatch_until(store, lambda: "responded" in marks)
    print(marks["presented"] - posted, marks["responded"] - marks["presented"])
"""


def test_a_presentation_lock_is_not_synced_and_the_answer_is(counter, store_dir, monkeypatch):
    to_presenter, to_responder = map(int, counted(counter, monkeypatch, MESSAGE_CHILD, store_dir))
    assert to_presenter == 0, f"{to_presenter} syncs of the log between the post and its presenter: the lock was synced"
    assert to_responder == 1


# A task run: the step that claims the task (no attempt ended in it) is not
# synced; the one that records its end is. A step that dead-letters a task
# (an outcome) requires the sync and runs again synced.
TASK_CHILD = PROLOGUE + r"""
ran = []

@outlive.handler("py.claims.task")
def task(task_id: str, attempt: int, completion: outlive.Handler) -> None:
    ran.append(syncs())
    completion(success=sys.argv[3] == "succeed", error="not this time")

with outlive.Store(sys.argv[2]) as store:
    store.tasks.set_policy(max_attempts=5, initial_backoff=0.05, max_backoff=0.05)
    store.tasks.add(outlive.Handler("py.claims.task"))
    added = syncs()
    store.tasks.run_now()
    assert dispatch_until(store, lambda: ran)
    if sys.argv[3] == "succeed":
        assert dispatch_until(store, lambda: len(store.tasks) == 0)
        print(ran[0] - added, syncs() - ran[0])
    else:
        # The failed attempt recorded; then no attempt is left for its retry.
        assert dispatch_until(store, lambda: store.tasks.list()[0].attempts == 1 and store.tasks.list()[0].last_error)
        store.tasks.set_policy(max_attempts=1, initial_backoff=0.05, max_backoff=0.05)
        before = syncs()
        assert dispatch_until(store, lambda: store.tasks.dead_count == 1)
        print(syncs() - before, len(ran))
"""


def test_a_task_claim_is_not_synced_and_its_completion_is(counter, store_dir, monkeypatch):
    to_handler, to_completion = map(int, counted(counter, monkeypatch, TASK_CHILD, store_dir, "succeed"))
    assert to_handler == 0, f"{to_handler} syncs of the log between the add and its handler: the claim was synced"
    assert to_completion == 1


def test_a_claim_step_that_dead_letters_a_task_is_synced(counter, store_dir, monkeypatch):
    dead_letter, calls = map(int, counted(counter, monkeypatch, TASK_CHILD, store_dir, "fail"))
    assert calls == 1, "the retry was dead-lettered, not run"
    assert dead_letter == 1, f"{dead_letter} syncs of the log for the step that dead-lettered the task"


def test_on_postgresql_a_claim_step_runs_its_task_and_one_that_dead_letters_runs_again_synced(counter, tmp_path, monkeypatch):
    # The server's syncs are not counted here: what is checked is that the
    # unsynced claim (SET LOCAL synchronous_commit) runs the task, and that a
    # step that requires the sync is rolled back and run again to its end.
    location = store_location("postgresql", tmp_path)
    assert counted(counter, monkeypatch, TASK_CHILD, location, "succeed") == ["0", "0"]
    location = store_location("postgresql", tmp_path)
    assert counted(counter, monkeypatch, TASK_CHILD, location, "fail") == ["0", "1"]


def test_a_normal_store_syncs_neither(counter, store_dir, monkeypatch):
    got, post, delivery, kv_set, _ = deliver(counter, store_dir, "normal", "any_process", monkeypatch)
    assert got == "[7]"
    assert (post, delivery, kv_set) == (0, 0, 0)
