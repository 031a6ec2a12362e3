//! Link libtorch so that the `zero` binary runs with no environment variables set.
//!
//! torch-sys links libtorch, but rustc passes `--as-needed`, which drops `libtorch_cuda` (nothing
//! references its symbols directly; it registers the CUDA backend from a static initialiser), and
//! the binary gets no rpath. We add both here, from the same `LIBTORCH` that torch-sys uses
//! (`scripts/libtorch.sh` sets it).
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=LIBTORCH");
    println!("cargo:rerun-if-changed=build.rs");
    let Some(root) = std::env::var_os("LIBTORCH") else {
        println!(
            "cargo:warning=LIBTORCH is not set: run ./zero or ./run-tests (or `source scripts/libtorch.sh`) \
             so the binary gets an rpath to libtorch"
        );
        return;
    };
    let lib = PathBuf::from(root).join("lib");
    println!("cargo:rustc-link-search=native={}", lib.display());
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    println!("cargo:rustc-link-arg=-Wl,--no-as-needed");
    println!("cargo:rustc-link-arg=-ltorch");
    if lib.join("libtorch_cuda.so").exists() {
        println!("cargo:rustc-link-arg=-ltorch_cuda");
    }
    println!("cargo:rustc-link-arg=-Wl,--as-needed");
}
