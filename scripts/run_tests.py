#!/usr/bin/env python3
"""Runs every test suite of Outlive and ends with one line: "N passed, N failed".

Suites: the C programs in build/tests (each prints PASS/FAIL lines), the Swift
unit tests (swift test), pytest over Tests/api (header, symbols, versions),
Tests/hosts (several hosts as network namespaces sharing one PostgreSQL
store) and bindings/python/tests (the Python package), cargo test of the Rust binding
(bindings/rust), and go test over the Go binding (bindings/go) and its example
(Examples/go). Exits 1 if anything failed.

The suites that test the PostgreSQL backend get a throwaway server of their own
(scripts/pg_cluster.py), started before them and always stopped at the end; its
URI is in OUTLIVE_TEST_PG. A URI already in OUTLIVE_TEST_PG is used as it is.
"""
import argparse
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pg_cluster  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")


# C suites parametrized by a store location (Tests/c/harness.h): run a second
# time on PostgreSQL stores (OUTLIVE_TEST_STORE_KIND=postgresql) when the test
# server is up. A suite is added here once its systems work on PostgreSQL.
POSTGRESQL_C_SUITES = ["test_kv", "test_kv_processes", "test_signals", "test_signals_processes",
                       "test_messages", "test_messages_processes", "test_group_commit",
                       "test_durable_interactions", "test_faults"]
# Tasks and schedules (about 30 s on the test server).
POSTGRESQL_C_SUITES += ["test_tasks", "test_tasks_processes", "test_tasks_completion", "test_tasks_lifecycle", "test_tasks_uncallable",
                        "test_queues", "test_queues_processes", "test_schedules"]
# The crash harness: 40 kills (about 11 s on the test server).
POSTGRESQL_C_SUITES += ["test_crash"]


def run_c(timeout):
    passed = failed = 0
    tests_dir = os.path.join(BUILD, "tests")
    binaries = sorted(
        name for name in os.listdir(tests_dir)
        if name.startswith("test_") and os.access(os.path.join(tests_dir, name), os.X_OK)
    ) if os.path.isdir(tests_dir) else []
    runs = [(name, name, None) for name in binaries]
    if os.environ.get(pg_cluster.VARIABLE):
        runs += [(name, f"{name} (postgresql)", "postgresql") for name in POSTGRESQL_C_SUITES if name in binaries]
    for name, label, kind in runs:
        start = time.time()
        env = dict(os.environ)
        if kind:
            env["OUTLIVE_TEST_STORE_KIND"] = kind
        else:
            env.pop("OUTLIVE_TEST_STORE_KIND", None)
        try:
            result = subprocess.run([os.path.join(tests_dir, name)], cwd=ROOT, capture_output=True,
                                    text=True, timeout=timeout, env=env)
            output, code = result.stdout + result.stderr, result.returncode
        except subprocess.TimeoutExpired as error:
            output = (error.stdout or b"").decode(errors="replace") if isinstance(error.stdout, bytes) else (error.stdout or "")
            code = "timeout"
        p = len(re.findall(r"^PASS ", output, re.M))
        f = len(re.findall(r"^FAIL ", output, re.M))
        if code != 0 and f == 0:
            f = 1  # a crash or time-out is a failure even without a FAIL line
            output += f"\n{name} exited with {code}\n"
        passed, failed = passed + p, failed + f
        status = "ok" if f == 0 else "FAILED"
        skipped = len(re.findall(r"^SKIP ", output, re.M))
        skip_note = f", {skipped} skipped" if skipped else ""
        print(f"  c/{label}: {p} passed, {f} failed{skip_note} ({time.time() - start:.1f}s) {status}")
        if f:
            for line in output.splitlines():
                if line.startswith("FAIL") or "exited with" in line or "error" in line.lower():
                    print("    " + line)
    return passed, failed


