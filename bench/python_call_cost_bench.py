#!/usr/bin/env python3
"""What a call costs from Python beside the same call from C, in one process,
on one store, in the same run: kv set, task add, signal post (durable: at
synchronous FULL and NORMAL) and a handler call (in memory).

The C side is build/bench/libcall_cost.so (bench/helpers/call_cost.c), loaded
here: each of its functions runs the calls in a C loop, building the arguments
each time as the Python call does. The Python side is the package's API as a
user writes it:

  - kv set:      store.kv[key] = b"value"                 / outlive_kv_set
  - task add:    store.tasks.add(Handler(name, item=...))  / args + handler_new + task_add
  - signal post: store.signals.post(id, item=...)          / args + signal_post
  - handler call: handler(item=...) of a no-op C handler   / args + handler_call
  - the ctypes floor of that call: one ctypes call of a no-op C function of
    the same three parameters (its argument built the same way), and the one
    C call the handler call makes (outlive_handler_call_serialized) with its
    bytes made once, through ctypes and through the package's compiled module
    (outlive._speedups, where built: what the handler call uses then), each
    beside the same C handler call

Each side starts from an empty write-ahead log (checkpointed through a
connection of its own before it runs): the log fills as the round goes on,
and a side that ran second paid for the checkpoint of both (SQLite's
automatic one at 1,000 pages, with its sync even at NORMAL) — with an odd
number of rounds the medians then set Python's second runs against C's
first ones (signal post at NORMAL read 1.8× where it is 1.2×).
Median of OUTLIVE_CALL_ROUNDS (default 9) rounds, C and Python alternating;
OUTLIVE_CALL_COUNT (default 300) durable calls and 50 times as many handler
calls per round and side. Usage: python_call_cost_bench.py SCRATCH_DIR.
Prints a markdown section."""
import ctypes
import os
import shutil
import sqlite3
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))
os.environ.setdefault("OUTLIVE_LIBRARY", os.path.join(ROOT, "build", "liboutlive.so"))

import outlive  # noqa: E402
from outlive import _ffi  # noqa: E402

COUNT = int(os.environ.get("OUTLIVE_CALL_COUNT", "300"))
ROUNDS = int(os.environ.get("OUTLIVE_CALL_ROUNDS", "9"))
HELPER = os.path.join(ROOT, "build", "bench", "libcall_cost.so")
SERIALIZED_ROW = "its one C call alone through ctypes (outlive_handler_call_serialized, bytes made once)"
COMPILED_ROW = "the same C call through outlive._speedups (bytes made once)"


def helper():
    library = ctypes.CDLL(HELPER, mode=ctypes.RTLD_GLOBAL)
    signatures = {
        "call_cost_kv_set": [_ffi.StoreP, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int],
        "call_cost_task_add": [_ffi.StoreP, ctypes.c_char_p, ctypes.c_int],
        "call_cost_signal_post": [_ffi.StoreP, ctypes.c_char_p, ctypes.c_int],
        "call_cost_handler_call": [_ffi.HandlerP, ctypes.c_int],
    }
    for name, argtypes in signatures.items():
        argtypes = argtypes + [ctypes.POINTER(ctypes.c_longlong)]
        function = getattr(library, name)
        function.argtypes, function.restype = argtypes, ctypes.c_longlong
    outlive.load_handlers(HELPER)
    return library


def c_side(run, count):
    """(elapsed, CPU) µs per call of a C loop."""
    cpu = ctypes.c_longlong()
    elapsed_ns = run(count, ctypes.byref(cpu))
    if elapsed_ns < 0:
        raise RuntimeError(f"a C call failed: {_ffi.outlive_last_error().decode()}")
    return elapsed_ns / 1e3 / count, cpu.value / 1e3 / count


def py_side(function, count):
    """(elapsed, CPU) µs per call of a Python loop."""
    start, cpu = time.perf_counter(), time.process_time()
    function(count)
    return (time.perf_counter() - start) * 1e6 / count, (time.process_time() - cpu) * 1e6 / count


def empty_log(path):
    """Checkpoints the store's write-ahead log into its database and truncates it."""
    connection = sqlite3.connect(os.path.join(path, "outlive.db"))
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        connection.close()


def measure(scratch, level, c, samples, round_index):
    path = os.path.join(scratch, f"calls-{level}")
    if round_index == 0:
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path, mode=0o700)
    store = outlive.Store(path, "bench", durability=level.lower())
    try:
        store.tasks.set_triggers(0, 1e6)
        signal = outlive.new_signal_id()
        store.signals.consume(signal, outlive.Handler("call_cost_noop"), delivery="until_terminated")
        value = b"value-of-some-bytes"
        tag = f"r{round_index}-"

        def kv(count):
            kv = store.kv
            for i in range(count):
                kv[f"py-{tag}{i}"] = value

        def task(count):
            tasks = store.tasks
            for i in range(count):
                tasks.add(outlive.Handler("call_cost_noop", item=f"item-{i}"))

        def post(count):
            signals = store.signals
            for i in range(count):
                signals.post(signal, terminates=False, item=f"item-{i}")

        cases = [
            ("kv set", lambda n, cpu: c.call_cost_kv_set(store.handle, f"c-{tag}".encode(), value, len(value), n, cpu),
             kv),
            ("task add", lambda n, cpu: c.call_cost_task_add(store.handle, b"call_cost_noop", n, cpu), task),
            ("signal post", lambda n, cpu: c.call_cost_signal_post(store.handle, signal.encode(), n, cpu), post),
        ]
        # C first in even rounds, Python first in odd ones.
        for name, c_run, py_run in cases:
            entry = samples.setdefault((level, name), ([], []))
            order = [0, 1] if round_index % 2 == 0 else [1, 0]
            for side in order:
                empty_log(path)
                if side == 0:
                    entry[0].append(c_side(c_run, COUNT))
                else:
                    entry[1].append(py_side(py_run, COUNT))
    finally:
        store.close()


