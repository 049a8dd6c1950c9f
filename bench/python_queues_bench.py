#!/usr/bin/env python3
"""Outlive's Python task queue beside the SQLite-backed Python queues from PyPI:
persist-queue's SQLiteAckQueue, litequeue and huey's SqliteStorage (its raw
enqueue/dequeue, not its consumer). Each queue, in a directory of its own on
the same disk, in the same run: N items enqueued one by one (each put its own
committed transaction), then dequeued and acknowledged one by one.

  - Outlive: store.tasks.add(Handler("bench.py.item", item=...)) per item, then
    run_now() and loop dispatches until no task is left: each task's handler (a
    Python function) is called and the task deleted (its completion).
  - persist-queue: put(item); get(raw=True) (marks it unacked: a commit) then
    ack(id=...) (a commit).
  - litequeue: put(item); pop() (locks it: a commit) then done(message_id) (a commit).
  - huey SqliteStorage: enqueue(bytes); dequeue() (select + delete in one
    commit; huey has no acknowledgement).

Each queue runs at its default SQLite `synchronous` level and at the other one
(set on its connection with PRAGMA synchronous), so that each row compares
like with like; the level each used is read back from its connection.
All queues of a level are open at once; they enqueue in turns of
OUTLIVE_PYQ_CHUNK (default 500) items, the order rotated from turn to turn, so
that the disk's fsync time (it moves within seconds on a shared machine) is
shared by all; then each dequeues all of its items. Median of
OUTLIVE_PYQ_ROUNDS (default 3) rounds, the dequeue order rotated between
rounds; OUTLIVE_PYQ_ITEMS (default 10000) items each.
Usage: python_queues_bench.py SCRATCH_DIR. Prints a markdown section.
Needs OUTLIVE_LIBRARY (build/liboutlive.so) and bindings/python on sys.path
(set here when run from the repository)."""
import os
import shutil
import sqlite3
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))
os.environ.setdefault("OUTLIVE_LIBRARY", os.path.join(ROOT, "build", "liboutlive.so"))

import outlive  # noqa: E402

N = int(os.environ.get("OUTLIVE_PYQ_ITEMS", "10000"))
ROUNDS = int(os.environ.get("OUTLIVE_PYQ_ROUNDS", "3"))
CHUNK = int(os.environ.get("OUTLIVE_PYQ_CHUNK", "500"))  # items enqueued per queue before the next queue's turn
LEVELS = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}

_ran = [0]


@outlive.handler("bench.py.item")
def _item(item: str):
    _ran[0] += 1


def fresh(scratch, name):
    path = os.path.join(scratch, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path, mode=0o700)
    return path


def level_of(connection):
    return LEVELS.get(connection.execute("PRAGMA synchronous").fetchone()[0], "?")


class Session:
    """One queue open at one level: `enqueue(i)` puts item i (a committed
    transaction), `dequeue_all()` takes and acknowledges every item, `used`
    is the synchronous level its connection runs at."""

    def __init__(self, enqueue, dequeue_all, close, used):
        self.enqueue, self.dequeue_all, self.close, self.used = enqueue, dequeue_all, close, used
        self.enqueue_seconds = 0.0


def outlive_queue(scratch, level):
    store = outlive.Store(fresh(scratch, f"outlive-{level}"), "bench", durability=level.lower())
    store.tasks.set_triggers(0, 1e6)
    add, handler = store.tasks.add, outlive.Handler

    def enqueue(i):
        add(handler("bench.py.item", item=f"item-{i}"))

    def dequeue_all():
        _ran[0] = 0
        store.tasks.run_now()
        while len(store.tasks):
            store.loop.dispatch(0.1)
        if _ran[0] != N:
            raise RuntimeError(f"outlive: {_ran[0]} of {N} task handlers ran")

    # What the store's own connection runs at, read from a fresh connection is
    # not meaningful (synchronous is per connection): the store option says it.
    return Session(enqueue, dequeue_all, store.close, level)


