//! Named queues, enqueue options and cancelling, on a real store: the tasks
//! run in this process through the store's loop.
mod common;
use common::{dispatch_until, TempDir};
use outlive::{Args, Handler, QueueKind, Status, Store, TaskOptions, TaskState};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

static RUNS: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// Completions of attempts still under way, by label.
static UNDER_WAY: Mutex<Vec<(String, Handler)>> = Mutex::new(Vec::new());

fn runs_of(prefix: &str) -> Vec<String> {
    RUNS.lock().unwrap().iter().filter(|r| r.starts_with(prefix)).cloned().collect()
}

outlive::handler! {
    fn rust_queue_job(label: ID) {
        RUNS.lock().unwrap().push(label.as_str().unwrap().to_string());
    }
}

outlive::handler! {
    fn rust_queue_long_job(label: ID, completion: HANDLER) {
        UNDER_WAY.lock().unwrap().push((label.as_str().unwrap().to_string(), completion.copy().unwrap()));
    }
}

fn job(name: &str, label: &str) -> Handler {
    let mut bound = Args::new().unwrap();
    bound.set_string("label", label).unwrap();
    Handler::new(name, None, Some(&bound)).unwrap()
}

#[test]
fn a_queue_is_declared_once_with_its_kind_and_listed() {
    let dir = TempDir::new("queues");
    let store = Store::open(dir.store(), "app").unwrap();
    store.declare_queue("emails", QueueKind::Parallel).unwrap();
    store.declare_queue("emails", QueueKind::Parallel).unwrap();
    assert_eq!(store.declare_queue("emails", QueueKind::Ordered).unwrap_err().status, Status::State);
    assert_eq!(store.declare_queue("default", QueueKind::Parallel).unwrap_err().status, Status::State);
    assert_eq!(store.declare_queue("no spaces", QueueKind::Ordered).unwrap_err().status, Status::InvalidArgument);
    assert_eq!(store.serve_queue("never-declared", 1).unwrap_err().status, Status::NotFound);
    assert_eq!(store.serve_queue("emails", 1025).unwrap_err().status, Status::InvalidArgument);
    let queues = store.queues_list(None, 0).unwrap();
    let names: Vec<_> = queues.iter().map(|q| (q.name.as_str(), q.kind)).collect();
    assert_eq!(names, [("default", QueueKind::Ordered), ("emails", QueueKind::Parallel)]);
    let work = job("rust_queue_job", "undeclared");
    let refused = store.enqueue(&work, &TaskOptions::new().queue("never-declared")).unwrap_err();
    assert_eq!(refused.status, Status::NotFound);
    assert_eq!(store.tasks_count().unwrap(), 0);
}

#[test]
fn a_served_queue_starts_higher_priorities_first() {
    let dir = TempDir::new("queues");
    let store = Store::open(dir.store(), "app").unwrap();
    store.declare_queue("reports", QueueKind::Ordered).unwrap();
    for (label, priority) in [("prio low", 1), ("prio high", 5), ("prio middle", 3)] {
        let (id, existing) = store
            .enqueue(&job("rust_queue_job", label), &TaskOptions::new().queue("reports").priority(priority))
            .unwrap();
        assert_eq!((id.len(), existing), (36, false));
    }
    let listed = store.tasks_list(None, 0).unwrap();
    assert!(listed.iter().all(|t| t.queue == "reports"), "{listed:?}");
    assert_eq!(store.queues_list(Some("default"), 0).unwrap()[0].pending, 3);
    store.serve_queue("reports", 1).unwrap();
    assert!(dispatch_until(store.event_loop(), 100, || runs_of("prio").len() == 3));
    assert_eq!(runs_of("prio"), ["prio high", "prio middle", "prio low"]);
}

