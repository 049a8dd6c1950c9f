"""Finds and loads liboutlive: $OUTLIVE_LIBRARY, then a copy packaged beside
this module (the wheel bundles one), then the system's (ctypes.util)."""
import ctypes
import ctypes.util
import os
import typing

_HERE = os.path.dirname(os.path.abspath(__file__))


def _candidates() -> typing.Iterator[str]:
    explicit = os.environ.get("OUTLIVE_LIBRARY")
    if explicit:
        yield explicit
        return
    packaged = os.path.join(_HERE, "liboutlive.so")
    if os.path.exists(packaged):
        yield packaged
    found = ctypes.util.find_library("outlive")
    if found:
        yield found


def load() -> ctypes.CDLL:
    tried = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as error:
            tried.append(f"{path}: {error}")
    detail = "; ".join(tried) if tried else "no candidate found"
    raise ImportError(
        "cannot load liboutlive (set OUTLIVE_LIBRARY to its path, or install the wheel that bundles it): " + detail)
