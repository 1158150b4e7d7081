//! Writing a file whole or not at all: a file beside it, renamed over it, so that a
//! reader (or a crash) never meets half of one.

use anyhow::Context;
use std::fs::Permissions;
use std::path::Path;

/// Writes `bytes` to `path` whole, with `permissions`.
pub fn write_whole(path: &Path, bytes: &[u8], permissions: Permissions) -> anyhow::Result<()> {
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    let mut file = tempfile::NamedTempFile::new_in(folder)
        .with_context(|| format!("cannot write into {}", folder.display()))?;
    std::io::Write::write_all(&mut file, bytes)
        .with_context(|| format!("cannot write {}", path.display()))?;
    file.as_file().set_permissions(permissions)?;
    file.persist(path)
        .with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(())
}
