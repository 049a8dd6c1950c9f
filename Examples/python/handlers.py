"""Handlers from Python: a Python function declared as a handler, a handler
value with bound arguments, serialized, stored, read back and called.

    PYTHONPATH=bindings/python OUTLIVE_LIBRARY=build/liboutlive.so \
        python3 Examples/python/handlers.py /tmp/handlers-example
"""
import sys
from collections.abc import Callable

import outlive


# The annotations are the declared signature: "ID name, BOOL loud".
@outlive.handler("example.greet")
def greet(name: str, loud: bool) -> None:
    print(f"HELLO, {name.upper()}!" if loud else f"hello, {name}")


@outlive.handler("example.greeting_cancelled")
def cancelled(name: str) -> None:
    print(f"greeting for {name} cancelled")


hello = outlive.Handler.with_invalidation("example.greet", "example.greeting_cancelled", name="dana")
print("handler:", repr(hello))
hello(loud=False)                          # bound arguments merged with call-time ones

with outlive.Store(sys.argv[1], process="handlers-example") as store:
    store.kv["handlers/hello"] = bytes(hello)     # the serialized form names the handler
    again = outlive.Handler.from_bytes(store.kv["handlers/hello"])
print("serialized:", len(bytes(hello)), "bytes; equal after the round trip:", again == hello)
again(loud=True)

# Failures are exceptions carrying the status; nothing is called.
attempts: list[Callable[[], None]] = [lambda: again(), lambda: again(loud=outlive.Int(1)),
                                     lambda: outlive.Handler("system")()]
for attempt in attempts:
    try:
        attempt()
    except outlive.OutliveError as error:
        print("refused:", error.status.name)

again.invalidate()                          # runs example.greeting_cancelled once
try:
    again(loud=True)
except outlive.InvalidatedError as error:
    print("after invalidate:", error.status.name, "- invalidated:", again.invalidated)
