"""`make wheel` builds a wheel that needs nothing from the system beyond the
manylinux policy: auditwheel bundles libsqlite3 and libffi under hash-renamed
names in outlive.libs/, and the library and the `outlive` command it carries
find them there through RPATH $ORIGIN/.... Installed into a fresh venv, the
Python examples and the command run in a mount namespace where the system's
libsqlite3 and libffi are empty files. `pip install ./bindings/python` leaves
nothing behind in the source tree."""
import glob
import os
import pathlib
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

from test_examples import PYTHON_EXPECTED, assert_lines_in_order

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VERSION = pathlib.Path(ROOT, "VERSION").read_text().strip()
PACKAGE_SOURCE = os.path.join(ROOT, "bindings", "python")
# What the bundled copies are called: auditwheel adds a hash of the content to the name.
def speedups_built():
    """Whether `make wheel` built the compiled calls (where Python's headers are) for the wheel to carry."""
    return os.path.isfile(os.path.join(PACKAGE_SOURCE, "outlive", "_speedups.abi3.so"))


BUNDLED = {"sqlite": re.compile(r"^libsqlite3-[0-9a-f]{8}\.so(\.\d+)+$"), "ffi": re.compile(r"^libffi-[0-9a-f]{8}\.so(\.\d+)+$")}


def clean_env(**extra):
    """The environment of a user of the installed wheel: no source tree, no library override."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("OUTLIVE_LIBRARY", "PYTHONPATH", "LD_LIBRARY_PATH", "LD_PRELOAD")}
    return dict(env, **extra)


def fresh_venv(directory):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(directory)], check=True)
    return str(directory / "bin" / "python")


def pip_install(python, *what):
    result = subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", *what],
                            capture_output=True, text=True, env=clean_env())
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]


@pytest.fixture(scope="module")
def wheel():
    result = subprocess.run(["make", "-s", "wheel"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    [path] = glob.glob(os.path.join(ROOT, "build", "wheel", "outlive-*.whl"))
    return path


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory):
    directory = tmp_path_factory.mktemp("wheel") / "venv"
    python = fresh_venv(directory)
    pip_install(python, "--no-index", wheel)
    [package] = glob.glob(str(directory / "lib" / "python3*" / "site-packages" / "outlive"))
    return {"dir": directory, "python": python, "package": package, "libs": os.path.join(package, "..", "outlive.libs")}


def dynamic_section(path):
    """NEEDED names and the RPATH/RUNPATH entries of an ELF file (readelf -d)."""
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", out)
    paths = re.findall(r"\((?:RPATH|RUNPATH)\)\s+Library r(?:un)?path: \[(.*)\]", out)
    return needed, [entry for found in paths for entry in found.split(":")]


def test_wheel_is_manylinux_tagged_for_this_glibc_and_versioned_from_the_version_file(wheel):
    name = os.path.basename(wheel)
    # With the compiled calls `make` built (outlive/_speedups.c, Python's stable ABI) the wheel is for
    # CPython 3.10 and later; without them for any Python.
    tag = "cp310-abi3" if speedups_built() else "py3-none"
    match = re.fullmatch(rf"outlive-{re.escape(VERSION)}-{tag}-manylinux_2_(\d+)_x86_64\.whl", name)
    assert match, name
    glibc_minor = int(os.confstr("CS_GNU_LIBC_VERSION").split(".")[1])
    assert int(match.group(1)) <= glibc_minor, f"{name} needs a newer glibc than this system's"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(f"outlive-{VERSION}.dist-info/METADATA").decode()
        entry_points = archive.read(f"outlive-{VERSION}.dist-info/entry_points.txt").decode()
    assert f"\nVersion: {VERSION}\n" in metadata
    assert "outlive = outlive._command:main" in entry_points
    assert {"outlive/liboutlive.so", "outlive/bin/outlive", "outlive/VERSION"} <= set(names)
    assert [n for n in names if "_speedups" in n] == (["outlive/_speedups.abi3.so"] if speedups_built() else []), names
    bundled = [os.path.basename(n) for n in names if n.startswith("outlive.libs/")]
    assert sorted(kind for kind, pattern in BUNDLED.items() for b in bundled if pattern.match(b)) == ["ffi", "sqlite"]


@pytest.mark.parametrize("carrier, up", [("liboutlive.so", ".."), ("bin/outlive", "../..")])
def test_library_and_command_need_sqlite_and_ffi_from_the_wheels_own_copies(venv, carrier, up):
    path = os.path.join(venv["package"], carrier)
    needed, search = dynamic_section(path)
    assert "libsqlite3.so.0" not in needed and "libffi.so.8" not in needed, needed
    for kind, pattern in BUNDLED.items():
        [copy] = [name for name in needed if pattern.match(name)]
        assert os.path.isfile(os.path.join(venv["libs"], copy)), copy
    assert f"$ORIGIN/{up}/outlive.libs" in search, search
    # And the dynamic linker agrees: both resolve inside the installed outlive.libs.
    resolved = subprocess.run(["ldd", path], capture_output=True, text=True, check=True).stdout
    libs = os.path.realpath(venv["libs"])
    for line in resolved.splitlines():
        if "libsqlite3" in line or "libffi" in line:
            assert os.path.dirname(os.path.realpath(line.split("=>")[1].split("(")[0].strip())) == libs, line


def system_copies():
    """The files the system's libsqlite3 and libffi are, as the unbundled library resolves them."""
    out = subprocess.run(["ldd", os.path.join(ROOT, "build", "liboutlive.so")], capture_output=True, text=True,
                         check=True).stdout
    found = {name: os.path.realpath(line.split("=>")[1].split("(")[0].strip())
             for line in out.splitlines() for name in ("libsqlite3.so.0", "libffi.so.8") if line.strip().startswith(name)}
    assert sorted(found) == ["libffi.so.8", "libsqlite3.so.0"], out
    return found


