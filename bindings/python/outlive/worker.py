"""The worker for Python handlers: `python -m outlive worker MODULE...`.

It imports the modules (their `@outlive.task` and `@outlive.handler`
functions become declared), opens the store, serves its task queue
(`store.tasks.serve()`: tasks added by any process run at once), and
dispatches the store's loop on an asyncio event loop — so that `async def`
handlers are awaited — until SIGTERM or SIGINT. Then it stops gracefully: no
new attempt starts, a handler running when the signal came finishes (a
synchronous one always has: the signal is handled between dispatches), async
handlers in flight get `grace` seconds to end, and the store closes, which
makes any attempt left unfinished pending again (never lost). A second signal
during the grace period cancels what is left at once."""
from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import os
import signal
import sys
import typing

from . import handlers
from .logs import set_log_level
from .errors import InvalidArgumentError, NotFoundError, OutliveError, StateError
from .store import Durability, Store

_logger = logging.getLogger("outlive.worker")

STORE_ENVIRONMENT = "OUTLIVE_STORE"
"""The environment variable naming the store directory when --store is not given."""


def import_modules(modules: typing.Iterable[str]) -> None:
    """Imports each module by its dotted name (the current directory first on
    the path, as `python -m` has it)."""
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    for module in modules:
        importlib.import_module(module)


def parse_queue(text: str) -> typing.Tuple[str, int]:
    """`NAME` or `NAME=LIMIT` (LIMIT 1 to 1024) of `--queue`."""
    name, _, limit = text.partition("=")
    if not name:
        raise ValueError(f"--queue {text!r}: no queue name")
    if not limit:
        return name, 1
    if not limit.isdigit() or not 1 <= int(limit) <= 1024:
        raise ValueError(f"--queue {text!r}: the limit is a number from 1 to 1024")
    return name, int(limit)