# In-process C suites run again under valgrind memcheck: no leak (definite,
# indirect or possible, bar the Swift runtime's metadata caches in
# Tests/valgrind.supp), no invalid read or write.
VALGRIND_SUITES = ["test_kv", "test_security", "test_handlers", "test_handlers_cross", "test_interactions", "test_operations",
                   "test_messages", "test_signals", "test_tasks", "test_tasks_completion", "test_tasks_uncallable", "test_durable_interactions",
                   "test_close_in_callback"]


def run_valgrind(timeout):
    passed = failed = 0
    for name in VALGRIND_SUITES:
        binary = os.path.join(BUILD, "tests", name)
        if not os.path.exists(binary):
            continue
        start = time.time()
        command = ["valgrind", "-q", "--leak-check=full", "--errors-for-leak-kinds=definite,indirect,possible",
                   "--error-exitcode=99", f"--suppressions={os.path.join(ROOT, 'Tests', 'valgrind.supp')}", binary]
        try:
            result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
            ok = result.returncode == 0
            output = result.stdout + result.stderr
        except subprocess.TimeoutExpired:
            ok, output = False, "timed out"
        print(f"  valgrind/{name}: ({time.time() - start:.1f}s) {'ok' if ok else 'FAILED'}")
        if not ok:
            print("\n".join(output.splitlines()[-40:]))
        passed, failed = passed + ok, failed + (not ok)
    return passed, failed


def run_fuzz(runs):
    """Each libFuzzer target briefly, on a scratch copy of its corpus (make fuzz
    runs them longer and keeps what they find)."""
    import shutil
    import tempfile
    passed = failed = 0
    fuzz_dir = os.path.join(BUILD, "fuzz")
    targets = sorted(os.listdir(fuzz_dir)) if os.path.isdir(fuzz_dir) else []
    for name in targets:
        corpus = tempfile.mkdtemp(prefix=f"{name}-")
        seeds = os.path.join(ROOT, "fuzz", "corpus", name)
        if os.path.isdir(seeds):
            shutil.rmtree(corpus)
            shutil.copytree(seeds, corpus)
        start = time.time()
        result = subprocess.run([os.path.join(fuzz_dir, name), f"-runs={runs}", "-max_len=4096",
                                 f"-artifact_prefix={corpus}/", corpus], capture_output=True, text=True, timeout=600)
        ok = result.returncode == 0
        print(f"  fuzz/{name}: {runs} runs ({time.time() - start:.1f}s) {'ok' if ok else 'FAILED'}")
        if not ok:
            print("\n".join(result.stderr.splitlines()[-40:]))
        shutil.rmtree(corpus, ignore_errors=True)
        passed, failed = passed + ok, failed + (not ok)
    return passed, failed


def run_swift(timeout, sanitizer=None):
    label = f"swift-{sanitizer}" if sanitizer else "swift"
    command = ["swift", "test"]
    if sanitizer:
        # A build folder of its own per sanitizer (.build-* is ignored by git).
        command += ["--scratch-path", os.path.join(ROOT, f".build-{sanitizer}"), f"--sanitize={sanitizer}"]
    env = dict(os.environ)
    # XCTest and the Swift runtime's weak-reference side tables look like leaks to
    # LeakSanitizer; leaks are checked by valgrind on the C suites instead, and
    # AddressSanitizer here checks memory errors.
    env["ASAN_OPTIONS"] = "detect_leaks=0"
    try:
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        print(f"  {label}: timed out")
        return 0, 1
    output = result.stdout + result.stderr
    # XCTest: "Executed 12 tests, with 0 failures", or "…, with 2 tests skipped
    # and 0 failures" (the PostgreSQL tests without a server, the network
    # namespace test without root); take the last (the total).
    totals = re.findall(r"Executed (\d+) tests?, with (?:(\d+) tests? skipped and )?(\d+) failures?", output)
    if not totals:
        print(output[-3000:])
        print(f"  {label}: no test summary (build failure?)")
        return 0, 1
    if sanitizer and ("Sanitizer" in output and "ERROR" in output or "WARNING: ThreadSanitizer" in output):
        print("\n".join(line for line in output.splitlines() if "Sanitizer" in line or "#" in line[:4])[-3000:])
        print(f"  {label}: sanitizer report")
        return 0, 1
    executed, skipped, failures = (int(value or 0) for value in totals[-1])
    if result.returncode != 0 and failures == 0:
        failures = 1
    for line in output.splitlines():
        if "error:" in line or " failed (" in line:
            print("    " + line)
    if skipped:
        for line in output.splitlines():
            if "Test skipped" in line:
                print("    " + line.split(": ", 1)[-1])
    print(f"  {label}: {executed - failures - skipped} passed, {failures} failed, {skipped} skipped")
    return executed - failures - skipped, failures


