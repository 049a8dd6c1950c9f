//! Store and key-value through the safe API, on a real store directory.
mod common;
use common::{dispatch_until, TempDir};
use outlive::{Change, Status, Store};
use std::sync::{Arc, Mutex};

#[test]
fn a_value_set_is_read_back_and_survives_reopening() {
    let dir = TempDir::new("kv");
    {
        let store = Store::open(dir.store(), "app").unwrap();
        store.kv_set("settings/theme", b"dark").unwrap();
        assert_eq!(store.kv_get("settings/theme").unwrap().as_deref(), Some(&b"dark"[..]));
    }
    let store = Store::open(dir.store(), "app").unwrap();
    assert_eq!(store.kv_get("settings/theme").unwrap(), Some(b"dark".to_vec()));
}

#[test]
fn a_missing_key_is_none_and_deleting_it_is_false() {
    let dir = TempDir::new("kv");
    let store = Store::open(dir.store(), "app").unwrap();
    assert_eq!(store.kv_get("missing").unwrap(), None);
    assert!(!store.kv_delete("missing").unwrap());
    store.kv_set("present", b"").unwrap();
    assert_eq!(store.kv_get("present").unwrap(), Some(vec![]));
    assert!(store.kv_delete("present").unwrap());
    assert_eq!(store.kv_get("present").unwrap(), None);
}

#[test]
fn bad_input_is_an_error_with_the_status_and_message() {
    let dir = TempDir::new("kv");
    let store = Store::open(dir.store(), "app").unwrap();
    let error = store.kv_set("", b"x").unwrap_err();
    assert_eq!(error.status, Status::InvalidArgument);
    assert!(!error.message.is_empty() && error.message != "no error", "{error}");
    assert!(error.to_string().starts_with("OUTLIVE_E_INVALID_ARGUMENT: "), "{error}");
    let error = store.kv_set("a\0b", b"x").unwrap_err();
    assert_eq!(error.status, Status::InvalidArgument);
    assert_eq!(store.kv_count("").unwrap(), 0, "a refused call stores nothing");
    let error = Store::open(dir.store(), "bad/name").err().unwrap();
    assert_eq!(error.status, Status::InvalidArgument);
}

#[test]
fn update_reads_the_current_value_and_commits_the_change() {
    let dir = TempDir::new("kv");
    let store = Store::open(dir.store(), "app").unwrap();
    for _ in 0..3 {
        store
            .kv_update("visits", |current| {
                let n: u64 = current.map_or(0, |b| std::str::from_utf8(b).unwrap().parse().unwrap());
                Change::Set((n + 1).to_string().into_bytes())
            })
            .unwrap();
    }
    assert_eq!(store.kv_get("visits").unwrap(), Some(b"3".to_vec()));
    store.kv_update("visits", |_| Change::Keep).unwrap();
    assert_eq!(store.kv_get("visits").unwrap(), Some(b"3".to_vec()));
    store.kv_update("visits", |_| Change::Delete).unwrap();
    assert_eq!(store.kv_get("visits").unwrap(), None);
}

#[test]
fn a_panic_in_an_update_reaches_the_caller_and_changes_nothing() {
    let dir = TempDir::new("kv");
    let store = Store::open(dir.store(), "app").unwrap();
    store.kv_set("k", b"before").unwrap();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        store.kv_update("k", |_| panic!("modifier failed")).ok();
    }));
    assert!(result.is_err(), "the panic is raised again after the C call");
    assert_eq!(store.kv_get("k").unwrap(), Some(b"before".to_vec()));
}

#[test]
fn keys_are_listed_in_order_and_paged() {
    let dir = TempDir::new("kv");
    let store = Store::open(dir.store(), "app").unwrap();
    for key in ["b/2", "a/1", "b/1", "b/3"] {
        store.kv_set(key, b"x").unwrap();
    }
    assert_eq!(store.kv_keys("b/", None, 0).unwrap(), ["b/1", "b/2", "b/3"]);
    assert_eq!(store.kv_keys("b/", None, 2).unwrap(), ["b/1", "b/2"]);
    assert_eq!(store.kv_keys("b/", Some("b/2"), 0).unwrap(), ["b/3"]);
    assert_eq!(store.kv_count("").unwrap(), 4);
}

