#!/usr/bin/env python3
"""Issue 16's Python benchmark: task queues on one PostgreSQL server, Outlive
beside procrastinate and pgqueuer (PyPI), in the same run, on the durable
server scripts/bench.py starts (OUTLIVE_BENCH_PG; fsync and synchronous_commit
on).

  - enqueue /s: one process enqueues N jobs (default 2,000), one call each,
    while no worker runs;
  - enqueue to done /s: the same with W worker processes (1, then 4) started
    and ready before the first enqueue: N over the time from the first enqueue
    to the last job run (each worker reports the CLOCK_MONOTONIC time of every
    job it ran; the clock is the same in every process).

The systems, each used as its documentation shows, its defaults kept:
  - Outlive: a module with an `@outlive.task(queue="jobs")` function (a
    parallel queue, declared once), `item.delay(...)` per job from a process
    with `outlive.Store(URI)` open; workers are
    `python -m outlive worker --queue jobs=1 MODULE --store URI` (one task at
    a time each, as the peers' workers run here).
  - procrastinate: an App on a PsycopgConnector, `task.defer(...)` per job (in
    `app.open()`), workers `app.run_worker(concurrency=1)` (LISTEN/NOTIFY on).
  - pgqueuer: `SyncQueries(SyncPsycopgDriver(...)).enqueue(...)` per job
    (autocommit, as it requires), workers `PgQueuer(AsyncpgDriver(...))` with
    an async entrypoint, `await pgq.run()`.
Each peer gets a fresh database of its own on the server (its schema
installed by its own installer), Outlive a fresh store (a schema).
Usage: python_postgresql_bench.py SCRATCH_DIR [--worker KIND URI].
OUTLIVE_PG_ITEMS (default 1000), OUTLIVE_PG_ROUNDS (default 3; the median is
reported), OUTLIVE_PG_TIMEOUT (default 300 s) and
OUTLIVE_PG_SYSTEMS (default all: outlive,procrastinate,pgqueuer). Prints a
markdown section; says what it did not measure and why (no server, a peer
that did not install, Outlive tasks not on PostgreSQL in this build)."""
import asyncio
import os
import select
import statistics
import subprocess
import sys
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))
os.environ.setdefault("OUTLIVE_LIBRARY", os.path.join(ROOT, "build", "liboutlive.so"))

N = int(os.environ.get("OUTLIVE_PG_ITEMS", "1000"))
ROUNDS = int(os.environ.get("OUTLIVE_PG_ROUNDS", "3"))
TAGS = []  # of the stores and databases made, dropped at the end
TIMEOUT = float(os.environ.get("OUTLIVE_PG_TIMEOUT", "300"))
WORKER_COUNTS = (1, 4)
SCRATCH = "/tmp/outlive-pg-python"


def report(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def with_database(uri, database):
    parts = urllib.parse.urlsplit(uri)
    return urllib.parse.urlunsplit(parts._replace(path="/" + database))


def with_store(uri, store):
    return uri + ("&" if "?" in uri else "?") + "outlive_store=" + store


# ── the systems: setup, producer, worker ───────────────────────────────────

def outlive_setup(server, tag):
    import outlive
    uri = with_store(server, f"bench_py_{os.getpid()}_{tag}")
    with outlive.Store(uri, "setup") as store:
        # A parallel queue, as an application that runs several workers for
        # throughput declares (the default queue is ordered: one at a time).
        store.queues.declare("jobs", "parallel")
    return uri


# The module of the task function, as an application has one: imported by the
# producer (which adds tasks with item.delay) and by `python -m outlive worker`.
JOBS_MODULE = "outlive_pg_bench_jobs"
JOBS_SOURCE = """import sys
import time

import outlive

sys.stdout.write("ready\\n")  # imported: the worker opens the store next
sys.stdout.flush()


@outlive.task(queue="jobs")
def item(item: str) -> None:
    sys.stdout.write(f"d {time.monotonic()!r}\\n")
    sys.stdout.flush()
"""


def jobs_directory():
    directory = os.path.join(SCRATCH, "jobs")
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, JOBS_MODULE + ".py"), "w") as f:
        f.write(JOBS_SOURCE)
    return directory


