"""Hosts for the multi-host tests: network namespaces joined to this one by
veth pairs, each a machine of its own as far as the PostgreSQL server can
tell (its own address, its own TCP connections, a link that can be cut).

    with hosts.made(2) as (a, b):
        peer = a.start([program, a.uri(server, store), ...])
        a.cut()      # the namespace's end of the link goes down: no FIN, no RST

Host i gets 10.231.X.2, the server's side of its link 10.231.X.1 (pg_hba.conf
of scripts/pg_cluster.py trusts 10.231.0.0/16 and the server listens on every
address). Names carry this process's pid, so that concurrent runs never share
one, and namespaces left by a run that was killed are removed by the next.
Everything made is removed on the way out, also when the test fails: the
processes in each namespace are killed first (a namespace with a process in it
outlives `ip netns del`), then the namespace, then the veth pair's server end.
Needs root and the ip command; `missing()` says why not, for pytest.skip.

The tests' fixtures are here too (the test modules import them): a conftest.py
would be imported as the module `conftest`, which the Python binding's tests
import by that name when the suites run in one session.
"""
import contextlib
import os
import queue
import random
import re
import shutil
import signal
import subprocess
import threading
import time
import uuid

import pytest

PREFIX = "olhost"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _ip(*arguments, namespace=None, check=True):
    command = (["ip", "netns", "exec", namespace] if namespace else []) + ["ip", *arguments]
    result = subprocess.run(command, capture_output=True, text=True, timeout=30)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: {result.stderr.strip()}")
    return result


