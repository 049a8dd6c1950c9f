"""The operation queue from Python: operations with dependencies and a limit
of unfinished ones, each finished explicitly; awaitable from asyncio.

    PYTHONPATH=bindings/python OUTLIVE_LIBRARY=build/liboutlive.so \
        python3 Examples/python/operations.py /tmp/operations-example
(The queue is in-process: no store is used.)
"""
import asyncio
from collections.abc import Callable

import outlive


def work(name: str) -> Callable[[outlive.Operation], None]:
    """run(operation): start the work; finish it when it is done (here, a
    moment later on the asyncio loop, as a network callback would)."""
    def run(operation: outlive.Operation) -> None:
        print("start", name)
        asyncio.get_running_loop().call_later(0.01, operation.finish)
    return run


async def main() -> None:
    with outlive.Loop() as loop, outlive.OperationQueue(loop, max_unfinished=2) as queue:
        loop.attach(asyncio.get_running_loop())       # dispatch whenever the loop's fd is readable
        login, contacts, calendar, home = (outlive.Operation(work(name)) for name in
                                           ("login", "fetch contacts", "fetch calendar", "show home"))
        contacts.add_dependency(login)
        calendar.add_dependency(login)
        home.add_dependency(contacts).add_dependency(calendar)
        try:
            login.add_dependency(home)
        except outlive.InvalidArgumentError as error:
            print("a cycle:", error.status.name)
        ads = outlive.Operation(work("prefetch ads"))
        ads.on_complete(lambda cancelled: print("prefetch ads completed, cancelled:", cancelled))
        for operation in (home, calendar, contacts, login, ads):
            queue.add(operation)
        ads.cancel()                                    # not started: it never runs

        cancelled = await asyncio.wait_for(home, 10)    # an Operation is awaitable
        print("show home finished, cancelled:", cancelled)
        print("unfinished:", len(queue))
        loop.detach()


asyncio.run(main())
