//! Tasks and signals run by handlers declared in Rust, on a real store.
mod common;
use common::{dispatch_until, TempDir};
use outlive::{Args, Delivery, Handler, Lifetime, Status, Store, TaskPolicy, TaskState};
use std::sync::Mutex;
use std::time::Duration;

static RUNS: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn runs_of(prefix: &str) -> Vec<String> {
    RUNS.lock().unwrap().iter().filter(|r| r.starts_with(prefix)).cloned().collect()
}

outlive::handler! {
    fn rust_task_upload(file: ID, task_id: ID, attempt: INTEGER) {
        RUNS.lock().unwrap().push(format!("upload {} {} {attempt}", file.as_str().unwrap(), task_id.as_str().unwrap()));
    }
}

outlive::handler! {
    fn rust_task_fails(label: ID, completion: HANDLER) {
        RUNS.lock().unwrap().push(format!("fails {}", label.as_str().unwrap()));
        let mut result = Args::new().unwrap();
        result.set_bool("success", false).unwrap().set_string("error", "server unavailable").unwrap();
        completion.call(Some(&result)).unwrap();
    }
}

outlive::handler! {
    fn rust_signal_progress(label: ID, done: INTEGER, version: UINTEGER, terminated: BOOL) {
        RUNS.lock().unwrap().push(format!("progress {} {done} v{version} {terminated}", label.as_str().unwrap()));
    }
}

fn with_arg(name: &str, key: &str, value: &str) -> Handler {
    let mut bound = Args::new().unwrap();
    bound.set_string(key, value).unwrap();
    Handler::new(name, None, Some(&bound)).unwrap()
}

#[test]
fn a_task_runs_once_on_the_loop_with_its_id_and_attempt() {
    let dir = TempDir::new("tasks");
    let store = Store::open(dir.store(), "app").unwrap();
    let id = store.task_add(&with_arg("rust_task_upload", "file", "notes.txt")).unwrap();
    assert_eq!(id.len(), 36);
    assert_eq!(store.tasks_count().unwrap(), 1);
    let listed = store.tasks_list(None, 0).unwrap();
    assert_eq!((listed[0].id.as_str(), listed[0].handler_name.as_str()), (id.as_str(), "rust_task_upload"));
    assert_eq!(listed[0].state, TaskState::Pending);
    store.tasks_run_now().unwrap();
    assert!(dispatch_until(store.event_loop(), 100, || store.tasks_count().unwrap() == 0));
    assert_eq!(runs_of(&format!("upload notes.txt {id}")), [format!("upload notes.txt {id} 1")]);
}

#[test]
fn a_task_that_fails_every_attempt_is_dead_and_listed_with_its_error() {
    let dir = TempDir::new("tasks");
    let store = Store::open(dir.store(), "app").unwrap();
    store.tasks_set_policy(&TaskPolicy { max_attempts: 1, ..TaskPolicy::default() }).unwrap();
    let id =
        store.task_add_grouped(&with_arg("rust_task_fails", "label", "doomed"), Some("g:doomed"), &["other"]).unwrap();
    store.tasks_run_now().unwrap();
    assert!(dispatch_until(store.event_loop(), 100, || store.tasks_count_dead().unwrap() == 1));
    let task = store.tasks_list(None, 0).unwrap().remove(0);
    assert_eq!((task.id, task.state, task.attempts), (id.clone(), TaskState::Dead, 1));
    assert_eq!(task.last_error.as_deref(), Some("server unavailable"));
    assert_eq!((task.group_start.as_deref(), task.group_members), (Some("g:doomed"), vec!["other".to_string()]));
    store.task_delete(&id).unwrap();
    assert_eq!(store.task_delete(&id).unwrap_err().status, Status::NotFound);
}

#[test]
fn bad_task_input_is_refused_and_nothing_is_stored() {
    let dir = TempDir::new("tasks");
    let store = Store::open(dir.store(), "app").unwrap();
    let work = with_arg("rust_task_upload", "file", "x");
    assert_eq!(store.task_add_grouped(&work, Some(""), &[]).unwrap_err().status, Status::InvalidArgument);
    assert_eq!(store.task_retry("not-an-id").unwrap_err().status, Status::InvalidArgument);
    let mut invalidated = work.clone();
    invalidated.invalidate(None).unwrap();
    assert_eq!(store.task_add(&invalidated).unwrap_err().status, Status::Invalidated);
    assert_eq!(store.tasks_count().unwrap(), 0);
    assert_eq!(store.tasks_set_triggers(0, Duration::from_secs(0)), Ok(()));
}

#[test]
fn a_signal_delivers_each_version_to_a_rust_consumer_until_terminated() {
    let dir = TempDir::new("signals");
    let store = Store::open(dir.store(), "app").unwrap();
    let signal = outlive::new_signal_id();
    let consumer = with_arg("rust_signal_progress", "label", "sync");
    store.signal_consume(&signal, &consumer, Delivery::UntilTerminated, Lifetime::ThisRun, Some("account-1")).unwrap();
    let mut payload = Args::new().unwrap();
    payload.set_integer("done", 1).unwrap();
    store.signal_post(&signal, Some(&payload), false).unwrap();
    assert!(dispatch_until(store.event_loop(), 100, || runs_of("progress sync").len() == 1));
    payload.set_integer("done", 3).unwrap();
    store.signal_post(&signal, Some(&payload), true).unwrap();
    assert!(dispatch_until(store.event_loop(), 100, || runs_of("progress sync").len() == 2));
    assert_eq!(runs_of("progress sync"), ["progress sync 1 v1 false", "progress sync 3 v2 true"]);
    assert_eq!(store.signal_lookup(&signal).unwrap(), None, "the terminating post removed the consumer");
}

#[test]
fn signal_consumers_are_listed_by_lookup_and_removed_by_scope() {
    let dir = TempDir::new("signals");
    let store = Store::open(dir.store(), "app").unwrap();
    let signal = outlive::new_signal_id();
    let consumer = with_arg("rust_signal_progress", "label", "scoped");
    store.signal_consume(&signal, &consumer, Delivery::Once, Lifetime::Process, Some("account-2")).unwrap();
    let state = store.signal_lookup(&signal).unwrap().unwrap();
    assert_eq!((state.version, state.consumer_count, state.terminated), (0, 1, false));
    assert_eq!(store.signal_consumers_remove_scope("account-2").unwrap(), 1);
    assert_eq!(store.signal_lookup(&signal).unwrap(), None);
    assert_eq!(store.signal_post("not-a-uuid", None, false).unwrap_err().status, Status::InvalidArgument);
}