#[test]
fn a_unique_key_held_by_a_pending_task_returns_that_task_and_adds_nothing() {
    let dir = TempDir::new("queues");
    let store = Store::open(dir.store(), "app").unwrap();
    let options = TaskOptions::new().unique_key("sync:account-1");
    let (first, existing) = store.enqueue(&job("rust_queue_job", "unique a"), &options).unwrap();
    assert!(!existing);
    let (second, existing) = store.enqueue(&job("rust_queue_job", "unique b"), &options).unwrap();
    assert_eq!((second, existing), (first.clone(), true));
    let (other, existing) =
        store.enqueue(&job("rust_queue_job", "unique c"), &TaskOptions::new().unique_key("sync:account-2")).unwrap();
    assert!(!existing && other != first);
    assert_eq!(store.tasks_count().unwrap(), 2);
    let listed = store.tasks_list(None, 0).unwrap();
    assert_eq!(listed[0].unique_key.as_deref(), Some("sync:account-1"));
    // A cancelled task holds its key no more.
    assert!(!store.cancel_task(&first).unwrap());
    let (again, existing) = store.enqueue(&job("rust_queue_job", "unique d"), &options).unwrap();
    assert!(!existing && again != first);
}

#[test]
fn a_task_due_later_waits_and_a_pending_one_cancelled_never_runs() {
    let dir = TempDir::new("queues");
    let store = Store::open(dir.store(), "app").unwrap();
    store.declare_queue("later", QueueKind::Parallel).unwrap();
    let in_an_hour = TaskOptions::new().queue("later").delay(Duration::from_secs(3600));
    let (waiting, _) = store.enqueue(&job("rust_queue_job", "due later"), &in_an_hour).unwrap();
    let past = SystemTime::now() - Duration::from_secs(60);
    store.enqueue(&job("rust_queue_job", "due past"), &TaskOptions::new().queue("later").due_at(past)).unwrap();
    store.serve_queue("later", 4).unwrap();
    assert!(dispatch_until(store.event_loop(), 100, || runs_of("due past").len() == 1));
    store.event_loop().dispatch(Some(Duration::from_millis(100))).unwrap();
    assert!(runs_of("due later").is_empty());
    let task = store.tasks_list(None, 0).unwrap().remove(0);
    assert_eq!((task.id.as_str(), task.state), (waiting.as_str(), TaskState::Pending));
    assert_eq!(store.cancel_task(&waiting), Ok(false), "pending: removed at once");
    assert_eq!(store.tasks_count().unwrap(), 0);
    assert_eq!(store.cancel_task(&waiting).unwrap_err().status, Status::NotFound);
    let both = TaskOptions::new().due_at(past).delay(Duration::from_secs(1));
    assert_eq!(store.enqueue(&job("rust_queue_job", "due both"), &both).unwrap_err().status, Status::InvalidArgument);
}

#[test]
fn a_running_task_cancelled_is_told_so_and_removed_however_it_completes() {
    let dir = TempDir::new("queues");
    let store = Store::open(dir.store(), "app").unwrap();
    store.declare_queue("long", QueueKind::Ordered).unwrap();
    let (id, _) = store.enqueue(&job("rust_queue_long_job", "cancel me"), &TaskOptions::new().queue("long")).unwrap();
    assert_eq!(store.task_is_cancelled(&id), Ok(false));
    store.serve_queue("long", 1).unwrap();
    let under_way = || UNDER_WAY.lock().unwrap().iter().any(|(label, _)| label == "cancel me");
    assert!(dispatch_until(store.event_loop(), 100, under_way));
    assert_eq!(store.cancel_task(&id), Ok(true), "running: marked");
    assert_eq!(store.task_is_cancelled(&id), Ok(true));
    assert!(store.tasks_list(None, 0).unwrap()[0].cancelled);
    assert_eq!(store.cancel_task(&id).unwrap_err().status, Status::State);
    let completion = {
        let mut under_way = UNDER_WAY.lock().unwrap();
        let index = under_way.iter().position(|(label, _)| label == "cancel me").unwrap();
        under_way.remove(index).1
    };
    let mut failure = Args::new().unwrap();
    failure.set_bool("success", false).unwrap();
    completion.call(Some(&failure)).unwrap();
    assert!(dispatch_until(store.event_loop(), 100, || store.tasks_count().unwrap() == 0));
    assert_eq!(store.tasks_count_dead().unwrap(), 0, "cancelled, not retried or dead");
    assert_eq!(store.task_is_cancelled(&id).unwrap_err().status, Status::NotFound);
}
