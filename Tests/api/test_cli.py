"""The `outlive` command against a store prepared by the test: tables for
people, JSON for scripts, meaningful exit codes."""
import json
import os
import subprocess

import outlive

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.path.join(ROOT, "build", "outlive")


def run(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=60)


def test_kv_lists_and_prints_values_as_table_and_json(tmp_path):
    directory = str(tmp_path / "store")
    with outlive.Store(directory) as store:
        store.kv["config/name"] = b"dana"
        store.kv["config/blob"] = b"\x00\x01"
        store.kv["other"] = b"x"
    listed = json.loads(run("kv", directory, "--prefix", "config/", "--json").stdout)
    assert [entry["key"] for entry in listed] == ["config/blob", "config/name"]
    assert listed[0]["value"] == "0x0001" and listed[1]["value"] == "dana"
    table = run("kv", directory).stdout
    assert "KEY" in table and "config/name" in table and "other" in table
    one = run("kv", directory, "config/name")
    assert one.returncode == 0 and one.stdout.strip() == "dana"


def test_inspect_counts_and_lists_live_processes(tmp_path):
    directory = str(tmp_path / "store")
    with outlive.Store(directory, process="app") as store:
        store.kv["a"] = b"1"
        report = json.loads(run("inspect", directory, "--json").stdout)
        assert [run_["process"] for run_ in report["runs"]] == ["app"]
        assert report["runs"][0]["run_id"] == store.run_id
        assert report["counts"]["keys"] == 1
    report = json.loads(run("inspect", directory, "--json").stdout)
    assert report["runs"] == []


def test_exit_codes_say_what_went_wrong(tmp_path):
    directory = str(tmp_path / "store")
    with outlive.Store(directory):
        pass
    missing = run("kv", directory, "absent")
    assert missing.returncode == 3 and "absent" in missing.stderr
    unusable = run("kv", str(tmp_path / "no" / "such" / "dir"))
    assert unusable.returncode == 1 and "cannot create" in unusable.stderr
    assert run("kv").returncode == 64
    assert run("--version").stdout.strip() == open(os.path.join(ROOT, "VERSION")).read().strip()


def test_handlers_lists_what_a_library_declares():
    fixture = os.path.join(ROOT, "build", "tests", "libhandlers_fixture.so")
    listed = {entry["name"]: entry for entry in json.loads(run("handlers", fixture, "--json").stdout)}
    assert listed["fixture_completion"] == {"name": "fixture_completion", "signature": "INTEGER result, ID? label",
                                            "instance": False}
    assert listed["fixture_on_key"]["instance"] is True
    assert "fixture_ping" in listed and listed["fixture_ping"]["signature"] == ""
    table = run("handlers", fixture).stdout
    assert "fixture_all_types" in table and "ID<fixture.account> account" in table
    not_elf = run("handlers", os.path.join(ROOT, "VERSION"))
    assert not_elf.returncode == 1 and "not an ELF file" in not_elf.stderr
