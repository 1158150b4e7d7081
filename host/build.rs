//! Builds the reasons component that the plugin host embeds as its default plugin, as it is
//! released: with its name, version, description, licence and source in its metadata;
//! and the WIT package it implements, encoded on its own, beside it.

use reasons_build_wasm::{About, REASONS_DESCRIPTION, build_component, wit_package, with_metadata};
use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let built = build_component("reasons-guest", "reasons.wasm");
    let released = out.join("reasons.wasm");
    let version = std::env::var("CARGO_PKG_VERSION").expect("cargo sets the version");
    let licenses = std::env::var("CARGO_PKG_LICENSE").expect("the workspace names its licence");
    let source = std::env::var("CARGO_PKG_REPOSITORY").expect("the workspace names its source");
    let about = About {
        name: "reasons",
        version: &version,
        description: REASONS_DESCRIPTION,
        licenses: &licenses,
        source: &source,
    };
    with_metadata(&built, &about, &released);
    let wit = out.join("agent-tools.wasm");
    let package = wit_package("wit", &wit);
    println!("cargo:rustc-env=REASONS_WASM={}", released.display());
    println!("cargo:rustc-env=REASONS_WIT_WASM={}", wit.display());
    println!("cargo:rustc-env=REASONS_WIT_PACKAGE={package}");
}
