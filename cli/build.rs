//! Builds the wasi:http gateway component as it is released, with its name, version,
//! description, licence and source in its metadata, for `reasons component` to write.

use reasons_build_wasm::{About, GATEWAY_DESCRIPTION, build_component, with_metadata};
use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let built = build_component("reasons-gateway", "reasons_gateway.wasm");
    let released = out.join("reasons-gateway.wasm");
    let version = std::env::var("CARGO_PKG_VERSION").expect("cargo sets the version");
    let licenses = std::env::var("CARGO_PKG_LICENSE").expect("the workspace names its licence");
    let source = std::env::var("CARGO_PKG_REPOSITORY").expect("the workspace names its source");
    let about = About {
        name: "reasons-gateway",
        version: &version,
        description: GATEWAY_DESCRIPTION,
        licenses: &licenses,
        source: &source,
    };
    with_metadata(&built, &about, &released);
    println!(
        "cargo:rustc-env=REASONS_GATEWAY_WASM={}",
        released.display()
    );
}
