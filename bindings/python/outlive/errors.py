"""Statuses and exceptions. Every failing call raises OutliveError (or the
subclass for its status) carrying `.status` and the library's message."""
import enum
import typing

from . import _ffi


class Status(enum.IntEnum):
    OK = 0
    INVALID_ARGUMENT = 1
    NOT_FOUND = 2
    UNRESOLVED = 3
    TYPE_MISMATCH = 4
    MISSING_ARGUMENT = 5
    INVALIDATED = 6
    CORRUPT = 7
    IO = 8
    BUSY = 9
    PERMISSION = 10
    STATE = 11
    VERSION = 12
    NO_MEMORY = 13
    LIMIT = 14

    @classmethod
    def _missing_(cls, value: object) -> "Status | None":
        # A status of a newer library than this package: a member of its own
        # (named UNKNOWN_<n>), so that `error.status` is always a Status.
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        member = int.__new__(cls, value)
        member._name_ = f"UNKNOWN_{value}"
        member._value_ = value
        return member

    @property
    def known(self) -> bool:
        """Whether this package knows the status (not one of a newer library)."""
        return self.name in type(self).__members__


class OutliveError(Exception):
    """A call into liboutlive failed. `status` is an outlive.Status (one named
    UNKNOWN_<n> for a status of a newer library than this package)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status: Status = Status(status)
        self.message = message

    def __str__(self) -> str:
        name = self.status.name if self.status.known else f"status {int(self.status)}"
        return f"{self.message} ({name})"


class InvalidArgumentError(OutliveError, ValueError): pass
class NotFoundError(OutliveError, LookupError): pass
class UnresolvedError(OutliveError): pass
class TypeMismatchError(OutliveError, TypeError): pass
class MissingArgumentError(OutliveError, TypeError): pass
class InvalidatedError(OutliveError): pass
class CorruptError(OutliveError): pass
class StoreIOError(OutliveError, OSError): pass
class BusyError(OutliveError): pass
class PermissionDeniedError(OutliveError, PermissionError): pass
class StateError(OutliveError): pass


class ClosedError(StateError, ValueError):
    """The Python object was closed (or the store it belongs to was): it
    refuses every call instead of handing the library a freed handle."""

    def __init__(self, what: str) -> None:
        super().__init__(Status.STATE, f"the {what} is closed")
class VersionError(OutliveError): pass
class NoMemoryError(OutliveError, MemoryError): pass
class LimitError(OutliveError): pass


_CLASSES = {
    Status.INVALID_ARGUMENT: InvalidArgumentError, Status.NOT_FOUND: NotFoundError,
    Status.UNRESOLVED: UnresolvedError, Status.TYPE_MISMATCH: TypeMismatchError,
    Status.MISSING_ARGUMENT: MissingArgumentError, Status.INVALIDATED: InvalidatedError,
    Status.CORRUPT: CorruptError, Status.IO: StoreIOError, Status.BUSY: BusyError,
    Status.PERMISSION: PermissionDeniedError, Status.STATE: StateError, Status.VERSION: VersionError,
    Status.NO_MEMORY: NoMemoryError, Status.LIMIT: LimitError,
}


def error_for(status: int) -> OutliveError:
    """The exception for a non-OK status, with this thread's last error message
    (read at once, on the thread that made the call)."""
    message = _ffi.outlive_last_error().decode("utf-8", "replace")
    known = Status(status)
    # A status newer than this package: an OutliveError, still with its message.
    return _CLASSES.get(known, OutliveError)(known, message)


def check(status: int) -> None:
    """Raises the exception for a non-OK status."""
    if status != 0:
        raise error_for(status)
