import signal

import pytest

import outlive
from conftest import dispatch_until, run_python, spawn_python, store_location


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path):
    """Every messages test runs on both engines."""
    return store_location(request.param, tmp_path)


answered = []


@outlive.handler("py.answered")
def on_answer(message_id: str, choice: str, scope: str | None) -> None:
    answered.append((message_id, choice, scope))


def test_message_is_presented_answered_and_its_durable_handler_runs(location):
    answered.clear()
    with outlive.Store(location) as store:
        presented = []

        def present(message, presentation):
            presented.append(message)
            presentation.finish(choice="keep")

        mid = store.messages.post("sync-issue", "Conflict", text="Both changed", scope="account-1",
                                  choices=[("keep", "Keep both", "default"), ("drop", "Discard", "destructive")],
                                  payload={"path": "/a.txt", "size": 3}, response_handler=outlive.Handler("py.answered"))
        store.messages.add_presenter("dialog", present)
        assert dispatch_until(store, lambda: answered)
        [message] = presented
        assert message.id == mid and message.title == "Conflict" and message.text == "Both changed"
        assert message.choices == (("keep", "Keep both", "default"), ("drop", "Discard", "destructive"))
        assert message.payload["path"] == outlive.ID(b"/a.txt") and message.payload["size"] == 3
        assert answered == [(mid, "keep", "account-1")]
        assert dispatch_until(store, lambda: len(store.messages) == 0)


def test_response_from_another_process_reaches_the_response_handler(location):
    with outlive.Store(location) as store:
        handled = []
        store.messages.add_response_handler("log", lambda message: handled.append(message.choice) or True)
        mid = store.messages.post("question", "Continue?", choices=[("yes", "Yes"), ("no", "No", "cancel")])
        run_python("import sys, outlive\nwith outlive.Store(sys.argv[1], process='cli') as s: s.messages.respond(sys.argv[2], 'no')",
                   location, mid)
        assert dispatch_until(store, lambda: handled)
        assert handled == ["no"]
        with pytest.raises(outlive.NotFoundError):
            store.messages.respond(mid, "maybe")


def test_auto_resolver_answers_before_any_presenter(location):
    with outlive.Store(location) as store:
        presented, handled = [], []
        store.messages.add_auto_resolver("auth", lambda m: "retry" if m.category == "auth-error" else None)
        store.messages.add_response_handler("h", lambda m: handled.append((m.title, m.choice)) or True)
        store.messages.add_presenter("p", lambda m, p: presented.append(m.title) or p.finish(choice="ok"))
        store.messages.post("auth-error", "Login failed", choices=[("retry", "Retry")])
        store.messages.post("info", "Other", choices=[("ok", "OK")])
        assert dispatch_until(store, lambda: len(handled) == 2)
        assert presented == ["Other"] and sorted(handled) == [("Login failed", "retry"), ("Other", "ok")]


def test_presentation_in_a_killed_process_is_taken_over(location):
    with outlive.Store(location) as store:
        victim = spawn_python("""
import sys, time, select, outlive
with outlive.Store(sys.argv[1], process="victim") as store:
    def present(message, presentation):
        print("presenting", message.id, flush=True)   # and never finish: we get killed
    store.messages.add_presenter("p", present, priority=300)
    while True:
        select.select([store.loop.fileno()], [], [], 0.1)
        store.loop.dispatch()
""", location)
        mid = None
        mid = store.messages.post("q", "Who shows me?", choices=[("ok", "OK")])
        line = victim.stdout.readline().split()
        assert line == ["presenting", mid]
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        shown = []
        store.messages.add_presenter("mine", lambda m, p: shown.append(m.id) or p.finish(choice="ok"))
        assert dispatch_until(store, lambda: shown)
        assert shown == [mid]


def test_declined_message_is_offered_again_after_reoffer(location):
    with outlive.Store(location) as store:
        seen = []
        decline = [True]

        def present(message, presentation):
            seen.append(message.id)
            presentation.finish(presented=not decline[0], choice=None if decline[0] else "ok")

        mid = store.messages.post("q", "Later", choices=[("ok", "OK")])
        store.messages.add_presenter("p", present)
        assert dispatch_until(store, lambda: seen)
        store.loop.dispatch(timeout=0.2)
        assert seen == [mid]
        decline[0] = False
        store.messages.reoffer("p")
        assert dispatch_until(store, lambda: len(seen) == 2)


def test_bad_input_is_refused_and_nothing_is_stored(location):
    with outlive.Store(location) as store:
        with pytest.raises(outlive.InvalidArgumentError):
            store.messages.post("", "title")
        with pytest.raises(outlive.InvalidArgumentError):
            store.messages.respond("not-an-id", "x")
        with pytest.raises(KeyError):
            store.messages.post("c", "t", choices=[("a", "A", "weird")])
        assert len(store.messages) == 0 and store.messages.ids() == []


def test_async_presenter_is_awaited_and_its_result_answers_the_message(location):
    import asyncio

    async def scenario():
        with outlive.Store(location) as store:
            store.loop.attach(asyncio.get_running_loop())
            handled = asyncio.get_running_loop().create_future()
            store.messages.add_response_handler(
                "h", lambda m: handled.done() or handled.set_result(m.choice) or True)

            async def present(message):
                await asyncio.sleep(0.01)  # the user thinks
                return "later"

            store.messages.add_presenter("async", present)
            store.messages.post("q", "Update now?", choices=[("now", "Now"), ("later", "Later")])
            choice = await asyncio.wait_for(handled, 10)
            store.loop.detach()
            return choice

    assert asyncio.run(scenario()) == "later"