def measure_call(c, samples, round_index):
    handler = outlive.Handler("call_cost_noop")
    count = COUNT * 50
    # The floor: one ctypes call of a no-op C function with the parameters of
    # the call Handler.__call__ makes, bound and called as it binds and calls
    # that one (argument types exact, no argtypes), the argument built the same.
    floor = ctypes.CDLL(HELPER).call_cost_floor
    floor.restype = ctypes.c_int
    handle = handler.handle

    def call(count):
        for i in range(count):
            handler(item=f"item-{i}")

    def floor_call(count):
        size = ctypes.c_size_t(16)
        for i in range(count):
            floor(handle, f"item-{i}".encode(), size)

    # The library's part of it: the one C call the handler call makes, its
    # bytes made once (a package without it skips the row).
    serialized = getattr(_ffi, "handler_call_serialized", None)

    def serialized_call(count):
        data = outlive.values.serialized_arguments({"item": "item-0"})
        size = _ffi.size_arg(len(data))
        for _ in range(count):
            serialized(handle, data, size)

    # The same call through the package's compiled module, where it is built
    # (what Handler.__call__ uses then, through its call_lone).
    compiled = _ffi.speedups.call if _ffi.speedups is not None else None

    def compiled_call(count):
        data = outlive.values.serialized_arguments({"item": "item-0"})
        address = handle.value
        for _ in range(count):
            compiled(address, data)

    entry = samples.setdefault(("-", "handler call (no-op C handler)"), ([], []))
    floor_entry = samples.setdefault(("-", "ctypes floor: a no-op C function of the same 3 parameters"), ([], []))
    sides = [0, 1, 2] + ([3] if serialized is not None else []) + ([4] if compiled is not None else [])
    for side in (sides if round_index % 2 == 0 else sides[::-1]):
        if side == 0:
            c_run = c_side(lambda n, cpu: c.call_cost_handler_call(handler.handle, n, cpu), count)
            entry[0].append(c_run)
            floor_entry[0].append(c_run)
            if serialized is not None:
                samples.setdefault(("-", SERIALIZED_ROW), ([], []))[0].append(c_run)
            if compiled is not None:
                samples.setdefault(("-", COMPILED_ROW), ([], []))[0].append(c_run)
        elif side == 1:
            entry[1].append(py_side(call, count))
        elif side == 2:
            floor_entry[1].append(py_side(floor_call, count))
        elif side == 3:
            samples[("-", SERIALIZED_ROW)][1].append(py_side(serialized_call, count))
        else:
            samples[("-", COMPILED_ROW)][1].append(py_side(compiled_call, count))
    handler.close()


def main(argv):
    scratch = argv[1] if len(argv) > 1 else "/tmp/outlive-calls"
    os.makedirs(scratch, mode=0o700, exist_ok=True)
    print("### Python: a call beside the same call from C\n")
    if not os.path.exists(HELPER):
        print(f"Not measured: {HELPER} is missing (`make bench` builds it from bench/helpers/call_cost.c).")
        return 1
    c = helper()
    samples = {}
    for round_index in range(ROUNDS):
        for level in ("FULL", "NORMAL"):
            measure(scratch, level, c, samples, round_index)
        measure_call(c, samples, round_index)
    print(f"One process, one store per level; each call made {COUNT} times per round from a C loop (a library loaded "
          "into the Python process) and from Python through the `outlive` package, alternating, building its "
          "arguments each time (a short ID `item`); the handler call "
          f"{COUNT * 50} times. Median of {ROUNDS} rounds, µs per call: elapsed, and the CPU time of the process "
          "(which the load of this shared machine hardly moves, where it moves the elapsed time a lot). "
          "Goal: Python ≤ 2× C.\n")
    if _ffi.speedups is not None:
        print("The package's compiled calls (`outlive._speedups`, built by `make`) are in use: a handler call and a "
              "task add are each one C call without ctypes; the other calls go through ctypes.\n")
    else:
        print("The package's compiled calls (`outlive._speedups`) are not built or are turned off: every call goes "
              "through ctypes.\n")
    print("| synchronous | call | C µs | Python µs | Python ÷ C | C CPU µs | Python CPU µs | Python ÷ C, CPU |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for (level, name), (c_times, py_times) in samples.items():
        c_us, py_us = (statistics.median(t[0] for t in c_times), statistics.median(t[0] for t in py_times))
        c_cpu, py_cpu = (statistics.median(t[1] for t in c_times), statistics.median(t[1] for t in py_times))
        print(f"| {level} | {name} | {c_us:.2f} | {py_us:.2f} | {py_us / c_us:.2f} | {c_cpu:.2f} | {py_cpu:.2f} | "
              f"{py_cpu / c_cpu:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
