"""A mixed workload on two hosts against one PostgreSQL store (key-value sets,
signal posts, tasks when they are on PostgreSQL), through
`kill -9` of processes on both hosts and two restarts of the server (one clean,
one as a crash): every acknowledged operation is there afterwards, the
at-least-once bounds hold, and no claim is held by a dead run.

The server is a private one (scripts/pg_cluster.py with a directory of its
own, synchronous_commit on so that an acknowledged commit survives the
server's crash): the shared test server is used by the other suites at the
same time. The processes are host_peer (Tests/c/programs), which follow the
documented contract: retry a call that failed with OUTLIVE_E_IO, close and
open the store again when the handle says its run ended (outlive_store_check,
OUTLIVE_E_STATE)."""
import collections
import os
import re
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from hosts import peer, server, store_name, two_hosts  # noqa: F401 (fixtures)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import pg_cluster  # noqa: E402

STORE = "restart"
QUEUE = "work"
# Deaths are seen within 1.5 x the bound; a short one keeps the test short.
LIVENESS = 4


@pytest.fixture
def private_server():
    if not pg_cluster._bin_dir():
        pytest.skip("no PostgreSQL server installed (scripts/install-deps.sh installs it)")
    saved = pg_cluster.BASE
    base = os.path.join(ROOT, "build", f"pg-restart-{os.getpid()}")
    pg_cluster.use_base(base)
    try:
        uri, _ = pg_cluster.start_owned(durable=True)
        yield uri
    finally:
        pg_cluster.stop()
        shutil.rmtree(base, ignore_errors=True)
        pg_cluster.use_base(saved)


def _numbers(peers, kind):
    """The indices i of the lines "<kind> i" the peers printed, each counted once per line."""
    found = collections.Counter()
    for peer in peers:
        for line in list(peer.output):
            match = re.fullmatch(rf"{kind} (\d+)", line)
            if match:
                found[int(match.group(1))] += 1
    return found


def _wait(condition, timeout, what):
    deadline = time.time() + timeout
    while not condition():
        if time.time() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.05)


