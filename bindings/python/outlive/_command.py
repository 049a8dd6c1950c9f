"""The `outlive` console command of the wheel: replaces this Python process
with the command binary the wheel carries (outlive/bin/outlive), so that
signals, the exit status and the process id are the binary's own, as when it
is run directly (systemd, kill, shells see no wrapper)."""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
COMMAND = os.path.join(_HERE, "bin", "outlive")


def main() -> None:
    if not os.access(COMMAND, os.X_OK):
        sys.stderr.write("outlive: this installation of the Python package carries no outlive command "
                         f"({COMMAND} is missing); install the wheel `make wheel` builds, or the command "
                         "with `make install`\n")
        sys.exit(1)
    # `outlive worker --python MODULE` runs Python's worker with this interpreter,
    # the one this package is installed in.
    os.environ.setdefault("OUTLIVE_PYTHON", sys.executable)
    os.execv(COMMAND, [sys.argv[0], *sys.argv[1:]])
