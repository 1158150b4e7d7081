//! `reasons component --out DIR`: the component as it is released (reasons.wasm, its
//! metadata included) and its WIT package (agent-tools.wasm), for a host of your own.

use anyhow::Context;
use std::path::PathBuf;

/// Write the component as it is released (reasons.wasm, its metadata included) and
/// its WIT package (agent-tools.wasm) into a folder, for a host of your own.
#[derive(clap::Args)]
pub struct Args {
    /// The folder to write them into (created if need be).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

pub fn run(Args { out }: Args) -> anyhow::Result<u8> {
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    for (name, bytes) in [
        ("reasons.wasm", reasons_host::plugin::REASONS_WASM),
        ("agent-tools.wasm", reasons_host::plugin::WIT_PACKAGE_WASM),
    ] {
        // An artifact, for anyone to read.
        let readable = std::os::unix::fs::PermissionsExt::from_mode(0o644);
        crate::files::write_whole(&out.join(name), bytes, readable)?;
        println!("{}", out.join(name).display());
    }
    Ok(0)
}
