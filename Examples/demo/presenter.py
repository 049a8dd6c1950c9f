"""The demo's desktop UI: a presenter in another process, in Python, that shows
the sync-issue message the killed app posted and answers it as a user would.
The message's durable response handler (demo_on_answer, in the handler
library) then runs here, because this process loaded that library."""
import select
import sys

import outlive

directory, library = sys.argv[1], sys.argv[2]
outlive.load_handlers(library)
answered = []


def present(message, presentation):
    print(f"  [desktop-ui] showing \"{message.title}\": {message.text}")
    print(f"  [desktop-ui] choices: {', '.join(label for _, label, _ in message.choices)}; the user picks \"Keep both\"")
    presentation.finish(choice="keep-both")
    answered.append(message.id)


with outlive.Store(directory, process="desktop-ui") as store:
    store.messages.add_presenter("dialog", present, priority=300)
    for _ in range(300):
        if answered and len(store.messages) == 0:
            break
        select.select([store.loop.fileno()], [], [], 0.05)
        store.loop.dispatch()
    if not answered:
        sys.exit("desktop-ui: the message never came")
