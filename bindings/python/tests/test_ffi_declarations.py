"""_ffi.py against include/outlive.h: every function of the header is bound or
deliberately skipped, every binding's argtypes and restype agree with the C
prototype, every callback type with its typedef, every ctypes Structure with
the C struct's layout (sizeof/offsetof printed by a C program compiled against
the header), and the status enum and OUTLIVE_ID_SIZE with the header's values.
Every pointer to an opaque struct (outlive_store *, outlive_loop **, ...) must
be bound with that struct's own handle type (_ffi.HANDLE_TYPES), never a bare
c_void_p, so that ctypes refuses a handle of another kind.
The header is parsed generically, so that a renamed function is checked by
its new name."""
import ctypes
import os
import re
import shutil
import subprocess

import pytest

from outlive import _ffi
from outlive.errors import Status

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
HEADER = os.path.join(ROOT, "include", "outlive.h")

if not os.path.exists(HEADER):
    pytest.skip("include/outlive.h is not beside this package (an installed wheel)", allow_module_level=True)


def _source():
    with open(HEADER) as header:
        text = header.read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r"^\s*#[^\n]*", " ", text, flags=re.M)


SOURCE = _source()


def _split_top_level(text):
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += char in "([" 
        depth -= char in ")]"
        current += char
    if current.strip():
        parts.append(current)
    return [part.strip() for part in parts]


def _prototypes():
    found = {}
    for match in re.finditer(r"OUTLIVE_API\s+([^;{]*?)\b(outlive_\w+)\s*\(([^;]*)\)\s*;", SOURCE, flags=re.S):
        restype, name, params = match.group(1).strip(), match.group(2), match.group(3).strip()
        found[name] = (restype, [] if params in ("", "void") else _split_top_level(params))
    return found


PROTOTYPES = _prototypes()
FUNCTION_TYPEDEFS = {name: (ret.strip(), [] if params.strip() in ("", "void") else _split_top_level(params))
                     for ret, name, params in re.findall(r"typedef\s+([^;()]*?)\(\s*\*\s*(\w+)\s*\)\s*\(([^;]*?)\)\s*;",
                                                         SOURCE, flags=re.S)}
ENUMS = set(re.findall(r"typedef\s+enum\s*\w*\s*\{[^}]*\}\s*(\w+)\s*;", SOURCE, flags=re.S))
OPAQUE = set(re.findall(r"typedef\s+struct\s+\w+\s+(\w+)\s*;", SOURCE))
SCALARS = {"bool": ctypes.c_bool, "int": ctypes.c_int, "int32_t": ctypes.c_int32, "uint32_t": ctypes.c_uint32,
           "int64_t": ctypes.c_int64, "uint64_t": ctypes.c_uint64, "size_t": ctypes.c_size_t,
           "double": ctypes.c_double}


def _parse(declaration):
    """(base type name, pointer depth, is function pointer) of a parameter or return type."""
    if "(*" in declaration.replace(" ", ""):
        return None, 1, True
    text = declaration.replace("const", " ").replace("struct", " ")
    arrays = text.count("[")
    text = re.sub(r"\[[^\]]*\]", " ", text)
    depth = text.count("*") + arrays
    words = re.findall(r"\w+", text.replace("*", " "))
    known = [word for word in words if word in SCALARS or word in ENUMS or word in OPAQUE or word in FUNCTION_TYPEDEFS
             or word in ("void", "char", "outlive_status") or word in _ffi.C_STRUCTS]
    if not known:
        raise AssertionError(f"cannot read the C type of {declaration!r}")
    return known[0], depth, False


def _is_function_type(ctype):
    return isinstance(ctype, type) and issubclass(ctype, ctypes._CFuncPtr)


def _mismatch(declaration, ctype):
    """Why ctype cannot stand for the C declaration, or None."""
    base, depth, function_pointer = _parse(declaration)
    if function_pointer and ctype is ctypes.c_void_p:
        return None  # a generic function pointer (outlive_register's): the caller casts
    if function_pointer or (depth == 0 and base in FUNCTION_TYPEDEFS):
        if not _is_function_type(ctype):
            return f"{declaration!r} is a function pointer, bound as {ctype}"
        if base in FUNCTION_TYPEDEFS:
            return _callback_mismatch(base, ctype)
        return None
    if depth == 0:
        if base == "void":
            return None if ctype is None else f"void bound as {ctype}"
        want = ctypes.c_int if base in ENUMS or base == "outlive_status" else SCALARS.get(base)
        if want is None:
            return f"{declaration!r}: a struct by value is not expected"
        return None if ctype is want else f"{declaration!r} is {want.__name__}, bound as {getattr(ctype, '__name__', ctype)}"
    # Pointers.
    if base in OPAQUE:
        return _opaque_mismatch(declaration, base, depth, ctype)
    if depth == 1:
        if base in SCALARS or base in ENUMS:
            want = ctypes.c_int if base in ENUMS else SCALARS[base]
            ok = getattr(ctype, "_type_", None) is want and ctype.__name__.startswith("LP_")
            return None if ok else f"{declaration!r} points to {want.__name__}, bound as {ctype}"
        if base in _ffi.C_STRUCTS:
            ok = ctype is ctypes.c_void_p or getattr(ctype, "_type_", None) is _ffi.C_STRUCTS[base]
            return None if ok else f"{declaration!r} points to {base}, bound as {ctype}"
        if ctype in (ctypes.c_void_p, ctypes.c_char_p):
            return None
        return f"{declaration!r} is a pointer, bound as {ctype}"
    # T ** and T *const *: a pointer to pointers.
    pointee = getattr(ctype, "_type_", None)
    if ctype.__name__.startswith("LP_") and (pointee in (ctypes.c_void_p, ctypes.c_char_p) or
                                             getattr(pointee, "__name__", "").startswith("LP_")):
        return None
    return f"{declaration!r} is a pointer to pointers, bound as {ctype}"


