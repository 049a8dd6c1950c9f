"""liboutlive.so loads libpq at run time (dlopen), so a SQLite user needs no
libpq: the library has no NEEDED entry for it and no undefined PQ* symbol."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIBRARY = os.environ.get("OUTLIVE_LIBRARY", os.path.join(ROOT, "build", "liboutlive.so"))


def test_library_does_not_link_libpq():
    dynamic = subprocess.run(["readelf", "-d", LIBRARY], capture_output=True, text=True, check=True).stdout
    needed = [line for line in dynamic.splitlines() if "(NEEDED)" in line]
    assert needed, "readelf listed no NEEDED entries at all"
    assert not [line for line in needed if "libpq" in line], needed
    ldd = subprocess.run(["ldd", LIBRARY], capture_output=True, text=True, check=True).stdout
    assert "libpq" not in ldd


def test_library_has_no_undefined_libpq_symbol():
    symbols = subprocess.run(["nm", "-D", "--undefined-only", LIBRARY], capture_output=True, text=True, check=True).stdout
    assert "dlopen" in symbols  # the loader that replaces the link
    assert not [line for line in symbols.splitlines() if line.split()[-1].startswith("PQ")]


def test_library_carries_the_loader():
    # The shim is in the library (local symbols), so the backend is built in.
    symbols = subprocess.run(["nm", LIBRARY], capture_output=True, text=True, check=True).stdout
    assert "COutlive_pq_load" in symbols
