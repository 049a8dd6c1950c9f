"""Handler(name, **bound) writes the handler's serialized bytes (docs/FORMAT.md)
in Python and makes it with one outlive_handler_deserialize call; what it does
not write, or what the decoder refuses, goes through the setters. Either way
the handler must be the one outlive_handler_new makes from the same values,
and a bad value must fail as the setters make it fail."""
import ctypes
import math
import typing

import pytest

import outlive
from outlive import _ffi
from outlive.values import Args, serialized_handler


def made_by_setters(name: str, invalidation: typing.Optional[str], bound: typing.Dict[str, typing.Any]) -> bytes:
    """The library's own bytes for the handler built the slow way."""
    out = _ffi.HandlerP()
    with Args(bound) as args:
        status = _ffi.outlive_handler_new(name.encode(), None if invalidation is None else invalidation.encode(),
                                          args.handle, ctypes.byref(out))
    assert status == 0, _ffi.outlive_last_error()
    return bytes(outlive.Handler._adopt(out))


CASES = [
    ("plain", None, {}),
    ("app.greet", None, {"text": "hello"}),
    ("app.greet", "app.cleanup", {"text": "hello"}),
    ("app.greet", "app.cleanup", {}),
    ("n", None, {"empty": "", "unicode": "žluťoučký kůň ☃", "nul": "a\0b", "raw": b"\x00\xff" * 100}),
    ("n", None, {"zero": 0, "one": 1, "minus": -1, "low": -2**63, "high": 2**63 - 1, "mid": 300, "neg": -64}),
    ("n", None, {"yes": True, "no": False, "real": 1.5, "tiny": -0.0, "inf": math.inf, "big": 1e300}),
    ("n", None, {"small": outlive.Int(-2**31), "top": outlive.Int(2**31 - 1), "u": outlive.UInteger(2**64 - 1),
                 "u0": outlive.UInteger(0), "u128": outlive.UInteger(128)}),
    ("n", None, {"id": outlive.ID(b"acct"), "skipped": None, "after": "x"}),
    ("n", None, {"json": outlive.ID(b'{"a":1}', type="json"), "tagged": outlive.ID(b"", type="app.account-1")}),
    ("n", None, {"long": "x" * 100000}),
    ("n" * 200, None, {f"a{i}": i for i in range(200)}),
]


@pytest.mark.parametrize("name,invalidation,bound", CASES)
def test_the_python_bytes_are_the_librarys_own(name: str, invalidation: typing.Optional[str],
                                               bound: typing.Dict[str, typing.Any]) -> None:
    data = serialized_handler(name, invalidation, bound)
    assert data is not None
    assert data == made_by_setters(name, invalidation, bound)
    made = outlive.Handler(name, **bound) if invalidation is None else \
        outlive.Handler.with_invalidation(name, invalidation, **bound)
    assert bytes(made) == data


def test_nan_keeps_its_bits() -> None:
    data = serialized_handler("n", None, {"x": math.nan})
    assert data == made_by_setters("n", None, {"x": math.nan})


@pytest.mark.parametrize("bound", [
    {"nested": outlive.Handler("inner", x=1)},
    {"array": bytearray(b"ab")},
    {"view": memoryview(b"ab")},
    {"sub": type("Text", (str,), {})("text")},
    {"huge": 2**63},
])
def test_values_it_does_not_write_go_through_the_setters(bound: typing.Dict[str, typing.Any]) -> None:
    assert serialized_handler("n", None, bound) is None
    if "huge" in bound:
        with pytest.raises(OverflowError):
            outlive.Handler("n", **bound)
    else:
        assert bytes(outlive.Handler("n", **bound)) == made_by_setters("n", None, bound)


def test_refused_bytes_fail_as_the_setters_fail() -> None:
    # Bytes the decoder refuses (CORRUPT) are retried through the setters, which
    # give the precise status: INVALID_ARGUMENT for a bad handler or argument name.
    with pytest.raises(outlive.InvalidArgumentError):
        outlive.Handler("bad name!")
    with pytest.raises(outlive.InvalidArgumentError):
        outlive.Handler("n" * 201)
    with pytest.raises(outlive.InvalidArgumentError):
        outlive.Handler("n", **{"not an identifier": 1})
    with pytest.raises(outlive.InvalidArgumentError):
        outlive.Handler.with_invalidation("n", "bad name!")
    with pytest.raises(outlive.InvalidArgumentError):
        outlive.Handler("n", tagged=outlive.ID(b"x", type="bad tag!"))
    with pytest.raises(UnicodeEncodeError):
        outlive.Handler("n", text="\ud800")
    with pytest.raises(TypeError):
        outlive.Handler("n", value=object())
    with pytest.raises(TypeError):
        outlive.Handler(3)  # type: ignore[arg-type]


def test_a_call_without_arguments_and_one_with_them_reach_the_handler() -> None:
    seen: typing.List[typing.Tuple[str, typing.Optional[bytes]]] = []

    @outlive.handler("encoding_test.greet")
    def greet(text: typing.Optional[str] = None, raw: typing.Optional[bytes] = None) -> None:
        seen.append((text or "", raw))

    try:
        outlive.Handler("encoding_test.greet")()
        outlive.Handler("encoding_test.greet", text="žluť")(raw=b"\x00\xff")
        outlive.Handler("encoding_test.greet")(text="", raw=b"")
    finally:
        outlive.handlers.unregister("encoding_test.greet")
    assert seen == [("", None), ("žluť", b"\x00\xff"), ("", b"")]


