"""The README's examples work as printed: the C one compiled against the
header, the Python one run with the package."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIBRARY = os.environ.get("OUTLIVE_LIBRARY", os.path.join(ROOT, "build", "liboutlive.so"))


def readme_block(language):
    with open(os.path.join(ROOT, "README.md")) as f:
        return re.search(rf"```{language}\n(.*?)```", f.read(), re.S).group(1)


def test_readme_c_example_matches_the_example_file_and_runs(tmp_path):
    with open(os.path.join(ROOT, "Examples", "readme_example.c")) as f:
        example = f.read()
    assert readme_block("c") in example
    subprocess.run(["rm", "-rf", "/tmp/outlive-readme"], check=True)
    binary = tmp_path / "readme"
    build = os.path.dirname(LIBRARY)
    subprocess.run(["cc", f"-I{ROOT}/include", "-o", str(binary), os.path.join(ROOT, "Examples", "readme_example.c"),
                    f"-L{build}", "-loutlive", f"-Wl,-rpath,{build}"], check=True)
    result = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "greeting is now hello" in result.stdout


def test_readme_python_example_runs():
    subprocess.run(["rm", "-rf", "/tmp/outlive-readme"], check=True)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "bindings", "python"))
    result = subprocess.run([sys.executable, "-c", readme_block("python")], capture_output=True, text=True,
                            timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    assert "greeting is now b'hello'" in result.stdout
