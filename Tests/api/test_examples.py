"""The programs in Examples/ build and run and say what they should, so that
they never rot: C (compiled against the header only, -std=c99 -Wall -Wextra
-Werror), the plugin pair, Python (the package from the source tree), and Rust
(cargo, the outlive crate of bindings/rust, nothing from a registry). The guides in docs/ quote
these programs, and a test checks that every quoted block is in one of them."""
import glob
import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build")
LIBRARY = os.environ.get("OUTLIVE_LIBRARY", os.path.join(BUILD, "liboutlive.so"))
LIBRARY_DIR = os.path.dirname(os.path.abspath(LIBRARY))
EXAMPLES = os.path.join(ROOT, "Examples")
C_FLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{ROOT}/include"]
LINK_FLAGS = [f"-L{LIBRARY_DIR}", "-loutlive", f"-Wl,-rpath,{LIBRARY_DIR}", "-rdynamic"]


def compile_program(source, binary):
    result = subprocess.run(["cc", *C_FLAGS, "-o", str(binary), source, *LINK_FLAGS], capture_output=True, text=True)
    assert result.returncode == 0, f"{source} does not compile:\n{result.stderr}"
    return str(binary)


def run(command, env=None):
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 0, f"{command} exited with {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def assert_lines_in_order(out, expected):
    """Each expected line is a whole line of out, and they come in this order."""
    lines = out.splitlines()
    position = -1
    for line in expected:
        assert line in lines[position + 1:], f"missing (or out of order): {line!r}\n--- output:\n{out}"
        position = lines.index(line, position + 1)


# What each C example prints, in order (lines that must all be there).
C_EXPECTED = {
    "queues": ["unique key report:account-42: task added",
               "unique key report:account-42: held already, nothing added", "cleanup ran",
               "render success https://example.org/render/42.png", 'cron "61 * * * *" -> OUTLIVE_E_INVALID_ARGUMENT',
                  "schedule nightly-report: cron 30 2 * * MON-FRI, queue reports",
                  "schedule often: every 0.2 s, queue reports", "report 1 ran", "report 2 ran", "schedules removed"],
    "kv": ["get settings/theme -> dark", "visits after 3 updates: 3", "key: settings/language", "key: settings/theme",
           'get settings/missing -> OUTLIVE_E_NOT_FOUND (no value for key "settings/missing")',
           "observer: settings/theme = dark", "observer: settings/language deleted", "keys in the store: 2"],
    "handlers": ['handler: greet(name: ID "dana") invalidation: greeting_cancelled', "hello, dana", "HELLO, dana!",
                 "call without loud -> OUTLIVE_E_MISSING_ARGUMENT", "call with loud as INT -> OUTLIVE_E_TYPE_MISMATCH",
                 'call of "system" -> OUTLIVE_E_UNRESOLVED', "add: 40 + 2 = 42", "greeting for dana cancelled",
                 "invalidate -> OUTLIVE_OK", "call after invalidate -> OUTLIVE_E_INVALIDATED", "invalidated: yes"],
    "messages": ['presenting "Conflict in notes.txt": notes.txt changed here and on the server.',
                 "  [keep-both] Keep both", "  [use-server] Use the server's",
                 "response handler: notes.txt -> keep-both (scope account-1)",
                 'end notification: "Conflict in notes.txt" is gone, close the dialog', "messages stored: 0",
                 "respond again -> OUTLIVE_E_NOT_FOUND"],
    "signals": ["posted: 1 of 3 files", "consumer: sync version 1: 1 of 3 files", "posted: 2 of 3 files",
                "posted: 3 of 3 files (terminates)", "consumer: sync version 3: 3 of 3 files (final)",
                "lookup after the final version -> OUTLIVE_E_NOT_FOUND", "post without consumers -> OUTLIVE_OK",
                "post to a malformed id -> OUTLIVE_E_INVALID_ARGUMENT"],
    "tasks": ["tasks pending: 4", "identify A (attempt 1): server unavailable", "identify A (attempt 2): ok",
              "track opened the app for A", "tasks pending: 0, dead: 1",
              "listed: doomed dead after 3 attempts: gone for good"],
    "interactions": ["interaction: allow notifications? (waiting for the user)",
                     "unfinished: 2 (the notice waits for the permission prompt)",
                     "the user answered; the queue is suspended", "unfinished while suspended: 1",
                     "interaction: what's new in 2.0", "unfinished after resume: 0", "finish twice -> OUTLIVE_E_STATE",
                     "stored before the restart: 2", "durable interaction: welcome", "durable interaction: sign in",
                     "stored after presenting: 0"],
    "operations": ["a cycle -> OUTLIVE_E_INVALID_ARGUMENT", "completed prefetch ads (cancelled, never ran)",
                   "start login", "completed login", "start show home", "completed show home",
                   "drained: every operation finished", "finish twice -> OUTLIVE_E_STATE"],
}


