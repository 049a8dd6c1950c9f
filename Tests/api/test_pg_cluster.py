"""scripts/pg_cluster.py, the throwaway PostgreSQL server of the tests: it
starts, reuses a live server, recovers from a killed one, and stops leaving no
process. Uses a cluster of its own (build/pg-cluster-test), never the one the
other tests use."""
import os
import signal
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import pg_cluster  # noqa: E402


def _processes_serving(data):
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if data.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def _query(uri, sql):
    psql = os.path.join(pg_cluster._bin_dir(), "psql")
    return subprocess.run([psql, uri, "-Atqc", sql], capture_output=True, text=True, timeout=30).stdout.strip()


def _own_cluster(bench):
    if not pg_cluster._bin_dir():
        pytest.skip("no PostgreSQL server installed (scripts/install-deps.sh installs it)")
    saved = (pg_cluster.BASE, pg_cluster.DATABASE, pg_cluster.VARIABLE, pg_cluster.DURABILITY)
    if bench:
        pg_cluster.use_bench(os.path.join(ROOT, "build", "pg-cluster-bench-test"))
    else:
        pg_cluster.use_base(os.path.join(ROOT, "build", "pg-cluster-test"))
    try:
        yield pg_cluster
    finally:
        pg_cluster.stop()
        data = pg_cluster.DATA
        pg_cluster.use_base(saved[0])
        pg_cluster.DATABASE, pg_cluster.VARIABLE, pg_cluster.DURABILITY = saved[1:]
        assert _processes_serving(data) == []


@pytest.fixture
def cluster():
    yield from _own_cluster(bench=False)


@pytest.fixture
def bench_cluster():
    yield from _own_cluster(bench=True)


def test_the_benchmarks_server_is_durable_and_apart_from_the_tests_one(bench_cluster):
    uri = bench_cluster.start()
    assert uri.startswith("postgresql://postgres@127.0.0.1:") and uri.endswith("/outlive_bench")
    # A benchmark pays for the commits its peers pay for: nothing of the tests' shortcuts.
    assert [_query(uri, f"SHOW {name}") for name in ("fsync", "synchronous_commit", "full_page_writes")] == \
        ["on", "on", "on"]
    assert bench_cluster.DATA.endswith(os.path.join("pg-cluster-bench-test", "data"))


def test_start_reuses_a_live_server_and_stop_leaves_no_process(cluster):
    uri = cluster.start()
    assert uri.startswith("postgresql://postgres@127.0.0.1:") and uri.endswith("/outlive_test")
    assert _query(uri, "SELECT 1") == "1"
    assert cluster.start_owned() == (uri, False)  # the same server, not ours to stop
    assert _query(uri, "SHOW fsync") == "off"
    cluster.stop()
    assert _processes_serving(cluster.DATA) == []
    assert cluster.uri() is None


def test_start_recovers_from_a_killed_server(cluster):
    uri = cluster.start()
    _query(uri, "CREATE TABLE left_behind(x integer)")
    with open(os.path.join(cluster.DATA, "postmaster.pid")) as f:
        os.kill(int(f.readline()), signal.SIGKILL)
    deadline = time.time() + 10
    while len(_processes_serving(cluster.DATA)) and time.time() < deadline:
        time.sleep(0.05)
    assert cluster.uri() is None
    fresh, started = cluster.start_owned()
    assert started
    assert _query(fresh, "SELECT 1") == "1"
    # A fresh cluster: nothing of the killed one is left.
    assert _query(fresh, "SELECT count(*) FROM pg_tables WHERE tablename = 'left_behind'") == "0"


def test_addresses_other_than_the_test_hosts_are_refused(cluster):
    cluster.start()
    with open(os.path.join(cluster.DATA, "pg_hba.conf")) as f:
        rules = [line.split() for line in f if line.strip() and not line.startswith("#")]
    assert rules == [["local", "all", "all", "trust"],
                     ["host", "all", cluster.PASSWORD_ROLE, "127.0.0.1/32", "scram-sha-256"],
                     ["host", "all", "all", "127.0.0.1/32", "trust"],
                     ["host", "all", "all", cluster.TEST_HOSTS, "trust"]]


def test_a_durable_cluster_restarts_on_its_port_keeping_what_was_committed(cluster):
    uri, started = cluster.start_owned(durable=True)
    assert started and _query(uri, "SHOW synchronous_commit") == "on"
    _query(uri, "CREATE TABLE kept(x integer); INSERT INTO kept VALUES (1)")
    before = _query(uri, "SELECT pg_postmaster_start_time()")
    for mode in ("immediate", "fast"):
        cluster.restart(mode)
        assert cluster.uri() == uri
        assert _query(uri, "SELECT x FROM kept") == "1"
    assert _query(uri, "SELECT pg_postmaster_start_time()") != before
    with pytest.raises(ValueError):
        cluster.restart("smart")
