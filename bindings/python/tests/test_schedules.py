import datetime
import math
import time

import pytest

import outlive
from conftest import dispatch_until, run_python, store_location


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path):
    """Each test runs on both engines: a directory, or a store on the test server."""
    return store_location(request.param, tmp_path)


fired = []


@outlive.handler("py.schedule.tick")
def tick(scheduled_at: float, task_id: str) -> None:
    fired.append(scheduled_at)


@outlive.handler("py.schedule.plain")
def plain() -> None:
    pass


def test_a_schedule_fires_tasks_whose_handler_receives_the_period(location):
    fired.clear()
    with outlive.Store(location) as store:
        store.tasks.set_triggers(pending_count=1, delay=0)
        first = store.schedules.set("tick", outlive.Handler("py.schedule.tick"), every=0.05)
        assert first > time.time() - 1
        assert dispatch_until(store, lambda: len(fired) >= 3)
        store.schedules.remove("tick")
        assert fired[0] == pytest.approx(first, abs=1e-6)
        for earlier, later in zip(fired, fired[1:]):
            assert later > earlier
            periods = (later - first) / 0.05
            assert abs(periods - round(periods)) < 1e-3
        assert store.schedules.list() == []


def test_schedules_are_listed_replaced_and_removed(location):
    with outlive.Store(location) as store:
        store.schedules.set("poll", outlive.Handler("py.schedule.plain"), every=datetime.timedelta(minutes=5))
        nightly = store.schedules.set("nightly", outlive.Handler("py.schedule.plain"), cron="30 2 * * MON-FRI",
                                      priority=4)
        assert nightly % 86400 == 2 * 3600 + 1800
        assert datetime.datetime.fromtimestamp(nightly, datetime.timezone.utc).weekday() < 5
        listed = store.schedules.list()
        assert [s.name for s in listed] == ["nightly", "poll"]
        assert listed[0].cron == "30 2 * * MON-FRI" and listed[0].every is None and listed[0].priority == 4
        assert listed[0].next_fire == nightly and listed[0].last_fired is None and listed[0].queue == "default"
        assert listed[1].every == 300 and listed[1].cron is None and listed[1].handler == "py.schedule.plain"
        assert [s.name for s in store.schedules.list(after="nightly")] == ["poll"]
        store.schedules.set("poll", outlive.Handler("py.schedule.plain"), cron="@daily")
        assert [s.cron for s in store.schedules] == ["30 2 * * MON-FRI", "@daily"]
        store.schedules.remove("poll")
        with pytest.raises(outlive.NotFoundError):
            store.schedules.remove("poll")
        assert [s.name for s in store.schedules] == ["nightly"]


@pytest.mark.parametrize("period", [
    dict(), dict(every=1, cron="* * * * *"), dict(every=0.001), dict(every=-1), dict(every=math.nan),
    dict(every=math.inf), dict(cron="* * * *"), dict(cron="61 * * * *"), dict(cron="0 0 30 2 *"),
    dict(cron="*/0 * * * *"), dict(cron="@fortnightly"),
])
def test_malformed_schedules_are_refused_and_store_nothing(location, period):
    with outlive.Store(location) as store:
        with pytest.raises(outlive.InvalidArgumentError):
            store.schedules.set("bad", outlive.Handler("py.schedule.plain"), **period)
        assert store.schedules.list() == []


def test_bad_names_and_undeclared_queues_are_refused(location):
    with outlive.Store(location) as store:
        work = outlive.Handler("py.schedule.plain")
        for name in ["", "x" * 129, "with space"]:
            with pytest.raises(outlive.InvalidArgumentError):
                store.schedules.set(name, work, every=1)
        with pytest.raises(outlive.NotFoundError):
            store.schedules.set("ok", work, every=1, queue="never-declared")
        assert store.schedules.list() == []


def test_a_schedule_set_here_is_seen_by_another_process(location):
    with outlive.Store(location) as store:
        store.schedules.set("report", outlive.Handler("py.schedule.plain"), cron="0 * * * *")
    listed = run_python(
        "import sys, outlive\n"
        "with outlive.Store(sys.argv[1]) as store:\n"
        "    print([(s.name, s.cron) for s in store.schedules])\n", location)
    assert listed.stdout.strip() == "[('report', '0 * * * *')]"
