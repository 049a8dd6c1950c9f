"""How a Python function's parameters become a handler's declared signature,
and how values travel to them.

A parameter the seven Outlive types express exactly keeps its type: bool →
BOOL, int → INTEGER, float → DOUBLE, outlive.Int → INT, outlive.UInteger →
UINTEGER, str / bytes / outlive.ID → ID, outlive.Handler → HANDLER (optional,
`?`, when it is `Optional[...]` or has a default). Every other JSON-able
annotation — dict, list, pathlib.Path, datetime.datetime, datetime.date, and
bool / int / float that are `Optional[...]` or have a default (the C
signature cannot make a number optional) — travels as a typed ID `ID<json>`:
UTF-8 JSON text (a Path as its string, a date or datetime in ISO 8601),
decoded back from the annotation. A parameter with a default is optional, and
the default applies when the argument is absent."""
from __future__ import annotations

import ctypes
import dataclasses
import datetime
import inspect
import json
import math
import pathlib
import types
import typing

from . import _ffi
from .values import ID, Int, UInteger, _argument_bytes, _object_bytes_at, _object_text_at, object_bytes, object_value

JSON_TAG = "json"
"""The type tag of an ID holding a JSON value (`ID<json>` in a signature)."""

CTYPES: typing.Dict[str, typing.Any] = {
    "ID": _ffi.ObjectP, "JSON": _ffi.ObjectP, "HANDLER": _ffi.HandlerP, "BOOL": ctypes.c_bool, "INT": ctypes.c_int32,
    "DOUBLE": ctypes.c_double, "INTEGER": ctypes.c_int64, "UINTEGER": ctypes.c_uint64}

_NATIVE = {bool: "BOOL", Int: "INT", UInteger: "UINTEGER", int: "INTEGER", float: "DOUBLE", str: "ID", bytes: "ID",
           ID: "ID"}
_JSON_TYPES = (dict, list, pathlib.Path, pathlib.PurePath, datetime.datetime, datetime.date)
_UNIONS: typing.Tuple[typing.Any, ...] = (typing.Union, types.UnionType)


def _unwrap_optional(annotation: typing.Any) -> typing.Tuple[typing.Any, bool]:
    """`X | None` / `Optional[X]` as (X, True); anything else as (it, False)."""
    if typing.get_origin(annotation) in _UNIONS:
        members = [member for member in typing.get_args(annotation) if member is not type(None)]
        if len(members) == 1 and len(typing.get_args(annotation)) == 2:
            return members[0], True
    return annotation, False


