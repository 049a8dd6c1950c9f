"""The message queue from Python: a sync issue with choices, presented once by
the best presenter, answered, its durable response handler run, then removed.

    PYTHONPATH=bindings/python OUTLIVE_LIBRARY=build/liboutlive.so \
        python3 Examples/python/messages.py /tmp/messages-example
"""
import sys

import outlive


# The durable response handler: stored with the message, run in a process that
# declares it once the message is answered (message_id, choice, scope bound).
@outlive.handler("example.conflict_answered")
def conflict_answered(path: str, choice: str, scope: str | None) -> None:
    print(f"response handler: {path} -> {choice} (scope {scope})")


def present(message: outlive.Message, presentation: outlive.Presentation) -> None:
    """Shows the message and finishes the presentation exactly once (now, or
    later from any thread, when the user clicks)."""
    print(f'presenting "{message.title}": {message.text}')
    for choice_id, label, kind in message.choices:
        print(f"  [{choice_id}] {label} ({kind})")
    presentation.finish(presented=True, end_notification=True, choice="keep-both")


ended: list[str] = []


def ended_notification(message: outlive.Message) -> None:
    ended.append(message.title)
    print(f'end notification: "{message.title}" is gone')


with outlive.Store(sys.argv[1], process="messages-example") as store:
    message_id = store.messages.post(
        "sync-issue", "Conflict in notes.txt", text="notes.txt changed here and on the server.",
        scope="account-1", choices=[("keep-both", "Keep both", "default"), ("use-server", "Use the server's", "destructive")],
        payload={"size": 1024}, response_handler=outlive.Handler("example.conflict_answered", path="notes.txt"))
    print("posted; messages stored:", len(store.messages))

    # priority: an int or a function of the message; 0 declines.
    store.messages.add_presenter("dialog", present,
                                 priority=lambda m: 300 if m.category == "sync-issue" else 0,
                                 end=ended_notification)
    for _ in range(100):
        if ended and len(store.messages) == 0:
            break
        store.loop.dispatch(timeout=0.1)
    print("messages stored:", len(store.messages))

    try:
        store.messages.respond(message_id, "keep-both")
    except outlive.NotFoundError as error:
        print("respond again:", error.status.name)
