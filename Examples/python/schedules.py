"""Queues and periodic tasks: a declared queue this process serves, a cron
schedule stored for every process, and an interval schedule that fires every
0.2 s while the example dispatches its loop.

    PYTHONPATH=bindings/python OUTLIVE_LIBRARY=build/liboutlive.so \
        python3 Examples/python/schedules.py /tmp/schedules-example
"""
import sys

import outlive

reports: list[float] = []


@outlive.handler("app.report")
def report(scheduled_at: float) -> None:     # scheduled_at is optional
    reports.append(scheduled_at)
    print(f"report {len(reports)} ran")


with outlive.Store(sys.argv[1], process="schedules-example") as store:
    store.queues.declare("reports", "ordered")      # once, for every process
    store.queues.serve("reports", 1)                # this process runs its tasks
    store.schedules.set("nightly-report", outlive.Handler("app.report"), cron="30 2 * * MON-FRI", queue="reports")
    store.schedules.set("poll", outlive.Handler("app.report"), every=0.2, queue="reports", priority=5)
    for schedule in store.schedules:             # ScheduleInfo: name, handler, every, cron, next_fire, last_fired, queue, priority
        period = f"cron {schedule.cron}" if schedule.cron else f"every {schedule.every} s"
        print(f"schedule {schedule.name}: {period}, queue {schedule.queue}")
    while len(reports) < 2:
        store.loop.dispatch(timeout=0.05)        # firings happen here, inside dispatch
    store.schedules.remove("poll")
    try:
        store.schedules.set("bad", outlive.Handler("app.report"), cron="61 * * * *")
    except outlive.InvalidArgumentError as error:
        print("refused:", error.status.name)
    print("schedules left:", [schedule.name for schedule in store.schedules])