@dataclasses.dataclass(frozen=True)
class Parameter:
    """One parameter of a Python handler: its declared kind and how its values
    are checked, encoded and decoded."""

    name: str
    kind: str
    """BOOL, INT, DOUBLE, INTEGER, UINTEGER, ID, HANDLER, or JSON (an `ID<json>`)."""
    base: typing.Any
    """The annotation without its Optional."""
    nullable: bool
    """Whether None is a value of it (`Optional[...]`)."""
    default: typing.Any = inspect.Parameter.empty

    @property
    def optional(self) -> bool:
        """Whether the declared parameter is optional (`?`): it may be absent."""
        return self.kind in ("ID", "HANDLER", "JSON") and (self.nullable or self.default is not inspect.Parameter.empty)

    @property
    def ctype(self) -> typing.Any:
        return CTYPES[self.kind]

    def declaration(self) -> str:
        """The parameter in a signature string, e.g. `ID<json>? when`."""
        kind = "ID<json>" if self.kind == "JSON" else self.kind
        return f"{kind}{'?' if self.optional else ''} {self.name}"

    # ── values going in ─────────────────────────────────────────────────────

    def encode(self, value: typing.Any) -> typing.Any:
        """The Outlive value for `value` (None: leave the argument absent).
        Raises TypeError (or ValueError, OverflowError) for a value the
        parameter cannot take."""
        if value is None and self.kind != "JSON":
            if self.nullable:
                return None
            raise TypeError(f"argument {self.name!r} is None, but its annotation {_shown(self.base)} is not Optional")
        if self.kind == "JSON":
            return ID(_json_text(self, value), type=JSON_TAG)
        if self.kind == "BOOL":
            return _expect(self, value, bool)
        if self.kind == "INTEGER":
            if isinstance(value, bool) or not isinstance(value, int):
                raise _mismatch(self, value)
            return int(value)
        if self.kind == "INT":
            return Int(_expect_int(self, value))
        if self.kind == "UINTEGER":
            return UInteger(_expect_int(self, value))
        if self.kind == "DOUBLE":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise _mismatch(self, value)
            return float(value)
        if self.kind == "HANDLER":
            from .handlers import Handler
            return _expect(self, value, Handler)
        if self.base is str:
            return _expect(self, value, str)
        if self.base is bytes:
            if not isinstance(value, (bytes, bytearray, memoryview)):
                raise _mismatch(self, value)
            return bytes(value)
        if not isinstance(value, (ID, str, bytes)):
            raise _mismatch(self, value)
        return value

    # ── values coming out (raw ctypes values of a call) ─────────────────────

    def decoder(self) -> typing.Callable[[typing.Any], typing.Any]:
        """`decode`, or for a str or bytes parameter the same steps made once
        (a handler's trampoline decodes every argument of every call)."""
        if self.kind != "ID" or self.base not in (str, bytes):
            return self.decode
        absent = None if self.default is inspect.Parameter.empty else self.default
        read_bytes, read_text = _object_bytes_at, _object_text_at
        if read_bytes is not None and read_text is not None:
            # The compiled module's reads (values._object_bytes_at): one call of the address.
            if self.base is bytes:
                return lambda raw: read_bytes(raw.value) if raw else absent
            return lambda raw: read_text(raw.value) if raw else absent
        if self.base is bytes:
            return lambda raw: _argument_bytes(raw) if raw else absent
        return lambda raw: _argument_bytes(raw).decode("utf-8") if raw else absent

    def decode(self, raw: typing.Any) -> typing.Any:
        """The Python value of a raw C argument (absent: the default, or None)."""
        if self.kind in ("ID", "JSON", "HANDLER") and not raw:
            return None if self.default is inspect.Parameter.empty else self.default
        if self.kind == "HANDLER":
            from .handlers import Handler
            return Handler._copy_of(raw)
        if self.kind == "INT":
            return Int(raw)
        if self.kind == "UINTEGER":
            return UInteger(raw)
        if self.kind not in ("ID", "JSON"):
            return raw
        if self.kind == "ID" and self.base is not ID:
            # A str or bytes is the object's bytes alone: no ID object, no type tag.
            data = object_bytes(raw)
            return data.decode("utf-8") if self.base is str else data
        value = object_value(raw)
        if self.kind == "ID":
            return value
        return _from_json(self, json.loads(value.bytes.decode("utf-8")))



def _shown(annotation: typing.Any) -> str:
    return getattr(annotation, "__name__", None) or str(annotation)


def _mismatch(parameter: Parameter, value: typing.Any) -> TypeError:
    optional = " or None" if parameter.nullable else ""
    return TypeError(f"argument {parameter.name!r} takes {_shown(parameter.base)}{optional}, not {type(value).__name__}")


def _expect(parameter: Parameter, value: typing.Any, kind: type) -> typing.Any:
    if not isinstance(value, kind):
        raise _mismatch(parameter, value)
    return value


