#!/usr/bin/env python3
"""A throwaway PostgreSQL server for Outlive's tests.

    scripts/pg_cluster.py start   # prints OUTLIVE_TEST_PG=postgresql://...
    scripts/pg_cluster.py env     # the same line, if the server runs
    scripts/pg_cluster.py restart [fast|immediate]
    scripts/pg_cluster.py stop
    scripts/pg_cluster.py --bench start|env|stop   # the benchmarks' durable server

Debian's server (the `postgresql` package, installed with apt-get when missing)
runs a cluster of its own: data directory build/pg/data, Unix socket in
build/pg/socket, TCP at a free port (TCP so that the keepalive and
tcp_user_timeout settings the backend relies on apply; the URI uses 127.0.0.1),
trust authentication from 127.0.0.1 and from the test "hosts" (network
namespaces on 10.231.0.0/16) and no other address, the role outlive_password
excepted (it must give its password), one database `outlive_test`. `initdb`
refuses to run as root, so as root the cluster belongs to the `postgres` user
and its commands run under `runuser -u postgres`.

`start` is idempotent: a server of this cluster that still answers is reused;
anything else under build/pg (a stale cluster, a crashed server) is stopped and
wiped first. `stop` leaves no process behind. scripts/run_tests.py starts the
server before the suites and stops it in a `finally` (only a server it started).
"""
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def use_base(base):
    """Puts the cluster in `base` (its tests use a directory of their own)."""
    global BASE, DATA, SOCKET, LOG, URI_FILE
    BASE = base
    DATA = os.path.join(base, "data")
    SOCKET = os.path.join(base, "socket")
    LOG = os.path.join(base, "server.log")
    URI_FILE = os.path.join(base, "uri")


use_base(os.path.join(ROOT, "build", "pg"))
DATABASE = "outlive_test"
VARIABLE = "OUTLIVE_TEST_PG"
# Test-only settings: no fsync (a throwaway cluster).
DURABILITY = ["fsync=off", "synchronous_commit=off", "full_page_writes=off"]


def use_bench(base=None):
    """Manages the benchmarks' durable cluster (in `base`, default build/pg-bench)
    instead of the tests' one."""
    global DATABASE, VARIABLE, DURABILITY
    use_base(base or os.path.join(ROOT, "build", "pg-bench"))
    DATABASE = "outlive_bench"
    VARIABLE = "OUTLIVE_BENCH_PG"
    DURABILITY = ["fsync=on", "synchronous_commit=on", "full_page_writes=on"]

# The role that authenticates with a password (tests create it).
PASSWORD_ROLE = "outlive_password"
# Addresses of the network namespaces that tests use as other hosts.
TEST_HOSTS = "10.231.0.0/16"


def _as_root():
    return os.geteuid() == 0


def _bin_dir():
    """The newest installed server's bin directory, or None."""
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    return os.path.dirname(candidates[-1]) if candidates else None


def install_server():
    """Installs Debian's postgresql when no server is present (CI machines may be fresh)."""
    if _bin_dir():
        return
    sudo = [] if _as_root() else ["sudo"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    print("pg_cluster: installing Debian's postgresql", file=sys.stderr, flush=True)
    subprocess.run(sudo + ["apt-get", "update", "-qq"], check=True, env=env)
    # The package's own cluster is not wanted: ours runs under build/.
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "postgresql"], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    if not _bin_dir():
        raise RuntimeError("apt-get installed postgresql but no /usr/lib/postgresql/*/bin/initdb exists")


def _run(command, **kwargs):
    """Runs a server command as the cluster's owner."""
    if _as_root():
        command = ["runuser", "-u", "postgres", "--"] + command
    return subprocess.run(command, **kwargs)


def _chown_to_owner(path):
    if _as_root():
        entry = pwd.getpwnam("postgres")
        os.chown(path, entry.pw_uid, entry.pw_gid)


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _postmaster_pid():
    try:
        with open(os.path.join(DATA, "postmaster.pid")) as f:
            return int(f.readline().strip())
    except (OSError, ValueError):
        return None


def _is_our_postmaster(pid):
    """Whether pid is a postgres process serving our data directory (not a reused pid)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            arguments = f.read().split(b"\0")
    except OSError:
        return False
    return any(os.path.basename(a.decode(errors="replace")) == "postgres" for a in arguments[:1]) and \
        DATA.encode() in b" ".join(arguments)


def _answers(uri):
    bin_dir = _bin_dir()
    if not bin_dir:
        return False
    result = _run([os.path.join(bin_dir, "psql"), uri, "-Atqc", "SELECT 1"],
                  capture_output=True, text=True, timeout=10)
    return result.returncode == 0 and result.stdout.strip() == "1"


def uri():
    """The running cluster's URI, or None."""
    try:
        with open(URI_FILE) as f:
            value = f.read().strip()
    except OSError:
        return None
    pid = _postmaster_pid()
    if pid and _is_our_postmaster(pid) and _answers(value):
        return value
    return None


