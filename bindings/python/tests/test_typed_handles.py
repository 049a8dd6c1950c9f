"""Each opaque C handle has its own ctypes type (_ffi.HANDLE_TYPES), so a
handle of another kind — a loop where a store is expected, a raw address, a
plain c_void_p — is refused by ctypes (ctypes.ArgumentError) before C is
reached. Were it not, C would read a loop as a store: the calls run in a child
Python (see conftest) so that such a crash fails one test, not the suite."""
from conftest import run_python


def _run(code, *args):
    result = run_python(code, *args, check=False)
    assert result.returncode == 0, f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr[-4000:]}"
    assert result.stdout.strip().endswith("ok"), result.stdout
    return result


def test_every_binding_refuses_a_handle_of_another_kind_before_calling_c(store_dir):
    # For every bound function and every handle parameter (out-parameters
    # included), a live handle of another kind, a raw address and a plain
    # c_void_p are each refused, naming that parameter.
    _run("""
import ctypes, sys, outlive
from outlive import _ffi

store = outlive.Store(sys.argv[1])
args = outlive.values.Args({"n": 1})
live = {_ffi.StoreP: store.handle, _ffi.LoopP: store.loop.handle, _ffi.ArgsP: args.handle}
assert all(type(handle) is kind for kind, handle in live.items())


def another_kind(expected):
    kind = next(kind for kind in live if kind is not expected)
    return live[kind]


def harmless(argtype):
    # A value ctypes converts for a parameter before the one under test.
    if argtype in (ctypes.c_char_p,):
        return b""
    if argtype in (ctypes.c_double,):
        return 0.0
    if argtype in (ctypes.c_bool, ctypes.c_int, ctypes.c_int32, ctypes.c_int64, ctypes.c_uint32,
                   ctypes.c_uint64, ctypes.c_size_t):
        return 0
    if isinstance(argtype, type) and issubclass(argtype, ctypes._CFuncPtr):
        return argtype()  # a NULL callback
    return None  # handles, pointers, c_void_p: NULL


checked = 0
for name, (restype, argtypes) in _ffi._DECLARATIONS.items():
    function = getattr(_ffi, name)
    for position, argtype in enumerate(argtypes):
        if isinstance(argtype, type) and issubclass(argtype, _ffi.OpaqueHandle):
            wrong = [another_kind(argtype), ctypes.c_void_p(1), 1]
        elif getattr(argtype, "_type_", None) in _ffi.HANDLE_TYPES.values():
            wrong = [ctypes.byref(another_kind(argtype._type_).__class__()), ctypes.byref(ctypes.c_void_p())]
        else:
            continue
        for value in wrong:
            call = [harmless(other) for other in argtypes]
            call[position] = value
            try:
                function(*call)
            except ctypes.ArgumentError as error:
                assert f"argument {position + 1}:" in str(error), (name, position, error)
            else:
                raise SystemExit(f"{name} took {value!r} as parameter {position + 1} ({argtype.__name__})")
            checked += 1
assert checked > 300, checked

# Nothing reached the store: it still works.
store.kv["after"] = b"1"
assert store.kv["after"] == b"1"
args.close()
store.close()
print("ok")
""", store_dir)


def test_public_objects_given_a_handle_of_another_kind_raise_instead_of_crashing(store_dir):
    # A store where a loop is expected, an argument list where a handler is:
    # before typed handles C was handed the wrong struct.
    _run("""
import ctypes, os, sys, outlive

store = outlive.Store(sys.argv[1])
args = outlive.values.Args({"n": 1})
for use in (lambda: outlive.InteractionQueue(store), lambda: outlive.OperationQueue(store),
            lambda: outlive.Store(sys.argv[1] + "-other", loop=store),
            lambda: store.tasks.add(args), lambda: store.signals.consume("s", args),
            lambda: outlive.DurableInteractionQueue(store.loop, "q")):
    try:
        use()
    except ctypes.ArgumentError:
        pass
    else:
        raise SystemExit("a handle of another kind was accepted")
try:
    store.tasks.add_many([args])  # into outlive_task_spec.work, a typed field
except TypeError:
    pass
else:
    raise SystemExit("an argument list was stored as a task's handler")
# Nothing reached C: no task, no consumer, no second store; the store still works.
assert len(store.tasks) == 0 and store.signals.consumers() == [] and not os.path.exists(sys.argv[1] + "-other")
store.kv["still"] = b"works"
assert store.kv["still"] == b"works"
args.close()
store.close()
print("ok")
""", store_dir)
