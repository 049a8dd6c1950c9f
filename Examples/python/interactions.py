"""Interaction queues from Python: modal interactions strictly one at a time,
each finished explicitly — in-process (InteractionQueue) and durable
(DurableInteractionQueue: stored handlers, presented after a restart).

    PYTHONPATH=bindings/python OUTLIVE_LIBRARY=build/liboutlive.so \
        python3 Examples/python/interactions.py /tmp/interactions-example
"""
import sys

import outlive

# ── in-process ────────────────────────────────────────────────────────────
with outlive.Loop() as loop, outlive.InteractionQueue(loop) as queue:
    waiting: list[outlive.Interaction] = []

    def ask_permission(interaction: outlive.Interaction) -> None:
        print("interaction: allow notifications? (waiting for the user)")
        waiting.append(interaction)          # finished later, from any thread

    def show_notice(interaction: outlive.Interaction) -> None:
        print("interaction: what's new in 2.0")
        interaction.finish()                 # needs no UI: finished at once

    queue.add(ask_permission)
    queue.add(show_notice)
    for _ in range(3):
        loop.dispatch(timeout=0.05)
    print("unfinished:", len(queue), "(the notice waits for the permission prompt)")

    queue.suspend()                          # the view disappears: nothing starts
    waiting[0].finish()
    loop.dispatch(timeout=0.05)
    print("unfinished while suspended:", len(queue))
    queue.resume()
    for _ in range(50):
        if len(queue) == 0:
            break
        loop.dispatch(timeout=0.05)
    print("unfinished after resume:", len(queue))
    try:
        waiting[0].finish()
    except outlive.StateError as error:
        print("finish twice:", error.status.name)


# ── durable ───────────────────────────────────────────────────────────────
@outlive.handler("example.onboarding_step")
def onboarding_step(title: str, interaction_id: str, finish: outlive.Handler) -> None:
    """A durable interaction receives interaction_id and finish: call finish
    once when it is over (keep the Handler to finish later)."""
    print("durable interaction:", title)
    finish()


directory = sys.argv[1]
with outlive.Store(directory, process="app") as store:       # first run: queue, do not present
    with outlive.DurableInteractionQueue(store, "onboarding", suspended=True) as durable:
        for title in ("welcome", "sign in"):
            durable.add(outlive.Handler("example.onboarding_step", title=title))
        print("stored before the restart:", len(durable))

with outlive.Store(directory, process="app") as store:       # next run: presented in order
    with outlive.DurableInteractionQueue(store, "onboarding") as durable:
        for _ in range(100):
            if len(durable) == 0:
                break
            store.loop.dispatch(timeout=0.05)
        print("stored after presenting:", len(durable))