def persist_queue(scratch, level):
    from persistqueue import SQLiteAckQueue
    queue = SQLiteAckQueue(fresh(scratch, f"persistqueue-{level}"), multithreading=False, auto_commit=True)
    connection = queue._putter
    if level is not None:
        connection.execute(f"PRAGMA synchronous={level}")

    def enqueue(i):
        queue.put(f"item-{i}")

    def dequeue_all():
        for _ in range(N):
            item = queue.get(block=False, raw=True)
            queue.ack(id=item["pqid"])
        if queue.qsize() != 0:
            raise RuntimeError("persist-queue: items left")

    return Session(enqueue, dequeue_all, queue.close, level_of(connection))


def lite_queue(scratch, level):
    from litequeue import LiteQueue
    queue = LiteQueue(os.path.join(fresh(scratch, f"litequeue-{level}"), "queue.db"))
    if level is not None:
        queue.conn.execute(f"PRAGMA synchronous={level}")

    def enqueue(i):
        queue.put(f"item-{i}")

    def dequeue_all():
        for _ in range(N):
            message = queue.pop()
            queue.done(message.message_id)
        if queue.pop() is not None:
            raise RuntimeError("litequeue: items left")

    return Session(enqueue, dequeue_all, queue.close, level_of(queue.conn))


def huey_storage(scratch, level):
    from huey.storage import SqliteStorage
    storage = SqliteStorage(name="bench", filename=os.path.join(fresh(scratch, f"huey-{level}"), "huey.db"))
    if level is not None:
        storage.conn.execute(f"PRAGMA synchronous={level}")

    def enqueue(i):
        storage.enqueue(f"item-{i}".encode())

    def dequeue_all():
        for _ in range(N):
            if storage.dequeue() is None:
                raise RuntimeError("huey: queue empty too early")

    return Session(enqueue, dequeue_all, storage.close, level_of(storage.conn))


def default_level(package, scratch):
    """The synchronous level a peer sets on its connection by itself."""
    path = fresh(scratch, f"probe-{package}")
    if package == "persist-queue":
        from persistqueue import SQLiteAckQueue
        queue = SQLiteAckQueue(path, multithreading=False)
        level = level_of(queue._putter)
    elif package == "litequeue":
        from litequeue import LiteQueue
        queue = LiteQueue(os.path.join(path, "queue.db"))
        level = level_of(queue.conn)
    else:
        from huey.storage import SqliteStorage
        queue = SqliteStorage(name="bench", filename=os.path.join(path, "huey.db"))
        level = level_of(queue.conn)
    queue.close()
    shutil.rmtree(path, ignore_errors=True)
    return level


PEERS = [
    # name, function, PyPI package, module
    ("persist-queue SQLiteAckQueue", persist_queue, "persist-queue", "persistqueue"),
    ("litequeue LiteQueue", lite_queue, "litequeue", "litequeue"),
    ("huey SqliteStorage (raw)", huey_storage, "huey", "huey"),
]


