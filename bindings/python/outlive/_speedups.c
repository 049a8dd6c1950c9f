/* outlive._speedups: the package's hottest C calls without ctypes.
 *
 * A handler call (Handler.__call__), a task add from a handler's bytes
 * (store.tasks.add), and in a Python task handler's call the reading of its ID
 * arguments and the completion it sends, are a C call each. Through ctypes
 * such a call costs about 0.5 µs and some 3,000 instructions (its argument
 * conversions, libffi, the result's conversion), as much as the library's own
 * work in a handler call; here it is a METH_FASTCALL function of ints and
 * bytes.
 *
 * Optional: built by `make` where Python's headers are (the stable ABI of
 * Python 3.10, so one build serves every later version), and the package
 * falls back to ctypes without it (outlive/_ffi.py, `speedups`). It is not
 * linked with liboutlive: `bind` hands it the addresses of the functions of
 * the library the package loaded (ctypes), so that both ways call the same
 * code. Only the package calls it, with the values it checked; the functions
 * still check their arguments' types, so that a wrong call raises TypeError
 * rather than crashing.
 *
 * The GIL is released around each call, as ctypes does: a store call may wait
 * for the disk or another process's lock, and a handler may run for long. A
 * Python handler the call runs takes the GIL back through its ctypes callback. */
#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "outlive.h"

static __typeof__(outlive_handler_call_serialized) *call_serialized;
static __typeof__(outlive_task_enqueue_serialized) *task_enqueue_serialized;
static __typeof__(outlive_object_bytes) *object_bytes_of;
static __typeof__(outlive_handler_call) *handler_call;

/* A pointer from a Python int (an address ctypes gave); NULL with an exception set otherwise. */
static int address_of(PyObject *value, void **out) {
    if (!PyLong_Check(value)) {
        PyErr_Format(PyExc_TypeError, "an address (int) expected, not %S", (PyObject *)Py_TYPE(value));
        return -1;
    }
    *out = PyLong_AsVoidPtr(value);
    return *out == NULL && PyErr_Occurred() ? -1 : 0;
}

static int bytes_of(PyObject *value, char **data, Py_ssize_t *size) {
    if (!PyBytes_Check(value)) {
        PyErr_Format(PyExc_TypeError, "bytes expected, not %S", (PyObject *)Py_TYPE(value));
        return -1;
    }
    return PyBytes_AsStringAndSize(value, data, size);
}

static int arguments(const char *name, Py_ssize_t count, Py_ssize_t expected) {
    if (count == expected) return 0;
    PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)", name, expected, count);
    return -1;
}

/* bind(call, enqueue, object_bytes, handler_call): the addresses of the library's
 * outlive_handler_call_serialized, outlive_task_enqueue_serialized,
 * outlive_object_bytes and outlive_handler_call. */
static PyObject *bind(PyObject *module, PyObject *const *args, Py_ssize_t count) {
    (void)module;
    void *functions[4] = {NULL, NULL, NULL, NULL};
    if (arguments("bind", count, 4)) return NULL;
    for (int i = 0; i < 4; i++) {
        if (address_of(args[i], &functions[i])) return NULL;
        if (functions[i] == NULL) {
            PyErr_SetString(PyExc_ValueError, "bind() takes four function addresses, not NULL");
            return NULL;
        }
    }
    call_serialized = (__typeof__(call_serialized))functions[0];
    task_enqueue_serialized = (__typeof__(task_enqueue_serialized))functions[1];
    object_bytes_of = (__typeof__(object_bytes_of))functions[2];
    handler_call = (__typeof__(handler_call))functions[3];
    Py_RETURN_NONE;
}

static int bound(void) {
    if (call_serialized != NULL) return 0;
    PyErr_SetString(PyExc_RuntimeError, "outlive._speedups is not bound to a library (bind() first)");
    return -1;
}

