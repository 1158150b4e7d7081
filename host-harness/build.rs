//! Builds the reasons component that the harness embeds as its default plugin.

include!("build_wasm.rs");

fn main() {
    let wasm = build_component("reasons-guest", "reasons.wasm");
    println!("cargo:rustc-env=REASONS_WASM={}", wasm.display());
}
