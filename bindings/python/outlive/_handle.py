"""The life of a native handle, once: an owned pointer released by the
library's `_free` function when closed, by a `with` block, or at collection."""


class NativeHandle:
    _handle = None
    _what = "handle"

    def _release(self, handle) -> None:
        raise NotImplementedError

    @property
    def handle(self):
        if not self._handle:
            from .errors import ClosedError
            raise ClosedError(self._what)
        return self._handle

    def close(self) -> None:
        if self._handle:
            handle, self._handle = self._handle, None
            self._release(handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
