"""handler(**call_args) writes the call-time arguments as an argument set's
bytes (docs/FORMAT.md) in Python and calls with one
outlive_handler_call_serialized; what it does not write goes through the
setters (outlive_args). Either way the handler must get exactly the values of
this call, and a bad value must fail as the setters make it fail, leaving
nothing behind for the next call."""
import ctypes
import math
import threading
import typing

import pytest

import outlive
from outlive import _callbacks, _ffi
from outlive.values import Args, serialized_arguments

got: typing.List[typing.Dict[str, typing.Any]] = []


@outlive.handler("calls.pair")
def pair(first: str | None, second: str | None) -> None:
    got.append({"first": first, "second": second})


@outlive.handler("calls.every")
def every(text: str | None, raw: bytes | None, flag: bool, small: outlive.Int, real: float, big: int,
          huge: outlive.UInteger, tagged: outlive.ID | None, nested: outlive.Handler | None) -> None:
    got.append(dict(text=text, raw=raw, flag=flag, small=small, real=real, big=big, huge=huge, tagged=tagged,
                    nested=None if nested is None else nested.name))


@outlive.handler("calls.fail")
def fail(first: str | None) -> None:
    raise RuntimeError(f"failed with {first}")


def library_bytes(values: typing.Dict[str, typing.Any]) -> bytes:
    """The library's own bytes of the argument set, built through the setters."""
    out = _ffi.HandlerP()
    with Args(values) as args:
        assert _ffi.outlive_handler_new(b"outlive.arguments", None, args.handle, ctypes.byref(out)) == 0
    return bytes(outlive.Handler._adopt(out))


WRITTEN = [
    {},
    {"text": "hello"},
    {"lone": "é" * 63},
    {"lone": "x" * 127},
    {"lone": "x" * 128},
    {"lone": ""},
    {"empty": "", "unicode": "žluťoučký kůň ☃", "nul": "a\0b", "raw": b"\x00\xff" * 100, "short": b""},
    {"zero": 0, "one": 1, "minus": -1, "low": -2**63, "high": 2**63 - 1, "mid": 300, "neg": -64},
    {"yes": True, "no": False, "real": 1.5, "tiny": -0.0, "inf": math.inf, "big": 1e300},
    {"small": outlive.Int(-2**31), "top": outlive.Int(2**31 - 1), "u": outlive.UInteger(2**64 - 1),
     "u0": outlive.UInteger(0), "u128": outlive.UInteger(128)},
    {"skipped": None, "after": "x"},
    {"long": "x" * 100_000, "longer": b"y" * 200_000},
    {f"a{i}": i for i in range(200)},
    {"_": "underscore", "A" * 128: "longest name"},
]


@pytest.mark.parametrize("values", WRITTEN)
def test_the_python_bytes_are_the_librarys_own(values: typing.Dict[str, typing.Any]) -> None:
    expected = library_bytes({k: v for k, v in values.items() if v is not None})
    # Twice: the first call of a name encodes it, the next ones reuse it (a
    # lone str argument then takes a shorter way).
    assert serialized_arguments(values) == expected
    assert serialized_arguments(values) == expected


LEFT_TO_THE_SETTERS = [
    {"id": outlive.ID(b"acct")},
    {"tagged": outlive.ID(b"acct", type="app.account")},
    {"nested": outlive.Handler("calls.pair")},
    {"past64": 2**63},
    {"below64": -2**63 - 1},
    {"array": bytearray(b"x")},
    {"view": memoryview(b"x")},
    {"sub": type("Text", (str,), {})("x")},
    {"1digit": "x"},
    {"has space": "x"},
    {"é": "x"},
    {"A" * 129: "x"},
    {"object": object()},
    {f"a{i}": i for i in range(1025)},
]


@pytest.mark.parametrize("values", LEFT_TO_THE_SETTERS)
def test_values_it_does_not_write_are_left_to_the_setters(values: typing.Dict[str, typing.Any]) -> None:
    assert serialized_arguments(values) is None


def test_an_id_past_the_limit_is_left_to_the_setters_which_refuse_it() -> None:
    large = "x" * (16 * 1024 * 1024 + 1)
    assert serialized_arguments({"first": large}) is None
    assert serialized_arguments({"first": "x" * (16 * 1024 * 1024)}) is not None
    assert serialized_arguments({"first": b"x" * (16 * 1024 * 1024), "second": b"y" * (16 * 1024 * 1024)}) is None
    got.clear()
    with pytest.raises(outlive.InvalidArgumentError):
        outlive.Handler("calls.pair")(first=large)
    outlive.Handler("calls.pair")(second="after")
    assert got == [{"first": None, "second": "after"}]


def test_every_type_reaches_the_handler_written_or_through_the_setters() -> None:
    got.clear()
    h = outlive.Handler("calls.every", flag=False, small=outlive.Int(0), real=0.0, big=0, huge=outlive.UInteger(0))
    h(text="t", raw=b"\x00r", flag=True, small=outlive.Int(-5), real=2.5, big=-2**63, huge=outlive.UInteger(2**64 - 1))
    h(tagged=outlive.ID("acct", type="app.account"), nested=outlive.Handler("calls.pair"), text="with setters")
    h()
    assert got == [
        dict(text="t", raw=b"\x00r", flag=True, small=-5, real=2.5, big=-2**63, huge=2**64 - 1, tagged=None,
             nested=None),
        dict(text="with setters", raw=None, flag=False, small=0, real=0.0, big=0, huge=0,
             tagged=outlive.ID(b"acct", type="app.account"), nested="calls.pair"),
        dict(text=None, raw=None, flag=False, small=0, real=0.0, big=0, huge=0, tagged=None, nested=None),
    ]


