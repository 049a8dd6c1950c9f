"""The task queue from Python: durable tasks run in order by one runner across
processes, retried with backoff, grouped, and kept as dead when they keep failing.

    PYTHONPATH=bindings/python OUTLIVE_LIBRARY=build/liboutlive.so \
        python3 Examples/python/tasks.py /tmp/tasks-example
"""
import sys

import outlive


@outlive.handler("example.upload")
def upload(file: str, attempt: int) -> None:
    """No `completion` parameter: the attempt succeeds when it returns."""
    print(f"upload {file} (attempt {attempt})")


@outlive.handler("example.identify")
def identify(profile: str, attempt: int, completion: outlive.Handler) -> None:
    """With `completion`: the attempt ends when it is called (any thread, any
    process). This one fails its first attempt."""
    ok = attempt > 1
    print(f"identify {profile} (attempt {attempt}): {'ok' if ok else 'server unavailable'}")
    if ok:
        completion(success=True)
    else:
        completion(success=False, error="server unavailable")


@outlive.handler("example.track")
def track(profile: str, event: str) -> None:
    print(f"track {event} for {profile}")


@outlive.handler("example.doomed")
def doomed(completion: outlive.Handler) -> None:
    completion(success=False, error="gone for good")


with outlive.Store(sys.argv[1], process="tasks-example") as store:
    store.tasks.set_policy(initial_backoff=0.05, max_backoff=0.2, max_attempts=3)   # quick, for the example
    store.tasks.add(outlive.Handler("example.identify", profile="A"), group_start="profile:A")
    # A member of profile:A never runs while the task starting that group is stored.
    store.tasks.add(outlive.Handler("example.track", profile="A", event="opened the app"), group_members=["profile:A"])
    store.tasks.add(outlive.Handler("example.upload", file="notes.txt"))
    doomed_id = store.tasks.add(outlive.Handler("example.doomed"))
    print("tasks pending:", len(store.tasks))

    store.tasks.run_now()      # otherwise: 10 pending, or 30 s after an add
    for _ in range(200):
        if len(store.tasks) == 0:
            break
        store.loop.dispatch(timeout=0.05)
    print("tasks pending:", len(store.tasks), "dead:", store.tasks.dead_count)

    for task in store.tasks:
        print(f"listed: {task.handler} {task.state.name.lower()} after {task.attempts} attempts: {task.last_error}")
    store.tasks.delete(doomed_id)
