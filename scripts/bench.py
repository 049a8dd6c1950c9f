#!/usr/bin/env python3
"""Runs the benchmark programs (each prints a markdown section, measuring its
peers in the same run) and rewrites BENCHMARKS.md with the machine and command.
The C programs are the arguments; the Python benchmarks (bench/*.py) run with
the interpreter of build/bench-venv, a virtual environment made here with the
PyPI peers they compare against (a peer that fails to install is reported by
the benchmark, which goes on without it). The PostgreSQL benchmarks get a
durable server of their own (scripts/pg_cluster.py --bench: fsync and
synchronous_commit on), started here and stopped at the end, its URI in
OUTLIVE_BENCH_PG; when it cannot start they say so and measure nothing."""
import datetime
import os
import platform
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, "build", "bench-venv")
PYPI_PEERS = ["persist-queue", "litequeue", "huey", "dbos", "procrastinate", "pgqueuer", "asyncpg",
              "psycopg[binary]"]


def machine():
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    fs = subprocess.run(["df", "-T", ROOT], capture_output=True, text=True).stdout.splitlines()[-1].split()[1]
    return f"{cpu}, {os.cpu_count()} cores, {memory:.0f} GiB, Linux {platform.release()}, {fs} file system"


def bench_venv():
    """The venv's python and the peers that failed to install (each installed on its own)."""
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        print(f"creating {VENV} ...", flush=True)
        made = subprocess.run([sys.executable, "-m", "venv", VENV], capture_output=True, text=True)
        if made.returncode != 0:
            print(f"python3 -m venv failed, the peers are not measured:\n{made.stderr[-1000:]}", flush=True)
            return sys.executable, list(PYPI_PEERS)
    failed = []
    for package in PYPI_PEERS:
        result = subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", package],
                                capture_output=True, text=True)
        if result.returncode != 0:
            print(f"pip install {package} failed:\n{result.stderr[-1000:]}", flush=True)
            failed.append(package)
    return python, failed


def start_bench_server():
    """The durable server's URI and whether this run started it, or (None, False)
    with the reason printed and put in OUTLIVE_BENCH_PG_FAILURE."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    try:
        import pg_cluster
        pg_cluster.use_bench()
        return pg_cluster, *pg_cluster.start_owned()
    except Exception as error:  # no server, no apt, no root: the other benchmarks still run
        reason = f"{type(error).__name__}: {error}".strip()[-600:]
        print(f"the PostgreSQL server for the benchmarks did not start: {reason}", flush=True)
        os.environ["OUTLIVE_BENCH_PG_FAILURE"] = reason
        return None, None, False


def main(programs):
    began = time.time()
    cluster, server, started = start_bench_server()
    try:
        return run(programs, began, server)
    finally:
        if cluster and started:
            cluster.stop()


def run(programs, began, server):
    scratch = os.path.join(ROOT, "build", "bench-scratch")
    sections, failures = [], 0
    env = dict(os.environ)
    if server:
        env["OUTLIVE_BENCH_PG"] = server
    commands = [[program] for program in programs]
    scripts = sorted(os.path.join(ROOT, "bench", name) for name in os.listdir(os.path.join(ROOT, "bench"))
                     if name.endswith(".py"))
    if scripts:
        python, failed = bench_venv()
        env["OUTLIVE_BENCH_PIP_FAILURES"] = ",".join(failed)
        env.setdefault("OUTLIVE_LIBRARY", os.path.join(ROOT, "build", "liboutlive.so"))
        commands += [[python, script] for script in scripts]
    for command in commands:
        name = os.path.basename(command[-1])
        shutil.rmtree(scratch, ignore_errors=True)
        os.makedirs(scratch, mode=0o700)
        start = time.time()
        print(f"running {name} ...", flush=True)
        result = subprocess.run(command + [scratch], capture_output=True, text=True, timeout=900, env=env)
        took = time.time() - start
        if result.returncode != 0:
            failures += 1
            output = result.stdout.rstrip()
            sections.append((output + "\n\n" if output.startswith("###") else f"### {name}\n\n") +
                            f"FAILED (exit {result.returncode}):\n\n```\n{result.stderr[-2000:]}\n```\n")
        else:
            sections.append(result.stdout.rstrip() + f"\n\n_{name}: {took:.0f} s._\n")
        print(sections[-1])
    shutil.rmtree(scratch, ignore_errors=True)
    header = (
        "# Benchmarks\n\n"
        f"Machine: {machine()}.  \n"
        f"Command: `make bench` ({datetime.date.today().isoformat()}).  \n"
        "Each benchmark measures Outlive beside its peer in the same run, on the same disk, so that the "
        "ratios hold on this shared, noisy machine even where the absolute figures move.\n\n"
    )
    with open(os.path.join(ROOT, "BENCHMARKS.md"), "w") as f:
        f.write(header + "\n".join(sections))
    print(f"{len(commands)} benchmarks in {time.time() - began:.0f} s, {failures} failed", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
