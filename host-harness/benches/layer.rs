//! What the reasons layer costs, natively and in its sandbox, measured in one run so the
//! ratios hold on a noisy machine: `cargo bench -p reasons-harness`.
//!
//! Each row times one operation through the transform compiled natively (the baseline),
//! through the component under wasmtime, and, when `REASONS_BENCH_ALT` names another
//! build of the component, through that one too.

use reasons::{Arguments, Reasons, ToolCall, ToolResult};
use reasons_harness::provider::Catalogue;
use reasons_harness::{Json, Plugin, Provider, WasmLayer};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The median time of one `work`, over batches that each take about 20 ms.
fn time(mut work: impl FnMut()) -> Duration {
    let start = Instant::now();
    let mut per_batch = 0u32;
    while start.elapsed() < Duration::from_millis(20) {
        work();
        per_batch += 1;
    }
    let mut samples: Vec<Duration> = (0..15)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..per_batch {
                work();
            }
            start.elapsed() / per_batch
        })
        .collect();
    samples.sort();
    samples[samples.len() / 2]
}

fn catalogue(tools: usize) -> Vec<Json> {
    (0..tools)
        .map(|n| {
            format!(
                r#"{{"name":"tool_{n}","description":"Tool number {n}, which does a thing.","inputSchema":{{"type":"object","properties":{{"path":{{"type":"string","description":"Where."}},"count":{{"type":"integer","minimum":0}}}},"required":["path"]}}}}"#
            )
        })
        .collect()
}

/// Arguments of about `bytes` bytes, with or without a reason.
fn arguments(bytes: usize, reason: bool) -> String {
    let items: Vec<String> = (0..bytes / 40)
        .map(|n| format!(r#"{{"id":{n},"v":1.10,"s":"text {n}"}}"#))
        .collect();
    let reason = if reason {
        r#","reason":"Because the user asked for it.""#
    } else {
        ""
    };
    format!(
        r#"{{"path":"src/main.rs","items":[{}]{reason}}}"#,
        items.join(",")
    )
}

struct Builds {
    native: Reasons,
    components: Vec<(String, WasmLayer)>,
}

impl Builds {
    fn new(tools: &[Json]) -> Builds {
        let mut native = Reasons::new();
        native.list(tools.to_vec());
        let mut plugins = vec![("component".to_string(), Plugin::reasons().unwrap())];
        if let Ok(path) = std::env::var("REASONS_BENCH_ALT") {
            let bytes = std::fs::read(&path).expect("REASONS_BENCH_ALT names a readable file");
            plugins.push((format!("alt ({path})"), Plugin::new("alt", &bytes).unwrap()));
        }
        let components = plugins
            .into_iter()
            .map(|(label, plugin)| {
                let mut layer = plugin.layer(Box::new(Catalogue::new(tools.to_vec(), "null")));
                layer.tools_for_llm().unwrap();
                (label, layer)
            })
            .collect();
        Builds { native, components }
    }

    /// A row for one batch of calls: the native layer answers them as `Catalogue` does.
    fn call_row(&mut self, label: &str, calls: impl Fn() -> Vec<ToolCall>) {
        self.row(
            label,
            |native| {
                black_box(native.execute(calls(), |calls| {
                    Ok(calls
                        .iter()
                        .map(|call| ToolResult::ok(&call.id, "null"))
                        .collect())
                }));
            },
            |layer| {
                black_box(layer.execute_tool_calls(calls()).unwrap());
            },
        );
    }

    fn row(
        &mut self,
        label: &str,
        mut native: impl FnMut(&mut Reasons),
        mut component: impl FnMut(&mut WasmLayer),
    ) {
        let baseline = time(|| native(&mut self.native));
        print!("{label:<32} native {:>10.1?}", baseline);
        for (name, layer) in &mut self.components {
            let took = time(|| component(layer));
            print!(
                "   {name} {took:>10.1?} ({:.1}x)",
                took.as_secs_f64() / baseline.as_secs_f64()
            );
        }
        println!();
    }
}

fn call(tool: &str, arguments: &str) -> Vec<ToolCall> {
    vec![ToolCall {
        id: "1".into(),
        name: tool.into(),
        arguments: Arguments::Text(arguments.into()),
    }]
}

fn main() {
    // `cargo test --benches` runs this with `--bench` absent: do nothing then.
    if !std::env::args().any(|arg| arg == "--bench") {
        return;
    }
    let tools = catalogue(50);
    let mut builds = Builds::new(&tools);
    println!("one call through the layer (ratios against the native build, same run)");
    for bytes in [100, 10_000, 1_000_000] {
        for (kind, reason) in [("stripped", true), ("no reason", false)] {
            let text = arguments(bytes, reason);
            builds.call_row(&format!("{kind}, {} B of arguments", text.len()), || {
                call("tool_0", &text)
            });
        }
    }
    let text = arguments(10_000, true);
    builds.call_row("untracked tool, 10 kB", || call("elsewhere", &text));
    println!("\nlisting a catalogue");
    for count in [10, 100, 1000] {
        let tools = catalogue(count);
        let mut builds = Builds::new(&tools);
        builds.row(
            &format!("{count} MCP tools"),
            |native| {
                black_box(native.list(tools.clone()));
            },
            |layer| {
                black_box(layer.tools_for_llm().unwrap());
            },
        );
    }
}
