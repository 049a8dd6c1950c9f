"""The programs in Examples/ build and run and say what they should, so that
they never rot: C (compiled against the header), Python, and Rust (cargo, no
crates, the C ABI through extern "C")."""
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build")


def test_rust_example_uses_the_c_abi_with_cargo_and_no_crates(tmp_path):
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed")
    subprocess.run(["cargo", "build", "-q", "--offline", "--target-dir", os.path.join(BUILD, "rust")],
                   cwd=os.path.join(ROOT, "Examples", "rust"), check=True, timeout=600)
    out = subprocess.run([os.path.join(BUILD, "rust", "debug", "outlive-example"), str(tmp_path / "store")],
                         capture_output=True, text=True, check=True, timeout=60).stdout
    assert "visits: 1" in out and "observer: visits = 1" in out
    assert out.count("hello, dana, from a Rust handler") == 2