def _opaque_mismatch(declaration, base, depth, ctype):
    """A pointer to an opaque struct is its typed handle; a pointer to one (an
    out-parameter) is a POINTER of it."""
    handle = _ffi.HANDLE_TYPES.get(base)
    if handle is None:
        return f"{declaration!r}: {base} has no typed handle in _ffi.HANDLE_TYPES"
    want = handle if depth == 1 else ctypes.POINTER(handle) if depth == 2 else None
    if want is None:
        return f"{declaration!r}: {depth} levels of pointers to {base} are not expected"
    return None if ctype is want else f"{declaration!r} is {want.__name__}, bound as {getattr(ctype, '__name__', ctype)}"


def _callback_mismatch(typedef, ctype):
    ret, params = FUNCTION_TYPEDEFS[typedef]
    if len(params) != len(ctype._argtypes_):
        return f"callback {typedef}: {len(params)} parameters in C, {len(ctype._argtypes_)} in ctypes"
    problems = [_mismatch(ret, ctype._restype_ if ctype._restype_ is not None else None)]
    problems += [_mismatch(param, argtype) for param, argtype in zip(params, ctype._argtypes_)]
    problems = [problem for problem in problems if problem]
    return f"callback {typedef}: " + "; ".join(problems) if problems else None


def test_every_header_function_is_bound_or_deliberately_skipped():
    declared, skipped, header = set(_ffi._DECLARATIONS), set(_ffi.SKIPPED), set(PROTOTYPES)
    assert len(header) > 150, "the header parser found too few functions"
    assert declared - header == set(), "bound but not in the header"
    assert skipped - header == set(), "skipped but not in the header"
    assert declared & skipped == set(), "both bound and skipped"
    assert header - declared - skipped == set(), "in the header, neither bound nor listed in _ffi.SKIPPED"


def test_every_opaque_struct_has_its_own_handle_type():
    assert len(OPAQUE) > 15, "the header parser found too few opaque structs"
    assert set(_ffi.HANDLE_TYPES) == OPAQUE
    assert len(set(_ffi.HANDLE_TYPES.values())) == len(OPAQUE), "two structs share a handle type"
    for c_name, handle in _ffi.HANDLE_TYPES.items():
        assert issubclass(handle, ctypes.c_void_p) and handle is not ctypes.c_void_p
        assert handle.c_name == c_name and getattr(_ffi, handle.__name__) is handle


@pytest.mark.parametrize("name", sorted(_ffi._DECLARATIONS))
def test_binding_agrees_with_the_c_prototype(name):
    restype, argtypes = _ffi._DECLARATIONS[name]
    c_restype, c_params = PROTOTYPES[name]
    assert len(argtypes) == len(c_params), f"{name}: {len(c_params)} parameters in C, {len(argtypes)} bound"
    problems = [_mismatch(c_restype, restype)]
    problems += [_mismatch(param, argtype) for param, argtype in zip(c_params, argtypes)]
    problems = [problem for problem in problems if problem]
    assert not problems, f"{name}: " + "; ".join(problems)


def _compile_and_run(tmp_path, body):
    compiler = shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        pytest.skip("no C compiler")
    source = tmp_path / "layout.c"
    source.write_text('#include <stddef.h>\n#include <stdio.h>\n#include "outlive.h"\nint main(void) {\n'
                      + body + "return 0;\n}\n")
    binary = tmp_path / "layout"
    subprocess.run([compiler, "-std=c11", "-I", os.path.join(ROOT, "include"), "-o", str(binary), str(source)],
                   check=True, capture_output=True, text=True)
    return subprocess.run([str(binary)], check=True, capture_output=True, text=True).stdout.split()


def test_structure_layouts_match_the_header(tmp_path):
    body, expected = "", []
    for c_name, structure in _ffi.C_STRUCTS.items():
        body += f'printf("%zu\\n", sizeof({c_name}));\n'
        expected.append((f"sizeof({c_name})", ctypes.sizeof(structure)))
        for field, _ in structure._fields_:
            body += f'printf("%zu\\n", offsetof({c_name}, {field}));\n'
            expected.append((f"offsetof({c_name}, {field})", getattr(structure, field).offset))
            body += f'printf("%zu\\n", sizeof((({c_name} *)0)->{field}));\n'
            expected.append((f"sizeof({c_name}.{field})", getattr(structure, field).size))
    printed = [int(value) for value in _compile_and_run(tmp_path, body)]
    wrong = [f"{what}: C {c} ctypes {py}" for (what, py), c in zip(expected, printed) if c != py]
    assert not wrong, wrong
    # Every field of each C struct is mirrored (a field the header added would shift nothing, but be lost).
    for c_name, structure in _ffi.C_STRUCTS.items():
        fields = [field for field, _ in _c_fields(c_name)]
        assert fields == [field for field, _ in structure._fields_], f"{c_name}: C fields {fields}"


