"""The life of a native handle, once: an owned pointer released by the
library's `_free` function when closed, by a `with` block, or at collection."""
import typing

H = typing.TypeVar("H", bound="NativeHandle")


class NativeHandle:
    _handle: typing.Any = None
    _what = "handle"

    def _release(self, handle: typing.Any) -> None:
        raise NotImplementedError

    @property
    def handle(self) -> typing.Any:
        """The native pointer; ClosedError once closed."""
        if not self._handle:
            from .errors import ClosedError
            raise ClosedError(self._what)
        return self._handle

    def close(self) -> None:
        """Releases the native handle (again: nothing)."""
        if self._handle:
            handle, self._handle = self._handle, None
            self._release(handle)

    def __enter__(self: H) -> H:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