def outlive_producer(uri):
    import importlib
    import io
    import outlive
    sys.path.insert(0, jobs_directory())
    quiet, sys.stdout = sys.stdout, io.StringIO()  # the module says "ready" for workers
    try:
        jobs = importlib.import_module(JOBS_MODULE)
    finally:
        sys.stdout = quiet
    store = outlive.Store(uri, "producer")  # not a worker: it adds, never runs

    def enqueue(count):
        for i in range(count):
            jobs.item.delay(item=f"item-{i}")
    return enqueue, store.close


def outlive_worker_command(uri):
    """`python -m outlive worker --queue jobs=1 MODULE --store URI`, as users run it."""
    path = os.pathsep.join([jobs_directory(), os.path.join(ROOT, "bindings", "python")])
    env = dict(os.environ, PYTHONPATH=path + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return [sys.executable, "-m", "outlive", "worker", "--queue", "jobs=1", JOBS_MODULE, "--store", uri], env


def fresh_database(server, name):
    import psycopg
    with psycopg.connect(server, autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        connection.execute(f"CREATE DATABASE {name}")
    return with_database(server, name)


def procrastinate_app(uri):
    import logging
    import procrastinate
    # Its warning that the App lives in the main module (true of a benchmark) is not a result.
    logging.getLogger("procrastinate").setLevel(logging.ERROR)
    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=uri))

    @app.task(name="item")
    def item(item):
        report(f"d {time.monotonic()!r}")
    return app, item


def procrastinate_setup(server, tag):
    uri = fresh_database(server, f"bench_procrastinate_{tag}")
    app, _ = procrastinate_app(uri)
    with app.open():
        app.schema_manager.apply_schema()
    return uri


def procrastinate_producer(uri):
    app, item = procrastinate_app(uri)
    opened = app.open()
    opened.__enter__()

    def enqueue(count):
        for i in range(count):
            item.defer(item=f"item-{i}")
    return enqueue, lambda: opened.__exit__(None, None, None)


def procrastinate_worker(uri):
    import logging
    logging.getLogger("procrastinate").setLevel(logging.WARNING)
    app, _ = procrastinate_app(uri)
    report("ready")
    app.run_worker(concurrency=1, install_signal_handlers=False)


def pgqueuer_setup(server, tag):
    uri = fresh_database(server, f"bench_pgqueuer_{tag}")

    async def install():
        import asyncpg
        from pgqueuer import Queries
        from pgqueuer.db import AsyncpgDriver
        connection = await asyncpg.connect(uri)
        await Queries(AsyncpgDriver(connection)).install()
        await connection.close()
    asyncio.run(install())
    return uri


def pgqueuer_producer(uri):
    import psycopg
    from pgqueuer.adapters.drivers.psycopg import SyncPsycopgDriver
    from pgqueuer.adapters.persistence.queries import SyncQueries
    connection = psycopg.connect(uri, autocommit=True)
    queries = SyncQueries(SyncPsycopgDriver(connection))

    def enqueue(count):
        for i in range(count):
            queries.enqueue("item", f"item-{i}".encode())
    return enqueue, connection.close


def pgqueuer_worker(uri):
    import logging
    logging.getLogger("pgqueuer").setLevel(logging.WARNING)

    async def run():
        import asyncpg
        from pgqueuer import PgQueuer
        from pgqueuer.db import AsyncpgDriver
        connection = await asyncpg.connect(uri)
        pgq = PgQueuer(AsyncpgDriver(connection))

        @pgq.entrypoint("item")
        async def item(job):
            report(f"d {time.monotonic()!r}")
        report("ready")
        await pgq.run()
    asyncio.run(run())


SYSTEMS = {
    # kind: (label, setup, producer, worker, PyPI package, the guarantee it gives)
    "outlive": ("**Outlive @outlive.task**", outlive_setup, outlive_producer, outlive_worker_command, None,
                "at-least-once: a task is deleted only when its handler succeeded; a dead worker's task runs "
                "again within the death bound (about 1.5 × `outlive_liveness`, 15 s by default)"),
    "procrastinate": ("procrastinate (PsycopgConnector)", procrastinate_setup, procrastinate_producer,
                      procrastinate_worker, "procrastinate",
                      "at-most-once unless the application retries stalled jobs: a job whose worker died stays "
                      "`doing`; its docs have the user run `get_stalled_jobs` + retry from a periodic task"),
    "pgqueuer": ("pgqueuer (asyncpg worker)", pgqueuer_setup, pgqueuer_producer, pgqueuer_worker, "pgqueuer",
                 "at-least-once after a timeout: a picked job whose heartbeat is older than `heartbeat_timeout` "
                 "(30 s by default) is picked again; the job row is deleted when it finishes"),
}


