#!/usr/bin/env python3
"""The job of issue 15's Python benchmark: a program enqueues N jobs (default
10,000), one call each, while a worker in another process runs them; Outlive
beside huey (its real consumer) and DBOS (its queue, on SQLite), in the same
run, on the same disk, at synchronous FULL and NORMAL.

  - Outlive: the producer's store.tasks.add(Handler("bench.e2e.item", item=...)) per
    job; the worker is a Python process with the store open, the handler
    declared (@outlive.handler) and its loop dispatched (store.loop.dispatch),
    triggers at (1, 0): a run starts at its first dispatch after a task is added.
  - huey: SqliteHuey, a @huey.task() called per job (the call enqueues); the
    worker is huey's consumer (Huey.create_consumer(workers=1), thread worker,
    consumer.run()), its polling brought down from 0.1..10 s to 0.01..0.1 s.
  - DBOS: the producer's DBOSClient.enqueue per job into a queue the worker
    registered (DBOS.register_queue, polling every 0.1 s instead of 1 s); the
    worker is a launched DBOS process whose @DBOS.workflow runs each job.

Each worker starts (and says it is ready) before the first enqueue; it
reports the CLOCK_MONOTONIC time at which its Nth job ran (the clock is the
same in both processes). Enqueue/s: N over the producer's loop; end to end:
first enqueue to the Nth job run. Levels: Outlive through the store's
durability option; huey through a storage subclass that sets PRAGMA synchronous
on each connection it opens (its own fsync option has only FULL and OFF);
DBOS through a SQLAlchemy connect listener that sets it on every connection
(the journal mode each runs in is its own default, and is reported).
Usage: python_worker_bench.py SCRATCH_DIR [--worker KIND DIR LEVEL N].
OUTLIVE_E2E_ITEMS (default 10000), OUTLIVE_E2E_ROUNDS (default 5; DBOS runs
OUTLIVE_E2E_DBOS_ROUNDS, default 1: one of its runs takes 40 s and its ratio
is 20-90x, where one round of the others swung by 0.2 with the disk),
OUTLIVE_E2E_TIMEOUT (default 300 s per job run) and OUTLIVE_E2E_SYSTEMS
(default all: outlive,huey,dbos). Prints a markdown section."""
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))
os.environ.setdefault("OUTLIVE_LIBRARY", os.path.join(ROOT, "build", "liboutlive.so"))

N = int(os.environ.get("OUTLIVE_E2E_ITEMS", "10000"))
ROUNDS = int(os.environ.get("OUTLIVE_E2E_ROUNDS", "5"))
# The systems whose runs take tens of seconds: they run this many rounds.
SLOW_ROUNDS = {"dbos": int(os.environ.get("OUTLIVE_E2E_DBOS_ROUNDS", "1"))}
TIMEOUT = float(os.environ.get("OUTLIVE_E2E_TIMEOUT", "300"))
SYNCHRONOUS = {"FULL": 2, "NORMAL": 1}
LEVEL_NAMES = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}


# ── the systems, each as producer and worker ───────────────────────────────

