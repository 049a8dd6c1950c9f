"""Every C function the package calls, with its argtypes and restype, declared
once. A symbol missing from the loaded library fails the import loudly."""
import ctypes
from ctypes import (CFUNCTYPE, POINTER, c_bool, c_char_p, c_double, c_int, c_int32, c_int64, c_size_t, c_uint32,
                    c_uint64, c_void_p)

from . import _library

lib = _library.load()

status = c_int
KV_MODIFIER = CFUNCTYPE(c_int, c_void_p, c_void_p)
KV_OBSERVER = CFUNCTYPE(None, c_char_p, c_void_p, c_size_t, c_void_p)
RELEASE = CFUNCTYPE(None, c_void_p)


class StoreOptions(ctypes.Structure):
    _fields_ = [("version", c_uint32), ("durability", c_int), ("busy_timeout_ms", c_int32)]


_DECLARATIONS = {
    # basics
    "outlive_last_error": (c_char_p, []),
    "outlive_status_name": (c_char_p, [c_int]),
    "outlive_version": (c_char_p, []),
    "outlive_version_number": (c_uint32, []),
    "outlive_free": (None, [c_void_p]),
    # loop
    "outlive_loop_new": (status, [POINTER(c_void_p)]),
    "outlive_loop_free": (None, [c_void_p]),
    "outlive_loop_fd": (c_int, [c_void_p]),
    "outlive_loop_dispatch": (status, [c_void_p, c_int]),
    "outlive_loop_run_thread": (status, [c_void_p]),
    # store
    "outlive_store_open": (status, [c_char_p, c_char_p, c_void_p, POINTER(c_void_p)]),
    "outlive_store_open_with_options": (status, [c_char_p, c_char_p, c_void_p, POINTER(StoreOptions), POINTER(c_void_p)]),
    "outlive_store_close": (None, [c_void_p]),
    "outlive_store_run_id": (c_char_p, [c_void_p]),
    "outlive_store_process_name": (c_char_p, [c_void_p]),
    "outlive_store_loop": (c_void_p, [c_void_p]),
    # key-value
    "outlive_kv_set": (status, [c_void_p, c_char_p, c_void_p, c_size_t]),
    "outlive_kv_get": (status, [c_void_p, c_char_p, POINTER(c_void_p), POINTER(c_size_t)]),
    "outlive_kv_delete": (status, [c_void_p, c_char_p]),
    "outlive_kv_value_bytes": (c_void_p, [c_void_p, POINTER(c_size_t)]),
    "outlive_kv_value_set": (status, [c_void_p, c_void_p, c_size_t]),
    "outlive_kv_value_delete": (status, [c_void_p]),
    "outlive_kv_update": (status, [c_void_p, c_char_p, KV_MODIFIER, c_void_p]),
    "outlive_kv_observe_with_release": (status, [c_void_p, c_char_p, KV_OBSERVER, c_void_p, RELEASE, POINTER(c_uint64)]),
    "outlive_kv_unobserve": (status, [c_void_p, c_uint64]),
    "outlive_kv_next_key": (status, [c_void_p, c_char_p, c_char_p, POINTER(c_void_p)]),
    "outlive_kv_count": (status, [c_void_p, c_char_p, POINTER(c_size_t)]),
}


def _declare(declarations):
    for name, (restype, argtypes) in declarations.items():
        try:
            function = getattr(lib, name)
        except AttributeError:
            raise ImportError(f"liboutlive lacks {name}: the library is older than this package") from None
        function.restype = restype
        function.argtypes = argtypes
        globals()[name] = function


_declare(_DECLARATIONS)

# Keep the unused imports available to the modules that declare callbacks.
__all__ = ["lib", "c_bool", "c_double", "c_int64", "c_uint64", "c_void_p", "c_char_p", "c_size_t", "c_int32"]
