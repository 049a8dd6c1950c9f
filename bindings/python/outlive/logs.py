"""The library's log lines, routed into Python's logging as the "outlive"
logger. The library builds messages only at or above the level set here
(default WARNING), so a quieter level costs nothing."""
import logging

from . import _ffi
from .errors import check

logger = logging.getLogger("outlive")

_TO_PYTHON = {1: logging.ERROR, 2: logging.WARNING, 3: logging.INFO, 4: logging.DEBUG}


@_ffi.LOG_HANDLER
def _forward(level: int, message: bytes, context: object) -> None:
    logger.log(_TO_PYTHON.get(level, logging.INFO), message.decode("utf-8", "replace"))


def set_log_level(level: int) -> None:
    """Which library messages reach the "outlive" logger (a logging level)."""
    native = 4 if level <= logging.DEBUG else 3 if level <= logging.INFO else 2 if level <= logging.WARNING else 1
    check(_ffi.outlive_log_set_handler(_forward, native, None, _ffi.RELEASE()))  # no context to release


set_log_level(logging.WARNING)