def test_each_bad_call_fails_precisely_and_leaves_the_next_call_clean() -> None:
    got.clear()
    h = outlive.Handler("calls.pair")
    careless: typing.List[typing.Tuple[typing.Dict[str, typing.Any], typing.Type[BaseException]]] = [
        ({"first": "kept?", "second": object()}, TypeError),
        ({"first": "kept?", "second": 2**64}, OverflowError),
        ({"first": "kept?", "second": -2**63 - 1}, OverflowError),
        ({"first": "kept?", "1bad": "x"}, outlive.InvalidArgumentError),
        ({"first": "kept?", "é": "x"}, outlive.InvalidArgumentError),
        ({"first": "kept?", "x" * 129: "x"}, outlive.InvalidArgumentError),
        ({"first": "kept?", "second": "\ud800"}, UnicodeEncodeError),
        ({"first": 1, "second": "kept?"}, outlive.TypeMismatchError),
        ({"first": "kept?", "second": outlive.UInteger(1)}, outlive.TypeMismatchError),
        ({"first": "kept?", "second": 1.5}, outlive.TypeMismatchError),
        ({"first": "kept?", "second": outlive.Handler("calls.pair")}, outlive.TypeMismatchError),
    ]
    for values, error in careless:
        with pytest.raises(error):
            h(**values)
        h(second="next")
    assert got == [{"first": None, "second": "next"}] * len(careless)
    state = _callbacks.local.state
    assert state.depth == 0 and state.errors == []


def test_a_handler_raising_reaches_the_caller_once_and_the_next_call_runs_clean() -> None:
    got.clear()
    failing = outlive.Handler("calls.fail")
    with pytest.raises(RuntimeError, match="failed with first"):
        failing(first="first")
    with pytest.raises(RuntimeError, match="failed with None"):
        failing()
    outlive.Handler("calls.pair")(second="after")
    assert got == [{"first": None, "second": "after"}]
    state = _callbacks.local.state
    assert state.depth == 0 and state.errors == [] and not _callbacks.pending_threads


def test_a_closed_handler_is_refused_before_its_arguments_are_looked_at() -> None:
    h = outlive.Handler("calls.pair")
    h.close()
    with pytest.raises(outlive.ClosedError):
        h(first=object())


def test_threads_calling_one_handler_at_once_each_get_their_own_arguments() -> None:
    got.clear()
    h = outlive.Handler("calls.pair")
    errors: typing.List[BaseException] = []

    def worker(index: int) -> None:
        try:
            for count in range(300):
                if count % 50 == 7:  # a refused call among them, through the setters
                    with pytest.raises(OverflowError):
                        h(first=f"t{index}", second=2**70)
                elif count % 3:
                    h(first=f"t{index}", second=str(count))
                else:  # another shape: the second name absent
                    h(first=f"t{index}")
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(index,)) for index in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for index in range(4):
        mine = [call["second"] for call in got if call["first"] == f"t{index}"]
        assert mine == [str(count) if count % 3 else None for count in range(300) if count % 50 != 7]


def test_argument_names_beyond_those_kept_encoded_are_each_written_as_given() -> None:
    # The encoded names are bounded (emptied when full): names made on the fly
    # must each still be written as given, before and after the emptying.
    for round_ in range(2):
        for index in range(0, 1100, 7):
            values = {f"name{index}": f"v{round_}", f"other{index}": index}
            assert serialized_arguments(values) == library_bytes(values)
            assert serialized_arguments({f"name{index}": "lone"}) == library_bytes({f"name{index}": "lone"})
        for index in range(1100):
            serialized_arguments({f"filler{round_}_{index}": "x"})


def test_an_exception_kept_on_one_thread_is_raised_there_and_never_on_another() -> None:
    got.clear()
    failing, h = outlive.Handler("calls.fail"), outlive.Handler("calls.pair")
    raised: typing.List[str] = []
    stop = threading.Event()

    def fail_repeatedly() -> None:
        try:
            for count in range(300):
                try:
                    failing(first=str(count))
                except RuntimeError as error:
                    raised.append(str(error))
        finally:
            # Also when a call raised something else: the loop below would
            # otherwise call (and record) until memory ran out.
            stop.set()

    thread = threading.Thread(target=fail_repeatedly)
    thread.start()
    calls = 0
    while not stop.is_set() or calls < 300:
        h(first="main", second=str(calls))  # raises nothing of the other thread's
        calls += 1
    thread.join()
    assert raised == [f"failed with {count}" for count in range(300)]
    assert [call["second"] for call in got] == [str(count) for count in range(calls)]
    assert not _callbacks.pending_threads
    state = _callbacks.local.state
    assert state.depth == 0 and state.errors == []
