//! The table the benchmark run ends with: each figure criterion measured (its median),
//! the ratios the targets are stated in, and whether each target is met. Ratios are
//! taken within one run, so the machine's drift cancels out.

use std::path::PathBuf;

/// Where criterion keeps its results: `$CRITERION_HOME`, else the target directory's.
fn criterion_home() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return home.into();
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("criterion")
}

/// The median time of `group/function/parameter` in nanoseconds, if it was measured.
fn median(group: &str, function: &str, parameter: &str) -> Option<f64> {
    let path = criterion_home()
        .join(group)
        .join(function)
        .join(parameter)
        .join("new/estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let estimates: serde_json::Value = serde_json::from_str(&text).ok()?;
    estimates["median"]["point_estimate"].as_f64()
}

/// The medians of `functions` for one `parameter` of `group`, if each was measured.
fn medians<const N: usize>(group: &str, functions: [&str; N], parameter: &str) -> Option<[f64; N]> {
    let mut found = [0.0; N];
    for (slot, function) in found.iter_mut().zip(functions) {
        *slot = median(group, function, parameter)?;
    }
    Some(found)
}

fn time(nanoseconds: f64) -> String {
    match nanoseconds {
        n if n < 1e3 => format!("{n:.0} ns"),
        n if n < 1e6 => format!("{:.2} µs", n / 1e3),
        n if n < 1e9 => format!("{:.2} ms", n / 1e6),
        n => format!("{:.2} s", n / 1e9),
    }
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "MISSED" }
}

/// Prints the table, as Markdown, for `BENCHMARKS.md`.
pub fn print(wasm_bytes: usize) {
    println!(
        "\n| measure | component | native | floor | component / native | native / floor | target |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (group, sizes, unit, floor_is) in [
        (
            "listing",
            ["10", "100", "1000"],
            "declarations",
            "parse + serialise",
        ),
        (
            "forwarding",
            ["1", "100", "1000"],
            "calls, mixed",
            "strip by Value, or copy",
        ),
    ] {
        for size in sizes {
            if let Some([component, native, floor]) =
                medians(group, ["component", "native", "floor"], size)
            {
                let ratio = component / native;
                println!(
                    "| {group}, {size} {unit} | {} | {} | {} ({floor_is}) | {ratio:.2}x | {:.2}x | ≤ 1.5x: {} |",
                    time(component),
                    time(native),
                    time(floor),
                    native / floor,
                    verdict(ratio <= 1.5)
                );
            }
        }
    }
    for size in ["1", "100", "1000"] {
        if let Some([component, boundary, native]) =
            medians("forwarding", ["component", "boundary", "native"], size)
        {
            println!(
                "| forwarding, {size} calls: the boundary alone (a component that strips nothing) | {} | | | {:.2}x | | the transform in wasm: {} ({:.2}x native) |",
                time(boundary),
                boundary / native,
                time(component - boundary),
                (component - boundary) / native,
            );
        }
    }
    for size in ["1", "100", "1000"] {
        if let Some([component, gate]) = medians("forwarding", ["component", "gate"], size) {
            println!(
                "| forwarding, {size} calls: the host's gate alone (R16) | {} | | | {:.1}% of the component's forwarding | | < 25%: {} |",
                time(gate),
                100.0 * gate / component,
                verdict(gate / component < 0.25)
            );
        }
    }
    for size in ["100x1KiB", "1x64KiB"] {
        if let Some([component, native, copy]) =
            medians("untouched", ["component", "native", "floor"], size)
        {
            println!(
                "| untouched calls, {size} | {} | {} | {} (a copy) | {:.2}x | {:.2}x | native ≤ 2x a copy: {} |",
                time(component),
                time(native),
                time(copy),
                component / native,
                native / copy,
                verdict(native / copy <= 2.0)
            );
        }
    }
    if let Some([component, native]) =
        medians("boundary", ["component", "native"], "one-call batch")
    {
        println!(
            "| one-call batch (fixed overhead) | {} | {} | | {:.2}x | | component < 5 µs: {} |",
            time(component),
            time(native),
            component / native,
            verdict(component < 5_000.0)
        );
    }
    if let Some(component) = median("boundary", "component", "new session") {
        println!(
            "| new session | {} | | | | | < 50 µs: {} |",
            time(component),
            verdict(component < 50_000.0)
        );
    }
    if let (Some(cold), Some(warm)) = (
        median("artifact", "compile", "cold"),
        median("artifact", "compile", "warm"),
    ) {
        println!(
            "| compile reasons.wasm: cold / from the cache | {} / {} | | | {:.0}x faster warm | | |",
            time(cold),
            time(warm),
            cold / warm
        );
    }
    println!(
        "| reasons.wasm | {wasm_bytes} bytes | | | | | ≤ 128 KB (then 64 KB): {} |",
        verdict(wasm_bytes <= 128_000)
    );
}