def hiding(empty, targets):
    """A command prefix: a private mount namespace in which each target is an empty file."""
    if shutil.which("unshare") is None:
        pytest.skip("no unshare command to hide the system's libraries")
    namespace = ["unshare", "--mount"] if os.geteuid() == 0 else ["unshare", "--user", "--map-root-user", "--mount"]
    if subprocess.run([*namespace, "true"], capture_output=True).returncode != 0:
        pytest.skip("no mount namespace here (unshare --mount refused) to hide the system's libraries")
    mounts = " && ".join(f"mount --bind '{empty}' '{target}'" for target in targets)
    return [*namespace, "sh", "-c", f'{mounts} && exec "$@"', "hide"]


def test_examples_and_the_command_run_with_the_systems_sqlite_and_ffi_hidden(venv, tmp_path):
    system = system_copies()
    interpreter_libs = tmp_path / "interpreter-libs"
    interpreter_libs.mkdir()
    # Python's own ctypes needs a libffi.so.8 (the interpreter's dependency, not
    # the wheel's): it gets a copy made before the system's is hidden. The wheel's
    # library asks for its hash-named copy, which no such directory provides.
    shutil.copy(system["libffi.so.8"], interpreter_libs / "libffi.so.8")
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    hide = hiding(empty, system.values())

    def run(command, **env):
        return subprocess.run([*hide, *command], capture_output=True, text=True, env=clean_env(**env),
                              cwd=str(tmp_path), timeout=120)

    # The hiding works: the unbundled command no longer starts, Python's ctypes neither.
    unbundled = run([os.path.join(ROOT, "build", "outlive"), "--version"])
    assert unbundled.returncode != 0 and "libsqlite3.so.0" in unbundled.stderr, unbundled
    assert run([venv["python"], "-c", "import ctypes"]).returncode != 0
    python_env = {"LD_LIBRARY_PATH": str(interpreter_libs)}

    command = run([os.path.join(venv["package"], "bin", "outlive"), "--version"])
    assert command.returncode == 0 and command.stdout.strip() == VERSION, command

    for name, expected in PYTHON_EXPECTED.items():
        example = os.path.join(ROOT, "Examples", "python", f"{name}.py")
        result = run([venv["python"], example, str(tmp_path / f"store-{name}")], **python_env)
        assert result.returncode == 0, f"{name}:\n{result.stdout}\n{result.stderr}"
        assert_lines_in_order(result.stdout, expected)

    # The console command on PATH of the venv: the binary itself after an exec.
    entry = os.path.join(str(venv["dir"]), "bin", "outlive")
    version = run([entry, "--version"], **python_env)
    assert version.returncode == 0 and version.stdout.strip() == VERSION, version
    inspected = run([entry, "inspect", str(tmp_path / "store-kv")], **python_env)
    assert inspected.returncode == 0 and "processes alive: 0" in inspected.stdout, inspected

    # In one process: the package is the venv's, and sqlite and ffi are mapped from outlive.libs.
    probe = run([venv["python"], "-c", "import outlive, sys; print(outlive.__file__); print(outlive.__version__); "
                 "print(outlive.library_version()); print(outlive._ffi.speedups is not None); "
                 "sys.stdout.write(open('/proc/self/maps').read())"], **python_env)
    assert probe.returncode == 0, probe
    where, package_version, library_version, compiled, *maps = probe.stdout.splitlines()
    assert where.startswith(str(venv["dir"])) and package_version == library_version == VERSION
    assert compiled == str(speedups_built())  # the wheel's compiled calls load and are used
    mapped = {os.path.basename(line.split()[-1]) for line in maps if "/" in line}
    assert [name for name in mapped if name.startswith("libsqlite3")] and all(
        BUNDLED["sqlite"].match(name) for name in mapped if name.startswith("libsqlite3")), mapped
    assert [name for name in mapped if BUNDLED["ffi"].match(name)], mapped


def test_pip_install_of_the_source_directory_leaves_the_tree_as_it_was(tmp_path):
    def tree():
        return sorted(os.path.relpath(os.path.join(parent, name), PACKAGE_SOURCE)
                      for parent, dirs, files in os.walk(PACKAGE_SOURCE) for name in dirs + files)

    before = tree()
    python = fresh_venv(tmp_path / "venv")
    pip_install(python, PACKAGE_SOURCE)
    after = tree()
    assert after == before, sorted(set(after) ^ set(before))
    assert not [name for name in after if name == "build" or name.endswith(".egg-info")]
    imported = subprocess.run([python, "-c", "import outlive; print(outlive.__version__)"], capture_output=True,
                              text=True, env=clean_env(), cwd=str(tmp_path))
    assert imported.stdout.strip() == VERSION, imported.stderr
