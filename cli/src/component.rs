//! `reasons component --out DIR`: the components as they are released, their metadata
//! included: reasons.wasm, for a host of your own, and reasons-gateway.wasm, for a
//! wasi:http engine; and the WIT package reasons.wasm implements (agent-tools.wasm).

use anyhow::Context;
use std::io::Write;
use std::path::PathBuf;

/// Write the components as they are released (reasons.wasm for a host of your own,
/// reasons-gateway.wasm for a wasi:http engine, their metadata included) and the WIT
/// package (agent-tools.wasm) into a folder.
#[derive(clap::Args)]
pub struct Args {
    /// The folder to write them into (created if need be).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

/// The wasi:http gateway component, as released (built by `build.rs`).
const GATEWAY_WASM: &[u8] = include_bytes!(env!("REASONS_GATEWAY_WASM"));

impl crate::Run for Args {
    fn run(self) -> anyhow::Result<u8> {
        let Args { out } = self;
        std::fs::create_dir_all(&out)
            .with_context(|| format!("cannot create {}", out.display()))?;
        for (name, bytes) in [
            ("reasons.wasm", reasons_host::plugin::REASONS_WASM),
            ("reasons-gateway.wasm", GATEWAY_WASM),
            ("agent-tools.wasm", reasons_host::plugin::WIT_PACKAGE_WASM),
        ] {
            // An artifact, for anyone to read.
            let readable = std::os::unix::fs::PermissionsExt::from_mode(0o644);
            reasons_wrap::files::write_whole(&out.join(name), bytes, readable)?;
            // Written is the work: a reader that went (`| head`) does not stop the next one.
            let _ = writeln!(std::io::stdout(), "{}", out.join(name).display());
        }
        Ok(0)
    }
}