def test_every_c_and_python_example_has_a_test():
    c_examples = {os.path.basename(path)[:-2] for path in glob.glob(os.path.join(EXAMPLES, "c", "*.c"))}
    python_examples = {os.path.basename(path)[:-3] for path in glob.glob(os.path.join(EXAMPLES, "python", "*.py"))}
    assert c_examples == set(C_EXPECTED)
    assert python_examples == set(PYTHON_EXPECTED)


@pytest.mark.parametrize("name", sorted(C_EXPECTED))
def test_c_example_compiles_against_the_header_and_prints_what_it_shows(name, tmp_path):
    binary = compile_program(os.path.join(EXAMPLES, "c", f"{name}.c"), tmp_path / name)
    out = run([binary, str(tmp_path / "store")])
    assert_lines_in_order(out, C_EXPECTED[name])


def test_c_kv_example_finds_its_values_in_the_next_run(tmp_path):
    binary = compile_program(os.path.join(EXAMPLES, "c", "kv.c"), tmp_path / "kv")
    run([binary, str(tmp_path / "store")])
    assert "visits after 3 updates: 6" in run([binary, str(tmp_path / "store")]).splitlines()


def test_c_signals_example_skips_the_version_it_was_behind_on(tmp_path):
    binary = compile_program(os.path.join(EXAMPLES, "c", "signals.c"), tmp_path / "signals")
    out = run([binary, str(tmp_path / "store")])
    assert out.count("consumer:") == 2 and "version 2" not in out


def test_c_tasks_example_runs_a_group_member_only_after_its_start_succeeded(tmp_path):
    binary = compile_program(os.path.join(EXAMPLES, "c", "tasks.c"), tmp_path / "tasks")
    lines = run([binary, str(tmp_path / "store")]).splitlines()
    assert lines.index("track opened the app for A") > lines.index("identify A (attempt 2): ok")
    assert lines.count("upload notes.txt (attempt 1)") == 1


def test_c_operations_example_starts_dependents_after_their_dependency(tmp_path):
    binary = compile_program(os.path.join(EXAMPLES, "c", "operations.c"), tmp_path / "operations")
    lines = run([binary, str(tmp_path / "store")]).splitlines()
    login, home = lines.index("completed login"), lines.index("start show home")
    for middle in ("fetch contacts", "fetch calendar"):
        assert login < lines.index(f"start {middle}") < lines.index(f"completed {middle}") < home
    assert "start prefetch ads" not in lines