def stop():
    """Stops the server (fast, then immediate, then SIGKILL of the postmaster) and
    removes nothing but its state: build/pg stays for the next start to wipe."""
    bin_dir = _bin_dir()
    pid = _postmaster_pid()
    if bin_dir and os.path.isdir(DATA) and pid and _is_our_postmaster(pid):
        for mode in ("fast", "immediate"):
            result = _run([os.path.join(bin_dir, "pg_ctl"), "-D", DATA, "-m", mode, "-w", "-t", "20", "stop"],
                          capture_output=True, text=True)
            if result.returncode == 0:
                break
        if _is_our_postmaster(pid):
            os.kill(pid, signal.SIGKILL)
            # The postmaster's children leave when it does (they watch its pipe).
            deadline = time.time() + 10
            while _is_our_postmaster(pid) and time.time() < deadline:
                time.sleep(0.05)
    try:
        os.remove(URI_FILE)
    except OSError:
        pass


def start():
    """Starts (or reuses) the cluster and returns its URI."""
    return start_owned()[0]


def restart(mode="fast"):
    """Restarts the running server on the same port and data: "fast" ends every
    session and shuts down cleanly, "immediate" stops at once, as a crash does
    (the server recovers from its WAL when it starts)."""
    if mode not in ("fast", "immediate"):
        raise ValueError(f"restart mode {mode!r}: fast or immediate")
    result = _run([os.path.join(_bin_dir(), "pg_ctl"), "-D", DATA, "-l", LOG, "-m", mode, "-w", "-t", "60", "restart"],
                  capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"pg_ctl restart failed:\n{result.stdout}{result.stderr}\n{_tail(LOG)}")


def start_owned(durable=False):
    """Starts (or reuses) the cluster: its URI, and whether this call started it
    (a server someone started by hand is theirs to stop). `durable`: commits
    wait for their WAL to be written (synchronous_commit on), so that an
    acknowledged commit survives a crash of the server (fsync stays off: the
    kernel, which survives, holds what was written); the shared test server
    does without, for speed."""
    existing = uri()
    if existing:
        return existing, False
    install_server()
    bin_dir = _bin_dir()
    stop()  # a stale server of an earlier run, if any
    shutil.rmtree(BASE, ignore_errors=True)
    os.makedirs(SOCKET)
    os.makedirs(DATA, mode=0o700)
    for path in (BASE, SOCKET, DATA):
        _chown_to_owner(path)
    result = _run([os.path.join(bin_dir, "initdb"), "-D", DATA, "-U", "postgres", "-A", "trust", "-E", "UTF8",
                   "--locale=C.UTF-8", "--no-sync"], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"initdb failed:\n{result.stdout}{result.stderr}")
    # Network-namespace tests reach the server from "hosts" on 10.231.0.0/16
    # (veth pairs made by the tests after the server started, hence '*'); any
    # other address is refused by pg_hba.conf, which trusts only these two.
    with open(os.path.join(DATA, "pg_hba.conf"), "w") as hba:
        # One role must give a password, so that tests can give a wrong one.
        hba.write("local all all trust\n"
                  f"host all {PASSWORD_ROLE} 127.0.0.1/32 scram-sha-256\n"
                  "host all all 127.0.0.1/32 trust\n"
                  f"host all all {TEST_HOSTS} trust\n")
    # Room for the many connections process tests open (two per store handle).
    # `durable` (a test's private cluster): commits wait for their WAL.
    durability = [("synchronous_commit=on" if durable and setting.startswith("synchronous_commit") else setting)
                  for setting in DURABILITY]
    settings = ["listen_addresses='*'", f"unix_socket_directories='{SOCKET}'"] + durability + \
        ["max_connections=300", "shared_buffers=64MB"]
    for attempt in range(5):
        port = _free_port()
        with open(os.path.join(DATA, "postgresql.auto.conf"), "a") as conf:
            conf.write("\n".join(settings + [f"port={port}"]) + "\n")
        result = _run([os.path.join(bin_dir, "pg_ctl"), "-D", DATA, "-l", LOG, "-w", "-t", "30", "start"],
                      capture_output=True, text=True)
        if result.returncode == 0:
            break
        # Someone took the port between the probe and the bind: another port.
        stop()
    else:
        raise RuntimeError(f"the test server did not start:\n{result.stdout}{result.stderr}\n{_tail(LOG)}")
    value = f"postgresql://postgres@127.0.0.1:{port}/{DATABASE}"
    result = _run([os.path.join(bin_dir, "psql"), f"postgresql://postgres@127.0.0.1:{port}/postgres", "-Atqc",
                   f"CREATE DATABASE {DATABASE}"], capture_output=True, text=True)
    if result.returncode != 0:
        stop()
        raise RuntimeError(f"cannot create the test database: {result.stderr}")
    with open(URI_FILE, "w") as f:
        f.write(value + "\n")
    return value, True


def _tail(path, lines=20):
    try:
        with open(path) as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


def main():
    arguments = sys.argv[1:]
    if arguments[:1] == ["--bench"]:
        use_bench()
        arguments = arguments[1:]
    command = arguments[0] if arguments else ""
    if command == "start":
        print(f"{VARIABLE}={start()}")
    elif command == "env":
        value = uri()
        if not value:
            how = "--bench start" if VARIABLE == "OUTLIVE_BENCH_PG" else "start"
            print(f"pg_cluster: the server is not running (scripts/pg_cluster.py {how})", file=sys.stderr)
            return 1
        print(f"{VARIABLE}={value}")
    elif command == "restart":
        restart(arguments[1] if len(arguments) > 1 else "fast")
    elif command == "stop":
        stop()
    else:
        print("usage: pg_cluster.py [--bench] start|env|restart [fast|immediate]|stop", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