#[test]
fn an_observer_sees_changes_until_its_guard_drops_and_its_closure_is_freed() {
    let dir = TempDir::new("kv");
    let store = Store::open(dir.store(), "app").unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let observation = {
        let seen = seen.clone();
        store
            .kv_observe("settings/", move |key, value| {
                seen.lock().unwrap().push((key.to_string(), value.map(|v| String::from_utf8_lossy(v).into_owned())))
            })
            .unwrap()
    };
    store.kv_set("settings/theme", b"dark").unwrap();
    store.kv_set("other", b"x").unwrap();
    assert!(dispatch_until(store.event_loop(), 50, || !seen.lock().unwrap().is_empty()));
    store.kv_delete("settings/theme").unwrap();
    assert!(dispatch_until(store.event_loop(), 50, || seen.lock().unwrap().len() >= 2));
    assert_eq!(
        *seen.lock().unwrap(),
        [("settings/theme".to_string(), Some("dark".to_string())), ("settings/theme".to_string(), None)]
    );
    assert_eq!(Arc::strong_count(&seen), 2, "the registration holds the closure");
    drop(observation);
    assert_eq!(Arc::strong_count(&seen), 1, "unobserving released the closure");
    store.kv_set("settings/theme", b"light").unwrap();
    store.event_loop().dispatch(Some(std::time::Duration::from_millis(200))).unwrap();
    assert_eq!(seen.lock().unwrap().len(), 2, "no call after the guard dropped");
}

#[test]
fn closing_the_store_releases_a_kept_observer() {
    let dir = TempDir::new("kv");
    let store = Store::open(dir.store(), "app").unwrap();
    let witness = Arc::new(());
    let held = witness.clone();
    store
        .kv_observe("", move |_, _| {
            let _ = &held;
        })
        .unwrap()
        .keep();
    assert_eq!(Arc::strong_count(&witness), 2);
    drop(store);
    assert_eq!(Arc::strong_count(&witness), 1);
}

#[test]
fn the_loop_fd_is_a_real_descriptor() {
    use std::os::fd::AsRawFd;
    let dir = TempDir::new("kv");
    let store = Store::open(dir.store(), "app").unwrap();
    assert!(store.event_loop().as_raw_fd() >= 0);
    assert!(!store.run_id().is_empty() && store.process_name() == "app");
    store.check().expect("an open handle of a live run checks OK");
    assert_eq!(outlive::library_version_number(), outlive::VERSION_NUMBER);
}

#[test]
fn a_store_on_a_loop_with_its_own_thread_calls_observers_on_that_thread() {
    use std::sync::mpsc;
    let dir = TempDir::new("kv");
    let event_loop = outlive::OwnedLoop::new().unwrap();
    let options = outlive::StoreOptions { event_loop: Some(&event_loop), ..Default::default() };
    let store = Store::open_with(dir.store(), "app", &options).unwrap();
    let (sender, receiver) = mpsc::channel();
    let observation = store
        .kv_observe("k", move |key, value| {
            let _ = sender.send((key.to_string(), value.map(<[u8]>::to_vec), std::thread::current().id()));
        })
        .unwrap();
    event_loop.run_thread().unwrap();
    assert_eq!(event_loop.dispatch(None).unwrap_err().status, Status::State, "the loop's thread dispatches it");
    store.kv_set("k", b"v").unwrap();
    let (key, value, thread) = receiver.recv_timeout(std::time::Duration::from_secs(30)).unwrap();
    assert_eq!((key.as_str(), value.as_deref()), ("k", Some(&b"v"[..])));
    assert_ne!(thread, std::thread::current().id());
    drop(observation);
    drop(store);
}