def test_names_and_argument_names_beyond_those_kept_encoded_are_each_written_as_given():
    # Handler heads and argument names are kept encoded, a bounded number of
    # them: more distinct ones than that, and the first ones again after the
    # keep was emptied, still make the library's own bytes.
    for round_ in range(2):
        for i in range(2500):
            name, key = f"app.task{i}", f"arg{i}"
            handler = outlive.Handler(name, **{key: i, "item": f"v{round_}"})
            assert bytes(handler) == made_by_setters(name, None, {key: i, "item": f"v{round_}"})
            assert handler.name == name and handler.bound == {key: i, "item": outlive.ID(f"v{round_}".encode())}
            handler.close()


# ── a handler kept as its bytes until its first use ──────────────────────────
# Once the library has accepted a handler's name and argument names, a Handler
# of them with plain values is only its bytes (Handler._data) until something
# needs the native handler: the library would accept those bytes for certain.

PLAIN = {"empty": "", "unicode": "žluťoučký kůň ☃", "nul": "a\0b", "raw": b"\x00\xff" * 100, "low": -2**63,
         "high": 2**63 - 1, "yes": True, "no": False, "real": 1.5, "tiny": -0.0, "inf": math.inf, "nan": math.nan}


def test_a_handler_of_accepted_names_and_plain_values_is_its_bytes_until_first_used() -> None:
    first = outlive.Handler("encoding_test.kept", **PLAIN)
    assert first._handle and first._data is None  # the first of its names: made by the library
    kept = outlive.Handler("encoding_test.kept", **PLAIN)
    assert kept._data is not None and not kept._handle
    assert bytes(kept) == bytes(first) == made_by_setters("encoding_test.kept", None, PLAIN)
    # Its first use makes the native handler from the same bytes.
    assert kept.name == "encoding_test.kept"
    assert kept._handle and kept._data is None
    assert bytes(kept) == bytes(first)
    bound = kept.bound
    assert bound["unicode"] == outlive.ID("žluťoučký kůň ☃".encode()) and bound["low"] == -2**63
    assert math.isnan(bound["nan"]) and bound["yes"] is True
    first.close()
    kept.close()


def test_a_handler_kept_as_bytes_copies_compares_and_closes_as_a_native_one() -> None:
    outlive.Handler("encoding_test.closing", item="a").close()
    kept = outlive.Handler("encoding_test.closing", item="b")
    assert kept._data is not None
    copy = kept.copy()
    assert copy == kept and hash(copy) == hash(kept) and copy == kept.copy()
    assert copy != outlive.Handler("encoding_test.closing", item="c")
    assert "encoding_test.closing" in repr(kept)
    kept.close()
    assert repr(kept) == "<Handler (closed)>"
    with pytest.raises(outlive.ClosedError):
        kept.handle
    with pytest.raises(outlive.ClosedError):
        kept()
    with pytest.raises(outlive.ClosedError):
        kept.name
    kept.close()  # again: nothing
    assert copy.name == "encoding_test.closing"  # the copy is its own
    copy.close()
    # What changes a handler changes the native one, made first: its bytes follow.
    changed = outlive.Handler("encoding_test.closing", item="d")
    before = bytes(changed)
    changed.bind(extra=1)
    assert changed._data is None and changed.bound == {"item": outlive.ID(b"d"), "extra": 1}
    assert bytes(changed) != before and outlive.Handler.from_bytes(bytes(changed)).bound == changed.bound
    changed.close()


def test_what_the_library_has_not_accepted_yet_is_made_at_once_and_refused_at_once() -> None:
    outlive.Handler("encoding_test.first", item="a").close()
    # An argument name not accepted yet, a value that is not plain, a value past the kept size.
    for bound in ({"other": 1}, {"item": outlive.ID(b"x", type="t")}, {"item": outlive.Int(3)},
                  {"item": "x" * (1 << 20)}, {"item": outlive.Handler("encoding_test.first", item="b")}):
        made = outlive.Handler("encoding_test.first", **bound)
        assert made._handle and made._data is None, bound
        made.close()
    # A name not accepted yet is checked when made, whatever its arguments.
    with pytest.raises(outlive.InvalidArgumentError):
        outlive.Handler("encoding test.first", item="a")
    with pytest.raises(outlive.InvalidArgumentError):
        outlive.Handler("encoding_test.first", **{"item": "a", "not an identifier": 1})
    with pytest.raises(outlive.InvalidArgumentError):
        outlive.Handler.with_invalidation("encoding_test.first", "bad name!", item="a")
    with pytest.raises(UnicodeEncodeError):
        outlive.Handler("encoding_test.first", item="\ud800")
    with pytest.raises(OverflowError):
        outlive.Handler("encoding_test.first", item=2**63)
    with pytest.raises(outlive.InvalidArgumentError):
        outlive.Handler("encoding_test.first", **{f"a{i}": i for i in range(1025)})


def test_threads_that_first_use_one_kept_handler_at_once_share_one_native_handler() -> None:
    import sys
    import threading
    outlive.Handler("encoding_test.shared", item="a").close()
    # Threads switched every microsecond: without the lock around the first
    # use, about one round in twenty made two native handlers (one leaked).
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(200):
            kept = outlive.Handler("encoding_test.shared", item="b")
            handles: typing.List[typing.Any] = []
            start = threading.Barrier(8)

            def use() -> None:
                start.wait()
                handles.append(kept.handle)

            threads = [threading.Thread(target=use) for _ in range(8)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert len(handles) == 8 and all(handle is handles[0] for handle in handles)
            kept.close()
    finally:
        sys.setswitchinterval(interval)
