import math
import os
import subprocess

import pytest

import outlive
from conftest import run_python

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FIXTURE = os.path.join(ROOT, "build", "tests", "libhandlers_fixture.so")
CALLER = os.path.join(ROOT, "build", "tests", "handler_caller")

calls = []


@outlive.handler("py.record")
def record(text: str, maybe: str | None, flag: bool, small: outlive.Int, real: float, big: int,
           huge: outlive.UInteger, raw: bytes, tagged: outlive.ID, nested: outlive.Handler | None) -> None:
    calls.append(dict(text=text, maybe=maybe, flag=flag, small=small, real=real, big=big, huge=huge, raw=raw,
                      tagged=tagged, nested=nested))


@outlive.handler("py.fail")
def fail(reason: str) -> None:
    raise RuntimeError(reason)


def test_python_handler_gets_bound_and_call_time_values_of_every_type():
    calls.clear()
    h = outlive.Handler("py.record", text="bound", flag=False, small=outlive.Int(-2**31), real=1e300,
                        big=-2**63, huge=outlive.UInteger(2**64 - 1), raw=b"\x00\xff",
                        tagged=outlive.ID("acct", type="app.account"))
    h(flag=True, text="call-time wins")
    [call] = calls
    assert call["text"] == "call-time wins" and call["maybe"] is None and call["flag"] is True
    assert call["small"] == -2**31 and call["real"] == 1e300 and call["big"] == -2**63 and call["huge"] == 2**64 - 1
    assert call["raw"] == b"\x00\xff" and call["tagged"] == outlive.ID(b"acct", type="app.account")
    assert call["nested"] is None
    calls.clear()
    h(real=float("nan"), nested=outlive.Handler("py.fail", reason="nested"))
    assert math.isnan(calls[0]["real"]) and calls[0]["nested"].name == "py.fail"
    with pytest.raises(RuntimeError, match="nested"):
        calls[0]["nested"]()


def test_refusals_call_nothing():
    calls.clear()
    with pytest.raises(outlive.MissingArgumentError):
        outlive.Handler("py.record", text="x")()
    with pytest.raises(outlive.TypeMismatchError):
        outlive.Handler("py.record", text="x", flag=1, small=outlive.Int(1), real=1.0, big=1,
                        huge=outlive.UInteger(1), raw=b"", tagged=outlive.ID("a", type="app.account"))()
    with pytest.raises(outlive.UnresolvedError):
        outlive.Handler("system")()
    with pytest.raises(outlive.InvalidArgumentError):
        outlive.Handler("not a name!")
    assert calls == []
    with pytest.raises(TypeError):
        @outlive.handler("py.bad")
        def bad(x: set) -> None:
            pass


def test_exception_in_python_handler_reaches_the_caller():
    with pytest.raises(RuntimeError, match="boom"):
        outlive.Handler("py.fail", reason="boom")()


def test_invalidation_runs_the_invalidation_handler_once_and_survives_serialization():
    calls.clear()
    h = outlive.Handler.with_invalidation("py.fail", "py.record", reason="x", text="inv", flag=True,
                        small=outlive.Int(1), real=2.0, big=3, huge=outlive.UInteger(4), raw=b"",
                        tagged=outlive.ID("t", type="app.account"))
    h.invalidate()
    assert h.invalidated and calls[0]["text"] == "inv"
    again = outlive.Handler.from_bytes(bytes(h))
    assert again.invalidated
    with pytest.raises(outlive.InvalidatedError):
        again()
    with pytest.raises(outlive.InvalidatedError):
        h.invalidate()


def test_serialized_handler_round_trips_with_its_bound_values():
    h = outlive.Handler("py.record", text="t", big=-5, nested=outlive.Handler("py.fail", reason="r"))
    copy = outlive.Handler.from_bytes(bytes(h))
    assert copy == h and copy.name == "py.record"
    bound = copy.bound
    assert bound["text"] == outlive.ID(b"t") and bound["big"] == -5 and bound["nested"].name == "py.fail"
    with pytest.raises(outlive.CorruptError):
        outlive.Handler.from_bytes(b"\x00garbage")


