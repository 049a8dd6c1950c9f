"""The package's version. VERSION at the repository's root is its one source:
the wheel carries a copy beside this module (hatch_build.py puts it there), and
a source checkout reads the root's file."""
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def _read() -> str:
    for path in (os.path.join(_HERE, "VERSION"), os.path.join(_HERE, "..", "..", "..", "VERSION")):
        if os.path.exists(path):
            with open(path) as file:
                return file.read().strip()
    return "0+unknown"


__version__ = _read()