def test_plugin_handlers_resolve_from_the_executable_and_the_loaded_library(tmp_path):
    plugin = tmp_path / "libplugin.so"
    built = subprocess.run(["cc", *C_FLAGS, "-fPIC", "-shared", "-o", str(plugin),
                            os.path.join(EXAMPLES, "plugin", "plugin.c")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    app = compile_program(os.path.join(EXAMPLES, "plugin", "app.c"), tmp_path / "app")
    out = run([app, str(tmp_path / "store"), str(plugin)])
    assert_lines_in_order(out, [
        "before loading: plugin_resize -> OUTLIVE_E_UNRESOLVED, app_notify -> OUTLIVE_OK",
        "after loading: plugin_resize -> OUTLIVE_OK",
        "app_notify: backup finished (from the executable; direct call)",
        "plugin_resize: cat.jpg to 640 px (from the plugin library; direct call)",
        "tasks pending: 0"])
    # Run as tasks, each handler got its task's id.
    assert re.search(r"^app_notify: backup finished \(from the executable; [0-9a-f]{8}-[0-9a-f]{4}\)$", out, re.M)
    assert re.search(r"^plugin_resize: cat\.jpg to 640 px \(from the plugin library; [0-9a-f]{8}-[0-9a-f]{4}\)$", out, re.M)
    # A bare name is refused: the plugin is loaded by path only.
    refused = subprocess.run([app, str(tmp_path / "other"), "libplugin.so"], capture_output=True, text=True,
                             timeout=60, cwd=tmp_path)
    assert refused.returncode == 1 and "load_handlers" in refused.stderr


PYTHON_EXPECTED = {
    "schedules": ["schedule nightly-report: cron 30 2 * * MON-FRI, queue reports",
                  "schedule poll: every 0.2 s, queue reports", "report 1 ran", "report 2 ran",
                  "refused: INVALID_ARGUMENT", "schedules left: ['nightly-report']"],
    "results": ["result: {'url': 'https://example.org/render/42.png'}",
                "awaited: 320", "dead: ValueError: no image is 0 pixels wide", "cancelled: TaskCancelledError True"],
    "kv": ["get settings/theme -> dark", "visits after 3 updates: 3",
           "keys under settings/: ['settings/language', 'settings/theme']", "settings/missing in kv: False",
           "observer: settings/theme = dark", "observer: settings/language = en",
           "observer: settings/language = (deleted)", "keys in the store: 2"],
    "handlers": ['handler: <Handler example.greet(name: ID "dana") invalidation: example.greeting_cancelled>',
                 "hello, dana", "HELLO, DANA!", "refused: MISSING_ARGUMENT", "refused: TYPE_MISMATCH",
                 "refused: UNRESOLVED", "greeting for dana cancelled",
                 "after invalidate: INVALIDATED - invalidated: True"],
    "messages": ["posted; messages stored: 1", 'presenting "Conflict in notes.txt": notes.txt changed here and on the server.',
                 "  [keep-both] Keep both (default)", "  [use-server] Use the server's (destructive)",
                 "response handler: notes.txt -> keep-both (scope account-1)",
                 'end notification: "Conflict in notes.txt" is gone', "messages stored: 0", "respond again: NOT_FOUND"],
    "signals": ["consumer: sync version 1: 1 of 3 files", "consumer: sync version 3: 3 of 3 files (final)",
                "lookup after the final version: NOT_FOUND", "consumers left: 0"],
    "tasks": ["tasks pending: 4", "identify A (attempt 1): server unavailable", "identify A (attempt 2): ok",
              "track opened the app for A", "tasks pending: 0 dead: 1",
              "listed: example.doomed dead after 3 attempts: gone for good"],
    "interactions": ["interaction: allow notifications? (waiting for the user)",
                     "unfinished: 2 (the notice waits for the permission prompt)", "unfinished while suspended: 1",
                     "interaction: what's new in 2.0", "unfinished after resume: 0", "finish twice: STATE",
                     "stored before the restart: 2", "durable interaction: welcome", "durable interaction: sign in",
                     "stored after presenting: 0"],
    "uploads": ["refused: task uploads.upload: argument 'size' takes int or None, not str", "tasks pending: 3",
                "upload /data/report.pdf (52113 bytes, headers {'content-type': 'application/pdf'}, attempt 1)",
                "upload /data/notes.txt (None bytes, headers {}, attempt 1)", "notify dana: uploaded at 09:30",
                "tasks pending: 0"],
    "operations": ["a cycle: INVALID_ARGUMENT", "prefetch ads completed, cancelled: True", "start login",
                   "start show home", "show home finished, cancelled: False", "unfinished: 0"],
}


@pytest.mark.parametrize("name", sorted(PYTHON_EXPECTED))
def test_python_example_runs_with_the_package_and_prints_what_it_shows(name, tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "bindings", "python"), OUTLIVE_LIBRARY=os.path.abspath(LIBRARY))
    out = run([sys.executable, os.path.join(EXAMPLES, "python", f"{name}.py"), str(tmp_path / "store")], env=env)
    assert_lines_in_order(out, PYTHON_EXPECTED[name])
    if name == "signals":
        assert "version 2" not in out
    if name == "operations":
        assert "start prefetch ads" not in out


GUIDES = ["handlers", "kv", "messages", "signals", "tasks", "interactions", "operations"]


def _normalized(text):
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


@pytest.mark.parametrize("guide", GUIDES)
def test_guide_code_blocks_are_quoted_from_the_tested_examples(guide):
    with open(os.path.join(ROOT, "docs", f"{guide}.md")) as f:
        text = f.read()
    sources = {"c": glob.glob(os.path.join(EXAMPLES, "c", "*.c")) + glob.glob(os.path.join(EXAMPLES, "plugin", "*.c")),
               "python": glob.glob(os.path.join(EXAMPLES, "python", "*.py"))}
    blocks = re.findall(r"```(c|python)\n(.*?)```", text, re.S)
    assert {language for language, _ in blocks} == {"c", "python"}, f"docs/{guide}.md needs a C and a Python example"
    for language, block in blocks:
        quoted = _normalized(block)
        assert any(quoted in _normalized(open(path).read()) for path in sources[language]), \
            f"docs/{guide}.md quotes a {language} block that is in no example:\n{block}"


def test_links_in_the_readme_and_the_guides_lead_to_files_that_exist():
    pages = [os.path.join(ROOT, "README.md")] + glob.glob(os.path.join(ROOT, "docs", "*.md")) + \
        [os.path.join(EXAMPLES, "plugin", "README.md")]
    for page in pages:
        with open(page) as f:
            links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", f.read())
        for link in links:
            if "://" in link:
                continue
            target = os.path.normpath(os.path.join(os.path.dirname(page), link))
            assert os.path.exists(target), f"{os.path.relpath(page, ROOT)} links to {link}, which does not exist"


def _cargo():
    """cargo from PATH, or from rustup's default place."""
    found = shutil.which("cargo") or shutil.which("cargo", path=os.path.expanduser("~/.cargo/bin"))
    if found is None:
        pytest.skip("cargo is not installed")
    return found


def test_rust_example_uses_the_outlive_crate_offline_and_prints_what_it_shows(tmp_path):
    with open(os.path.join(EXAMPLES, "rust", "Cargo.toml")) as f:
        manifest = f.read()
    # The crate of this repository by path; nothing from a registry.
    assert 'outlive = { path = "../../bindings/rust/outlive" }' in manifest
    env = dict(os.environ, OUTLIVE_LIB_DIR=LIBRARY_DIR)
    subprocess.run([_cargo(), "build", "-q", "--offline", "--target-dir", os.path.join(BUILD, "rust")],
                   cwd=os.path.join(ROOT, "Examples", "rust"), check=True, timeout=600, env=env)
    out = run([os.path.join(BUILD, "rust", "debug", "outlive-example"), str(tmp_path / "store")])
    assert_lines_in_order(out, ["visits: 1", "observer: visits = 1", "hello, dana, from a Rust handler",
                                "tasks pending: 0"])
    # Twice from the call with times=2, once from the task bound with times=1.
    assert out.count("hello, dana, from a Rust handler") == 3
    # The visit count lives in the store: the next run finds it.
    assert "visits: 2" in run([os.path.join(BUILD, "rust", "debug", "outlive-example"), str(tmp_path / "store")])


def test_rust_guide_code_blocks_are_quoted_from_the_example_or_the_crates_tests():
    with open(os.path.join(ROOT, "docs", "rust.md")) as f:
        blocks = re.findall(r"```rust\n(.*?)```", f.read(), re.S)
    assert blocks, "docs/rust.md shows Rust code"
    sources = glob.glob(os.path.join(EXAMPLES, "rust", "src", "*.rs")) + \
        glob.glob(os.path.join(ROOT, "bindings", "rust", "outlive", "tests", "*.rs"))
    texts = [_normalized(open(path).read()) for path in sources]
    for block in blocks:
        assert any(_normalized(block) in text for text in texts), f"docs/rust.md quotes a block that is in no example:\n{block}"
