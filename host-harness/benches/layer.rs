//! What the reasons layer costs, against the floor, in one run:
//! `cargo bench -p reasons-host --bench layer`. Every group times the component under
//! wasmtime, the same transform compiled natively, and the floor: what any JSON-reading
//! layer must at least do with the same bytes. The ratios are printed at the end (and are
//! what `BENCHMARKS.md` reports), since absolute times drift on a shared machine.

mod support;

use criterion::{BatchSize, Bencher, BenchmarkId, Criterion, Throughput};
use reasons_host::plugin::integrity::{Added, Given};
use reasons_host::plugin::{Cache, REASONS_WASM};
use reasons_host::provider::FixedTools;
use reasons_host::{Json, Plugin, Provider, WasmLayer};
use reasons_transform::{ToolCall, ToolResult, Transform};
use std::hint::black_box;
use std::sync::Arc;
use support::workload::{self, Kind};

/// Times `work` on a fresh copy of `calls` each iteration; the copy is not timed.
fn per_batch<R>(b: &mut Bencher, calls: &[ToolCall], mut work: impl FnMut(Vec<ToolCall>) -> R) {
    b.iter_batched(
        || calls.to_vec(),
        |calls| black_box(work(calls)),
        BatchSize::SmallInput,
    )
}

/// The component over a provider listing `catalogue`, listed once.
fn component(catalogue: &[Json]) -> WasmLayer {
    let mut layer = Plugin::reasons()
        .unwrap()
        .layer(Box::new(FixedTools::new(catalogue.to_vec(), "null")));
    layer.tools_for_llm().unwrap();
    layer
}

/// The native transform, listed once.
fn native(catalogue: &[Json]) -> Transform {
    let mut reasons = Transform::new();
    reasons.list(catalogue.to_vec());
    reasons
}

