"""A mixed workload on two hosts against one PostgreSQL store, through
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

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import pg_cluster  # noqa: E402

STORE = "restart"
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
    workers = {}

    def start_worker(host, start):
        workers.setdefault(host.namespace, []).append(
            host.start([peer, host.uri(server, STORE), f"worker-{host.namespace}", "workload", host.namespace,
                        signals[host.namespace], str(start), "1000000"]))

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

    # kill -9 of a worker on one host (it starts again where its last
    # acknowledged post leaves off) and of a deliverer on the other.
    a, b = hosts
    workers[a.namespace][-1].kill()
    start_worker(a, max(acked(a, "post"), default=-1) + 1)
    deliverers[b.namespace][-1].kill()
    deliverers[b.namespace].append(b.start([peer, b.uri(server, STORE), "deliverer", "deliver"]))
    progress(50)

    # The server restarts: as a crash (recovering from its WAL), then cleanly.
    # Every process's run ends; each opens the store again and carries on.
    for mode in ("immediate", "fast"):
        running = [peers[-1] for peers in list(workers.values()) + list(deliverers.values())]
        before = [list(peer.output).count("REOPENED") for peer in running]
        pg_cluster.restart(mode)
        progress(50)
        _wait(lambda: all(list(peer.output).count("REOPENED") > count for peer, count in zip(running, before)), 30,
              f"every process opening the store again after the {mode} restart")

    # The end: kill -9 of both workers, in the middle of whatever they do.
    for host in hosts:
        workers[host.namespace][-1].kill()

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

        def delivered():
            found = collections.Counter()
            for peers in deliverers.values():
                for peer in peers:
                    for line in list(peer.output):
                        fields = line.split()
                        if fields[0] == "DELIVERED":
                            found[(fields[1], int(fields[2]))] += 1
            return found
        # The handler printed its line before the delivery was recorded; the
        # line may still be on its way through the pipe.
        for host in hosts:
            latest = (signals[host.namespace], check.signals.lookup(signals[host.namespace])[0])
            _wait(lambda: latest in delivered(), 10, f"the line of {latest}'s delivery")
        delivered = delivered()
        # At-least-once: a version is delivered again only when its deliverer
        # died or lost its run inside the delivery — at most one delivery per
        # deliverer in flight at each of the kill and the two restarts.
        repeats = sum(count - 1 for count in delivered.values())
        assert repeats <= 1 + 2 * 2, delivered

        schema = f"outlive_{STORE}"
        live = f"""SELECT r.run_id FROM {schema}.outlive_runs r JOIN pg_locks l ON l.locktype = 'advisory'
                   AND l.objsubid = 2 AND l.granted AND l.classid = '{schema}'::regnamespace::oid
                   AND l.objid = r.lock_key::bigint::oid"""
        # Opening `check` ended the dead runs: every run left is alive, and no
        # consumer is claimed by a run that is not.
        assert _query(private_server, f"SELECT count(*) FROM {schema}.outlive_runs WHERE run_id NOT IN ({live})") == "0"
        assert _query(private_server, f"SELECT count(*) FROM {schema}.outlive_signal_consumers "
                                      f"WHERE claim_run IS NOT NULL AND claim_run NOT IN ({live})") == "0"
    finally:
        check.close()
    for peers in deliverers.values():
        assert peers[-1].finish() == 0
