//! Tests of this crate declare handlers with `outlive::handler!` and run as
//! executables: the descriptor symbols must be in their dynamic symbol table
//! for dlsym (-rdynamic, as `pkg-config --libs outlive` adds for C), and the
//! library is found by rpath. A program using the crate does the same in its
//! own build script (see docs/rust.md); link arguments do not propagate.
fn main() {
    let dir = std::env::var("DEP_OUTLIVE_LIB_DIR").expect("outlive-sys gives the library directory");
    // Every link step of this package (integration tests and the library's
    // unit tests; an rlib itself is not linked).
    println!("cargo:rustc-link-arg=-rdynamic");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    println!("cargo:rustc-env=OUTLIVE_LIB_DIR={dir}");
    println!("cargo:rerun-if-changed=build.rs");
}
