"""Task functions and the worker: one module defines the tasks; a producer adds
them (and never runs them); `python -m outlive worker uploads` runs them in
another process, at once.

    PYTHONPATH=bindings/python OUTLIVE_LIBRARY=build/liboutlive.so \
        python3 Examples/python/uploads.py /tmp/uploads-example
(It is the producer, then starts the worker on itself until the queue is empty.)
"""
import asyncio
import datetime
import os
import pathlib
import subprocess
import sys

import outlive


# The tasks: both the producer and the worker import this module. The handler
# name is the function's module.qualname ("uploads.upload"); nothing is
# declared until a process serves the queue.
@outlive.task
def upload(path: pathlib.Path, size: int | None = None, headers: dict[str, str] = {}, attempt: int = 1) -> None:
    """Parameters take JSON-able values (dict, list, Path, datetime, X | None)
    and defaults; `attempt` (and `task_id`) the library gives at call time."""
    print(f"upload {path} ({size} bytes, headers {headers}, attempt {attempt})")


@outlive.task
async def notify(user: str, when: datetime.datetime) -> None:
    """Awaited on the worker's asyncio loop; its task ends when it returns."""
    await asyncio.sleep(0.01)
    print(f"notify {user}: uploaded at {when:%H:%M}")


if __name__ == "__main__":
    with outlive.Store(sys.argv[1], process="producer") as store:
        upload.delay(pathlib.Path("/data/report.pdf"), 52_113, {"content-type": "application/pdf"})
        upload.delay(pathlib.Path("/data/notes.txt"))
        notify.delay("dana", datetime.datetime(2026, 3, 1, 9, 30))
        # Checked against the signature before anything is stored (mypy sees it too).
        try:
            upload.delay("/data/x", size="big")  # type: ignore[arg-type]
        except TypeError as error:
            print("refused:", error)
        # This process adds, never serves: its tasks wait for a worker.
        print("tasks pending:", len(store.tasks))

    # The worker, in another process (as a service: see Examples/systemd/).
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run([sys.executable, "-m", "outlive", "worker", "--store", sys.argv[1], "--until-idle", "uploads"],
                   cwd=here, check=True)

    with outlive.Store(sys.argv[1], process="producer") as store:
        print("tasks pending:", len(store.tasks))
