//! Rust processes on both sides: a Rust child (this test binary, run again)
//! takes a task and is killed with SIGKILL in the middle of it; the task is
//! pending again at once and this process runs it — at-least-once across a
//! crash, with the handler declared in Rust in both processes.
mod common;
use common::{dispatch_until, TempDir};
use outlive::{Args, Handler, Store, TaskState};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

/// Set in the child: the store directory it runs tasks of.
const CHILD_ENV: &str = "OUTLIVE_RUST_TEST_CHILD_STORE";

static ATTEMPTS: Mutex<Vec<i64>> = Mutex::new(Vec::new());

outlive::handler! {
    fn rust_process_job(marker: ID, attempt: INTEGER, completion: HANDLER) {
        if std::env::var_os(CHILD_ENV).is_some() {
            // The child says it started, and never completes: it will be killed.
            std::fs::write(marker.as_str().unwrap(), attempt.to_string()).unwrap();
            return;
        }
        ATTEMPTS.lock().unwrap().push(attempt);
        let mut result = Args::new().unwrap();
        result.set_bool("success", true).unwrap();
        completion.call(Some(&result)).unwrap();
    }
}

/// Not a test of its own: the body of the child process.
#[test]
#[ignore = "the child process of a_task_whose_runner_is_killed_runs_again_in_another_rust_process"]
fn child_runs_tasks_until_killed() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else { return };
    let store = Store::open(dir, "rust-child").unwrap();
    store.tasks_run_now().unwrap();
    // Bounded, so that a child whose parent died does not stay behind for good.
    for _ in 0..600 {
        store.event_loop().dispatch(Some(Duration::from_millis(100))).unwrap();
    }
}

#[test]
fn a_task_whose_runner_is_killed_runs_again_in_another_rust_process() {
    let dir = TempDir::new("processes");
    let marker = dir.path().join("started");
    let id = {
        let store = Store::open(dir.store(), "rust-parent").unwrap();
        let mut bound = Args::new().unwrap();
        bound.set_string("marker", marker.to_str().unwrap()).unwrap();
        store.task_add(&Handler::new("rust_process_job", None, Some(&bound)).unwrap()).unwrap()
    };
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["child_runs_tasks_until_killed", "--exact", "--ignored", "--nocapture"])
        .env(CHILD_ENV, dir.store())
        .spawn()
        .unwrap();
    // Wait (bounded) for the child to be inside the handler.
    for _ in 0..600 {
        if marker.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(std::fs::read_to_string(&marker).ok().as_deref(), Some("1"), "the child started attempt 1");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let store = Store::open(dir.store(), "rust-parent").unwrap();
    let task = store.tasks_list(None, 0).unwrap().remove(0);
    assert_eq!((task.id.as_str(), task.state, task.attempts), (id.as_str(), TaskState::Pending, 1));
    store.tasks_run_now().unwrap();
    assert!(dispatch_until(store.event_loop(), 200, || store.tasks_count().unwrap() == 0));
    assert_eq!(*ATTEMPTS.lock().unwrap(), [2], "this process ran the second attempt");
}