def run_pytest(label, paths, timeout):
    paths = [p for p in paths if os.path.isdir(os.path.join(ROOT, p))]
    if not paths:
        return 0, 0
    report = os.path.join(BUILD, f"pytest-{label}.xml")
    env = dict(os.environ)
    env.setdefault("OUTLIVE_LIBRARY", os.path.join(BUILD, "liboutlive.so"))
    env["PYTHONPATH"] = os.path.join(ROOT, "bindings", "python") + os.pathsep + env.get("PYTHONPATH", "")
    # Development mode and faulthandler, here and in every Python the tests
    # start (they inherit the environment): a crash prints every thread's
    # stack instead of a bare signal, and misuse warnings are shown.
    env["PYTHONDEVMODE"] = "1"
    env["PYTHONFAULTHANDLER"] = "1"
    command = [sys.executable, "-X", "dev", "-X", "faulthandler", "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", *paths]
    try:
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        print(f"  {label}: timed out")
        return 0, 1
    if not os.path.exists(report):
        print(result.stdout[-3000:] + result.stderr[-3000:])
        return 0, 1
    suite = ET.parse(report).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    tests, failures = int(suite.get("tests")), int(suite.get("failures")) + int(suite.get("errors"))
    skipped = int(suite.get("skipped", 0))
    if failures:
        print("\n".join(result.stdout.splitlines()[-60:]))
    os.remove(report)
    print(f"  {label}: {tests - failures - skipped} passed, {failures} failed, {skipped} skipped")
    return tests - failures - skipped, failures


def run_cargo(timeout):
    """cargo test of the Rust workspace, offline (it has no registry
    dependency), against build/liboutlive.so, its target dir under build/.
    Each test binary prints "test result: ok. N passed; M failed; ..."."""
    env = dict(os.environ)
    env["PATH"] = os.path.expanduser("~/.cargo/bin") + os.pathsep + env.get("PATH", "")
    env.setdefault("CARGO_TARGET_DIR", os.path.join(BUILD, "cargo"))
    library = env.get("OUTLIVE_LIBRARY", os.path.join(BUILD, "liboutlive.so"))
    env.setdefault("OUTLIVE_LIB_DIR", os.path.dirname(os.path.abspath(library)))
    command = ["cargo", "test", "--offline", "--workspace"]
    try:
        result = subprocess.run(command, cwd=os.path.join(ROOT, "bindings", "rust"), capture_output=True, text=True,
                                timeout=timeout, env=env)
    except FileNotFoundError:
        print("  rust: cargo not found (install rustup's toolchain, ~/.cargo/bin)")
        return 0, 1
    except subprocess.TimeoutExpired:
        print("  rust: timed out")
        return 0, 1
    output = result.stdout + result.stderr
    totals = re.findall(r"test result: \w+\. (\d+) passed; (\d+) failed", output)
    passed = sum(int(p) for p, _ in totals)
    failed = sum(int(f) for _, f in totals)
    if result.returncode != 0 and failed == 0:
        failed = 1  # a build failure or a crashed test binary
    if failed:
        print("\n".join(output.splitlines()[-80:]))
    print(f"  rust: {passed} passed, {failed} failed")
    return passed, failed


# Go modules of the tree: the binding and the example service (its own module,
# which takes the binding from the tree through a replace directive).
GO_MODULES = ["bindings/go", "Examples/go/worker"]