/// What the provider below answers, natively: what `FixedTools` answers.
fn answered(calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, reasons_transform::ProviderError> {
    Ok(calls
        .iter()
        .map(|call| ToolResult::ok(&call.id, "null"))
        .collect())
}

/// The floor of a listing: parse each declaration and write it out again.
fn parse_and_serialise(catalogue: &[Json]) -> Vec<Json> {
    catalogue
        .iter()
        .map(|text| {
            let value: serde_json::Value = serde_json::from_str(text).unwrap();
            serde_json::to_string(&value).unwrap()
        })
        .collect()
}

/// The floor of a batch: a call to strip is parsed, loses `reason` and is written out
/// again; any other call is copied.
fn strip_or_copy(batch: &[(ToolCall, Kind)]) -> Vec<String> {
    batch
        .iter()
        .map(|(call, kind)| match kind {
            Kind::StrippedText | Kind::StrippedObject => {
                let mut value: serde_json::Value =
                    serde_json::from_str(call.arguments.text()).unwrap();
                value.as_object_mut().unwrap().remove("reason");
                serde_json::to_string(&value).unwrap()
            }
            _ => call.arguments.text().to_owned(),
        })
        .collect()
}

fn listing(c: &mut Criterion) {
    let mut group = c.benchmark_group("listing");
    for size in [10, 100, 1000] {
        let catalogue = workload::catalogue(size);
        let bytes: usize = catalogue.iter().map(String::len).sum();
        group.throughput(Throughput::Bytes(bytes as u64));
        let mut layer = component(&catalogue);
        group.bench_function(BenchmarkId::new("component", size), |b| {
            b.iter(|| black_box(layer.tools_for_llm().unwrap()))
        });
        let mut reasons = native(&catalogue);
        group.bench_function(BenchmarkId::new("native", size), |b| {
            b.iter(|| black_box(reasons.list(catalogue.clone())))
        });
        group.bench_function(BenchmarkId::new("floor", size), |b| {
            b.iter(|| black_box(parse_and_serialise(&catalogue)))
        });
    }
    group.finish();
}

fn forwarding(c: &mut Criterion) {
    let catalogue = workload::catalogue(1000);
    let mut layer = component(&catalogue);
    // The same component before its first listing strips nothing and reads nothing: it
    // only carries each batch down and its results up, which is the boundary's own cost.
    let mut boundary = Plugin::reasons()
        .unwrap()
        .layer(Box::new(FixedTools::new(catalogue.clone(), "null")));
    let reasons = native(&catalogue);
    let mut group = c.benchmark_group("forwarding");
    for size in [1, 100, 1000] {
        let batch = workload::batch(size);
        let calls: Vec<ToolCall> = batch.iter().map(|(call, _)| call.clone()).collect();
        let bytes: usize = calls.iter().map(|call| call.arguments.text().len()).sum();
        group.throughput(Throughput::Bytes(bytes as u64));
        group.bench_function(BenchmarkId::new("component", size), |b| {
            per_batch(b, &calls, |calls| layer.execute_tool_calls(calls).unwrap())
        });
        group.bench_function(BenchmarkId::new("boundary", size), |b| {
            per_batch(b, &calls, |calls| {
                boundary.execute_tool_calls(calls).unwrap()
            })
        });
        group.bench_function(BenchmarkId::new("native", size), |b| {
            per_batch(b, &calls, |calls| reasons.execute(calls, answered))
        });
        group.bench_function(BenchmarkId::new("floor", size), |b| {
            b.iter(|| black_box(strip_or_copy(&batch)))
        });
        // The host's check of what the component passed down (R16), alone: the batch as
        // given against the batch as the transform forwards it.
        let mut forwarded = Vec::new();
        reasons.execute(calls.clone(), |calls| {
            forwarded = calls.clone();
            answered(calls)
        });
        group.bench_function(BenchmarkId::new("gate", size), |b| {
            per_batch(b, &calls, |calls| {
                let added = Added {
                    param: reasons_transform::DEFAULT_NAME.into(),
                    to: layer.augmented_tools(),
                };
                Given::new(Arc::new(calls), Some(added))
                    .admit(&forwarded)
                    .unwrap()
            })
        });
    }
    group.finish();
}

/// Untouched calls to a tool in the augmented tools (no reason): the layer should cost about a
/// copy of their bytes. The native row times the layer alone: the provider's results
/// are made before the clock starts.
fn untouched(c: &mut Criterion) {
    let catalogue = workload::catalogue(10);
    let mut layer = component(&catalogue);
    let reasons = native(&catalogue);
    let mut group = c.benchmark_group("untouched");
    // The last row's text has escapes (code, as models write it): R10 must then read it
    // whole to know whether it is JSON, where a text with neither the name nor a
    // backslash is known untouched from a scan alone.
    for (label, count, kilobytes, piece) in [
        ("100x1KiB", 100, 1, "x"),
        ("1x64KiB", 1, 64, "x"),
        ("1x64KiB escaped", 1, 64, r"fn main() {\n    go();\t}\n"),
    ] {
        let blob = piece.repeat((kilobytes * 1024 - 22) / piece.len());
        let text = format!(r#"{{"path":"a","blob":"{blob}"}}"#);
        let calls: Vec<ToolCall> = (0..count)
            .map(|n| ToolCall {
                id: format!("call_{n}"),
                name: "tool_1".into(),
                arguments: reasons_transform::Arguments::Text(text.clone()),
            })
            .collect();
        group.throughput(Throughput::Bytes((text.len() * count) as u64));
        group.bench_function(BenchmarkId::new("component", label), |b| {
            per_batch(b, &calls, |calls| layer.execute_tool_calls(calls).unwrap())
        });
        group.bench_function(BenchmarkId::new("native", label), |b| {
            b.iter_batched(
                || (calls.clone(), answered(calls.clone()).unwrap()),
                |(calls, results)| {
                    // What the provider received is handed back, to be dropped untimed.
                    let mut received = Vec::new();
                    let answered = reasons.execute(calls, |calls| {
                        received = calls;
                        Ok(results)
                    });
                    black_box((answered, received))
                },
                BatchSize::SmallInput,
            )
        });
        group.bench_function(BenchmarkId::new("floor", label), |b| {
            // A plain copy of the calls' bytes, into memory already there.
            let mut copy = Vec::with_capacity(text.len() * count);
            b.iter(|| {
                copy.clear();
                for call in &calls {
                    copy.extend_from_slice(call.arguments.text().as_bytes());
                }
                black_box(&copy);
            })
        });
    }
    group.finish();
}

/// What one batch of one small untouched call costs through the wasm boundary, and a
/// fresh session: an instance of the pre-instantiated component, asked one thing.
fn boundary(c: &mut Criterion) {
    let catalogue = workload::catalogue(10);
    let mut layer = component(&catalogue);
    let reasons = native(&catalogue);
    let call = ToolCall {
        id: "1".into(),
        name: "elsewhere".into(),
        arguments: reasons_transform::Arguments::Text(r#"{"path":"a"}"#.into()),
    };
    let mut group = c.benchmark_group("boundary");
    group.bench_function(BenchmarkId::new("component", "one-call batch"), |b| {
        per_batch(b, std::slice::from_ref(&call), |calls| {
            layer.execute_tool_calls(calls).unwrap()
        })
    });
    group.bench_function(BenchmarkId::new("native", "one-call batch"), |b| {
        per_batch(b, std::slice::from_ref(&call), |calls| {
            reasons.execute(calls, answered)
        })
    });
    let plugin = Plugin::reasons().unwrap();
    group.bench_function(BenchmarkId::new("component", "new session"), |b| {
        b.iter(|| {
            let mut layer = plugin.layer(Box::new(FixedTools::new(Vec::new(), "null")));
            black_box(layer.reason_param().unwrap())
        })
    });
    group.bench_function(BenchmarkId::new("native", "new session"), |b| {
        b.iter(|| black_box(Transform::new().options().name.clone()))
    });
    group.finish();
}

/// Compiling `reasons.wasm` with Cranelift, and loading it compiled from the cache.
fn artifact(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    Plugin::compile("warm", REASONS_WASM, &Cache::at(dir.path())).unwrap();
    let mut group = c.benchmark_group("artifact");
    group.sample_size(10);
    group.bench_function(BenchmarkId::new("compile", "cold"), |b| {
        // A new `Cache` has nothing in it: the component is compiled every time.
        b.iter(|| black_box(Plugin::compile("cold", REASONS_WASM, &Cache::default()).unwrap()))
    });
    group.bench_function(BenchmarkId::new("compile", "warm"), |b| {
        b.iter(|| black_box(Plugin::compile("warm", REASONS_WASM, &Cache::at(dir.path())).unwrap()))
    });
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    listing(&mut criterion);
    forwarding(&mut criterion);
    untouched(&mut criterion);
    boundary(&mut criterion);
    artifact(&mut criterion);
    criterion.final_summary();
    // Under `cargo test --benches` each benchmark runs once, unmeasured: no table then.
    if std::env::args().any(|arg| arg == "--bench") {
        support::report::print(REASONS_WASM.len());
    }
}
