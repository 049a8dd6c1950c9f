//! The process-wide log handler (a test binary of its own: it is global).
mod common;
use common::{dispatch_until, TempDir};
use outlive::{Args, Handler, LogLevel, Store};
use std::sync::{Arc, Mutex};

outlive::handler! {
    fn rust_log_fails(completion: HANDLER) {
        let mut result = Args::new().unwrap();
        result.set_bool("success", false).unwrap().set_string("error", "disk on fire").unwrap();
        completion.call(Some(&result)).unwrap();
    }
}

#[test]
fn the_log_handler_hears_a_failed_attempt_and_is_freed_when_replaced() {
    let lines = Arc::new(Mutex::new(Vec::<(LogLevel, String)>::new()));
    let lines_in = lines.clone();
    outlive::set_log_handler(LogLevel::Debug, move |level, message| {
        lines_in.lock().unwrap().push((level, message.to_string()))
    })
    .unwrap();
    let dir = TempDir::new("log");
    let store = Store::open(dir.store(), "app").unwrap();
    store.task_add(&Handler::new("rust_log_fails", None, None).unwrap()).unwrap();
    store.tasks_run_now().unwrap();
    assert!(
        dispatch_until(store.event_loop(), 100, || {
            lines.lock().unwrap().iter().any(|(_, line)| line.contains("disk on fire"))
        }),
        "{:?}",
        lines.lock().unwrap()
    );
    assert_eq!(Arc::strong_count(&lines), 2);
    outlive::remove_log_handler().unwrap();
    assert_eq!(Arc::strong_count(&lines), 1, "removing the handler released its closure");
}