def go_environment():
    """Go without the network and without $HOME: modules come only from the
    tree (GOPROXY=off), the toolchain is the installed one, and the build cache
    and module path live under build/go."""
    env = dict(os.environ)
    env.update(GOCACHE=os.path.join(BUILD, "go", "cache"), GOPATH=os.path.join(BUILD, "go", "path"),
               GOMODCACHE=os.path.join(BUILD, "go", "path", "pkg", "mod"), GOPROXY="off", GOSUMDB="off",
               GOFLAGS="-mod=mod", GOTOOLCHAIN="local", GO111MODULE="on", CGO_ENABLED="1")
    return env


def run_go(timeout):
    """go test -v in each Go module; each --- PASS / --- FAIL line (subtests
    included) counts, and a module that fails without one (a build error)
    counts as one failure."""
    import shutil
    if shutil.which("go") is None:
        print("  go: the go command is missing (scripts/install-deps.sh installs golang-go)")
        return 0, 1
    passed = failed = 0
    for module in GO_MODULES:
        start = time.time()
        try:
            result = subprocess.run(["go", "test", "-count=1", "-v", "./..."], cwd=os.path.join(ROOT, module),
                                    capture_output=True, text=True, timeout=timeout, env=go_environment())
            output, code = result.stdout + result.stderr, result.returncode
        except subprocess.TimeoutExpired as error:
            output = error.stdout.decode(errors="replace") if isinstance(error.stdout, bytes) else (error.stdout or "")
            code = "timeout"
        p = len(re.findall(r"^\s*--- PASS", output, re.M))
        f = len(re.findall(r"^\s*--- FAIL", output, re.M))
        if code != 0 and f == 0:
            f = 1
        passed, failed = passed + p, failed + f
        print(f"  go/{module}: {p} passed, {f} failed ({time.time() - start:.1f}s) {'ok' if f == 0 else 'FAILED'}")
        if f:
            print("\n".join(output.splitlines()[-60:]))
    return passed, failed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=["c", "valgrind", "fuzz", "swift", "swift-address", "swift-thread", "python",
                                             "rust", "go"])
    args = parser.parse_args()
    total_passed = total_failed = 0
    # Suites that test the PostgreSQL backend against a real server.
    postgres_suites = {"c", "swift", "swift-address", "swift-thread", "python"}
    suites = [
        ("c", lambda: run_c(timeout=600)),
        ("valgrind", lambda: run_valgrind(timeout=600)),
        ("fuzz", lambda: run_fuzz(runs=int(os.environ.get("OUTLIVE_FUZZ_RUNS", "100000")))),
        ("swift", lambda: run_swift(timeout=1800)),
        ("swift-address", lambda: run_swift(timeout=1800, sanitizer="address")),
        ("swift-thread", lambda: run_swift(timeout=1800, sanitizer="thread")),
        ("python", lambda: run_pytest("python", ["Tests/api", "Tests/hosts", "bindings/python/tests"], timeout=1200)),
        ("rust", lambda: run_cargo(timeout=1800)),
        ("go", lambda: run_go(timeout=900)),
    ]
    selected = [(name, suite) for name, suite in suites if not args.only or args.only == name]
    started_server = False
    try:
        if not os.environ.get(pg_cluster.VARIABLE) and any(name in postgres_suites for name, _ in selected):
            try:
                os.environ[pg_cluster.VARIABLE], started_server = pg_cluster.start_owned()
                print(f"[postgresql] test server at {os.environ[pg_cluster.VARIABLE]}", flush=True)
            except Exception as error:  # the PostgreSQL tests then fail, saying why
                print(f"[postgresql] cannot start the test server: {error}", flush=True)
                total_failed += 1
        for name, suite in selected:
            print(f"[{name}]", flush=True)
            p, f = suite()
            total_passed += p
            total_failed += f
    finally:
        if started_server:
            pg_cluster.stop()
    print(f"{total_passed} passed, {total_failed} failed")
    return 1 if total_failed else 0


if __name__ == "__main__":
    sys.exit(main())