def _query(uri, sql):
    psql = os.path.join(pg_cluster._bin_dir(), "psql")
    result = subprocess.run([psql, uri, "-Atqc", sql], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_kill_9_on_every_host_and_server_restarts_mid_workload_lose_nothing_acknowledged(private_server, peer, two_hosts):
    import outlive

    server = f"{private_server}?outlive_liveness={LIVENESS}"
    hosts = two_hosts
    signals = {host.namespace: str(uuid.uuid4()) for host in hosts}
    for host in hosts:
        status, output = host.run([peer, host.uri(server, STORE), "registrar", "consume", signals[host.namespace],
                                   "until", "any_process"])
        assert status == 0 and "CONSUMING" in output, output
    deliverers = {host.namespace: [host.start([peer, host.uri(server, STORE), "deliverer", "deliver"])] for host in hosts}
    # Tasks join the workload where this library has them on PostgreSQL.
    status, output = hosts[0].run([peer, hosts[0].uri(server, STORE), "declarer", "add", QUEUE, "none", "0"])
    with_tasks = status == 0
    assert with_tasks or "tasks are not yet available on PostgreSQL" in output, output
    runners = {host.namespace: [host.start([peer, host.uri(server, STORE), "runner", "run", QUEUE, "1"])]
               for host in hosts} if with_tasks else {}
    workers = {}
    # Processes killed or running at a restart: each may have had one
    # delivery (or, for runners, one task) in flight.
    interrupted = {"processes": 0, "runners": 0}

    def start_worker(host, start):
        workers.setdefault(host.namespace, []).append(
            host.start([peer, host.uri(server, STORE), f"worker-{host.namespace}", "workload", host.namespace,
                        signals[host.namespace], str(start), "1000000"] + ([QUEUE] if with_tasks else [])))

    def acked(host, kind="set"):
        return _numbers(workers[host.namespace], f"ACK {kind}")

    def progress(more):
        """Waits until every worker acknowledged `more` sets beyond what it had."""
        targets = {host.namespace: len(acked(host)) + more for host in hosts}
        _wait(lambda: all(len(acked(host)) >= targets[host.namespace] for host in hosts), 60,
              f"{more} more acknowledged sets on each host")

    for host in hosts:
        start_worker(host, 0)
    progress(50)

    # kill -9 of a worker on one host (it starts again after its last
    # operation acknowledged) and of a deliverer and a runner on the other.
    a, b = hosts
    workers[a.namespace][-1].kill()
    start_worker(a, max(acked(a, "task" if with_tasks else "post"), default=-1) + 1)
    deliverers[b.namespace][-1].kill()
    deliverers[b.namespace].append(b.start([peer, b.uri(server, STORE), "deliverer", "deliver"]))
    interrupted["processes"] += 2
    if with_tasks:
        runners[b.namespace][-1].kill()
        runners[b.namespace].append(b.start([peer, b.uri(server, STORE), "runner", "run", QUEUE, "1"]))
        interrupted["processes"] += 1
        interrupted["runners"] += 1
    progress(50)

    # The server restarts: as a crash (recovering from its WAL), then cleanly.
    # Every process's run ends; each opens the store again and carries on.
    for mode in ("immediate", "fast"):
        running = [peers[-1] for peers in list(workers.values()) + list(deliverers.values()) + list(runners.values())]
        before = [list(peer.output).count("REOPENED") for peer in running]
        pg_cluster.restart(mode)
        interrupted["processes"] += len(running)
        interrupted["runners"] += len(runners)
        progress(50)
        _wait(lambda: all(list(peer.output).count("REOPENED") > count for peer, count in zip(running, before)), 30,
              f"every process opening the store again after the {mode} restart")

    # The end: kill -9 of both workers, in the middle of whatever they do.
    for host in hosts:
        workers[host.namespace][-1].kill()
        interrupted["processes"] += 1

    check = outlive.Store(f"{server}&outlive_store={STORE}", process="checker")
    try:
        for host in hosts:
            sets, posts = acked(host, "set"), acked(host, "post")
            assert len(sets) > 120
            for i in sets:
                assert check.kv[f"{host.namespace}/{i:05d}"] == str(i).encode(), f"acknowledged set {i} of {host.namespace} lost"
            tries = sum(_numbers(workers[host.namespace], "TRY post").values())
            version, consumers, _ = check.signals.lookup(signals[host.namespace])
            # Every acknowledged post is a version; a post whose outcome its
            # caller never learnt (a lost connection, a kill) may be one too.
            assert len(posts) <= version <= tries, (len(posts), version, tries)
            assert consumers == 1
            # The latest version reaches the consumer, whatever died: no claim
            # of a dead run holds it back.
            signal = signals[host.namespace]
            _wait(lambda: check.signals.consumers(signal)[0].last_version == version, 30,
                  f"version {version} of {host.namespace}'s signal delivered")

        # Any host_peer process that dispatches its loop resolves the
        # consumers' handler, so any of them may deliver (any_process).
        everyone = [peer for group in (workers, deliverers, runners) for peers in group.values() for peer in peers]

        def delivered():
            found = collections.Counter()
            for peer in everyone:
                for line in list(peer.output):
                    fields = line.split()
                    if fields[0] == "DELIVERED":
                        found[(fields[1], int(fields[2]))] += 1
            return found
        # The handler prints its line before the delivery is recorded; the line
        # may still be on its way through the pipe.
        for host in hosts:
            latest = (signals[host.namespace], check.signals.lookup(signals[host.namespace])[0])
            _wait(lambda: latest in delivered(), 10, f"the line of {latest}'s delivery")
        delivered = delivered()
        # At-least-once: a version is delivered again only when the process
        # delivering it died or lost its run inside the delivery — at most one
        # delivery in flight per process killed or running at a restart.
        repeats = sum(count - 1 for count in delivered.values())
        assert repeats <= interrupted["processes"], (interrupted, delivered)

        if with_tasks:
            # Every acknowledged task runs at least once; a task runs again
            # only when its runner died or lost its run while running it (a
            # commit per task: one in flight per runner at the kill and at
            # each restart), or when an add whose outcome was lost was tried
            # again after the task had already run and gone.
            wanted = {f"{host.namespace}-{i}" for host in hosts for i in acked(host, "task")}
            assert len(wanted) > 200

            def ran():
                return collections.Counter(line.split()[1] for peers in runners.values() for peer in peers
                                           for line in list(peer.output) if line.startswith("RAN "))
            _wait(lambda: wanted <= set(ran()), 60, "every acknowledged task run")
            retried_adds = sum(sum(_numbers(workers[host.namespace], "TRY task").values()) -
                               sum(_numbers(workers[host.namespace], "ACK task").values()) for host in hosts)
            task_repeats = sum(count - 1 for count in ran().values())
            assert task_repeats <= interrupted["runners"] + retried_adds, (interrupted, retried_adds, ran())

        schema = f"outlive_{STORE}"
        live = f"""SELECT r.run_id FROM {schema}.outlive_runs r JOIN pg_locks l ON l.locktype = 'advisory'
                   AND l.objsubid = 2 AND l.granted AND l.classid = '{schema}'::regnamespace::oid
                   AND l.objid = r.lock_key::bigint::oid"""
        # Opening `check` ended the dead runs: every run left is alive, and no
        # consumer is claimed by a run that is not.
        assert _query(private_server, f"SELECT count(*) FROM {schema}.outlive_runs WHERE run_id NOT IN ({live})") == "0"
        assert _query(private_server, f"SELECT count(*) FROM {schema}.outlive_signal_consumers "
                                      f"WHERE claim_run IS NOT NULL AND claim_run NOT IN ({live})") == "0"
        if with_tasks:
            assert _query(private_server, f"SELECT count(*) FROM {schema}.outlive_tasks "
                                          f"WHERE runner IS NOT NULL AND runner NOT IN ({live})") == "0"
            assert _query(private_server, f"SELECT count(*) FROM {schema}.outlive_task_runner "
                                          f"WHERE run_id NOT IN ({live})") == "0"
    finally:
        check.close()
    for peers in list(deliverers.values()) + list(runners.values()):
        assert peers[-1].finish() == 0
