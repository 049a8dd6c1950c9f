"""mypy --strict passes on the package and the Python examples, and the types
users see are precise: a store from `with`, a decorated handler and a task
function keep their own types (an Any would make the `type: ignore` comments
below unused, which --strict reports)."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.dirname(HERE)
EXAMPLES = os.path.join(PACKAGE_ROOT, "..", "..", "Examples", "python")

USES = '''
import datetime
import outlive


@outlive.handler("typing.greet")
def greet(name: str) -> None:
    pass


@outlive.task
def remind(user: str, when: datetime.datetime | None = None) -> int:
    return 1


with outlive.Store("/nonexistent") as store:
    same: outlive.Store = store
    wrong: int = store  # type: ignore[assignment]
    task_id: str = remind.delay("dana")
    remind.delay(3)  # type: ignore[arg-type]
    remind.options(group_start="g").delay("dana", when=3)  # type: ignore[arg-type]
    greet(3)  # type: ignore[arg-type]
    result: int = remind("dana")
    bad: str = remind("dana")  # type: ignore[assignment]
'''


def _mypy(cache, *paths):
    pytest.importorskip("mypy", reason="mypy is installed by scripts/install-deps.sh")
    env = dict(os.environ, MYPYPATH=PACKAGE_ROOT)
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", f"--cache-dir={cache}", *paths], cwd=PACKAGE_ROOT,
                          env=env, capture_output=True, text=True, timeout=600)


def test_the_package_and_the_examples_pass_mypy_strict(tmp_path):
    examples = sorted(os.path.join(EXAMPLES, name) for name in os.listdir(EXAMPLES) if name.endswith(".py"))
    result = _mypy(tmp_path / "cache", os.path.join(PACKAGE_ROOT, "outlive"), *examples)
    assert result.returncode == 0, result.stdout + result.stderr


def test_stores_handlers_and_task_functions_keep_their_types(tmp_path):
    path = tmp_path / "uses.py"
    path.write_text(USES)
    result = _mypy(tmp_path / "cache", str(path))
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_type_error_in_a_use_is_reported(tmp_path):
    path = tmp_path / "uses.py"
    path.write_text(USES.replace("  # type: ignore[arg-type]", "", 1))
    result = _mypy(tmp_path / "cache", str(path))
    assert result.returncode == 1 and "arg-type" in result.stdout, result.stdout
