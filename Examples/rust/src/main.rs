//! Outlive from Rust with the `outlive` crate: a store, an atomic update, an
//! observer woken through the loop, a handler declared in Rust, serialized and
//! called back from its bytes, and a task that runs it.
use outlive::{Args, Change, Handler, Store};
use std::time::Duration;

outlive::handler! {
    /// The handler "rust_greet": ID name, INTEGER times.
    fn rust_greet(name: ID, times: INTEGER) {
        for _ in 0..times {
            println!("hello, {}, from a Rust handler", name.as_str().unwrap_or("?"));
        }
    }
}

fn main() -> outlive::Result<()> {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "/tmp/outlive-rust-example".into());
    println!("liboutlive {}", outlive::version());
    let store = Store::open(&dir, "rust")?;

    // Observe, then update atomically across processes.
    let observation = store.kv_observe("visits", |key, value| {
        let value = value.map_or("(deleted)".into(), |v| String::from_utf8_lossy(v).into_owned());
        println!("observer: {key} = {value}");
    })?;
    store.kv_update("visits", |current| {
        let old: i64 = current.and_then(|b| std::str::from_utf8(b).ok()?.parse().ok()).unwrap_or(0);
        Change::Set((old + 1).to_string().into_bytes())
    })?;
    let visits = store.kv_get("visits")?.unwrap_or_default();
    println!("visits: {}", String::from_utf8_lossy(&visits));
    store.event_loop().dispatch(Some(Duration::from_secs(1)))?;
    drop(observation);

    // A handler value: stored as bytes, called later (or in another process).
    let mut bound = Args::new()?;
    bound.set_string("name", "dana")?;
    let handler = Handler::new("rust_greet", None, Some(&bound))?;
    store.kv_set("pending-greeting", &handler.serialize()?)?;
    let restored = Handler::deserialize(&store.kv_get("pending-greeting")?.unwrap_or_default())?;
    let mut call_args = Args::new()?;
    call_args.set_integer("times", 2)?;
    restored.call(Some(&call_args))?;

    // The same handler as a durable task: run by whichever process resolves it.
    let mut once = Args::new()?;
    once.set_integer("times", 1)?;
    let mut task = restored.clone();
    task.bind(&once)?;
    store.task_add(&task)?;
    store.tasks_run_now()?;
    while store.tasks_count()? > 0 {
        store.event_loop().dispatch(Some(Duration::from_millis(100)))?;
    }
    println!("tasks pending: {}", store.tasks_count()?);
    Ok(())
}
