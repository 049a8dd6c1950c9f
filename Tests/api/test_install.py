"""`make install` into a temporary prefix gives what a user needs, and the test
then uses only what was installed: a C program built with pkg-config stores a
key, the installed `outlive` command finds it, the bash completion loads, the
man pages render, the systemd unit names the installed command. With DESTDIR
the same tree lands in a staging root while every path written into the files
names PREFIX. `make uninstall` then leaves no file behind."""
import os
import pathlib
import shutil
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VERSION = pathlib.Path(ROOT, "VERSION").read_text().strip()

# A program that sees the library only through what pkg-config says about it.
PROGRAM = r"""
#include <outlive.h>
#include <stdio.h>
int main(int argc, char **argv) {
    if (argc != 2) return 2;
    outlive_store *store;
    if (outlive_store_open(argv[1], "installed", NULL, NULL, &store) != OUTLIVE_OK) return 1;
    if (outlive_kv_set(store, "installed/by", "pkg-config", 10) != OUTLIVE_OK) return 1;
    outlive_store_close(store);
    puts(outlive_version());
    return 0;
}
"""

EXPECTED = ["bin/outlive", "include/outlive.h", "lib/liboutlive.so", "lib/liboutlive.so.0",
            f"lib/liboutlive.so.{VERSION}", "lib/pkgconfig/outlive.pc", "lib/systemd/system/outlive-worker@.service",
            "share/bash-completion/completions/outlive", "share/zsh/site-functions/_outlive",
            "share/fish/vendor_completions.d/outlive.fish", "share/man/man1/outlive.1",
            "share/man/man1/outlive.worker.1", "share/man/man1/outlive.inspect.1"]


def make(*arguments):
    result = subprocess.run(["make", "-s", *arguments], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]


def files_under(directory):
    """Every file and symlink (not directory) below directory, relative to it."""
    found = []
    for parent, _, names in os.walk(directory):
        found += [os.path.relpath(os.path.join(parent, name), directory) for name in names]
    return sorted(found)


def build_program(tmp_path, pkg_config_env, rpath):
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "outlive"], env=pkg_config_env, capture_output=True,
                           text=True, check=True).stdout.split()
    source = tmp_path / "program.c"
    source.write_text(PROGRAM)
    program = tmp_path / "program"
    subprocess.run(["cc", "-std=c11", str(source), "-o", str(program), *flags, f"-Wl,-rpath,{rpath}"], check=True)
    return program


def test_make_install_gives_a_library_pkg_config_command_completions_man_pages_and_unit(tmp_path):
    prefix = tmp_path / "prefix"
    make("install", f"PREFIX={prefix}")
    installed = files_under(prefix)
    assert set(EXPECTED) <= set(installed), installed
    assert os.readlink(prefix / "lib" / "liboutlive.so") == "liboutlive.so.0"
    assert os.readlink(prefix / "lib" / "liboutlive.so.0") == f"liboutlive.so.{VERSION}"

    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    assert subprocess.run(["pkg-config", "--modversion", "outlive"], env=env, capture_output=True,
                          text=True).stdout.strip() == VERSION
    program = build_program(tmp_path, env, prefix / "lib")
    store = tmp_path / "store"
    assert subprocess.run([str(program), str(store)], capture_output=True, text=True,
                          check=True).stdout.strip() == VERSION

    command = str(prefix / "bin" / "outlive")
    assert subprocess.run([command, "--version"], capture_output=True, text=True,
                          check=True).stdout.strip() == VERSION
    inspected = subprocess.run([command, "inspect", str(store)], capture_output=True, text=True, check=True).stdout
    assert [line.split() for line in inspected.splitlines() if line.startswith("keys")] == [["keys", "1"]]
    value = subprocess.run([command, "kv", str(store), "installed/by"], capture_output=True, text=True, check=True)
    assert value.stdout.strip() == "pkg-config"

    completion = prefix / "share" / "bash-completion" / "completions" / "outlive"
    loaded = subprocess.run(["bash", "-c", f"source '{completion}' && complete -p outlive"], capture_output=True,
                            text=True, check=True).stdout
    assert loaded.strip().endswith(" outlive") and "-F " in loaded
    assert "#compdef outlive" in (prefix / "share" / "zsh" / "site-functions" / "_outlive").read_text()
    assert "complete -c 'outlive'" in (prefix / "share" / "fish" / "vendor_completions.d" / "outlive.fish").read_text()

    for page, name in (("outlive.1", ".Nm outlive\n"), ("outlive.worker.1", '.Nm "outlive worker"\n')):
        text = (prefix / "share" / "man" / "man1" / page).read_text()
        assert name in text and ".Sh SYNOPSIS" in text
    if shutil.which("man"):
        rendered = subprocess.run(["man", "-l", str(prefix / "share" / "man" / "man1" / "outlive.worker.1")],
                                  env=dict(os.environ, MANPAGER="cat", MANWIDTH="100"), capture_output=True,
                                  text=True, check=True).stdout
        assert "--load" in rendered

    unit = (prefix / "lib" / "systemd" / "system" / "outlive-worker@.service").read_text()
    assert f"ExecStart={prefix}/bin/outlive worker " in unit

    make("uninstall", f"PREFIX={prefix}")
    assert files_under(prefix) == []


def test_destdir_stages_the_tree_while_installed_files_name_prefix(tmp_path):
    stage, prefix = tmp_path / "stage", "/opt/outlive-destdir-test"
    assert not os.path.exists(prefix)
    make("install", f"DESTDIR={stage}", f"PREFIX={prefix}")
    root = stage / prefix.lstrip("/")
    assert set(EXPECTED) <= set(files_under(root)) and files_under(stage) == sorted(
        os.path.join(prefix.lstrip("/"), name) for name in files_under(root))
    assert not os.path.exists(prefix)
    assert "prefix=/opt/outlive-destdir-test\n" in (root / "lib" / "pkgconfig" / "outlive.pc").read_text()
    assert f"ExecStart={prefix}/bin/outlive worker " in (root / "lib/systemd/system/outlive-worker@.service").read_text()

    # pkg-config's sysroot maps the PREFIX paths the .pc file names into the stage.
    env = dict(os.environ, PKG_CONFIG_PATH=str(root / "lib" / "pkgconfig"), PKG_CONFIG_SYSROOT_DIR=str(stage))
    program = build_program(tmp_path, env, root / "lib")
    assert subprocess.run([str(program), str(tmp_path / "store")], capture_output=True, text=True,
                          check=True).stdout.strip() == VERSION

    make("uninstall", f"DESTDIR={stage}", f"PREFIX={prefix}")
    assert files_under(stage) == []
