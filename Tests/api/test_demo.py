"""`make demo` works as the README promises: every step happens, in order, in
separate processes, and the store ends empty."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_demo_runs_every_step_and_ends_with_an_empty_store():
    result = subprocess.run(["bash", "scripts/demo.sh"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    out = result.stdout
    steps = ["[app] killed with SIGKILL now", "killed by signal 9", "tasks pending         3",
             "[worker] uploading report.pdf (file 3 of 3, attempt 1)",
             "[desktop-ui] showing \"Conflict in notes.txt\"", "the conflict in notes.txt is resolved: \"keep-both\"",
             "[app] signal version 3 (final): 3 of 3 files uploaded"]
    positions = [out.index(step) for step in steps]
    assert positions == sorted(positions)
    final = out[out.index("6. Done"):]
    assert "tasks pending         0" in final and "messages              0" in final and "signal consumers      0" in final
