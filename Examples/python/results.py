"""Task results as refs: a producer adds tasks with `result=True` and waits for
what the task functions return — blocking, or with `await` — while
`python -m outlive worker` runs them in another process; progress arrives
before the result; a dead task raises its last error, a cancelled one
TaskCancelledError.

    PYTHONPATH=bindings/python OUTLIVE_LIBRARY=build/liboutlive.so \
        python3 Examples/python/results.py /tmp/results-example
(It starts the worker on the same store, and stops it at the end.)
"""
import asyncio
import os
import subprocess
import sys
import time

import outlive


# The tasks (the worker imports this module as "results"). A task function's
# return value travels as JSON, checked against its annotation.
@outlive.task(queue="renders", priority=5)
def render(page: int, pages: int) -> dict[str, str]:
    """Posts progress, then returns the result."""
    for done in range(1, pages + 1):
        outlive.task_progress({"page": done, "of": pages})   # nothing when added without a result
        time.sleep(0.05)
    return {"url": f"https://example.org/render/{page}.png"}


@outlive.task
def resize(width: int) -> int:
    if width <= 0:
        raise ValueError(f"no image is {width} pixels wide")
    return width // 2


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    with outlive.Store(sys.argv[1], process="producer") as store:
        store.queues.declare("renders", "parallel")
        store.queues.serve("default", 0)        # a producer: it runs no task itself
        worker = subprocess.Popen([sys.executable, "-m", "outlive", "worker", "--store", sys.argv[1],
                                   "--queue", "renders=4", "--queue", "default", "--max-attempts", "1", "results"], cwd=here)
        try:
            # The consumer of the result is registered in the add's transaction.
            ref = render.options(result=True).delay(42, 3)
            ref.on_progress(lambda value: print("progress:", value))
            print("result:", ref.result(timeout=10))

            async def main() -> int:
                return await resize.options(result=True).delay(640)
            print("awaited:", asyncio.run(main()))

            try:
                resize.options(result=True).delay(0).result(timeout=30)
            except outlive.TaskDeadError as error:
                print("dead:", error.last_error)
        finally:
            worker.terminate()
            worker.wait()
        # With no worker, a task stays pending; cancelling it is its result.
        pending = resize.options(result=True).delay(100)
        pending.cancel()
        try:
            pending.result(timeout=10)
        except outlive.TaskCancelledError as error:
            print("cancelled:", type(error).__name__, error.task_id == pending)