/* The (address, bytes) arguments of call and enqueue, once bound. */
static int address_and_bytes(const char *name, PyObject *const *args, Py_ssize_t count, void **address, char **data,
                             Py_ssize_t *size) {
    return bound() || arguments(name, count, 2) || address_of(args[0], address) || bytes_of(args[1], data, size) ? -1 : 0;
}

/* call(handler_address, data) -> status: outlive_handler_call_serialized. */
static PyObject *call(PyObject *module, PyObject *const *args, Py_ssize_t count) {
    (void)module;
    void *handler = NULL;
    char *data = NULL;
    Py_ssize_t size = 0;
    if (address_and_bytes("call", args, count, &handler, &data, &size)) return NULL;
    outlive_status status;
    /* The bytes object stays alive: the caller holds args[1] until this returns. */
    Py_BEGIN_ALLOW_THREADS
    status = call_serialized(handler, data, (size_t)size);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(status);
}

/* call_args(handler_address, args_address) -> status: outlive_handler_call
 * (a task's completion, called from inside its handler's call). */
static PyObject *call_args(PyObject *module, PyObject *const *args, Py_ssize_t count) {
    (void)module;
    void *handler = NULL, *call = NULL;
    if (bound() || arguments("call_args", count, 2) || address_of(args[0], &handler) || address_of(args[1], &call))
        return NULL;
    outlive_status status;
    Py_BEGIN_ALLOW_THREADS
    status = handler_call(handler, call);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(status);
}

/* The bytes of a borrowed outlive_object (an ID argument C passed to a
 * handler), read while the GIL is held: no other call can end the object. */
static int object_data(PyObject *const *args, Py_ssize_t count, const char *name, const char **data, size_t *size) {
    void *object = NULL;
    if (bound() || arguments(name, count, 1) || address_of(args[0], &object)) return -1;
    *size = 0;
    *data = object_bytes_of(object, size);
    if (*data == NULL) *size = 0;
    return 0;
}

/* object_bytes(object_address) -> bytes: outlive_object_bytes, copied. */
static PyObject *object_bytes(PyObject *module, PyObject *const *args, Py_ssize_t count) {
    (void)module;
    const char *data = NULL;
    size_t size = 0;
    if (object_data(args, count, "object_bytes", &data, &size)) return NULL;
    return PyBytes_FromStringAndSize(size ? data : "", (Py_ssize_t)size);
}

/* object_text(object_address) -> str: the same bytes as UTF-8 (UnicodeDecodeError
 * as bytes.decode("utf-8") raises it). */
static PyObject *object_text(PyObject *module, PyObject *const *args, Py_ssize_t count) {
    (void)module;
    const char *data = NULL;
    size_t size = 0;
    if (object_data(args, count, "object_text", &data, &size)) return NULL;
    return PyUnicode_DecodeUTF8(size ? data : "", (Py_ssize_t)size, "strict");
}

/* The package's table of argument names accepted before, each with the bytes
 * that start a set of that one argument as an untagged ID (values.py,
 * `_lone_ids`); set by bind_lone_ids, kept alive here. */
static PyObject *lone_ids;

static PyObject *bind_lone_ids(PyObject *module, PyObject *const *args, Py_ssize_t count) {
    (void)module;
    if (arguments("bind_lone_ids", count, 1)) return NULL;
    if (!PyDict_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "bind_lone_ids() takes a dict");
        return NULL;
    }
    PyObject *before = lone_ids;
    Py_INCREF(args[0]);
    lone_ids = args[0];
    Py_XDECREF(before);
    Py_RETURN_NONE;
}

/* call_lone(handler_address, call_args) -> status, or None when the call is
 * not the one it makes: Handler.__call__ of one str argument whose name the
 * library accepted before (in `lone_ids`) and whose UTF-8 is under 128 bytes,
 * the common call. The set's bytes are those values.serialized_arguments
 * writes for it (head, length, text), made on the stack instead of as a bytes
 * object. Anything else is None, for the package's own way. */
