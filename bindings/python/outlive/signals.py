"""`store.signals`: results delivered to consumers — durable handlers — in
this or other processes, versioned, once or until terminated."""
from __future__ import annotations

import ctypes
import dataclasses
import enum
import typing

from . import _ffi
from .errors import check, error_for
from .values import Args, CallArgs

if typing.TYPE_CHECKING:
    from .handlers import Handler
    from .store import Store

E = typing.TypeVar("E", bound=enum.Enum)

class Delivery(str, enum.Enum):
    """How often a consumer is called: once, or for every version until the
    signal is terminated. A str, so "once" works wherever Delivery.ONCE does."""
    ONCE = "once"
    UNTIL_TERMINATED = "until_terminated"


class Lifetime(str, enum.Enum):
    """How long a consumer lives and who may run it: this run of this process,
    any later run of a process of the same name, or any process."""
    THIS_RUN = "this_run"
    PROCESS = "process"
    ANY_PROCESS = "any_process"


_payloads = CallArgs()
_post = _ffi.BY_ADDRESS["outlive_signal_post"]

# The C values of OUTLIVE_DELIVER_* and OUTLIVE_LIFETIME_*.
_DELIVERY_CODES = {Delivery.ONCE: 1, Delivery.UNTIL_TERMINATED: 2}
_LIFETIME_CODES = {Lifetime.THIS_RUN: 1, Lifetime.PROCESS: 2, Lifetime.ANY_PROCESS: 3}
_DELIVERY_NAMES = {value: key for key, value in _DELIVERY_CODES.items()}
_LIFETIME_NAMES = {value: key for key, value in _LIFETIME_CODES.items()}


def _member(kind: typing.Type[E], value: object) -> E:
    try:
        return kind(value)
    except ValueError:
        raise ValueError(f"{kind.__name__.lower()} is one of {[member.value for member in kind]}, not {value!r}") from None


def new_signal_id() -> str:
    """A new signal id (a UUID), unique across processes."""
    out = ctypes.create_string_buffer(_ffi.ID_SIZE)
    _ffi.outlive_signal_new_id(out)
    return str(out.value.decode())


@dataclasses.dataclass(frozen=True)
class Consumer:
    """One listed consumer (`store.signals.consumers()`)."""
    id: str
    signal_id: str
    handler: str
    scope: typing.Optional[str]
    process: str
    delivery: typing.Optional[Delivery]
    lifetime: typing.Optional[Lifetime]
    last_version: int


class Signals:
    """The store's signals (docs/signals.md)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def consume(self, signal_id: str, handler: Handler, delivery: typing.Union[Delivery, str] = Delivery.ONCE,
                lifetime: typing.Union[Lifetime, str] = Lifetime.THIS_RUN, scope: typing.Optional[str] = None) -> str:
        """Registers `handler` to receive the signal (called with the payload plus
        signal_id, version and terminated). Returns the consumer's id."""
        how, life = _member(Delivery, delivery), _member(Lifetime, lifetime)
        out = ctypes.create_string_buffer(_ffi.ID_SIZE)
        check(_ffi.outlive_signal_consume(self._store.handle, signal_id.encode(), handler.handle,
                                          _DELIVERY_CODES[how], _LIFETIME_CODES[life],
                                          None if scope is None else scope.encode("utf-8"), out))
        return str(out.value.decode())

    def post(self, signal_id: str, terminates: bool = True, **payload: typing.Any) -> None:
        """Posts a new version with `payload`; terminates=True removes the
        consumers after delivery. Nothing is stored when nobody consumes it."""
        scratch = _payloads
        if payload and not scratch.busy and None not in payload.values():
            # A set of arguments per thread, reused from post to post (as a
            # handler call's are): no outlive_args made and freed, no Args
            # object, handles passed as addresses.
            large = scratch.fill(payload)
            scratch.busy = True
            try:
                status = _post(self._store.handle.value, signal_id.encode(), scratch.address, terminates)
            finally:
                scratch.busy = False
            if large:
                scratch.clear()
            if status:
                raise error_for(status)
            return
        with Args(payload) as args:
            check(_ffi.outlive_signal_post(self._store.handle, signal_id.encode(), args.handle, terminates))

    def remove_consumer(self, consumer_id: str) -> None:
        """Removes one consumer."""
        check(_ffi.outlive_signal_consumer_remove(self._store.handle, consumer_id.encode()))

    def remove_scope(self, scope: str) -> int:
        """Removes every consumer of `scope`; returns how many."""
        count = ctypes.c_size_t()
        check(_ffi.outlive_signal_consumers_remove_scope(self._store.handle, scope.encode("utf-8"), ctypes.byref(count)))
        return count.value

    def lookup(self, signal_id: str) -> typing.Tuple[int, int, bool]:
        """(version, consumer count, terminated) of a stored signal; raises
        NotFoundError when none is stored."""
        version, consumers, terminated = ctypes.c_uint64(), ctypes.c_size_t(), ctypes.c_bool()
        check(_ffi.outlive_signal_lookup(self._store.handle, signal_id.encode(), ctypes.byref(version),
                                         ctypes.byref(consumers), ctypes.byref(terminated)))
        return version.value, consumers.value, terminated.value

    def consumers(self, signal_id: typing.Optional[str] = None) -> typing.List[Consumer]:
        """Every consumer (of `signal_id`, or all)."""
        out = _ffi.SignalConsumerListP()
        check(_ffi.outlive_signal_consumer_list_new(self._store.handle, None if signal_id is None else signal_id.encode(),
                                                    None, 0, ctypes.byref(out)))
        try:
            def text(value: typing.Optional[bytes]) -> typing.Any:
                return None if value is None else value.decode("utf-8")
            handle = out
            return [Consumer(id=text(_ffi.outlive_signal_consumer_list_id(handle, i)),
                             signal_id=text(_ffi.outlive_signal_consumer_list_signal_id(handle, i)),
                             handler=text(_ffi.outlive_signal_consumer_list_handler_name(handle, i)),
                             scope=text(_ffi.outlive_signal_consumer_list_scope(handle, i)),
                             process=text(_ffi.outlive_signal_consumer_list_process(handle, i)),
                             delivery=_DELIVERY_NAMES.get(_ffi.outlive_signal_consumer_list_delivery(handle, i)),
                             lifetime=_LIFETIME_NAMES.get(_ffi.outlive_signal_consumer_list_lifetime(handle, i)),
                             last_version=_ffi.outlive_signal_consumer_list_last_version(handle, i))
                    for i in range(_ffi.outlive_signal_consumer_list_count(handle))]
        finally:
            _ffi.outlive_signal_consumer_list_free(out)
