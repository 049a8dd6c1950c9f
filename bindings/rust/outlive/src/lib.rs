//! The safe Rust API of liboutlive (under construction in this commit).
