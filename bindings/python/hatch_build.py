"""Puts into the wheel what the repository's build made: build/liboutlive.so as
outlive/liboutlive.so and build/outlive as outlive/bin/outlive (the `outlive`
console command runs it), and VERSION beside the package's modules.

With both present the wheel is a platform wheel (py3-none-linux_<machine>: ctypes
needs no particular Python ABI), which `make wheel` hands to auditwheel for its
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
