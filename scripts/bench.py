#!/usr/bin/env python3
"""Runs the benchmark programs (each prints a markdown section, measuring its
peers in the same run) and rewrites BENCHMARKS.md with the machine and command."""
import datetime
import os
import platform
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


def main(programs):
    scratch = os.path.join(ROOT, "build", "bench-scratch")
    sections, failures = [], 0
    for program in programs:
        name = os.path.basename(program)
        shutil.rmtree(scratch, ignore_errors=True)
        os.makedirs(scratch, mode=0o700)
        start = time.time()
        print(f"running {name} ...", flush=True)
        result = subprocess.run([program, scratch], capture_output=True, text=True, timeout=900)
        took = time.time() - start
        if result.returncode != 0:
            failures += 1
            sections.append(f"### {name}\n\nFAILED (exit {result.returncode}):\n\n```\n{result.stderr[-2000:]}\n```\n")
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
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
