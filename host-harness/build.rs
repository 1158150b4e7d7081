//! Builds the reasons component that the harness embeds as its default plugin.

fn main() {
    let wasm = reasons_build_wasm::build_component("reasons-guest", "reasons.wasm");
    println!("cargo:rustc-env=REASONS_WASM={}", wasm.display());
    println!("cargo:rustc-env=REASONS_WIT_PACKAGE={}", wit_package());
}

/// The WIT package the component is built against, as `wit/tools.wit` declares it, for
/// `reasons --version`.
fn wit_package() -> String {
    let wit = std::fs::read_to_string("../wit/tools.wit").expect("wit/tools.wit is readable");
    wit.lines()
        .find_map(|line| line.trim().strip_prefix("package "))
        .and_then(|package| package.strip_suffix(';'))
        .expect("wit/tools.wit declares its package")
        .to_string()
}
