#!/usr/bin/env python3
"""Tasks per second of one parallel queue on a PostgreSQL store, run by 1, 2
and 4 runner processes at once (issue 16: claims with SKIP LOCKED).

N tasks (default 2,000) of a handler that does nothing are enqueued into a
parallel queue first; then K worker processes open the store, declare the
handler and serve the queue (limit L each, default 8), all released together;
the time is from their release to the moment the queue's last task is gone
(read by this process from the queue's counts). Each worker is a Python
process dispatching its store's loop.

Usage: pg_claims_bench.py POSTGRESQL_URI|SCRATCH [--runners 1,2,4] [--tasks N] [--limit L]
       [--rounds R]. Prints a BENCHMARKS.md section: one row per runner count (the best of R
       rounds). Given make bench's scratch directory, it measures on $OUTLIVE_BENCH_PG.
"""
import argparse
import os
import subprocess
import sys
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))
os.environ.setdefault("OUTLIVE_LIBRARY", os.path.join(ROOT, "build", "liboutlive.so"))

QUEUE = "bench_claims"


def store_uri(server, store):
    return f"{server}{'&' if '?' in server else '?'}outlive_store={store}"


def worker(uri, limit, go_file):
    import outlive

    @outlive.handler("bench.claims.item")
    def item(i: int):
        pass

    with outlive.Store(uri, "runner") as store:
        store.tasks.set_triggers(0, 1e6)
        print("ready", flush=True)
        while not os.path.exists(go_file):
            time.sleep(0.001)
        store.queues.serve(QUEUE, limit)
        while not os.path.exists(go_file + ".stop"):
            store.loop.dispatch(0.05)


def remaining(store):
    return sum(q.pending + q.running for q in store.queues.list() if q.name == QUEUE)


def one_round(server, runners, tasks, limit, scratch):
    import outlive
    name = "bench_" + uuid.uuid4().hex[:12]
    uri = store_uri(server, name)
    store = outlive.Store(uri, "producer")
    store.tasks.set_triggers(0, 1e6)
    store.queues.declare(QUEUE, "parallel")
    for i in range(tasks):
        store.queues.enqueue(outlive.Handler("bench.claims.item", i=i), QUEUE)
    go = os.path.join(scratch, name + ".go")
    workers = [subprocess.Popen([sys.executable, __file__, "--worker", uri, str(limit), go],
                                stdout=subprocess.PIPE, text=True) for _ in range(runners)]
    for process in workers:
        assert process.stdout.readline().strip() == "ready"
    began = time.monotonic()
    open(go, "w").close()
    while remaining(store) > 0:
        time.sleep(0.02)
    took = time.monotonic() - began
    open(go + ".stop", "w").close()
    for process in workers:
        process.wait(timeout=60)
    os.unlink(go)
    os.unlink(go + ".stop")
    assert store.tasks.dead_count == 0
    store.close()
    return took


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("server", help="a PostgreSQL URI; anything else (make bench's scratch directory): "
                                       "$OUTLIVE_BENCH_PG, the benchmarks' durable server")
    parser.add_argument("--runners", default="1,2,4")
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--limit", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scratch", default=os.path.join(ROOT, "build"))
    arguments = parser.parse_args()
    print("### PostgreSQL: one parallel queue run by 1, 2 and 4 runner processes\n")
    server = arguments.server
    if not server.startswith("postgres"):
        server = os.environ.get("OUTLIVE_BENCH_PG", "")
        if not server:
            print("Not measured: no PostgreSQL server for the benchmarks "
                  f"({os.environ.get('OUTLIVE_BENCH_PG_FAILURE', 'OUTLIVE_BENCH_PG is not set')}).")
            return
    print(f"{arguments.tasks} tasks of a no-op handler in one parallel queue, then K Python runner processes "
          f"(limit {arguments.limit} each) released together; seconds until the queue is empty, best of "
          f"{arguments.rounds} rounds. Claims take no store lock (FOR UPDATE SKIP LOCKED; docs/postgresql.md, "
          "\"Claims of a parallel queue\"), so more runners need not wait for one another; on one machine of 2 "
          "cores the runners and the server share the CPUs.\n")
    print("| runner processes | tasks/s | rounds (s) |\n|---:|---:|---|")
    for runners in [int(k) for k in arguments.runners.split(",")]:
        times = [one_round(server, runners, arguments.tasks, arguments.limit, arguments.scratch)
                 for _ in range(arguments.rounds)]
        best = min(times)
        print(f"| {runners} | {arguments.tasks / best:.0f} | {', '.join(f'{t:.2f}' for t in times)} |", flush=True)

if __name__ == "__main__":
    main()
