//! The serialized format and the handler registry are language-neutral: a
//! task added from Rust is run by the C worker (`outlive worker --load` of a
//! C handler library) and by a Python process; a task and a signal posted
//! from Python are run here, in this Rust process, by handlers declared with
//! `outlive::handler!`; a Rust handler library (a cdylib) is loaded and run
//! by a Python process; a kv change made by Python reaches a Rust observer.
//! Every other side is a real process on the same store directory.
mod common;
use common::{dispatch_until, library_dir, project_root, TempDir};
use outlive::{Args, Handler, Store};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

static RAN: Mutex<Vec<String>> = Mutex::new(Vec::new());

outlive::handler! {
    fn rust_cross_task(word: ID, attempt: INTEGER) {
        RAN.lock().unwrap().push(format!("task {} (attempt {attempt})", word.as_str().unwrap()));
    }
}

outlive::handler! {
    fn rust_cross_signal(progress: DOUBLE, note: OPT_ID, version: UINTEGER, terminated: BOOL) {
        RAN.lock().unwrap().push(format!(
            "signal {progress} {:?} v{version} terminated={terminated}",
            note.and_then(|n| n.as_str())
        ));
    }
}

fn python(script: &str, args: &[&str]) -> String {
    let root = project_root();
    let output = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .env("PYTHONPATH", root.join("bindings/python"))
        .env("OUTLIVE_LIBRARY", library_dir().join("liboutlive.so"))
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "python failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn handler(name: &str, bound: &[(&str, &str)]) -> Handler {
    let mut args = Args::new().unwrap();
    for (key, value) in bound {
        args.set_string(key, value).unwrap();
    }
    Handler::new(name, None, Some(&args)).unwrap()
}

/// A C handler library, built from source against the header only.
fn c_handler_library(dir: &Path) -> String {
    let source = dir.join("cross.c");
    std::fs::write(
        &source,
        r#"#include <stdio.h>
#include "outlive.h"
OUTLIVE_HANDLER(c_cross_record, OUTLIVE_ID(path), OUTLIVE_ID(word), OUTLIVE_INTEGER(attempt)) {
    FILE *file = fopen(outlive_object_string(path), "a");
    if (file) {
        fprintf(file, "c ran %s (attempt %lld)\n", outlive_object_string(word), (long long)attempt);
        fclose(file);
    }
}
"#,
    )
    .unwrap();
    let library = dir.join("libcross.so");
    let built = Command::new("cc")
        .args(["-std=c99", "-Wall", "-Werror", "-fPIC", "-shared", "-o"])
        .arg(&library)
        .arg(&source)
        .arg(format!("-I{}", project_root().join("include").display()))
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    library.to_str().unwrap().to_string()
}

#[test]
fn a_task_added_from_rust_is_run_by_the_c_worker_from_a_c_handler_library() {
    let dir = TempDir::new("cross");
    let library = c_handler_library(dir.path());
    let record = dir.path().join("record.txt");
    {
        let store = Store::open(dir.store(), "rust-app").unwrap();
        let work = handler("c_cross_record", &[("path", record.to_str().unwrap()), ("word", "from rust")]);
        store.task_add(&work).unwrap();
        // Not resolvable here: this process leaves it for one that can.
        assert!(outlive::resolve("c_cross_record").is_err());
    }
    let worker = Command::new(project_root().join("build/outlive"))
        .arg("worker")
        .arg(dir.store())
        .args(["--load", &library, "--until-idle", "--process", "c-worker"])
        .output()
        .unwrap();
    assert!(worker.status.success(), "{}", String::from_utf8_lossy(&worker.stderr));
    assert_eq!(std::fs::read_to_string(&record).unwrap(), "c ran from rust (attempt 1)\n");
    let store = Store::open(dir.store(), "rust-app").unwrap();
    assert_eq!(store.tasks_count().unwrap(), 0);
}

#[test]
fn a_task_added_from_rust_is_run_by_a_python_handler_in_a_python_process() {
    let dir = TempDir::new("cross");
    {
        let store = Store::open(dir.store(), "rust-app").unwrap();
        store.task_add(&handler("py_cross.greet", &[("name", "dana")])).unwrap();
    }
    let out = python(
        r#"
import sys, outlive
@outlive.handler("py_cross.greet")
def greet(name: str, attempt: int) -> None:
    print(f"python ran greet({name}) attempt {attempt}")
with outlive.Store(sys.argv[1], process="py-worker") as store:
    store.tasks.run_now()
    for _ in range(200):
        if len(store.tasks) == 0:
            break
        store.loop.dispatch(timeout=0.05)
    print("left:", len(store.tasks))
"#,
        &[dir.store().to_str().unwrap()],
    );
    assert_eq!(out, "python ran greet(dana) attempt 1\nleft: 0\n");
}

