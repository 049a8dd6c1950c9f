#!/usr/bin/env bash
# make demo: callbacks that outlive the process, narrated.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build
DEMO=$BUILD/demo
CLI=$BUILD/outlive
export OUTLIVE_LIBRARY=$PWD/$BUILD/liboutlive.so PYTHONPATH=$PWD/bindings/python

say() { printf '\n\033[1m%s\033[0m\n' "$*"; }
note() { printf '  %s\n' "$*"; }

mkdir -p "$DEMO"
cc -std=c11 -Wall -Wextra -Werror -Iinclude -fPIC -shared -o "$DEMO/libdemo_handlers.so" Examples/demo/handlers.c
cc -std=c11 -Wall -Wextra -Werror -Iinclude -o "$DEMO/app" Examples/demo/app.c -L$BUILD -loutlive -Wl,-rpath,$PWD/$BUILD
STORE=$(mktemp -d /tmp/outlive-demo-XXXXXX)/store
LIBRARY=$PWD/$DEMO/libdemo_handlers.so

say "1. The app queues work, leaves a callback for its result, posts a question — and is killed."
note "Its callbacks are handlers (C functions in $DEMO/libdemo_handlers.so, named, with bound"
note "arguments) stored in $STORE, not closures in its memory."
set +e
# (bash's own "Killed" notice goes to /dev/null; the app's output does not)
{ "$DEMO/app" "$STORE" "$LIBRARY" start; } 2>/dev/null
code=$?
set -e
note "(the app's exit status: $code — killed by signal $((code - 128)))"

say "2. Nothing is lost: the store still holds all of it, and no process is alive."
"$CLI" inspect "$STORE"

say "3. 'outlive worker' loads the handler library and runs the tasks the dead app queued."
note "Each task posts the app's signal; a process that resolves the handler runs it — any process."
"$CLI" worker "$STORE" --load "$LIBRARY" --until-idle

say "4. A presenter in another process, in Python, shows the message and answers it."
note "It is offered once, to the best presenter of any live process; the answer runs the message's"
note "durable response handler wherever it resolves — here, in the presenter's process."
python3 Examples/demo/presenter.py "$STORE" "$LIBRARY"

say "5. The app starts again. Its first run's consumer (lifetime \"process\") gets the result."
note "It receives the newest version — 3 of 3 — once; the consumer then goes, as it was terminated."
"$DEMO/app" "$STORE" "$LIBRARY" resume

say "6. Done: every record was consumed and removed."
"$CLI" inspect "$STORE"
rm -rf "$(dirname "$STORE")"
say "Callbacks outlived the process that made them: stored, survived kill -9, ran elsewhere, came back."