async def serve(store: Store, *, concurrency: int = 1, grace: float = 30.0, until_idle: bool = False,
                idle_seconds: float = 1.0, queues: typing.Optional[typing.Mapping[str, int]] = None) -> None:
    """Serves the store's tasks on the running asyncio loop until SIGTERM or
    SIGINT (or, with until_idle, until no task of the served queues is
    pending and no async handler runs for idle_seconds), then stops
    gracefully (see the module). `queues` (name → limit; None: "default"
    with `concurrency`) are served through outlive_queue_serve."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    stopping = (signal.SIGTERM, signal.SIGINT)
    for number in stopping:
        loop.add_signal_handler(number, stop.set)
    store.loop.attach(loop)
    ended: typing.List[OutliveError] = []

    def dispatch_and_check() -> None:
        store.loop.dispatch()
        # A run that ended under the worker (its PostgreSQL connection lost)
        # can run nothing more: stop, and exit saying why, so that a
        # supervisor starts a worker that is a live run again.
        try:
            store.check()
        except OutliveError as error:
            ended.append(error)
            stop.set()

    loop.add_reader(store.loop.fileno(), dispatch_and_check)
    try:
        names = store.tasks.serve(concurrency, queues)
        served = list(queues) if queues is not None else ["default"]
        _logger.info("serving the queues %s of %s as process %s: %s", ", ".join(served), store.path, store.process,
                     ", ".join(names) if names else "no task function is defined")
        if until_idle:
            await _until_idle(store, stop, idle_seconds, served)
        else:
            await stop.wait()
    finally:
        # No dispatch from here on: no attempt starts.
        store.loop.detach()
    running = handlers.running_coroutines()
    if running:
        _logger.info("stopping: waiting up to %s s for %d async handler(s) to end", grace, len(running))
        hurry = asyncio.Event()
        for number in stopping:
            loop.add_signal_handler(number, hurry.set)
        hurried = loop.create_task(hurry.wait())
        await _wait_or_hurry(running, hurried, grace)
        hurried.cancel()
        left = [task for task in running if not task.done()]
        for task in left:
            task.cancel()
        if left:
            _logger.warning("stopping: %d async handler(s) cancelled; their tasks are pending again", len(left))
            await asyncio.gather(*left, return_exceptions=True)
    for number in stopping:
        loop.remove_signal_handler(number)
    if ended:
        raise ended[0]


async def _wait_or_hurry(running: typing.Set["asyncio.Task[typing.Any]"], hurried: "asyncio.Task[typing.Any]",
                         grace: float) -> None:
    """Until every coroutine in `running` ended, `grace` passed, or `hurried` ended."""
    pending: typing.Set["asyncio.Future[typing.Any]"] = set(running)
    deadline = asyncio.get_running_loop().time() + grace
    while pending and not hurried.done():
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            return
        _, pending = await asyncio.wait([*pending, hurried], timeout=left, return_when=asyncio.FIRST_COMPLETED)
        pending.discard(hurried)


async def _until_idle(store: Store, stop: asyncio.Event, idle_seconds: float, served: typing.List[str]) -> None:
    idle_since: typing.Optional[float] = None
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        waiting = sum(queue.pending + queue.running for queue in store.queues.list() if queue.name in served)
        busy = waiting > 0 or bool(handlers.running_coroutines())
        now = loop.time()
        if busy:
            idle_since = None
        elif idle_since is None:
            idle_since = now
        elif now - idle_since >= idle_seconds:
            return
        try:
            await asyncio.wait_for(stop.wait(), timeout=0.1)
        except asyncio.TimeoutError:
            pass


def main(arguments: typing.Optional[typing.Sequence[str]] = None) -> int:
    """`python -m outlive worker`: parses the command line, runs the worker,
    returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m outlive worker",
        description="Run the tasks of a store whose handlers are Python functions defined in the given modules "
                    "(@outlive.task, @outlive.handler), until SIGTERM or SIGINT.")
    parser.add_argument("modules", nargs="+", metavar="MODULE", help="a module to import (dotted name)")
    parser.add_argument("--store", default=os.environ.get(STORE_ENVIRONMENT),
                        help=f"the store directory (default: ${STORE_ENVIRONMENT})")
    parser.add_argument("--process", default="worker", help="the process name to run as (default: worker)")
    parser.add_argument("--concurrency", type=int, default=1,
                        help="attempts of the default queue in flight at once, without --queue (async handlers "
                             "overlap; default 1)")
    parser.add_argument("--queue", action="append", default=[], metavar="NAME[=LIMIT]",
                        help="a task queue to serve, with up to LIMIT (1 to 1024, default 1) of its tasks at once; "
                             "repeatable (default: the default queue)")
    parser.add_argument("--durability", choices=[d.value for d in Durability], default="full",
                        help="the store's durability (default: full)")
    parser.add_argument("--max-attempts", type=int, default=None,
                        help="attempts of a task before it is dead, in this worker's runs (default 20)")
    parser.add_argument("--grace", type=float, default=30.0,
                        help="seconds async handlers get to end after SIGTERM/SIGINT (default 30)")
    parser.add_argument("--until-idle", action="store_true",
                        help="exit once no task is pending and nothing ran for --idle-seconds")
    parser.add_argument("--idle-seconds", type=float, default=1.0, help="with --until-idle (default 1)")
    parser.add_argument("--verbose", action="store_true", help="log task runs and the library's messages at INFO")
    options = parser.parse_args(arguments)
    if not options.store:
        parser.error(f"no store: give --store DIR or set {STORE_ENVIRONMENT}")
    if options.concurrency < 1:
        parser.error("--concurrency must be at least 1")
    queues: typing.Optional[typing.Dict[str, int]] = None
    if options.queue:
        queues = {}
        for text in options.queue:
            try:
                name, limit = parse_queue(text)
            except ValueError as error:
                parser.error(str(error))
            queues[name] = limit
    level = logging.INFO if options.verbose else logging.WARNING
    logging.basicConfig(level=level, format="%(asctime)s %(name)s %(levelname)s: %(message)s")
    set_log_level(level)
    import_modules(options.modules)
    with Store(options.store, process=options.process, durability=options.durability) as store:
        if options.max_attempts is not None:
            try:
                store.tasks.set_policy(max_attempts=options.max_attempts)
            except InvalidArgumentError as error:
                print(f"python -m outlive worker: --max-attempts: {error.message}", file=sys.stderr)
                return 2
        try:
            asyncio.run(serve(store, concurrency=options.concurrency, grace=options.grace,
                              until_idle=options.until_idle, idle_seconds=options.idle_seconds, queues=queues))
        except NotFoundError as error:
            print(f"python -m outlive worker: {error.message}", file=sys.stderr)
            return 3
        except StateError as error:
            print(f"python -m outlive worker: {error.message}", file=sys.stderr)
            return 1
    return 0
