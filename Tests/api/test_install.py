"""`make install PREFIX=…` into a temporary prefix gives a library, header and
outlive.pc with which pkg-config compiles and links a C program."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_pkg_config_builds_a_program_after_make_install(tmp_path):
    prefix = tmp_path / "prefix"
    subprocess.run(["make", "-s", "install", f"PREFIX={prefix}"], cwd=ROOT, check=True, capture_output=True)
    assert (prefix / "include" / "outlive.h").exists()
    assert os.path.islink(prefix / "lib" / "liboutlive.so")
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "outlive"], env=env, capture_output=True,
                           text=True, check=True).stdout.split()
    assert subprocess.run(["pkg-config", "--modversion", "outlive"], env=env, capture_output=True,
                          text=True).stdout.strip() == open(os.path.join(ROOT, "VERSION")).read().strip()
    source = tmp_path / "program.c"
    source.write_text('#include <outlive.h>\n#include <stdio.h>\nint main(void) { puts(outlive_version()); return 0; }\n')
    subprocess.run(["cc", str(source), "-o", str(tmp_path / "program"), *flags, f"-Wl,-rpath,{prefix}/lib"],
                   check=True)
    out = subprocess.run([str(tmp_path / "program")], capture_output=True, text=True, check=True).stdout
    assert out.strip() == open(os.path.join(ROOT, "VERSION")).read().strip()