# ── the parent ─────────────────────────────────────────────────────────────

def worker_command(kind, uri):
    if kind == "outlive":
        return outlive_worker_command(uri)
    return [sys.executable, os.path.abspath(__file__), "--worker", kind, uri], None


def read_line(fd):
    """One line, read a byte at a time: nothing after it is taken from the pipe."""
    line = b""
    while True:
        byte = os.read(fd, 1)
        if not byte or byte == b"\n":
            return line.strip()
        line += byte


def run_once(scratch, kind, server, workers, tag):
    _, setup, producer, _, _, _ = SYSTEMS[kind]
    uri = setup(server, tag)
    logs, processes = [], []
    try:
        for w in range(workers):
            log = open(os.path.join(scratch, f"pg-{kind}-{tag}-{w}.log"), "w")
            logs.append(log)
            command, env = worker_command(kind, uri)
            processes.append(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, env=env))
        for process, log in zip(processes, logs):
            if read_line(process.stdout.fileno()) != b"ready":
                raise RuntimeError(f"a {kind} worker did not start (see {log.name})")
        time.sleep(1.0)  # every worker past its start (LISTEN set up) before the first job
        enqueue, close = producer(uri)
        start = time.monotonic()
        enqueue(N)
        enqueued = time.monotonic() - start
        done, last, deadline = 0, start, time.monotonic() + TIMEOUT
        # The pipes read unbuffered (select() knows nothing of a file object's buffer).
        pending = {process.stdout.fileno(): b"" for process in processes}
        while done < N:
            ready, _, _ = select.select(list(pending), [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise RuntimeError(f"{kind}: {done} of {N} jobs ran in {TIMEOUT:.0f} s")
            for fd in ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise RuntimeError(f"a {kind} worker exited after {done} of {N} jobs (see the logs in {scratch})")
                *lines, pending[fd] = (pending[fd] + chunk).split(b"\n")
                for line in lines:
                    if line.startswith(b"d "):
                        done += 1
                        last = max(last, float(line.split()[1]))
        close()
        return N / enqueued, N / (last - start)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
            process.wait()
        for log in logs:
            log.close()


def enqueue_only(kind, server, tag):
    _, setup, producer, _, _, _ = SYSTEMS[kind]
    uri = setup(server, tag)
    enqueue, close = producer(uri)
    start = time.monotonic()
    enqueue(N)
    rate = N / (time.monotonic() - start)
    close()
    return rate


def main(argv):
    if len(argv) > 1 and argv[1] == "--worker":
        SYSTEMS[argv[2]][3](argv[3])
        return 0
    global SCRATCH
    scratch = SCRATCH = argv[1] if len(argv) > 1 else "/tmp/outlive-pg-python"
    os.makedirs(scratch, mode=0o700, exist_ok=True)
    print("### Python on PostgreSQL: task queue beside procrastinate and pgqueuer\n")
    server = os.environ.get("OUTLIVE_BENCH_PG")
    if not server:
        reason = os.environ.get("OUTLIVE_BENCH_PG_FAILURE") or \
            "no server (OUTLIVE_BENCH_PG is not set; scripts/bench.py starts one)"
        print(f"Not measured: {reason}.\n")
        return 0
    versions, unavailable = {}, {}
    pip_failures = [p for p in os.environ.get("OUTLIVE_BENCH_PIP_FAILURES", "").split(",") if p]
    for kind, (_, setup, _, _, package, _) in SYSTEMS.items():
        try:
            if package:
                __import__(package)
                from importlib.metadata import version
                versions[package] = version(package)
            else:
                setup(server, "probe")
        except Exception as error:
            unavailable[kind] = f"{type(error).__name__}: {error}"
    only = [kind for kind in os.environ.get("OUTLIVE_PG_SYSTEMS", "").split(",") if kind]
    kinds = [kind for kind in SYSTEMS if kind not in unavailable and (not only or kind in only)]
    samples, failures = {}, []
    for round_index in range(ROUNDS):
        for workers in (0,) + WORKER_COUNTS:
            # The order of the systems rotated between rounds (the disk is shared and its load moves).
            for kind in kinds[round_index % len(kinds):] + kinds[:round_index % len(kinds)] if kinds else []:
                what = "enqueue" if workers == 0 else f"{workers} workers"
                if any(failure.startswith(f"{kind}, {what}:") for failure in failures):
                    continue
                tag = f"r{round_index}w{workers}"
                TAGS.append(tag)
                try:
                    rate = enqueue_only(kind, server, tag) if workers == 0 else \
                        run_once(scratch, kind, server, workers, tag)[1]
                    samples.setdefault((kind, workers), []).append(rate)
                except Exception as error:
                    failures.append(f"{kind}, {what}: {type(error).__name__}: {error}")
    results = {key: statistics.median(rates) for key, rates in samples.items()}

    print(f"{N} jobs enqueued one call each by one process, on the same durable PostgreSQL server over TCP "
          f"(127.0.0.1), in the same run (Python {sys.version.split()[0]}). Enqueue: no worker running. Enqueue to "
          "done: W worker processes started (and past their start) before the first enqueue; jobs over the time from "
          "the first enqueue to the last job run. Each system with its defaults, as its documentation shows it: "
          "Outlive `@outlive.task(queue=\"jobs\")` (a parallel queue) + `item.delay()`, workers `python -m outlive worker --queue jobs=1 MODULE --store URI`; procrastinate "
          "`task.defer()`, workers `app.run_worker(concurrency=1)`; pgqueuer `SyncQueries.enqueue()` on an "
          f"autocommit psycopg connection, workers `PgQueuer(AsyncpgDriver)`. Median of {ROUNDS} rounds, the order "
          "of the systems rotated between rounds. Ratio: Outlive's rate over the peer's.\n")
    columns = [("enqueue /s", 0)] + [(f"enqueue to done /s, {w} worker{'s' if w > 1 else ''}", w)
                                     for w in WORKER_COUNTS]
    print("| system | " + " | ".join(name for name, _ in columns) + " | guarantee |")
    print("|---|" + "---:|" * len(columns) + "---|")
    for kind in SYSTEMS:
        if kind not in kinds:
            continue
        cells = []
        for _, key in columns:
            rate = results.get((kind, key))
            ours = results.get(("outlive", key))
            if rate is None:
                cells.append("failed")
            elif kind != "outlive" and ours:
                cells.append(f"{rate:.0f} (Outlive {ours / rate:.2f}×)")
            else:
                cells.append(f"{rate:.0f}")
        print(f"| {SYSTEMS[kind][0]} | " + " | ".join(cells) + f" | {SYSTEMS[kind][5]} |")
    print()
    peers = [kind for kind in kinds if kind != "outlive"]
    if "outlive" in kinds and peers:
        verdicts = []
        for name, key in columns:
            ours, theirs = results.get(("outlive", key)), [results.get((kind, key)) for kind in peers]
            if ours is None or None in theirs:
                verdicts.append(f"{name}: not measured")
            else:
                verdicts.append(f"{name}: {'met' if ours > max(theirs) else 'not met'} "
                                f"({ours:.0f} vs {max(theirs):.0f})")
        print("Goal: ahead of both peers. " + "; ".join(verdicts) + ".\n")
    if versions:
        print("Peers from PyPI: " + ", ".join(f"{package} {version}" for package, version in versions.items()) + ".")
    for kind, reason in unavailable.items():
        pip = " (pip install failed)" if SYSTEMS[kind][4] in pip_failures else ""
        print(f"\n**{SYSTEMS[kind][0].strip('*')} not measured**{pip}: `{reason[:300]}`")
    for failure in failures:
        print(f"\n**Failed**: `{failure[:500]}`")
    print()
    drop_leftovers(server)
    return 1 if failures else 0


def drop_leftovers(server):
    """The peers' databases and Outlive's stores of this run (the server may be reused)."""
    try:
        import psycopg
    except ImportError:  # not installed: scripts/bench.py stops (and the next start wipes) its server anyway
        return
    with psycopg.connect(server, autocommit=True) as connection:
        for tag in ["probe"] + TAGS:
            connection.execute(f"DROP SCHEMA IF EXISTS outlive_bench_py_{os.getpid()}_{tag} CASCADE")
            for kind in SYSTEMS:
                connection.execute(f"DROP DATABASE IF EXISTS bench_{kind}_{tag} WITH (FORCE)")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
