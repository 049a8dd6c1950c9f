"""`store.signals`: results delivered to consumers — durable handlers — in
this or other processes, versioned, once or until terminated."""
import ctypes
import dataclasses
import typing

from . import _ffi
from .errors import check
from .values import Args

DELIVERY = {"once": 1, "until_terminated": 2}
LIFETIME = {"this_run": 1, "process": 2, "any_process": 3}
_DELIVERY_NAMES = {value: key for key, value in DELIVERY.items()}
_LIFETIME_NAMES = {value: key for key, value in LIFETIME.items()}


def new_signal_id() -> str:
    out = ctypes.create_string_buffer(37)
    _ffi.outlive_signal_new_id(out)
    return out.value.decode()


@dataclasses.dataclass(frozen=True)
class Consumer:
    id: str
    signal_id: str
    handler: str
    scope: typing.Optional[str]
    process: str
    delivery: str
    lifetime: str
    last_version: int


class Signals:
    def __init__(self, store):
        self._store = store

    def consume(self, signal_id: str, handler, delivery: str = "once", lifetime: str = "this_run",
                scope: str = None) -> str:
        """Registers `handler` to receive the signal (called with the payload plus
        signal_id, version and terminated). Returns the consumer's id."""
        if delivery not in DELIVERY or lifetime not in LIFETIME:
            raise ValueError(f"delivery is one of {sorted(DELIVERY)}, lifetime one of {sorted(LIFETIME)}")
        out = ctypes.create_string_buffer(37)
        check(_ffi.outlive_signal_consume_with_id(self._store.handle, signal_id.encode(), handler.handle,
                                                  DELIVERY[delivery], LIFETIME[lifetime],
                                                  None if scope is None else scope.encode("utf-8"), out))
        return out.value.decode()

    def post(self, signal_id: str, terminates: bool = True, **payload) -> None:
        """Posts a new version with `payload`; terminates=True removes the
        consumers after delivery. Nothing is stored when nobody consumes it."""
        with Args(payload) as args:
            check(_ffi.outlive_signal_post(self._store.handle, signal_id.encode(), args.handle, terminates))

    def remove_consumer(self, consumer_id: str) -> None:
        check(_ffi.outlive_signal_consumer_remove(self._store.handle, consumer_id.encode()))

    def remove_scope(self, scope: str) -> int:
        count = ctypes.c_size_t()
        check(_ffi.outlive_signal_consumers_remove_scope(self._store.handle, scope.encode("utf-8"), ctypes.byref(count)))
        return count.value

    def lookup(self, signal_id: str):
        """(version, consumer count, terminated) of a stored signal; raises
        NotFoundError when none is stored."""
        version, consumers, terminated = ctypes.c_uint64(), ctypes.c_size_t(), ctypes.c_bool()
        check(_ffi.outlive_signal_lookup(self._store.handle, signal_id.encode(), ctypes.byref(version),
                                         ctypes.byref(consumers), ctypes.byref(terminated)))
        return version.value, consumers.value, terminated.value

    def consumers(self, signal_id: str = None) -> typing.List[Consumer]:
        out = ctypes.c_void_p()
        check(_ffi.outlive_signal_consumer_list_new(self._store.handle, None if signal_id is None else signal_id.encode(),
                                                    ctypes.byref(out)))
        try:
            text = lambda value: None if value is None else value.decode("utf-8")
            handle = out.value
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
            _ffi.outlive_signal_consumer_list_free(out.value)
