//! Writing a file whole or not at all: a file beside it, renamed over it, so that a
//! reader (or a crash) never meets half of one.

use anyhow::{Context, bail};
use rustix::io::Errno;
use std::fs::{Metadata, Permissions};
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Writes `bytes` to `path` whole, with `permissions`.
pub fn write_whole(path: &Path, bytes: &[u8], permissions: Permissions) -> anyhow::Result<()> {
    stage(path, bytes, permissions, None)?.put()
}

/// Writes `bytes` to `path` whole, with the mode and the owners of `like` (the file it
/// replaces), so that the new file is open to no one the old one was not, and stays its
/// owner's when another user (root, by sudo) writes it.
pub fn write_like(path: &Path, bytes: &[u8], like: &Metadata) -> anyhow::Result<()> {
    stage_like(path, bytes, like)?.put()
}

/// [`write_like`]'s new file, written beside `path` and not yet in its place, so that
/// what must hold just before it replaces the old one can be checked last.
pub fn stage_like(path: &Path, bytes: &[u8], like: &Metadata) -> anyhow::Result<Staged> {
    stage(
        path,
        bytes,
        like.permissions(),
        Some((like.uid(), like.gid())),
    )
}

/// A file written whole beside the one it is to replace.
pub struct Staged {
    file: tempfile::NamedTempFile,
    path: std::path::PathBuf,
}

impl Staged {
    /// Renames the new file over the old one; dropped instead, it is removed.
    pub fn put(self) -> anyhow::Result<()> {
        self.file
            .persist(&self.path)
            .with_context(|| format!("cannot replace {}", self.path.display()))?;
        Ok(())
    }

    /// Puts the new file in the old one's place unless the old one no longer holds
    /// `expected` (a client saved it since it was read); whether it did. The two are
    /// swapped in one step (renameat2's exchange), so the old file is judged as it was at
    /// that instant and, when it is not `expected`, swapped back: no save is replaced
    /// unseen. Where the file system cannot swap, it is judged just before the rename.
    pub fn put_unless_changed(self, expected: &[u8]) -> anyhow::Result<bool> {
        let Staged { file, path } = self;
        let holds_expected = |at: &Path| -> anyhow::Result<bool> {
            let mut bytes = Vec::new();
            std::fs::File::open(at)?
                .take(expected.len() as u64 + 1)
                .read_to_end(&mut bytes)?;
            Ok(bytes == expected)
        };
        let (_, staged) = file.into_parts();
        let swap = |staged: &Path| {
            rustix::fs::renameat_with(
                rustix::fs::CWD,
                staged,
                rustix::fs::CWD,
                &path,
                rustix::fs::RenameFlags::EXCHANGE,
            )
        };
        let cannot = |error| anyhow::anyhow!("cannot replace {}: {error}", path.display());
        match swap(&staged) {
            Ok(()) => {}
            Err(Errno::INVAL | Errno::NOSYS | Errno::NOTSUP) => {
                if !holds_expected(&path)? {
                    return Ok(false);
                }
                staged.persist(&path).map_err(|error| cannot(error.error))?;
                return Ok(true);
            }
            Err(error) => return Err(cannot(error.into())),
        }
        // `staged` now names the file that was in place, removed when it is dropped.
        if holds_expected(&staged)? {
            return Ok(true);
        }
        swap(&staged).map_err(|error| cannot(error.into()))?;
        Ok(false)
    }
}

fn stage(
    path: &Path,
    bytes: &[u8],
    permissions: Permissions,
    owners: Option<(u32, u32)>,
) -> anyhow::Result<Staged> {
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    let mut file = tempfile::NamedTempFile::new_in(folder)
        .with_context(|| format!("cannot write into {}", folder.display()))?;
    std::io::Write::write_all(&mut file, bytes)
        .with_context(|| format!("cannot write {}", path.display()))?;
    if let Some((user, group)) = owners {
        std::os::unix::fs::fchown(file.as_file(), Some(user), Some(group)).with_context(|| {
            format!(
                "cannot give the new {} the old one's owners (user {user}, group {group}): \
                 run this as its owner",
                path.display()
            )
        })?;
    }
    // After the group: changing owners may clear the set-id bits a mode holds.
    file.as_file().set_permissions(permissions)?;
    Ok(Staged {
        file,
        path: path.to_path_buf(),
    })
}

/// The most bytes a file read whole may hold: far past what configs reach (Claude Code's
/// `~/.claude.json` keeps each project's history and grows to tens of MiB), short of what
/// memory holds.
const MOST: u64 = 1 << 30;

/// The text of the regular file `path`, of at most 1 GiB: a FIFO, a device or a
/// directory is refused before it is read (a FIFO would block for ever, `/dev/zero`
/// fill memory).
pub fn read_text(path: &Path) -> anyhow::Result<String> {
    // Opened without blocking, so that a FIFO put in its place is seen, not waited on.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        bail!("{} is not a regular file", path.display());
    }
    let too_big = || {
        anyhow::anyhow!(
            "{} is over {} GiB: not a config",
            path.display(),
            MOST >> 30
        )
    };
    // Its size is asked first so that a huge file is refused unread; the read is still
    // bounded, for a file that grows while it is read.
    if metadata.len() > MOST {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    file.take(MOST + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.len() as u64 > MOST {
        return Err(too_big());
    }
    String::from_utf8(bytes).with_context(|| format!("{} is not UTF-8 text", path.display()))
}
