//! Shared by the integration tests: real store directories in a temporary
//! directory (removed when the value drops), no mocks.
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(label: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "outlive-rust-{label}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn store(&self) -> PathBuf {
        self.0.join("store")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Dispatches the loop until `done` holds; gives up (returns false) after
/// `rounds` dispatches of at most 100 ms each that did not make it true.
pub fn dispatch_until(event_loop: &outlive::Loop, rounds: usize, mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..rounds {
        if done() {
            return true;
        }
        event_loop.dispatch(Some(Duration::from_millis(100))).unwrap();
    }
    done()
}

/// The project's root (bindings/rust/outlive is three levels below).
pub fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..").canonicalize().unwrap()
}

pub fn library_dir() -> PathBuf {
    PathBuf::from(env!("OUTLIVE_LIB_DIR"))
}
