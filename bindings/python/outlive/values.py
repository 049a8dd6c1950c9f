"""Typed argument values and their conversion to and from outlive_args.

Python values map to the seven types: bool → BOOL, int → INTEGER (int64),
float → DOUBLE, str / bytes / ID → ID, Handler → HANDLER; Int(n) and
UInteger(n) choose INT (int32) and UINTEGER (uint64)."""
import builtins
import ctypes
import operator
import struct
import threading
import typing

from . import _ffi
from ._handle import NativeHandle
from .errors import InvalidArgumentError, check, error_for

TYPE_ID, TYPE_HANDLER, TYPE_BOOL, TYPE_INT, TYPE_DOUBLE, TYPE_INTEGER, TYPE_UINTEGER = range(1, 8)


def value_bytes(value: object, what: str) -> bytes:
    """bytes, bytearray or memoryview as bytes; anything else is a TypeError
    (bytes(3) would be three zero bytes, bytes("x") a TypeError of its own)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{what} must be bytes, bytearray or memoryview, not {type(value).__name__}")


def _integer(value: typing.Any, what: str) -> int:
    """An int (or anything with __index__), never a float or str truncated or parsed."""
    if isinstance(value, bool):
        raise TypeError(f"{what} takes an int, not bool")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{what} takes an int, not {type(value).__name__}") from None


class Int(int):
    """An INT (int32) argument."""

    def __new__(cls, value: typing.Any) -> "Int":
        value = _integer(value, "Int")
        if not -2**31 <= value < 2**31:
            raise OverflowError(f"{value} does not fit an INT (int32)")
        return super().__new__(cls, value)


class UInteger(int):
    """A UINTEGER (uint64) argument."""

    def __new__(cls, value: typing.Any) -> "UInteger":
        value = _integer(value, "UInteger")
        if not 0 <= value < 2**64:
            raise OverflowError(f"{value} does not fit a UINTEGER (uint64)")
        return super().__new__(cls, value)


class ID:
    """An ID value: immutable bytes with an optional type tag."""

    __slots__ = ("bytes", "type")

    def __init__(self, value: typing.Union[str, bytes, bytearray, memoryview], type: typing.Optional[str] = None) -> None:
        self.bytes = value.encode("utf-8") if isinstance(value, str) else value_bytes(value, "an ID's value")
        if type is not None and not isinstance(type, str):
            raise TypeError(f"an ID's type tag is a str, not {builtins.type(type).__name__}")
        self.type = type

    def __str__(self) -> str:
        return self.bytes.decode("utf-8")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ID) and (self.bytes, self.type) == (other.bytes, other.type)

    def __hash__(self) -> int:
        return hash((self.bytes, self.type))

    def __repr__(self) -> str:
        return f"ID({self.bytes!r}{'' if self.type is None else ', type=' + repr(self.type)})"


def _name(name: object) -> bytes:
    if not isinstance(name, str):
        raise TypeError("argument names are str")
    return name.encode("utf-8")


# ── the serialized handler format (docs/FORMAT.md), written here ────────────
# Building a handler through outlive_handler_new takes a C call per argument
# (args_new, a setter each, handler_new, args_free); its serialized bytes take
# one (outlive_handler_deserialize), whose decoder checks all the setters and
# handler_new check. Only plain values are written here; anything else, and
# any bytes the decoder refuses, go through the setters, which say precisely
# what is wrong.

# The one-byte varints (0 to 127), made once.
_LENGTHS = tuple(bytes((value,)) for value in range(0x80))


def _varint(value: int) -> bytes:
    if value < 0x80:
        return _LENGTHS[value]
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _zigzag(value: int) -> bytes:
    return _varint((value << 1) ^ (value >> 63))


def _str(text: str) -> bytes:
    encoded = text.encode("utf-8")
    return _varint(len(encoded)) + encoded


_pack_double = struct.Struct("<d").pack
_MAGIC_PLAIN, _MAGIC_INVALIDATION = b"OLH\x01\x00", b"OLH\x01\x02"
_UNTAGGED, _TAGGED = bytes((TYPE_ID, 0)), bytes((TYPE_ID, 1))
_BOOLS = {True: bytes((TYPE_BOOL, 1)), False: bytes((TYPE_BOOL, 0))}
_INTEGER, _INT, _UINTEGER, _DOUBLE = bytes((TYPE_INTEGER,)), bytes((TYPE_INT,)), bytes((TYPE_UINTEGER,)), \
    bytes((TYPE_DOUBLE,))


# The encoded head of a plain handler per name, and each argument name
# encoded, as handlers are made: a program makes the same few again and again.
# Bounded (emptied when full) so that names made on the fly cannot grow them.
_heads: typing.Dict[str, bytes] = {}
_keys: typing.Dict[str, bytes] = {}
_CACHED_NAMES = 1024


def _cached(cache: typing.Dict[str, bytes], text: str, prefix: bytes) -> bytes:
    encoded = prefix + _str(text)
    if len(cache) >= _CACHED_NAMES:
        cache.clear()
    cache[text] = encoded
    return encoded


# The names and argument names the library's decoder accepted in a handler
# made here (note_checked), encoded (bounded as above). A handler of such names
# whose values are plain — str and bytes below _CHECKED_SIZE in all, int within
# 64 bits, bool, float — is one the decoder accepts too: Handler() keeps its
# bytes, and the native handler is made at its first use, if any (a task add
# takes the bytes).
_checked_heads: typing.Dict[str, bytes] = {}
_checked_keys: typing.Dict[str, bytes] = {}
_CHECKED_SIZE = 1 << 20   # far below OUTLIVE_MAX_SERIALIZED_SIZE and an ID's 16 MiB
_CHECKED_COUNT = 1024     # OUTLIVE_MAX_ARGUMENTS


def note_checked(name: str, bound: typing.Mapping[str, typing.Any]) -> None:
    """`serialized_handler(name, None, bound)` was accepted by the library."""
    if name not in _checked_heads:
        _cached(_checked_heads, name, _MAGIC_PLAIN)
    for key, value in bound.items():
        if value is not None and key not in _checked_keys:
            _cached(_checked_keys, key, b"")


def serialized_handler(name: str, invalidation: typing.Optional[str],
                       bound: typing.Mapping[str, typing.Any], checked: bool = False) -> typing.Optional[bytes]:
    """The FORMAT.md bytes of handler `name` with `bound` (None values
    skipped), or None when something in it is left to outlive_handler_new.
    `checked`: None too unless the library accepts the bytes for certain
    (plain values of checked names, above)."""
    if type(name) is not str or (invalidation is not None and type(invalidation) is not str):
        return None
    # The head and the count go in the first two places once known.
    arguments: typing.List[bytes] = [b"", b""]
    count = 0
    keys = _checked_keys if checked else _keys
    try:
        if checked:
            # Before any value is written: a name not accepted yet ends it at once.
            found = _checked_heads.get(name)
            if found is None or invalidation is not None:
                return None
            head = found
        elif invalidation is None:
            head = _heads.get(name) or _cached(_heads, name, _MAGIC_PLAIN)
        else:
            head = _MAGIC_INVALIDATION + _str(name) + _str(invalidation)
        for key, value in bound.items():
            if value is None:
                continue
            if type(key) is not str:
                return None
            count += 1
            encoded_key = keys.get(key)
            if encoded_key is None:
                if checked:
                    return None
                encoded_key = _cached(keys, key, b"")
            arguments.append(encoded_key)
            kind = type(value)
            if kind is str:
                data = value.encode("utf-8")
                size = len(data)
                arguments += (_UNTAGGED, _LENGTHS[size] if size < 0x80 else _varint(size), data)
            elif kind is int:
                if not -2**63 <= value < 2**63:
                    return None
                arguments += (_INTEGER, _zigzag(value))
            elif kind is bool:
                arguments.append(_BOOLS[value])
            elif kind is float:
                arguments += (_DOUBLE, _pack_double(value))
            elif kind is bytes:
                arguments += (_UNTAGGED, _varint(len(value)), value)
            elif checked:
                return None
            elif kind is Int:
                arguments += (_INT, _zigzag(int(value)))
            elif kind is UInteger:
                arguments += (_UINTEGER, _varint(int(value)))
            elif kind is ID:
                if value.type is None:
                    arguments.append(_UNTAGGED)
                else:
                    arguments += (_TAGGED, _str(value.type))
                arguments += (_varint(len(value.bytes)), value.bytes)
            else:
                return None
    except UnicodeEncodeError:
        return None
    if checked and count > _CHECKED_COUNT:
        return None
    arguments[0] = head
    arguments[1] = _LENGTHS[count] if count < 0x80 else _varint(count)
    data = b"".join(arguments)
    return data if not checked or len(data) < _CHECKED_SIZE else None


# ── call-time arguments, serialized (outlive_handler_call_serialized) ──────
# An argument set is the FORMAT.md handler named `outlive.arguments` whose
# bound arguments are the set. A handler call from Python writes its arguments
# so (one C call, nothing kept in C between calls) instead of filling an
# outlive_args (a C call per argument besides the call). Only what the decoder
# surely accepts is written here; anything else (a handler or tagged ID value,
# an int past 64 bits, a name that is no C identifier, a value past the
# limits) goes through Args, whose setters raise the precise error. So the
# call never fails on the encoding: a status it returns is the call's own.

_ARGUMENTS_HEAD = _MAGIC_PLAIN + _str("outlive.arguments")
_MAX_ARGUMENTS, _MAX_ID_SIZE, _MAX_SERIALIZED = 1024, 16 * 1024 * 1024, 32 * 1024 * 1024
# Each argument name the decoder accepts (a C identifier of 1 to 128 bytes),
# encoded and followed by the type of an untagged ID (the most common value),
# as calls are made; bounded as _keys is.
_id_keys: typing.Dict[str, bytes] = {}
# The same, after the head and count of a set of that one argument: the most
# common call, handler(name=text), is then this, a length and the text.
_lone_ids: typing.Dict[str, bytes] = {}


def _id_key(name: object) -> typing.Optional[bytes]:
    if type(name) is not str or not (name.isascii() and name.isidentifier()) or len(name) > 128:
        return None
    encoded = _str(name) + _UNTAGGED
    if len(_id_keys) >= _CACHED_NAMES:
        _id_keys.clear()
        _lone_ids.clear()
    _id_keys[name] = encoded
    _lone_ids[name] = _ARGUMENTS_HEAD + _LENGTHS[1] + encoded
    return encoded


def serialized_arguments(values: typing.Dict[str, typing.Any]) -> typing.Optional[bytes]:
    """The argument set of `values` (None values skipped) in the format
    outlive_handler_call_serialized reads, or None when it is left to Args."""
    if len(values) == 1:
        for key, value in values.items():
            if type(value) is str:
                head = _lone_ids.get(key)
                if head is not None:
                    data = value.encode("utf-8")
                    length = len(data)
                    if length < 0x80:
                        return head + _LENGTHS[length] + data
    parts: typing.List[bytes] = [_ARGUMENTS_HEAD, b""]
    keys = _id_keys
    count = 0
    for key, value in values.items():
        prefix = keys.get(key) or _id_key(key)
        if prefix is None:
            return None
        kind = type(value)
        if kind is str:
            data = value.encode("utf-8")
            length = len(data)
            parts += (prefix, _LENGTHS[length] if length < 0x80 else _varint(length), data)
        elif kind is int:
            if not -2**63 <= value < 2**63:
                return None
            parts += (prefix[:-2], _INTEGER, _zigzag(value))
        elif value is None:
            continue
        elif kind is bool:
            parts += (prefix[:-2], _BOOLS[value])
        elif kind is float:
            parts += (prefix[:-2], _DOUBLE, _pack_double(value))
        elif kind is bytes:
            length = len(value)
            parts += (prefix, _LENGTHS[length] if length < 0x80 else _varint(length), value)
        elif kind is Int:
            parts += (prefix[:-2], _INT, _zigzag(int(value)))
        elif kind is UInteger:
            parts += (prefix[:-2], _UINTEGER, _varint(int(value)))
        else:
            return None
        count += 1
    if count < 0x80:
        parts[1] = _LENGTHS[count]
    elif count <= _MAX_ARGUMENTS:
        parts[1] = _varint(count)
    else:
        return None
    data = b"".join(parts)
    if len(data) > _MAX_ID_SIZE and not _within_limits(values, len(data)):
        return None
    return data


def _within_limits(values: typing.Dict[str, typing.Any], size: int) -> bool:
    """Whether large serialized arguments are within the decoder's limits
    (each ID at most 16 MiB, the whole at most 32 MiB)."""
    if size > _MAX_SERIALIZED:
        return False
    return all(len(value.encode("utf-8") if type(value) is str else value) <= _MAX_ID_SIZE
               for value in values.values() if type(value) in (str, bytes))


class Args(NativeHandle):
    """An owned outlive_args handle made from keyword values (None skips a name)."""
    _what = "argument list"

    def __init__(self, values: typing.Optional[typing.Mapping[str, typing.Any]] = None, _handle: typing.Any = None) -> None:
        if _handle is None:
            _handle = _ffi.ArgsP()
            check(_ffi.outlive_args_new(ctypes.byref(_handle)))
        self._handle = _handle
        for name, value in (values or {}).items():
            self.set(name, value)

    def set(self, name: str, value: typing.Any) -> None:
        """Sets argument `name` to a Python value (None: leaves it unset)."""
        key = _name(name)
        if value is None:
            return
        # The common exact types first: the isinstance chain below costs more
        # than the C call on every argument of every call.
        kind = type(value)
        if kind is str:
            data = value.encode("utf-8")
            status = _ffi.outlive_args_set_id(self.handle, key, None, data, len(data))
        elif kind is int and -2**63 <= value < 2**63:
            status = _ffi.outlive_args_set_integer(self.handle, key, value)
        elif kind is float:
            status = _ffi.outlive_args_set_double(self.handle, key, value)
        elif kind is bool:
            status = _ffi.outlive_args_set_bool(self.handle, key, value)
        elif kind is bytes:
            status = _ffi.outlive_args_set_id(self.handle, key, None, value, len(value))
        else:
            self._set_other(name, key, value)
            return
        if status:
            raise error_for(status)

    def _set_other(self, name: str, key: bytes, value: typing.Any) -> None:
        from .handlers import Handler
        if isinstance(value, bool):
            check(_ffi.outlive_args_set_bool(self.handle, key, value))
        elif isinstance(value, Int):
            check(_ffi.outlive_args_set_int(self.handle, key, value))
        elif isinstance(value, UInteger):
            check(_ffi.outlive_args_set_uinteger(self.handle, key, value))
        elif isinstance(value, int):
            if not -2**63 <= value < 2**63:
                raise OverflowError(f"{value} does not fit an INTEGER (int64); use outlive.UInteger")
            check(_ffi.outlive_args_set_integer(self.handle, key, value))
        elif isinstance(value, float):
            check(_ffi.outlive_args_set_double(self.handle, key, value))
        elif isinstance(value, str):
            data = value.encode("utf-8")
            check(_ffi.outlive_args_set_id(self.handle, key, None, data, len(data)))
        elif isinstance(value, (bytes, bytearray, memoryview)):
            data = bytes(value)
            check(_ffi.outlive_args_set_id(self.handle, key, None, data, len(data)))
        elif isinstance(value, ID):
            tag = value.type.encode("utf-8") if value.type is not None else None
            check(_ffi.outlive_args_set_id(self.handle, key, tag, value.bytes, len(value.bytes)))
        elif isinstance(value, Handler):
            check(_ffi.outlive_args_set_handler(self.handle, key, value.handle))
        else:
            raise TypeError(f"argument {name!r}: {type(value).__name__} is not an Outlive value "
                            "(bool, int, float, str, bytes, ID, Handler, Int, UInteger)")

    def _release(self, handle: typing.Any) -> None:
        _ffi.outlive_args_free(handle)


_set_id, _set_string, _set_integer, _set_double, _set_bool, _remove = (
    _ffi.BY_ADDRESS[name] for name in ("outlive_args_set_id", "outlive_args_set_string", "outlive_args_set_integer",
                                       "outlive_args_set_double", "outlive_args_set_bool", "outlive_args_remove"))
# A value this large (bytes, or characters of a str) is removed from the
# reused set after the call rather than kept (alive in C) until the thread's
# next call.
_KEPT_BYTES = 4096


class CallArgs(threading.local):
    """The payloads of signal posts: one outlive_args per thread, reused from
    post to post, so that a post costs a C call per argument and the post
    (no args_new, args_free, nor an Args object each time). (A handler call
    passes its arguments as bytes instead: serialized_arguments.)
    It holds exactly the names of the call being made: a name of the previous
    call that this one lacks is removed, one it has is set again (in place).
    `busy` while a call runs: a handler calling a handler on the same thread
    takes a fresh Args instead. After a failure the set is dropped."""

    def __init__(self) -> None:
        self.args: typing.Optional[Args] = None
        self.address = 0
        self.names: typing.Tuple[str, ...] = ()
        self.busy = False

    def fill(self, values: typing.Dict[str, typing.Any]) -> bool:
        """Sets `values` (no None among them) as the set's only arguments
        (at self.address); whether a value must be removed after the call."""
        address = self.address or self._start()
        names = tuple(values)
        large = False
        try:
            if names != self.names:
                for stale in self.names:
                    if stale not in values:
                        _check(_remove(address, stale.encode("utf-8")))
                self.names = ()
            for name, value in values.items():
                kind = type(value)
                if kind is str:
                    if len(value) > _KEPT_BYTES:
                        large = True
                    if "\0" in value:
                        data = value.encode("utf-8")
                        status = _set_id(address, name.encode("utf-8"), None, data, len(data))
                    else:  # the same untagged ID, in a C call of 3 arguments instead of 5
                        status = _set_string(address, name.encode("utf-8"), value.encode("utf-8"))
                elif kind is int and -2**63 <= value < 2**63:
                    status = _set_integer(address, name.encode("utf-8"), value)
                elif kind is bytes:
                    if len(value) > _KEPT_BYTES:
                        large = True
                    status = _set_id(address, name.encode("utf-8"), None, value, len(value))
                elif kind is float:
                    status = _set_double(address, name.encode("utf-8"), value)
                elif kind is bool:
                    status = _set_bool(address, name.encode("utf-8"), value)
                else:
                    large = True  # a handler, an ID, ...: not kept past the call
                    typing.cast(Args, self.args).set(name, value)
                    continue
                if status:
                    raise error_for(status)
        except BaseException:
            self.drop()
            raise
        self.names = names
        return large

    def _start(self) -> int:
        self.args, self.names = Args(), ()
        self.address = self.args.handle.value
        return self.address

    def clear(self) -> None:
        """Removes every argument (after a call with a large value)."""
        try:
            for name in self.names:
                _check(_remove(self.address, name.encode("utf-8")))
            self.names = ()
        except BaseException:
            self.drop()
            raise

    def drop(self) -> None:
        """Frees the set: the next call starts from an empty one."""
        args, self.args, self.address, self.names = self.args, None, 0, ()
        if args is not None:
            args.close()


def _check(status: int) -> None:
    if status:
        raise error_for(status)


def object_bytes(pointer: typing.Any) -> bytes:
    """The bytes of a borrowed outlive_object pointer, without its type tag."""
    size = ctypes.c_size_t()  # one per call: a handler may run on several threads at once
    data = _ffi.outlive_object_bytes(pointer, ctypes.byref(size))
    return ctypes.string_at(data, size.value) if size.value else b""


_object_bytes_by_address = _ffi.BY_ADDRESS["outlive_object_bytes"]


def _argument_bytes(pointer: typing.Any) -> bytes:
    """`object_bytes` of an ObjectP that C passed to a handler's trampoline,
    by address (see _ffi.BY_ADDRESS): without the typed handle's check, which
    `object_bytes`, reachable by any caller, keeps."""
    size = ctypes.c_size_t()
    data = _object_bytes_by_address(pointer, ctypes.byref(size))
    return ctypes.string_at(data, size.value) if size.value else b""


# Where the compiled module is built (_ffi.speedups): an ID argument's bytes or
# text in one call of its address, None otherwise (parameters.Parameter.decoder).
_object_bytes_at: typing.Optional[typing.Callable[[int], bytes]] = None
_object_text_at: typing.Optional[typing.Callable[[int], str]] = None
if _ffi.speedups is not None:
    _object_bytes_at, _object_text_at = _ffi.speedups.object_bytes, _ffi.speedups.object_text


def object_value(pointer: typing.Any) -> ID:
    """An ID value from a borrowed outlive_object pointer: an ID."""
    tag = _ffi.outlive_object_type(pointer)
    return ID(object_bytes(pointer), None if tag is None else tag.decode("utf-8"))


def args_to_dict(handle: typing.Any) -> typing.Dict[str, typing.Any]:
    """Every value of a borrowed outlive_args, as Python values (IDs as ID,
    handlers as Handler copies, INT/UINTEGER as Int/UInteger)."""
    from .handlers import Handler
    result: typing.Dict[str, typing.Any] = {}
    for index in range(_ffi.outlive_args_count(handle)):
        raw_name = _ffi.outlive_args_name_at(handle, index)
        kind = _ffi.outlive_args_type_at(handle, index)
        name = raw_name.decode("utf-8")
        if kind == TYPE_ID:
            out = _ffi.ObjectP()
            check(_ffi.outlive_args_get_id(handle, raw_name, ctypes.byref(out)))
            result[name] = object_value(out)
        elif kind == TYPE_HANDLER:
            out = _ffi.HandlerP()
            check(_ffi.outlive_args_get_handler(handle, raw_name, ctypes.byref(out)))
            result[name] = Handler._copy_of(out)
        else:
            table: typing.Dict[int, typing.Tuple[typing.Any, typing.Any, typing.Any]] = {
                TYPE_BOOL: (ctypes.c_bool, _ffi.outlive_args_get_bool, bool),
                TYPE_INT: (ctypes.c_int32, _ffi.outlive_args_get_int, Int),
                TYPE_DOUBLE: (ctypes.c_double, _ffi.outlive_args_get_double, float),
                TYPE_INTEGER: (ctypes.c_int64, _ffi.outlive_args_get_integer, int),
                TYPE_UINTEGER: (ctypes.c_uint64, _ffi.outlive_args_get_uinteger, UInteger),
            }
            ctype, getter, wrap = table[kind]
            number = ctype()
            check(getter(handle, raw_name, ctypes.byref(number)))
            result[name] = wrap(number.value)
    return result


__all__ = ["ID", "Int", "UInteger", "Args", "args_to_dict", "InvalidArgumentError"]