def test_c_handler_called_from_python_calls_a_python_handler_back():
    code = f"""
import outlive
results = []
@outlive.handler("py_done")
def done(result: int, label: str | None) -> None:
    results.append((result, label))
outlive.load_handlers({FIXTURE!r})
outlive.Handler("fixture_run_nested", completion=outlive.Handler("py_done"))(n=21)
print("python saw", results[0])
"""
    out = run_python(code).stdout
    assert "python saw (42, None)" in out


def test_handler_made_in_python_runs_in_a_c_process_that_loaded_the_library(tmp_path):
    h = outlive.Handler("fixture_all_types", text="from python", account=outlive.ID("dana", type="fixture.account"),
                        flag=True, small=outlive.Int(7), real=0.5, big=-2**63, huge=outlive.UInteger(2**64 - 1))
    blob = tmp_path / "handler.bin"
    blob.write_bytes(bytes(h))
    result = subprocess.run([CALLER, FIXTURE, str(blob), "call"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    line = next(l for l in result.stdout.splitlines() if l.startswith("fixture_all_types:"))
    assert 'text="from python"' in line and 'account=fixture.account"dana"' in line
    assert "big=-9223372036854775808" in line and "huge=18446744073709551615" in line and "small=7" in line


def test_handler_serialized_in_one_python_process_runs_in_another():
    code = """
import sys, outlive
got = []
@outlive.handler("py.greet")
def greet(name: str, loud: bool) -> None:
    got.append(name.upper() if loud else name)
h = outlive.Handler.from_bytes(bytes.fromhex(sys.argv[1]))
h(loud=True)
print(got[0])
"""
    blob = bytes(outlive.Handler("py.greet", name="dana"))
    assert run_python(code, blob.hex()).stdout.strip() == "DANA"


# Call-time arguments go to C as bytes made for the call, or through the
# setters (test_handler_calls.py): what one call set must never reach another.

seen = []


@outlive.handler("py.pair")
def pair(first: str | None, second: str | None) -> None:
    seen.append((first, second))


@outlive.handler("py.inner_call")
def inner_call(first: str, inner: outlive.Handler) -> None:
    inner(second="7")  # a handler call while the outer one is running on this thread
    seen.append(("outer", first))


def test_call_time_arguments_of_one_call_never_reach_the_next():
    seen.clear()
    h = outlive.Handler("py.pair")
    h(first="a", second="1")
    h(second="2")
    h(first="b")
    h(first="c", second=None)  # None leaves a name unset
    h()
    h(first="x" * 100_000, second="3")  # large
    h(second="4")
    h(second="5", first="d")  # the same names in another order
    h(first="nul\0inside", second="é")
    assert seen == [("a", "1"), (None, "2"), ("b", None), ("c", None), (None, None), ("x" * 100_000, "3"),
                    (None, "4"), ("d", "5"), ("nul\0inside", "é")]


def test_a_refused_call_time_argument_leaves_the_next_call_clean():
    seen.clear()
    h = outlive.Handler("py.pair")
    with pytest.raises(TypeError):
        h(first="kept?", second=object())
    with pytest.raises(OverflowError):
        h(first="kept?", second=2**64)
    with pytest.raises(outlive.TypeMismatchError):
        h(first=1, second=2)
    h(second="5")
    assert seen == [(None, "5")]


def test_a_handler_called_inside_a_handler_call_has_its_own_arguments():
    seen.clear()
    outlive.Handler("py.inner_call")(first="outer", inner=outlive.Handler("py.pair", first="bound"))
    assert seen == [("bound", "7"), ("outer", "outer")]


def test_threads_calling_handlers_at_once_each_see_their_own_arguments():
    import threading
    seen.clear()
    h = outlive.Handler("py.pair")

    def worker(index):
        for count in range(200):
            h(first=f"t{index}", second=str(count))

    threads = [threading.Thread(target=worker, args=(index,)) for index in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for index in range(4):
        assert [second for first, second in seen if first == f"t{index}"] == [str(count) for count in range(200)]
    assert len(seen) == 800
