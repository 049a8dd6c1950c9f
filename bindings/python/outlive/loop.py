"""The loop: where callbacks run. Poll `fileno()` in your event loop and call
`dispatch()` when it is readable, or `attach()` it to asyncio, or
`run_thread()` to have the library dispatch on a thread of its own."""
import ctypes
import typing

from . import _callbacks, _ffi
from ._handle import NativeHandle
from .errors import check

if typing.TYPE_CHECKING:
    import asyncio


class Loop(NativeHandle):
    _what = "loop"

    def __init__(self, _handle: typing.Any = None) -> None:
        """A new loop of its own (`_handle`: a store's loop, borrowed)."""
        self._owned = _handle is None
        if _handle is None:
            _handle = _ffi.LoopP()
            check(_ffi.outlive_loop_new(ctypes.byref(_handle)))
        self._handle = _handle
        self._asyncio_loop: "typing.Optional[asyncio.AbstractEventLoop]" = None
        self._threaded = False
        self._borrowed = 0

    def fileno(self) -> int:
        """The fd to poll: readable when dispatch() has work."""
        return int(_ffi.outlive_loop_fd(self.handle))

    def dispatch(self, timeout: typing.Optional[float] = 0.0) -> None:
        """Runs due callbacks on this thread, waiting up to `timeout` seconds for
        work (None: until work is due). Re-raises an exception a callback raised."""
        milliseconds = -1 if timeout is None else max(0, int(timeout * 1000))
        handle = self.handle
        with _callbacks.collecting():
            status = _ffi.outlive_loop_dispatch(handle, milliseconds)
        _callbacks.raise_pending()
        check(status)

    def run_thread(self) -> None:
        """Dispatches on a thread owned by the library from now on. Exceptions
        raised by callbacks there are reported through sys.unraisablehook."""
        check(_ffi.outlive_loop_run_thread(self.handle))
        self._threaded = True

    def _dispatched_elsewhere(self) -> bool:
        """Whether a thread of the library, or an asyncio loop other than the
        one running on this thread, dispatches this loop."""
        if self._threaded:
            return True
        if self._asyncio_loop is None:
            return False
        import asyncio
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        return running is not self._asyncio_loop

    def _borrow(self, asyncio_loop: "asyncio.AbstractEventLoop") -> bool:
        """Attaches to `asyncio_loop` for a while, when nothing dispatches
        this loop yet (or it is attached already for a while); returns whether
        the caller must _unborrow()."""
        if self._threaded:
            return False
        if self._asyncio_loop is None:
            self.attach(asyncio_loop)
            self._borrowed = 1
            return True
        if self._borrowed and self._asyncio_loop is asyncio_loop:
            self._borrowed += 1
            return True
        return False

    def _unborrow(self) -> None:
        self._borrowed -= 1
        if self._borrowed == 0 and self._handle:
            self.detach()

    def attach(self, asyncio_loop: "typing.Optional[asyncio.AbstractEventLoop]" = None) -> None:
        """Dispatches from an asyncio event loop whenever the fd is readable."""
        import asyncio
        asyncio_loop = asyncio_loop or asyncio.get_event_loop()
        asyncio_loop.add_reader(self.fileno(), self.dispatch)
        self._asyncio_loop = asyncio_loop
        self._borrowed = 0

    def detach(self) -> None:
        """Stops dispatching from the asyncio loop attach() used."""
        self._detach(self.handle)

    def _detach(self, handle: typing.Any) -> None:
        if self._asyncio_loop is not None:
            self._asyncio_loop.remove_reader(_ffi.outlive_loop_fd(handle))
            self._asyncio_loop = None

    def _release(self, handle: typing.Any) -> None:
        self._detach(handle)
        # A loop borrowed from a store is the store's to free.
        if self._owned:
            _ffi.outlive_loop_free(handle)
