//! Builds the reasons component that the plugin host embeds as its default plugin, as it is
//! released: with its name, version, description, licence and source in its metadata;
//! and the WIT package it implements, encoded on its own, beside it.

use reasons_build_wasm::{REASONS_DESCRIPTION, build_release, wit_package};
use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let released = out.join("reasons.wasm");
    build_release(
        "reasons-guest",
        "reasons.wasm",
        "reasons",
        REASONS_DESCRIPTION,
        &released,
    );
    let wit = out.join("agent-tools.wasm");
    let package = wit_package("wit", &wit);
    println!("cargo:rustc-env=REASONS_WASM={}", released.display());
    println!("cargo:rustc-env=REASONS_WIT_WASM={}", wit.display());
    println!("cargo:rustc-env=REASONS_WIT_PACKAGE={package}");
}