static PyObject *call_lone(PyObject *module, PyObject *const *args, Py_ssize_t count) {
    (void)module;
    void *handler = NULL;
    if (bound() || arguments("call_lone", count, 2) || address_of(args[0], &handler)) return NULL;
    PyObject *call_args = args[1], *key = NULL, *value = NULL;
    Py_ssize_t position = 0;
    if (lone_ids == NULL || !PyDict_Check(call_args) || PyDict_Size(call_args) != 1 ||
        !PyDict_Next(call_args, &position, &key, &value) || !PyUnicode_CheckExact(value))
        Py_RETURN_NONE;
    PyObject *head = PyDict_GetItemWithError(lone_ids, key);
    if (head == NULL) {
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NONE;
    }
    char *head_bytes = NULL;
    Py_ssize_t head_size = 0, text_size = 0;
    if (!PyBytes_Check(head) || PyBytes_AsStringAndSize(head, &head_bytes, &head_size)) return NULL;
    /* As value.encode() in the package: a lone surrogate raises UnicodeEncodeError. */
    const char *text = PyUnicode_AsUTF8AndSize(value, &text_size);
    if (text == NULL) return NULL;
    unsigned char set[512];
    if (text_size >= 0x80 || head_size + 1 + text_size > (Py_ssize_t)sizeof set) Py_RETURN_NONE;
    memcpy(set, head_bytes, (size_t)head_size);
    set[head_size] = (unsigned char)text_size;
    memcpy(set + head_size + 1, text, (size_t)text_size);
    size_t size = (size_t)(head_size + 1 + text_size);
    outlive_status status;
    Py_BEGIN_ALLOW_THREADS
    status = call_serialized(handler, set, size);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(status);
}

/* enqueue(store_address, data) -> the new task's id (str), or the status (int)
 * when it is not OUTLIVE_OK: outlive_task_enqueue_serialized without options. */
static PyObject *enqueue(PyObject *module, PyObject *const *args, Py_ssize_t count) {
    (void)module;
    void *store = NULL;
    char *data = NULL;
    Py_ssize_t size = 0;
    if (address_and_bytes("enqueue", args, count, &store, &data, &size)) return NULL;
    char id[OUTLIVE_ID_SIZE] = {0};
    outlive_status status;
    Py_BEGIN_ALLOW_THREADS
    status = task_enqueue_serialized(store, data, (size_t)size, NULL, id, NULL);
    Py_END_ALLOW_THREADS
    if (status != OUTLIVE_OK) return PyLong_FromLong(status);
    return PyUnicode_FromStringAndSize(id, (Py_ssize_t)strnlen(id, sizeof id - 1));
}

static PyMethodDef methods[] = {
    {"bind", (PyCFunction)(void (*)(void))bind, METH_FASTCALL, "bind(call, enqueue, object_bytes, handler_call)"},
    {"call_args", (PyCFunction)(void (*)(void))call_args, METH_FASTCALL, "call_args(handler_address, args_address) -> status"},
    {"object_bytes", (PyCFunction)(void (*)(void))object_bytes, METH_FASTCALL, "object_bytes(object_address) -> bytes"},
    {"object_text", (PyCFunction)(void (*)(void))object_text, METH_FASTCALL, "object_text(object_address) -> str"},
    {"call", (PyCFunction)(void (*)(void))call, METH_FASTCALL, "call(handler_address, data) -> status"},
    {"bind_lone_ids", (PyCFunction)(void (*)(void))bind_lone_ids, METH_FASTCALL, "bind_lone_ids(table)"},
    {"call_lone", (PyCFunction)(void (*)(void))call_lone, METH_FASTCALL,
     "call_lone(handler_address, call_args) -> status, or None when not that call"},
    {"enqueue", (PyCFunction)(void (*)(void))enqueue, METH_FASTCALL, "enqueue(store_address, data) -> id or status"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "outlive._speedups", "The package's hottest C calls without ctypes (optional).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__speedups(void) { return PyModule_Create(&module); }