def main(argv):
    scratch = argv[1] if len(argv) > 1 else "/tmp/outlive-pyq"
    os.makedirs(scratch, mode=0o700, exist_ok=True)
    failed_installs = [name for name in os.environ.get("OUTLIVE_BENCH_PIP_FAILURES", "").split(",") if name]
    versions = {}
    unavailable = {}
    for _, _, package, module in PEERS:
        try:
            __import__(module)
            from importlib.metadata import version
            versions[package] = version(package)
        except Exception as error:  # not installed: said in the section, the bench goes on
            unavailable[package] = f"{type(error).__name__}: {error}"

    defaults = {}
    for _, _, package, _ in PEERS:
        if package not in unavailable:
            try:
                defaults[package] = default_level(package, scratch)
            except Exception as error:
                unavailable[package] = f"{type(error).__name__}: {error}"

    # Per round and level, every queue is open at once. The enqueues go in
    # chunks of CHUNK items, the queues' order rotated from chunk to chunk, so
    # that the disk's fsync time, which moves within seconds on this shared
    # machine, is shared by all (blocks of 10,000 items per queue made the
    # ratios at FULL swing by ±0.1 between runs); each chunk is still a loop
    # of one queue's calls, as a program makes them. Then each queue is
    # dequeued whole, the order rotated between rounds. Medians of the rounds.
    configs = [("Outlive store.tasks", outlive_queue, None)]
    configs += [(name, function, package) for name, function, package, _ in PEERS if package not in unavailable]
    samples = {}  # (level, name) -> ([enqueue/s], [dequeue/s], level used)
    failures = []
    for round_index in range(ROUNDS):
        for level in ("FULL", "NORMAL"):
            sessions = []
            for name, function, package in configs:
                if any(failure.startswith(f"{name} at {level}:") for failure in failures):
                    continue
                try:
                    sessions.append((name, function(scratch, level)))
                except Exception as error:
                    failures.append(f"{name} at {level}: {type(error).__name__}: {error}")

            def measured(session, name, step):
                try:
                    step()
                    return True
                except Exception as error:
                    failures.append(f"{name} at {level}: {type(error).__name__}: {error}")
                    sessions.remove((name, session))
                    session.close()
                    return False

            for chunk in range(N // CHUNK):
                shift = chunk % len(sessions) if sessions else 0
                for name, session in sessions[shift:] + sessions[:shift]:
                    first = chunk * CHUNK

                    def put(session=session, first=first):
                        start = time.perf_counter()
                        for i in range(first, first + CHUNK):
                            session.enqueue(i)
                        session.enqueue_seconds += time.perf_counter() - start
                    measured(session, name, put)
            shift = round_index % len(sessions) if sessions else 0
            for name, session in sessions[shift:] + sessions[:shift]:
                start = time.perf_counter()
                if not measured(session, name, session.dequeue_all):
                    continue
                dequeued = time.perf_counter() - start
                entry = samples.setdefault((level, name), ([], [], session.used))
                entry[0].append(N / session.enqueue_seconds)
                entry[1].append(N / dequeued)
                session.close()
    rows = []  # (level, name, enqueue/s, dequeue/s, level used, its default?)
    for level in ("FULL", "NORMAL"):
        for name, function, package in configs:
            if (level, name) in samples:
                enqueue_rates, dequeue_rates, used = samples[(level, name)]
                rows.append((level, name, statistics.median(enqueue_rates), statistics.median(dequeue_rates), used,
                             package is None or defaults.get(package) == used))

    print("### Python: task queue beside persist-queue, litequeue and huey\n")
    print(f"{N} items enqueued one by one (a committed transaction each), then dequeued and acknowledged one by "
          "one, each queue in its own directory on the same disk, in the same run (Python "
          f"{sys.version.split()[0]}, SQLite {sqlite3.sqlite_version} in the peers). Outlive: `store.tasks.add` per "
          "item, then a run calling a no-op Python handler per task (its completion deletes the task). "
          "persist-queue: `put`, `get` + `ack` (two commits); litequeue: `put`, `pop` + `done` (two commits); "
          "huey: `enqueue`, `dequeue` (one commit, no acknowledgement). Every queue runs in WAL mode; each is "
          "measured at both `synchronous` levels (set on its connection when it is not its default; Outlive "
          f"through the store's durability option). All queues of a level are open at once and enqueue in turns of "
          f"{CHUNK} items, the order rotated from turn to turn (the disk's fsync time moves within seconds: each "
          "queue gets its share), then each dequeues all; median of "
          f"{ROUNDS} rounds, the dequeue order rotated between rounds. Ratio: Outlive's rate over the peer's at the "
          "same level.\n")
    print("| synchronous | queue | enqueue /s | dequeue + ack /s | Outlive ratio, enqueue | Outlive ratio, dequeue |")
    print("|---|---|---:|---:|---:|---:|")
    for level in ("FULL", "NORMAL"):
        ours = next(row for row in rows if row[0] == level and row[1].startswith("Outlive"))
        for row in (r for r in rows if r[0] == level):
            name = row[1] + ("" if row[1].startswith("Outlive") else (" (its default)" if row[5] else " (set)"))
            if row is ours:
                print(f"| {row[4]} | **{name}** | {row[2]:.0f} | {row[3]:.0f} | 1.00 | 1.00 |")
            else:
                print(f"| {row[4]} | {name} | {row[2]:.0f} | {row[3]:.0f} | {ours[2] / row[2]:.2f} | "
                      f"{ours[3] / row[3]:.2f} |")
    print()
    if versions:
        print("Peers from PyPI: " + ", ".join(f"{package} {version}" for package, version in versions.items()) + ".")
    for package, reason in unavailable.items():
        note = " (pip install failed)" if package in failed_installs else ""
        print(f"\n**{package} not measured**{note}: `{reason}`")
    for failure in failures:
        print(f"\n**Failed**: `{failure}`")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