def _expect_int(parameter: Parameter, value: typing.Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _mismatch(parameter, value)
    return int(value)


def _origin(base: typing.Any) -> typing.Any:
    return typing.get_origin(base) or base


def _json_text(parameter: Parameter, value: typing.Any) -> str:
    """Checks `value` against the parameter's annotation and encodes it."""
    if value is None:
        if not parameter.nullable:
            raise TypeError(f"argument {parameter.name!r} is None, but its annotation {_shown(parameter.base)} is not Optional")
        return "null"
    base = _origin(parameter.base)
    if base in (pathlib.Path, pathlib.PurePath):
        if not isinstance(value, (pathlib.PurePath, str)):
            raise _mismatch(parameter, value)
        plain: typing.Any = str(value)
    elif base is datetime.datetime:
        plain = _expect(parameter, value, datetime.datetime).isoformat()
    elif base is datetime.date:
        if isinstance(value, datetime.datetime) or not isinstance(value, datetime.date):
            raise _mismatch(parameter, value)
        plain = value.isoformat()
    elif base is bool:
        plain = _expect(parameter, value, bool)
    elif base in (int, Int, UInteger):
        plain = int(base(_expect_int(parameter, value)))  # Int, UInteger: their ranges
    elif base is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _mismatch(parameter, value)
        plain = float(value)
    elif base is list:
        if not isinstance(value, (list, tuple)):
            raise _mismatch(parameter, value)
        plain = list(value)
    else:
        plain = _expect(parameter, value, base)
    try:
        return json.dumps(plain, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as error:
        raise TypeError(f"argument {parameter.name!r}: {error} (it travels as JSON)") from None


def _from_json(parameter: Parameter, value: typing.Any) -> typing.Any:
    if value is None:
        if parameter.nullable:
            return None
        raise TypeError(f"argument {parameter.name!r} is null, but its annotation {_shown(parameter.base)} is not Optional")
    base = _origin(parameter.base)
    if base in (pathlib.Path, pathlib.PurePath):
        return pathlib.Path(_expect(parameter, value, str))
    if base is datetime.datetime:
        return datetime.datetime.fromisoformat(_expect(parameter, value, str))
    if base is datetime.date:
        return datetime.date.fromisoformat(_expect(parameter, value, str))
    if base in (int, Int, UInteger):
        return base(_expect_int(parameter, value))
    if base is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise _mismatch(parameter, value)
        return float(value)
    return _expect(parameter, value, base)


def parameter_of(name: str, annotation: typing.Any, default: typing.Any, owner: str) -> Parameter:
    """The Parameter for an annotated Python parameter (TypeError when its
    annotation is none Outlive can carry)."""
    from .handlers import Handler
    base, nullable = _unwrap_optional(annotation)
    has_default = default is not inspect.Parameter.empty
    if base is Handler:
        return Parameter(name, "HANDLER", base, nullable, default)
    native = _NATIVE.get(base)
    # The library's call-time arguments of a task (task_id ID, attempt
    # INTEGER) keep their types whatever the default: a task always gets them.
    call_time = name in ("task_id", "attempt") and not nullable
    if native is not None and (native == "ID" or call_time or not (nullable or has_default)):
        return Parameter(name, native, base, nullable, default)
    if native is not None or _origin(base) in _JSON_TYPES:
        return Parameter(name, "JSON", base, nullable, default)
    raise TypeError(f"{owner}: parameter {name!r}: annotate it with bool, int, float, str, bytes, dict, list, "
                    "pathlib.Path, datetime.datetime, datetime.date, outlive.ID, outlive.Handler, outlive.Int or "
                    "outlive.UInteger (each may be Optional[...], or X | None)")


def parameters_of(function: typing.Callable[..., typing.Any], owner: str) -> typing.List[Parameter]:
    """Every parameter of `function`, in order, from its annotations."""
    hints = typing.get_type_hints(function)
    result = []
    for parameter in inspect.signature(function).parameters.values():
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise TypeError(f"{owner}: *{parameter.name} and **{parameter.name} cannot be declared (each argument is named)")
        if parameter.name not in hints:
            raise TypeError(f"{owner}: parameter {parameter.name!r} has no annotation")
        result.append(parameter_of(parameter.name, hints[parameter.name], parameter.default, owner))
    return result
