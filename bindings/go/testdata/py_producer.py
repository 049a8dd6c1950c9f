"""Adds, from Python, a task and a signal consumer whose handlers are declared
in Go (xlang.go_record, xlang.go_on_signal), then posts the signal and exits:
a Go process runs them later.

    python3 py_producer.py STORE SIGNAL_ID
"""
import sys

import outlive

with outlive.Store(sys.argv[1], process="py-producer") as store:
    store.tasks.add(outlive.Handler("xlang.go_record", origin="python", n=41))
    store.signals.consume(sys.argv[2], outlive.Handler("xlang.go_on_signal", origin="python"),
                          lifetime="any_process")
    store.signals.post(sys.argv[2], terminates=True, result="posted by python")
