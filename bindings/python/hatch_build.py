"""Puts into the wheel what the repository's build made: build/liboutlive.so as
outlive/liboutlive.so and build/outlive as outlive/bin/outlive (the `outlive`
console command runs it), outlive/_speedups.abi3.so where `make` built it, and
VERSION beside the package's modules.

With the library and the command the wheel is a platform wheel (py3-none-linux_<machine>:
ctypes needs no particular Python ABI; cp310-abi3-linux_<machine> with the compiled
calls, of Python's stable ABI), which `make wheel` hands to auditwheel for its
manylinux tag and the libraries it bundles. Without them (nothing built) the
wheel is pure Python and loads a liboutlive installed on the system."""
import os
import platform
import sys

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class OutliveBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version, build_data):
        if self.target_name != "wheel":
            return
        repository = os.path.normpath(os.path.join(self.root, "..", ".."))
        built = os.environ.get("OUTLIVE_BUILD_DIR") or os.path.join(repository, "build")
        build_data["force_include"][os.path.join(repository, "VERSION")] = "outlive/VERSION"
        library, command = os.path.join(built, "liboutlive.so"), os.path.join(built, "outlive")
        if not (os.path.isfile(library) and os.path.isfile(command)):
            sys.stderr.write(f"outlive: no {library} and {command} (run `make`): building a pure-Python "
                             "wheel that loads the system's liboutlive\n")
            return
        build_data["force_include"][library] = "outlive/liboutlive.so"
        build_data["force_include"][command] = "outlive/bin/outlive"
        build_data["pure_python"] = False
        build_data["tag"] = f"py3-none-linux_{platform.machine()}"
        # The compiled calls `make` built (outlive/_speedups.c), of Python's
        # stable ABI 3.10: with them the wheel is for CPython 3.10 and later.
        speedups = os.path.join(self.root, "outlive", "_speedups.abi3.so")
        if os.path.isfile(speedups):
            build_data["force_include"][speedups] = "outlive/_speedups.abi3.so"
            build_data["tag"] = f"cp310-abi3-linux_{platform.machine()}"
