//! Interaction and operation queues on a real loop, with Rust closures.
mod common;
use common::dispatch_until;
use outlive::{Interactions, Operation, OperationState, Operations, OwnedLoop, Status};
use std::sync::{Arc, Mutex};

#[test]
fn interactions_run_one_at_a_time_in_order_and_finish_from_another_thread() {
    let event_loop = OwnedLoop::new().unwrap();
    let queue = Interactions::new(&event_loop).unwrap();
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let (first_log, second_log) = (log.clone(), log.clone());
    let pending = Arc::new(Mutex::new(None));
    let keep = pending.clone();
    queue
        .add(move |interaction| {
            first_log.lock().unwrap().push("permission prompt".into());
            *keep.lock().unwrap() = Some(interaction); // finished later, elsewhere
        })
        .unwrap();
    queue
        .add(move |interaction| {
            second_log.lock().unwrap().push("what's new".into());
            interaction.finish().unwrap();
            assert_eq!(interaction.finish().unwrap_err().status, Status::State);
        })
        .unwrap();
    assert!(dispatch_until(&event_loop, 50, || log.lock().unwrap().len() == 1));
    event_loop.dispatch(Some(std::time::Duration::from_millis(50))).unwrap();
    assert_eq!(*log.lock().unwrap(), ["permission prompt"], "the second waits for the first");
    assert_eq!(queue.unfinished(), 2);
    let interaction = pending.lock().unwrap().take().unwrap();
    std::thread::spawn(move || interaction.finish().unwrap()).join().unwrap();
    assert!(dispatch_until(&event_loop, 50, || queue.unfinished() == 0));
    assert_eq!(*log.lock().unwrap(), ["permission prompt", "what's new"]);
}

#[test]
fn a_dropped_queue_frees_the_closures_of_interactions_that_never_ran() {
    let event_loop = OwnedLoop::new().unwrap();
    let queue = Interactions::new(&event_loop).unwrap();
    let witness = Arc::new(());
    let held = witness.clone();
    queue.suspend().unwrap();
    queue.add(move |_| drop(held)).unwrap();
    assert_eq!(Arc::strong_count(&witness), 2);
    drop(queue);
    assert_eq!(Arc::strong_count(&witness), 1);
}

#[test]
fn operations_start_after_their_dependencies_and_complete_on_the_loop() {
    let event_loop = OwnedLoop::new().unwrap();
    let queue = Operations::new(&event_loop, 0).unwrap();
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let step = |name: &'static str| {
        let started = log.clone();
        let operation = Operation::new(move |me| {
            started.lock().unwrap().push(format!("start {name}"));
            // Finished from a worker thread, as an asynchronous operation would be.
            std::thread::spawn(move || me.finish().unwrap());
        })
        .unwrap();
        let completed = log.clone();
        operation
            .on_completion(move |cancelled| completed.lock().unwrap().push(format!("done {name} {cancelled}")))
            .unwrap();
        operation
    };
    let (login, home, ads) = (step("login"), step("home"), step("ads"));
    home.add_dependency(&login).unwrap();
    assert_eq!(login.add_dependency(&home).unwrap_err().status, Status::InvalidArgument, "a cycle");
    let drained = Arc::new(Mutex::new(0));
    let drained_in = drained.clone();
    queue.on_drained(move || *drained_in.lock().unwrap() += 1).unwrap();
    ads.cancel().unwrap();
    for operation in [&home, &ads, &login] {
        queue.add(operation).unwrap();
    }
    assert_eq!(queue.add(&login).unwrap_err().status, Status::State);
    assert!(dispatch_until(&event_loop, 100, || *drained.lock().unwrap() == 1));
    let log = log.lock().unwrap().clone();
    assert!(!log.contains(&"start ads".to_string()) && log.contains(&"done ads true".to_string()), "{log:?}");
    let position = |entry: &str| log.iter().position(|l| l == entry).unwrap();
    assert!(position("done login false") < position("start home"), "{log:?}");
    assert_eq!(home.state(), OperationState::Finished);
    assert!(ads.is_cancelled() && !home.is_cancelled());
}

static SHOWN: Mutex<Vec<String>> = Mutex::new(Vec::new());
static UNFINISHED: Mutex<Vec<outlive::Handler>> = Mutex::new(Vec::new());

outlive::handler! {
    fn rust_show_notice(text: ID, interaction_id: ID, finish: HANDLER) {
        SHOWN.lock().unwrap().push(format!("{} ({} chars of id)", text.as_str().unwrap(), interaction_id.bytes().len()));
        // Kept to finish later, as a dialog would when the user closes it.
        UNFINISHED.lock().unwrap().push(finish.copy().unwrap());
    }
}

#[test]
fn durable_interactions_are_stored_in_order_and_presented_one_at_a_time() {
    let dir = common::TempDir::new("durable");
    let store = outlive::Store::open(dir.store(), "app").unwrap();
    let notice = |text: &str| {
        let mut bound = outlive::Args::new().unwrap();
        bound.set_string("text", text).unwrap();
        outlive::Handler::new("rust_show_notice", None, Some(&bound)).unwrap()
    };
    {
        let queue = store.durable_interactions("notices", true).unwrap();
        let welcome = queue.add(&notice("welcome")).unwrap();
        queue.add(&notice("sign in")).unwrap();
        let listed = queue.list(None, 0).unwrap();
        assert_eq!(listed.iter().map(|i| i.handler_name.as_str()).collect::<Vec<_>>(), ["rust_show_notice"; 2]);
        assert_eq!((listed[0].id.as_str(), listed[0].presentations), (welcome.as_str(), 0));
        assert_eq!(queue.remove("not-an-id").unwrap_err().status, Status::InvalidArgument);
    }
    let queue = store.durable_interactions("notices", false).unwrap();
    assert!(dispatch_until(store.event_loop(), 100, || SHOWN.lock().unwrap().len() == 1));
    store.event_loop().dispatch(Some(std::time::Duration::from_millis(50))).unwrap();
    assert_eq!(*SHOWN.lock().unwrap(), ["welcome (36 chars of id)"], "one at a time");
    let finish = UNFINISHED.lock().unwrap().pop().unwrap();
    finish.call(None).unwrap();
    assert_eq!(finish.call(None).unwrap_err().status, Status::State, "finished once");
    assert!(dispatch_until(store.event_loop(), 100, || SHOWN.lock().unwrap().len() == 2));
    UNFINISHED.lock().unwrap().pop().unwrap().call(None).unwrap();
    assert!(dispatch_until(store.event_loop(), 100, || queue.count().unwrap() == 0));
    assert_eq!(SHOWN.lock().unwrap()[1], "sign in (36 chars of id)");
}
