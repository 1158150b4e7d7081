//! Builds the wasi:http gateway component as it is released, with its name, version,
//! description, licence and source in its metadata, for `reasons component` to write.

use reasons_build_wasm::{GATEWAY_DESCRIPTION, build_release};
use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let released = out.join("reasons-gateway.wasm");
    let (package, artifact) = ("reasons-gateway", "reasons_gateway.wasm");
    build_release(
        package,
        artifact,
        "reasons-gateway",
        GATEWAY_DESCRIPTION,
        &released,
    );
    println!(
        "cargo:rustc-env=REASONS_GATEWAY_WASM={}",
        released.display()
    );
}