def missing():
    """Why namespaces cannot be made here, or None."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "network namespaces need the ip command (iproute2)"
    probe = f"{PREFIX}-{os.getpid()}-probe"
    made = _ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"cannot make a network namespace (ip netns add: {made.stderr.strip()})"
    _ip("netns", "del", probe, check=False)
    return None


class Host:
    def __init__(self, index, octet):
        pid = os.getpid()
        self.namespace = f"{PREFIX}-{pid}-{index}"
        self.link = f"olh{pid % 100000}n{index}"
        self.server_link = f"olh{pid % 100000}s{index}"
        self.address = f"10.231.{octet}.2"
        self.server_address = f"10.231.{octet}.1"
        self.processes = []

    def make(self):
        _ip("netns", "add", self.namespace)
        _ip("link", "add", self.server_link, "type", "veth", "peer", "name", self.link)
        _ip("link", "set", self.link, "netns", self.namespace)
        _ip("addr", "add", f"{self.server_address}/24", "dev", self.server_link)
        _ip("link", "set", self.server_link, "up")
        _ip("addr", "add", f"{self.address}/24", "dev", self.link, namespace=self.namespace)
        _ip("link", "set", self.link, "up", namespace=self.namespace)
        _ip("link", "set", "lo", "up", namespace=self.namespace)

    def uri(self, server, store):
        """The URI of store `store` on `server` (a 127.0.0.1 URI) as this host reaches it."""
        value = server.replace("127.0.0.1", self.server_address, 1)
        return f"{value}{'&' if '?' in value else '?'}outlive_store={store}"

    def start(self, command, env=None):
        """Starts command in this host: a Peer (stdin a pipe, stdout read line by
        line; stderr is left to the test's). `ip netns exec` execs the command,
        so the pid is the program's."""
        process = subprocess.Popen(["ip", "netns", "exec", self.namespace, *command], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, text=True, bufsize=1, env=env)
        self.processes.append(process)
        return Peer(process)

    def run(self, command, timeout=60):
        """Runs command in this host to its end: (exit status, stdout)."""
        result = subprocess.run(["ip", "netns", "exec", self.namespace, *command], capture_output=True, text=True,
                                timeout=timeout)
        return result.returncode, result.stdout + result.stderr

    def cut(self):
        """The host's end of its link goes down: its packets stop, nothing is closed."""
        _ip("link", "set", self.link, "down", namespace=self.namespace)

    def remove(self):
        for process in self.processes:
            if process.poll() is None:
                process.kill()
            process.wait()
        _kill_namespace_processes(self.namespace)
        _ip("netns", "del", self.namespace, check=False)
        _ip("link", "del", self.server_link, check=False)


def _kill_namespace_processes(namespace):
    listed = _ip("netns", "pids", namespace, check=False).stdout.split()
    for pid in listed:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass
    deadline = time.time() + 5
    while _ip("netns", "pids", namespace, check=False).stdout.split() and time.time() < deadline:
        time.sleep(0.02)


def _remove_stale():
    """Namespaces and links of runs whose process is gone."""
    for line in _ip("netns", "list", check=False).stdout.splitlines():
        match = re.match(rf"({PREFIX}-(\d+)-\d+)", line)
        if match and not os.path.exists(f"/proc/{match.group(2)}"):
            _kill_namespace_processes(match.group(1))
            _ip("netns", "del", match.group(1), check=False)
    for line in _ip("-o", "link", "show", check=False).stdout.splitlines():
        match = re.match(r"\d+: (olh(\d+)s\d+)@", line)
        if match and not any(os.path.exists(f"/proc/{pid}") and pid % 100000 == int(match.group(2))
                             for pid in [int(p) for p in os.listdir("/proc") if p.isdigit()]):
            _ip("link", "del", match.group(1), check=False)


def _free_octets(count):
    used = set(int(o) for o in re.findall(r"inet 10\.231\.(\d+)\.", _ip("-o", "-4", "addr", "show").stdout))
    free = [octet for octet in range(1, 255) if octet not in used]
    return random.sample(free, count)


@contextlib.contextmanager
def made(count):
    """Makes `count` hosts and yields them; removes them all on the way out."""
    _remove_stale()
    hosts = [Host(index, octet) for index, octet in enumerate(_free_octets(count))]
    try:
        for host in hosts:
            host.make()
        yield hosts
    finally:
        for host in hosts:
            host.remove()


class Peer:
    """A program running in a host; a thread reads its stdout line by line."""

    def __init__(self, process):
        self.process = process
        self.pid = process.pid
        self.lines = []  # the lines expect() read
        self.output = []  # every line, as the program prints it
        self._queue = queue.Queue()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self):
        for line in self.process.stdout:
            self.output.append(line.rstrip("\n"))
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def expect(self, pattern, timeout):
        """Reads lines until one matches pattern (a regular expression);
        returns the match. Fails when the program ends or the time runs out."""
        deadline = time.time() + timeout
        while True:
            try:
                line = self._queue.get(timeout=max(0.0, deadline - time.time()))
            except queue.Empty:
                raise AssertionError(f"no line matching {pattern!r} within {timeout} s; last lines: {self.lines[-10:]}")
            if line is None:
                self._queue.put(None)
                raise AssertionError(f"the program ended (status {self.process.wait()}) before a line matching "
                                     f"{pattern!r}; last lines: {self.lines[-10:]}")
            self.lines.append(line)
            match = re.search(pattern, line)
            if match:
                return match

    def finish(self, timeout=60):
        """Closes stdin (the programs that wait on it then close their store
        and exit), reads every remaining line; returns the exit status."""
        try:
            self.process.stdin.close()
        except OSError:
            pass
        status = self.process.wait(timeout=timeout)
        while True:
            line = self._queue.get(timeout=timeout)
            if line is None:
                self._queue.put(None)
                return status
            self.lines.append(line)

    def kill(self):
        """kill -9; `output` then holds every line the program printed."""
        self.process.kill()
        self.process.wait()
        self._thread.join(10)


# Fixtures.

PEER = os.path.join(ROOT, "build", "tests", "host_peer")


@pytest.fixture
def server():
    value = os.environ.get("OUTLIVE_TEST_PG")
    if not value:
        pytest.skip("OUTLIVE_TEST_PG is not set: no PostgreSQL test server (scripts/pg_cluster.py start)")
    return value


@pytest.fixture
def store_name():
    return f"hosts_{uuid.uuid4().hex[:16]}"


@pytest.fixture
def peer():
    if not os.access(PEER, os.X_OK):
        pytest.fail(f"{PEER} is missing: make c-tests builds it")
    return PEER


@pytest.fixture
def two_hosts():
    reason = missing()
    if reason:
        pytest.skip(reason)
    with made(2) as pair:
        yield pair
