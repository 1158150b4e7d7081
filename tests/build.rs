//! Builds the test fixtures' components.

use reasons_build_wasm::build_component;

fn main() {
    let wasm = build_component("reasons-unruly", "reasons_unruly.wasm");
    println!("cargo:rustc-env=UNRULY_WASM={}", wasm.display());
    let wasm = build_component("reasons-needs-wasi", "reasons_needs_wasi.wasm");
    println!("cargo:rustc-env=NEEDS_WASI_WASM={}", wasm.display());
    let wasm = build_component("reasons-registry", "reasons_registry.wasm");
    println!("cargo:rustc-env=REGISTRY_WASM={}", wasm.display());
    let wasm = build_component("reasons-liar", "reasons_liar.wasm");
    println!("cargo:rustc-env=LIAR_WASM={}", wasm.display());
}