def report(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class Counter:
    """Counts the jobs a worker ran; reports the time of the Nth."""

    def __init__(self, total):
        self.total, self.ran = total, 0

    def one(self):
        self.ran += 1
        if self.ran == self.total:
            report(f"done {time.monotonic()!r}")


def outlive_worker(directory, level, total):
    import outlive
    counter = Counter(total)

    @outlive.handler("bench.e2e.item")
    def item(item: str):
        counter.one()

    with outlive.Store(directory, "worker", durability=level.lower()) as store:
        store.tasks.set_triggers(1, 0)
        report("ready")
        while counter.ran < total:
            store.loop.dispatch(1.0)


def outlive_producer(directory, level, total):
    import outlive
    store = outlive.Store(directory, "producer", durability=level.lower())
    store.tasks.set_triggers(0, 1e6)  # this process only adds: never a run here

    def enqueue():
        for i in range(total):
            store.tasks.add(outlive.Handler("bench.e2e.item", item=f"item-{i}"))
    return enqueue, store.close, level


def huey_app(directory, level):
    from huey import Huey
    from huey.storage import SqliteStorage

    class Storage(SqliteStorage):
        def _create_connection(self):
            connection = super()._create_connection()
            connection.execute(f"PRAGMA synchronous={SYNCHRONOUS[level]}")
            return connection

    huey = Huey("bench", storage_class=Storage, filename=os.path.join(directory, "huey.db"))
    return huey


def huey_worker(directory, level, total):
    huey = huey_app(directory, level)
    counter = Counter(total)

    @huey.task(name="e2e_item")
    def e2e_item(item):
        counter.one()

    consumer = huey.create_consumer(workers=1, worker_type="thread", periodic=False, initial_delay=0.01,
                                    backoff=1.15, max_delay=0.1, check_worker_health=False)
    report("ready")
    consumer.run()


def huey_producer(directory, level, total):
    huey = huey_app(directory, level)

    @huey.task(name="e2e_item")
    def e2e_item(item):
        pass

    used = LEVEL_NAMES.get(huey.storage.conn.execute("PRAGMA synchronous").fetchone()[0], "?")
    journal = huey.storage.conn.execute("PRAGMA journal_mode").fetchone()[0]

    def enqueue():
        for i in range(total):
            e2e_item(f"item-{i}")
    return enqueue, huey.storage.close, f"{used} ({journal})"


def dbos_level(level):
    """Every SQLAlchemy connection of this process (DBOS's own among them) at `level`."""
    import sqlalchemy
    used = {}

    @sqlalchemy.event.listens_for(sqlalchemy.engine.Engine, "connect")
    def set_level(connection, record):
        connection.execute(f"PRAGMA synchronous={SYNCHRONOUS[level]}")
        used["level"] = LEVEL_NAMES.get(connection.execute("PRAGMA synchronous").fetchone()[0], "?")
        used["journal"] = connection.execute("PRAGMA journal_mode").fetchone()[0]
    return used


def dbos_url(directory):
    return "sqlite:///" + os.path.join(directory, "dbos.sqlite")


def dbos_worker(directory, level, total):
    import logging
    from dbos import DBOS
    dbos_level(level)
    counter = Counter(total)

    DBOS(config={"name": "bench-e2e", "system_database_url": dbos_url(directory), "log_level": "WARNING"})

    @DBOS.workflow(name="e2e_item")
    def e2e_item(item):
        counter.one()

    DBOS.launch()
    DBOS.register_queue("bench", polling_interval_sec=0.1)
    logging.getLogger("dbos").setLevel(logging.WARNING)
    report("ready")
    while True:
        time.sleep(1)


def dbos_producer(directory, level, total):
    from dbos import DBOSClient
    used = dbos_level(level)
    client = DBOSClient(system_database_url=dbos_url(directory))
    options = {"workflow_name": "e2e_item", "queue_name": "bench"}

    def enqueue():
        for i in range(total):
            client.enqueue(options, f"item-{i}")
    client.enqueue  # noqa: B018 (the engine connects on first use: the level is read after the run)
    return enqueue, client.destroy, lambda: f"{used.get('level', '?')} ({used.get('journal', '?')})"


SYSTEMS = {
    # kind: (label, producer, worker, PyPI package, the guarantee it gives)
    "outlive": ("**Outlive store.tasks**", outlive_producer, outlive_worker, None,
                "at-least-once: a task is deleted only when its handler succeeded; a crash reruns the attempt"),
    "huey": ("huey SqliteHuey + consumer", huey_producer, huey_worker, "huey",
             "at-most-once: the consumer deletes a task before it runs it; a crash loses it"),
    "dbos": ("DBOS queue (SQLite)", dbos_producer, dbos_worker, "dbos",
             "at-least-once: a workflow interrupted by a crash is recovered and run again (its finished steps not)"),
}


# ── the parent ─────────────────────────────────────────────────────────────

def run_once(scratch, kind, level):
    label, producer, _, _, _ = SYSTEMS[kind]
    directory = os.path.join(scratch, f"e2e-{kind}-{level}")
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory, mode=0o700)
    log = open(os.path.join(scratch, f"e2e-{kind}-{level}.log"), "w")
    worker = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", kind, directory, level, str(N)],
                              stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        line = worker.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError(f"the {kind} worker did not start: {line!r} (see {log.name})")
        enqueue, close, used = producer(directory, level, N)
        start = time.monotonic()
        enqueue()
        enqueued = time.monotonic() - start
        deadline = time.monotonic() + TIMEOUT
        done = None
        while done is None:
            import select
            readable, _, _ = select.select([worker.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not readable:
                raise RuntimeError(f"the {kind} worker did not run {N} jobs in {TIMEOUT:.0f} s")
            line = worker.stdout.readline()
            if not line:
                raise RuntimeError(f"the {kind} worker exited before running {N} jobs (see {log.name})")
            if line.startswith("done "):
                done = float(line.split()[1])
        used = used() if callable(used) else used
        close()
        return N / enqueued, done - start, used
    finally:
        if worker.poll() is None:
            worker.kill()
        worker.wait()
        log.close()


def rounds_sentence():
    """How many rounds each figure is the median of."""
    if ROUNDS <= 1:
        return "One round."
    slow = [f"{SYSTEMS[kind][0]}: {'one round' if count <= 1 else f'the median of {count}'}"
            for kind, count in SLOW_ROUNDS.items() if count < ROUNDS]
    return (f"Each figure is the median of {ROUNDS} rounds, the order of the systems and levels rotated between "
            "rounds (the disk's fsync time moves within seconds)"
            + ("; " + ", ".join(slow) + " (a run of it takes tens of seconds)." if slow else "."))


def main(argv):
    if len(argv) > 1 and argv[1] == "--worker":
        kind, directory, level, total = argv[2], argv[3], argv[4], int(argv[5])
        SYSTEMS[kind][2](directory, level, total)
        return 0
    scratch = argv[1] if len(argv) > 1 else "/tmp/outlive-e2e"
    os.makedirs(scratch, mode=0o700, exist_ok=True)
    versions, unavailable = {}, {}
    for kind, (_, _, _, package, _) in SYSTEMS.items():
        if package:
            try:
                __import__(package)
                from importlib.metadata import version
                versions[package] = version(package)
            except Exception as error:
                unavailable[kind] = f"{type(error).__name__}: {error}"
    only = [kind for kind in os.environ.get("OUTLIVE_E2E_SYSTEMS", "").split(",") if kind]
    configs = [(kind, level) for level in ("FULL", "NORMAL") for kind in SYSTEMS
               if kind not in unavailable and (not only or kind in only)]
    samples, failures = {}, []
    for round_index in range(ROUNDS):
        shift = round_index * len(configs) // ROUNDS
        for kind, level in configs[shift:] + configs[:shift]:
            if any(failure.startswith(f"{kind} at {level}:") for failure in failures):
                continue
            if round_index >= SLOW_ROUNDS.get(kind, ROUNDS):
                continue
            try:
                rate, seconds, used = run_once(scratch, kind, level)
            except Exception as error:
                failures.append(f"{kind} at {level}: {type(error).__name__}: {error}")
                continue
            entry = samples.setdefault((kind, level), ([], [], used))
            entry[0].append(rate)
            entry[1].append(seconds)

    print("### Python: enqueue N jobs while a worker in another process runs them (huey, DBOS)\n")
    print(f"{N} jobs enqueued one call each by one process while a worker process runs them, each system in its own "
          f"directory on the same disk, in the same run (Python {sys.version.split()[0]}, SQLite "
          f"{sqlite3.sqlite_version} in the peers). Outlive: `store.tasks.add(Handler(...))` per job, the worker a "
          "Python process dispatching its store's loop; huey: a `@huey.task` call per job, the worker huey's own "
          "consumer (one thread; polling 0.01–0.1 s instead of its default 0.1–10 s); DBOS: `DBOSClient.enqueue` "
          "per job, the worker a launched DBOS process running a `@DBOS.workflow` from its queue (polled every "
          "0.1 s instead of 1 s). End to end: from the first enqueue to the last job run. "
          + rounds_sentence() + " Ratio: Outlive's over the "
          "peer's at the same level (enqueue: rates; end to end: the peer's time over Outlive's).\n")
    print("| synchronous | system | enqueue /s | end to end s | Outlive ratio, enqueue | Outlive ratio, end to end |"
          " guarantee |")
    print("|---|---|---:|---:|---:|---:|---|")
    for level in ("FULL", "NORMAL"):
        ours = samples.get(("outlive", level))
        for kind in SYSTEMS:
            if (kind, level) not in samples:
                continue
            rates, times, used = samples[(kind, level)]
            rate, seconds = statistics.median(rates), statistics.median(times)
            label, guarantee = SYSTEMS[kind][0], SYSTEMS[kind][4]
            if ours and kind != "outlive":
                ratios = f"{statistics.median(ours[0]) / rate:.2f} | {seconds / statistics.median(ours[1]):.2f}"
            else:
                ratios = "1.00 | 1.00" if kind == "outlive" else "– | –"
            print(f"| {used} | {label} | {rate:.0f} | {seconds:.2f} | {ratios} | {guarantee} |")
    print()
    if versions:
        print("Peers from PyPI: " + ", ".join(f"{package} {version}" for package, version in versions.items()) + ".")
    print("\nhonker (SQLite, NORMAL) is not measured: no wheel of it installs here (its wheels need glibc 2.38; this "
          "machine has " + "glibc " + os.confstr("CS_GNU_LIBC_VERSION").split()[-1] + ", and building it from "
          "source needs crates.io).")
    for kind, reason in unavailable.items():
        print(f"\n**{kind} not measured**: `{reason}`")
    for failure in failures:
        print(f"\n**Failed**: `{failure}`")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