def _c_fields(c_name):
    """(name, declaration) of each field of the header's struct c_name."""
    block = re.search(r"typedef\s+struct\s+" + c_name + r"\s*\{(.*?)\}\s*" + c_name + r"\s*;", SOURCE, flags=re.S)
    assert block, c_name
    fields = []
    for piece in block.group(1).split(";"):
        if not piece.strip():
            continue
        pointer = re.search(r"\(\s*\*\s*(\w+)\s*\)", piece)
        fields.append((pointer.group(1) if pointer else re.findall(r"(\w+)\s*(?:\[[^\]]*\])?\s*$", piece)[0],
                       piece.strip()))
    return fields


def test_structure_field_types_agree_with_the_header():
    # Field by field, as for parameters: a handle field (outlive_task_spec.work) is its typed handle.
    for c_name, structure in _ffi.C_STRUCTS.items():
        problems = [_mismatch(declaration, ctype)
                    for (_, declaration), (_, ctype) in zip(_c_fields(c_name), structure._fields_)]
        problems = [problem for problem in problems if problem]
        assert not problems, f"{c_name}: " + "; ".join(problems)


def test_status_enum_and_id_size_match_the_header(tmp_path):
    members = re.search(r"typedef\s+enum\s+outlive_status\s*\{(.*?)\}", SOURCE, flags=re.S).group(1)
    names = re.findall(r"\b(OUTLIVE_\w+)", members)
    assert [("OUTLIVE_" if status is Status.OK else "OUTLIVE_E_") + status.name for status in Status] == names
    constants = {"OUTLIVE_ID_SIZE": _ffi.ID_SIZE, "OUTLIVE_DURABLE_INTERACTIONS_SUSPENDED": _ffi.DURABLE_INTERACTIONS_SUSPENDED}
    body = "".join(f'printf("%d\\n", (int){name});\n' for name in names + list(constants))
    printed = [int(value) for value in _compile_and_run(tmp_path, body)]
    assert printed[:len(names)] == [status.value for status in Status]
    assert printed[len(names):] == list(constants.values())


def test_the_by_address_bindings_are_the_declarations_with_plain_addresses_for_handles():
    assert _ffi.BY_ADDRESS, "no hot-path bindings"
    for name, function in _ffi.BY_ADDRESS.items():
        restype, argtypes = _ffi._DECLARATIONS[name]
        assert function is not getattr(_ffi, name), f"{name}: shares the typed binding's function object"
        assert function.restype is restype and len(function.argtypes) == len(argtypes)
        for declared, bound in zip(argtypes, function.argtypes):
            is_handle = isinstance(declared, type) and issubclass(declared, _ffi.OpaqueHandle)
            assert bound is (ctypes.c_void_p if is_handle else declared), f"{name}: {bound} for {declared}"


def test_the_unconverted_handler_call_is_the_declaration_called_with_its_exact_types():
    # Bound without argtypes, it is correct only when each argument is already
    # the C type the header declares: the handle a HandlerP, the size a c_size_t.
    function = _ffi.handler_call_serialized
    restype, argtypes = _ffi._DECLARATIONS["outlive_handler_call_serialized"]
    assert function is not _ffi.outlive_handler_call_serialized and function.argtypes is None
    assert function.restype is restype
    assert argtypes == [_ffi.HandlerP, ctypes.c_void_p, ctypes.c_size_t]
    for size in (0, 1, 511, 512, 2**40):
        made = _ffi.size_arg(size)
        assert type(made) is ctypes.c_size_t and made.value == size
    assert all(type(made) is ctypes.c_size_t and made.value == size for size, made in enumerate(_ffi._SIZES))


def test_the_unconverted_task_add_is_the_declaration_called_with_its_exact_types():
    # tasks.py passes (StoreP, bytes, c_size_t, options pointer or None, id
    # buffer, c_bool pointer or None): the declaration's types, already made.
    function = _ffi.task_enqueue_serialized
    restype, argtypes = _ffi._DECLARATIONS["outlive_task_enqueue_serialized"]
    assert function is not _ffi.outlive_task_enqueue_serialized and function.argtypes is None
    assert function.restype is restype
    assert argtypes[:3] == [_ffi.StoreP, ctypes.c_void_p, ctypes.c_size_t]


def test_object_bytes_refuses_what_is_not_an_object_pointer():
    # The trampolines read their arguments by address; the helper any caller
    # can reach keeps the typed handle's check (an address would be read as one).
    from outlive import values
    for bad in (12345, "text", b"bytes", _ffi.ArgsP()):
        with pytest.raises(ctypes.ArgumentError):
            values.object_bytes(bad)
