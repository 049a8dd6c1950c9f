"""A Python worker for the Go binding's cross-language test: runs the tasks
whose handler, xlang.py_record, is declared here in Python, and records what
each received under xlang/py/<n> in the store. Exits when no task is left.

    python3 py_worker.py STORE
"""
import sys
import time

import outlive

store = outlive.Store(sys.argv[1], process="py-worker")


@outlive.handler("xlang.py_record")
def record(text: str, count: int, ratio: float, task_id: str) -> None:
    store.kv[f"xlang/py/{count}"] = f"{text}|{count}|{ratio}|{len(task_id)}".encode()


store.tasks.run_now()
deadline = time.monotonic() + 60
while len(store.tasks) and time.monotonic() < deadline:
    store.loop.dispatch(timeout=0.05)
left = len(store.tasks)
store.close()
sys.exit(1 if left else 0)
