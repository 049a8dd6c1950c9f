"""The C header against the built library: what is declared is exported and
vice versa, the header compiles strictly as C99 and as C++, and every place
that states the version agrees."""
import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADER = os.path.join(ROOT, "include", "outlive.h")
LIBRARY = os.environ.get("OUTLIVE_LIBRARY", os.path.join(ROOT, "build", "liboutlive.so"))


def header_text():
    with open(HEADER) as f:
        return f.read()


def declared_functions():
    text = re.sub(r"/\*.*?\*/", "", header_text(), flags=re.S)
    # Declarations start with OUTLIVE_API; the name is the identifier before "(".
    return set(re.findall(r"OUTLIVE_API[^;{]*?\b(outlive_\w+)\s*\(", text))


def exported_functions():
    output = subprocess.run(["nm", "-D", "--defined-only", LIBRARY], capture_output=True, text=True, check=True).stdout
    names = set()
    for line in output.splitlines():
        parts = line.split()
        # Upper-case types are global; the Swift runtime's local leftovers are not exports.
        if len(parts) == 3 and parts[1].isupper():
            names.add(parts[2])
    return names


def test_every_declared_function_is_exported():
    missing = declared_functions() - exported_functions()
    assert not missing, f"declared in outlive.h but not exported: {sorted(missing)}"


def test_every_exported_symbol_is_declared():
    undeclared = exported_functions() - declared_functions()
    assert not undeclared, f"exported but not declared in outlive.h: {sorted(undeclared)}"


def test_library_links_the_swift_runtime_statically():
    output = subprocess.run(["ldd", LIBRARY], capture_output=True, text=True, check=True).stdout
    assert "libswift" not in output
    allowed = ("linux-vdso", "libc.so", "libm.so", "libstdc++", "libgcc_s", "libffi", "libsqlite3", "ld-linux")
    for line in output.splitlines():
        assert any(name in line for name in allowed), f"unexpected dependency: {line.strip()}"


PROGRAM = r"""
#include "outlive.h"
#include <stdio.h>
int main(void) {
    outlive_store_options options = OUTLIVE_STORE_OPTIONS_INIT;
    (void)options;
    printf("%s %u\n", outlive_version(), (unsigned)outlive_version_number());
    return outlive_version_number() == OUTLIVE_VERSION_NUMBER ? 0 : 1;
}
"""


@pytest.mark.parametrize("compiler,flags,suffix", [
    ("cc", ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"], ".c"),
    ("cc", ["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Wconversion", "-Wshadow"], ".c"),
    ("c++", ["-std=c++11", "-Wall", "-Wextra", "-Werror", "-pedantic"], ".cpp"),
])
def test_header_compiles_strictly_and_links(tmp_path, compiler, flags, suffix):
    source = tmp_path / f"strict{suffix}"
    source.write_text(PROGRAM)
    binary = tmp_path / "strict"
    build_dir = os.path.dirname(LIBRARY)
    subprocess.run([compiler, *flags, f"-I{ROOT}/include", str(source), "-o", str(binary),
                    f"-L{build_dir}", "-loutlive", f"-Wl,-rpath,{build_dir}"], check=True)
    result = subprocess.run([str(binary)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_versions_agree():
    with open(os.path.join(ROOT, "VERSION")) as f:
        version = f.read().strip()
    text = header_text()
    parts = [re.search(rf"#define OUTLIVE_VERSION_{p} (\d+)", text).group(1) for p in ("MAJOR", "MINOR", "PATCH")]
    assert ".".join(parts) == version
    with open(os.path.join(ROOT, "Sources", "OutliveCore", "Support", "Version.swift")) as f:
        swift = f.read()
    assert f'"{version}"' in swift
    import outlive
    assert outlive.__version__ == version
    assert outlive.library_version() == version
