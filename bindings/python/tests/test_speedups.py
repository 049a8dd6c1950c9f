"""outlive._speedups: the package's compiled calls — a handler call, a task add
from a handler's bytes, and in a Python task handler's call its ID arguments
and its completion — without ctypes. Where it is built (`make` builds
it for the Python that runs the tests) every such call the package makes goes
through it, so the suites of handler calls and adds test it; the ctypes way
stays for a Python without it, and those suites run that way too here
(OUTLIVE_PYTHON_SPEEDUPS=0). What is left is what only this module does: its
choice of the calls it makes itself, and its answers to bad arguments."""
import os
import subprocess
import sys
import typing

import pytest

import outlive
from outlive import _ffi, handlers, tasks
from outlive.errors import Status
from outlive.values import serialized_arguments
from conftest import HERE, PACKAGE_ROOT, run_python

BUILT = os.path.exists(os.path.join(PACKAGE_ROOT, "outlive", "_speedups.abi3.so"))
speedups = _ffi.speedups
needs_speedups = pytest.mark.skipif(speedups is None, reason="outlive._speedups is not built or is turned off")

got: typing.List[typing.Any] = []


@outlive.handler("py.speedups.note")
def note(item: str) -> None:
    got.append(item)


@outlive.handler("py.speedups.fail")
def fail(item: str) -> None:
    raise ValueError(f"refused {item}")


def test_the_compiled_calls_are_the_packages_where_built_and_off_when_asked() -> None:
    if not BUILT:
        pytest.skip("outlive/_speedups.abi3.so is not built (no Python.h for this Python)")
    if os.environ.get("OUTLIVE_PYTHON_SPEEDUPS") != "0":
        assert speedups is not None
        assert handlers._call_lone is not None and tasks._fast_enqueue is not None
    off = run_python("import os; os.environ['OUTLIVE_PYTHON_SPEEDUPS'] = '0'\n"
                     "from outlive import _ffi, handlers, tasks\n"
                     "print(_ffi.speedups, handlers._call_lone, tasks._fast_enqueue)")
    assert off.stdout.split() == ["None", "None", "None"]


def test_a_compiled_module_of_another_version_is_left_out_and_ctypes_does_the_calls() -> None:
    # A stale build: one function missing, or bind() taking other arguments.
    for stale in ("module.call_lone = None", "def bind(*addresses): raise TypeError('bind() takes 2 arguments')"):
        code = ("import sys, types\n"
                "module = types.ModuleType('outlive._speedups')\n"
                "for name in ('bind', 'bind_lone_ids', 'call', 'call_lone', 'call_args', 'enqueue', 'object_bytes',"
                " 'object_text'): setattr(module, name, lambda *a: None)\n"
                f"{stale}\n"
                "if stale_bind := globals().get('bind'): module.bind = stale_bind\n"
                "sys.modules['outlive._speedups'] = module\n"
                "import outlive\n"
                "from outlive import _ffi\n"
                "got = []\n"
                "@outlive.handler('py.speedups.stale')\n"
                "def stale(item: str) -> None: got.append(item)\n"
                "handler = outlive.Handler('py.speedups.stale')\n"
                "handler(item='one'); handler(item='two')\n"
                "print(_ffi.speedups is None, got)\n")
        result = run_python(code)
        assert result.stdout.split("\n")[0] == "True ['one', 'two']", result.stdout + result.stderr


@needs_speedups
def test_the_common_call_is_made_in_c_and_every_other_is_left_to_the_package() -> None:
    handler = outlive.Handler("py.speedups.note")
    handler(item="first")  # the name is accepted once, by the package's own way
    address = handler.handle.value
    got.clear()
    assert speedups.call_lone(address, {"item": "plain"}) == 0
    assert speedups.call_lone(address, {"item": "žluťoučký ☃"}) == 0
    assert speedups.call_lone(address, {"item": ""}) == 0
    assert speedups.call_lone(address, {"item": "x" * 127}) == 0
    assert got == ["plain", "žluťoučký ☃", "", "x" * 127]
    # What it leaves to the package: None, and nothing called.
    for other in ({"item": "x" * 128}, {"item": "é" * 64}, {"item": b"bytes"}, {"item": 5}, {"item": None}, {},
                  {"item": "a", "other": "b"}, {"never_accepted_before": "v"}, ["item"], None):
        assert speedups.call_lone(address, other) is None, other
    assert len(got) == 4
    # The package's own way makes the rest, with the same results.
    handler(item="x" * 128)
    handler(item="é" * 64)
    assert got[4:] == ["x" * 128, "é" * 64]
    handler.close()


