"""Signals from Python: a consumer (a durable handler) receives the versions
posted for a signal id, until a terminating post.

    PYTHONPATH=bindings/python OUTLIVE_LIBRARY=build/liboutlive.so \
        python3 Examples/python/signals.py /tmp/signals-example
"""
import sys

import outlive

received: list[int] = []


# The payload (progress) plus what the library binds: version, terminated
# (and signal_id, not declared here).
@outlive.handler("example.on_progress")
def on_progress(job: str, progress: str, version: outlive.UInteger, terminated: bool) -> None:
    received.append(version)
    print(f"consumer: {job} version {version}: {progress}{' (final)' if terminated else ''}")


def dispatch_until(store: outlive.Store, count: int) -> None:
    for _ in range(100):
        if len(received) >= count:
            return
        store.loop.dispatch(timeout=0.1)


with outlive.Store(sys.argv[1], process="signals-example") as store:
    signal_id = outlive.new_signal_id()
    # lifetime: this_run (this handle only), process (the next run of this
    # process name if this one ends), any_process (whichever resolves it first).
    store.signals.consume(signal_id, outlive.Handler("example.on_progress", job="sync"),
                          delivery="until_terminated", lifetime="this_run")

    store.signals.post(signal_id, terminates=False, progress="1 of 3 files")   # any process may post
    dispatch_until(store, 1)
    # Only the latest payload is kept: a consumer that is behind skips versions.
    store.signals.post(signal_id, terminates=False, progress="2 of 3 files")
    store.signals.post(signal_id, terminates=True, progress="3 of 3 files")
    dispatch_until(store, 2)

    try:
        store.signals.lookup(signal_id)
    except outlive.NotFoundError as error:
        print("lookup after the final version:", error.status.name)
    store.signals.post(outlive.new_signal_id(), progress="nobody listens")     # stores nothing, no error
    print("consumers left:", len(store.signals.consumers()))
