//! Links liboutlive.so from OUTLIVE_LIB_DIR (default: the project's build/,
//! two levels above this workspace) and records the directory as an rpath of
//! this package's tests, so `cargo test` runs against the library just built
//! without LD_LIBRARY_PATH. Dependent packages get the directory as
//! DEP_OUTLIVE_LIB_DIR (the `links` key) for their own rpath.
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let dir = match std::env::var("OUTLIVE_LIB_DIR") {
        Ok(dir) => PathBuf::from(dir),
        Err(_) => manifest.join("../../../build"),
    };
    let dir = dir.canonicalize().unwrap_or(dir);
    if !dir.join("liboutlive.so").exists() {
        // Linking will fail; say why first.
        println!("cargo:warning=no liboutlive.so in {} (run `make lib`, or set OUTLIVE_LIB_DIR)", dir.display());
    }
    let include = manifest.join("../../../include");
    let include = include.canonicalize().unwrap_or(include);
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=dylib=outlive");
    println!("cargo:rustc-link-arg-tests=-Wl,-rpath,{}", dir.display());
    // Read by dependents' build scripts as DEP_OUTLIVE_LIB_DIR / DEP_OUTLIVE_INCLUDE.
    println!("cargo:lib_dir={}", dir.display());
    println!("cargo:include={}", include.display());
    // The header test compiles a C program against the header.
    println!("cargo:rustc-env=OUTLIVE_INCLUDE_DIR={}", include.display());
    println!("cargo:rerun-if-env-changed=OUTLIVE_LIB_DIR");
    println!("cargo:rerun-if-changed=build.rs");
}