def test_a_lone_surrogate_raises_as_encoding_it_does_and_the_next_call_runs() -> None:
    handler = outlive.Handler("py.speedups.note")
    handler(item="accepted")
    got.clear()
    with pytest.raises(UnicodeEncodeError):
        handler(item="bad \udc80 text")
    handler(item="after")
    assert got == ["after"]
    handler.close()


def test_a_python_handler_that_raises_reaches_the_caller_once() -> None:
    handler = outlive.Handler("py.speedups.fail")
    with pytest.raises(ValueError, match="refused once"):
        handler(item="once")
    with pytest.raises(ValueError, match="refused twice"):
        handler(item="twice")
    handler.close()


@needs_speedups
def test_statuses_are_those_of_the_same_call_through_ctypes(tmp_path) -> None:
    data = serialized_arguments({"item": "x"})
    size = _ffi.size_arg(len(data))
    assert speedups.call(0, data) == _ffi.handler_call_serialized(None, data, size) == Status.INVALID_ARGUMENT
    assert speedups.call_lone(0, {"item": "x"}) == Status.INVALID_ARGUMENT
    handler = outlive.Handler("py.speedups.note", item="kept")
    work = bytes(handler)
    assert speedups.enqueue(0, work) == Status.INVALID_ARGUMENT
    with outlive.Store(str(tmp_path / "store")) as store:
        address = store.handle.value
        out = tasks._IdBuffer()
        # Every truncation and a trailing byte: the status ctypes gets, and nothing stored.
        for bad in [work[:cut] for cut in range(len(work))] + [work + b"\0"]:
            compiled = speedups.enqueue(address, bad)
            through_ctypes = _ffi.task_enqueue_serialized(store.handle, bad, _ffi.size_arg(len(bad)), None, out, None)
            assert type(compiled) is int and compiled == through_ctypes != 0, bad
        assert len(store.tasks) == 0
        added = speedups.enqueue(address, work)
        assert type(added) is str and [task.id for task in store.tasks.list()] == [added]
    handler.close()


@needs_speedups
def test_arguments_of_the_wrong_type_raise_type_error_before_any_call() -> None:
    data = serialized_arguments({"item": "x"})
    for call in (lambda: speedups.call("1", data), lambda: speedups.call(1.0, data),
                 lambda: speedups.call(0, "text"), lambda: speedups.call(0, bytearray(data)),
                 lambda: speedups.call(0), lambda: speedups.call(0, data, 1),
                 lambda: speedups.enqueue(None, data), lambda: speedups.enqueue(0, memoryview(data)),
                 lambda: speedups.call_lone("0", {}), lambda: speedups.bind_lone_ids([]),
                 lambda: speedups.call_args(0, None), lambda: speedups.call_args(0),
                 lambda: speedups.object_bytes(b"0"), lambda: speedups.object_text(0, 1),
                 lambda: speedups.bind(1, 1, 1, "1"), lambda: speedups.bind(1, 1, 1)):
        with pytest.raises(TypeError):
            call()
    with pytest.raises(ValueError):
        speedups.bind(1, 1, 1, 0)  # NULL: refused, the functions bound before are kept
    assert speedups.call(0, data) == Status.INVALID_ARGUMENT
    assert speedups.call_args(0, 0) == Status.INVALID_ARGUMENT
    assert speedups.object_bytes(0) == b"" and speedups.object_text(0) == ""  # NULL: no bytes, as C says


@outlive.handler("py.speedups.text")
def text(item: str, raw: bytes | None = None) -> None:
    got.append((item, raw))


def test_id_arguments_reach_a_python_handler_as_their_text_or_bytes_and_bad_utf8_raises() -> None:
    handler = outlive.Handler("py.speedups.text")
    got.clear()
    handler(item="žluť", raw=b"\x00\xff")
    handler(item="", raw=b"")
    handler(item=b"bytes as text")
    assert got == [("žluť", b"\x00\xff"), ("", b""), ("bytes as text", None)]
    with pytest.raises(UnicodeDecodeError):
        handler(item=b"\xff not UTF-8")
    handler(item="after")
    assert got[-1] == ("after", None)
    handler.close()


def test_the_suites_of_handler_calls_and_adds_pass_the_ctypes_way_too() -> None:
    if os.environ.get("OUTLIVE_PYTHON_SPEEDUPS") == "0":
        pytest.skip("this run is the ctypes way already")
    env = dict(os.environ, OUTLIVE_PYTHON_SPEEDUPS="0", PYTHONPATH=PACKAGE_ROOT + os.pathsep + HERE)
    suites = [os.path.join(HERE, name) for name in
              ("test_handler_calls.py", "test_handler_encoding.py", "test_handlers.py", "test_task_add_bytes.py",
               "test_tasks_lifecycle.py", "test_speedups.py")]
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *suites], env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert " passed" in result.stdout and " failed" not in result.stdout
