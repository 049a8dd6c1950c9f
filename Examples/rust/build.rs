// Links liboutlive from OUTLIVE_LIB_DIR (the project's build/ by default).
fn main() {
    let dir = std::env::var("OUTLIVE_LIB_DIR").unwrap_or_else(|_| {
        format!("{}/../../build", std::env::var("CARGO_MANIFEST_DIR").unwrap())
    });
    println!("cargo:rustc-link-search=native={dir}");
    println!("cargo:rustc-link-lib=dylib=outlive");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    println!("cargo:rerun-if-env-changed=OUTLIVE_LIB_DIR");
}
