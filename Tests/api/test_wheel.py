"""`make wheel` builds a platform wheel that bundles liboutlive.so: installed
into a fresh venv, with no OUTLIVE_LIBRARY and no source tree on the path, the
package finds its own copy of the library and its test suite passes."""
import glob
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_wheel_installs_in_a_fresh_venv_and_its_tests_pass(tmp_path):
    subprocess.run(["make", "-s", "wheel"], cwd=ROOT, check=True, capture_output=True)
    [wheel] = glob.glob(os.path.join(ROOT, "build", "wheel", "outlive-*.whl"))
    venv = tmp_path / "venv"
    # System site-packages only for pytest; the package itself comes from the wheel.
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel], check=True)
    env = {key: value for key, value in os.environ.items() if key not in ("OUTLIVE_LIBRARY", "PYTHONPATH")}
    env["OUTLIVE_TEST_INSTALLED"] = "1"
    where = subprocess.run([python, "-c", "import outlive, outlive._library as l; print(outlive.__file__); "
                            "print(outlive.library_version())"], capture_output=True, text=True, env=env,
                           cwd=str(tmp_path), check=True).stdout.split()
    assert str(venv) in where[0] and where[1] == open(os.path.join(ROOT, "VERSION")).read().strip()
    tests = os.path.join(ROOT, "bindings", "python", "tests")
    result = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
                             "-o", f"pythonpath={tests}", tests], capture_output=True, text=True, env=env,
                            cwd=str(tmp_path), timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert " passed" in result.stdout