#[test]
fn a_task_and_a_signal_from_python_are_run_by_rust_handlers_in_this_process() {
    let dir = TempDir::new("cross");
    let signal = outlive::new_signal_id();
    python(
        r#"
import sys, outlive
with outlive.Store(sys.argv[1], process="py-app") as store:
    store.tasks.add(outlive.Handler("rust_cross_task", word="from python"))
    store.signals.consume(sys.argv[2], outlive.Handler("rust_cross_signal"), lifetime="any_process")
    store.signals.post(sys.argv[2], terminates=True, progress=0.75, note="half-way")
    assert not outlive.resolves("rust_cross_task")
"#,
        &[dir.store().to_str().unwrap(), &signal],
    );
    let store = Store::open(dir.store(), "rust-worker").unwrap();
    assert_eq!(store.tasks_count().unwrap(), 1);
    store.tasks_run_now().unwrap();
    let done = |line: &str| RAN.lock().unwrap().iter().any(|l| l == line);
    assert!(
        dispatch_until(store.event_loop(), 200, || {
            done("task from python (attempt 1)") && done("signal 0.75 Some(\"half-way\") v1 terminated=true")
        }),
        "ran: {:?}",
        RAN.lock().unwrap()
    );
    assert!(dispatch_until(store.event_loop(), 100, || store.tasks_count().unwrap() == 0));
    assert_eq!(store.signal_lookup(&signal).unwrap(), None, "delivered and terminated");
}

#[test]
fn a_change_made_by_a_python_process_reaches_a_rust_observer() {
    let dir = TempDir::new("cross");
    let store = Store::open(dir.store(), "rust-app").unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen_in = seen.clone();
    let _observation = store
        .kv_observe("shared/", move |key, value| {
            seen_in.lock().unwrap().push(format!("{key}={}", String::from_utf8_lossy(value.unwrap_or(b"(deleted)"))))
        })
        .unwrap();
    python(
        r#"
import sys, outlive
with outlive.Store(sys.argv[1], process="py-app") as store:
    store.kv["shared/greeting"] = b"hello from python"
"#,
        &[dir.store().to_str().unwrap()],
    );
    assert!(dispatch_until(store.event_loop(), 100, || !seen.lock().unwrap().is_empty()));
    assert_eq!(*seen.lock().unwrap(), ["shared/greeting=hello from python"]);
}

/// Builds tests/handler-library (a cdylib) with cargo, offline, into a target
/// directory of its own (the one of this test run is locked by it).
fn rust_handler_library() -> std::path::PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/handler-library/Cargo.toml");
    let target = project_root().join("build/cargo-handler-library");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let built = Command::new(cargo)
        .args(["build", "--offline", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target)
        .env("OUTLIVE_LIB_DIR", library_dir())
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    target.join("debug/liboutlive_rust_handlers.so")
}

#[test]
fn a_rust_handler_library_is_loaded_and_run_by_a_python_process() {
    let dir = TempDir::new("cross");
    let library = rust_handler_library();
    let record = dir.path().join("record.txt");
    {
        let store = Store::open(dir.store(), "rust-app").unwrap();
        let work = handler("rust_library_record", &[("path", record.to_str().unwrap()), ("word", "for python")]);
        store.task_add(&work).unwrap();
    }
    let out = python(
        r#"
import sys, outlive
assert not outlive.resolves("rust_library_record")
outlive.load_handlers(sys.argv[2])
print("resolves after loading:", outlive.resolves("rust_library_record"))
with outlive.Store(sys.argv[1], process="py-worker") as store:
    store.tasks.run_now()
    for _ in range(200):
        if len(store.tasks) == 0:
            break
        store.loop.dispatch(timeout=0.05)
    print("left:", len(store.tasks))
"#,
        &[dir.store().to_str().unwrap(), library.to_str().unwrap()],
    );
    assert_eq!(out, "resolves after loading: True\nleft: 0\n");
    assert_eq!(std::fs::read_to_string(&record).unwrap(), "rust library ran for python (attempt 1)\n");
}
