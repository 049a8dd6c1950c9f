"""The key-value store from Python: a mapping of str to bytes shared by every
process of the store, atomic updates, and observers of changes by any process.

    PYTHONPATH=bindings/python OUTLIVE_LIBRARY=build/liboutlive.so \
        python3 Examples/python/kv.py /tmp/kv-example
"""
import sys

import outlive

with outlive.Store(sys.argv[1], process="kv-example") as store:
    changes: list[tuple[str, bytes | None]] = []
    # Called on the store's loop (inside dispatch) for keys under the prefix
    # that any process changes; value is None when the key was deleted.
    store.kv.observe("settings/", lambda key, value: changes.append((key, value)))

    store.kv["settings/theme"] = b"dark"          # one transaction, durable on return
    store.kv["settings/language"] = b"en"
    print("get settings/theme ->", store.kv["settings/theme"].decode())

    # Atomic read-modify-write across processes: the function runs exactly once,
    # inside the write transaction. None deletes, outlive.UNCHANGED leaves it.
    for _ in range(3):
        store.kv.update("visits", lambda old: str(int(old or b"0") + 1).encode())
    print("visits after 3 updates:", store.kv["visits"].decode())

    print("keys under settings/:", list(store.kv.keys_with_prefix("settings/")))
    print("settings/missing in kv:", "settings/missing" in store.kv)

    def dispatch_until(count: int) -> None:
        for _ in range(50):
            if len(changes) >= count:
                return
            store.loop.dispatch(timeout=0.1)

    dispatch_until(2)       # both sets; quick successive changes of one key may come as one call
    del store.kv["settings/language"]
    dispatch_until(3)
    for key, value in changes:
        print(f"observer: {key} = {value.decode() if value is not None else '(deleted)'}")
    print("keys in the store:", len(store.kv))
