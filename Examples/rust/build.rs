// A program that declares handlers with outlive::handler! exports its symbols
// (-rdynamic), as a C program linked with `pkg-config --libs outlive` does, so
// that the library finds the descriptors with dlsym; and it finds liboutlive
// (OUTLIVE_LIB_DIR, the project's build/ by default) by rpath.
fn main() {
    let dir = std::env::var("OUTLIVE_LIB_DIR")
        .unwrap_or_else(|_| format!("{}/../../build", std::env::var("CARGO_MANIFEST_DIR").unwrap()));
    println!("cargo:rustc-link-arg-bins=-rdynamic");
    println!("cargo:rustc-link-arg-bins=-Wl,-rpath,{dir}");
    println!("cargo:rerun-if-env-changed=OUTLIVE_LIB_DIR");
}
