//! Handlers a process in another language loads from this library.
use std::io::Write;

outlive::handler! {
    /// Appends "rust library ran WORD (attempt N)" to the file at `path`.
    pub fn rust_library_record(path: ID, word: ID, attempt: INTEGER) {
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path.as_str().unwrap()).unwrap();
        writeln!(file, "rust library ran {} (attempt {attempt})", word.as_str().unwrap()).unwrap();
    }
}
