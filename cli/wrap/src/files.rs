//! Writing a file whole or not at all: a file beside it, renamed over it, so that a
//! reader (or a crash) never meets half of one.

use crate::error::{Doing, Error, Kind, Of, io};
use rustix::io::Errno;
use std::fs::{Metadata, Permissions};
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Writes `bytes` to `path` whole, with `permissions`.
pub fn write_whole(path: &Path, bytes: &[u8], permissions: Permissions) -> Result<(), Error> {
    stage(path, bytes, permissions, None)?.put()
}

/// Writes `bytes` to `path` whole, with the mode and the owners of `like` (the file it
/// replaces), so that the new file is open to no one the old one was not, and stays its
/// owner's when another user (root, by sudo) writes it.
pub fn write_like(path: &Path, bytes: &[u8], like: &Metadata) -> Result<(), Error> {
    stage_like(path, bytes, like)?.put()
}

/// [`write_like`]'s new file, written beside `path` and not yet in its place, so that
/// what must hold just before it replaces the old one can be checked last.
pub fn stage_like(path: &Path, bytes: &[u8], like: &Metadata) -> Result<Staged, Error> {
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
    pub fn put(self) -> Result<(), Error> {
        self.file
            .persist(&self.path)
            .map_err(|error| io(Doing::Replace)(error.error))
            .of(&self.path)?;
        Ok(())
    }

    /// Puts the new file in the old one's place unless the old one no longer holds
    /// `expected` (a client saved it since it was read); whether it did. The two are
    /// swapped in one step (renameat2's exchange), so the old file is judged as it was at
    /// that instant and, when it is not `expected`, swapped back: no save is replaced
    /// unseen. Where the file system cannot swap, it is judged just before the rename.
    pub fn put_unless_changed(self, expected: &[u8]) -> Result<bool, Error> {
        let Staged { file, path } = self;
        let holds_expected = |at: &Path| -> Result<bool, Error> {
            let mut bytes = Vec::new();
            std::fs::File::open(at)
                .and_then(|file| file.take(expected.len() as u64 + 1).read_to_end(&mut bytes))
                .map_err(io(Doing::Read))
                .of(at)?;
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
        let cannot = |error| io(Doing::Replace)(error).of(&path);
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
) -> Result<Staged, Error> {
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    let mut file = tempfile::NamedTempFile::new_in(folder)
        .map_err(io(Doing::WriteInto))
        .of(folder)?;
    std::io::Write::write_all(&mut file, bytes)
        .map_err(io(Doing::Write))
        .of(path)?;
    if let Some((user, group)) = owners {
        std::os::unix::fs::fchown(file.as_file(), Some(user), Some(group))
            .map_err(|error| Kind::Owners { user, group, error })
            .of(path)?;
    }
    // After the group: changing owners may clear the set-id bits a mode holds.
    (file.as_file().set_permissions(permissions))
        .map_err(io(Doing::Write))
        .of(path)?;
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
pub fn read_text(path: &Path) -> Result<String, Error> {
    // Opened without blocking, so that a FIFO put in its place is seen, not waited on.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .and_then(|file| Ok((file.metadata()?, file)))
        .map_err(io(Doing::Read))
        .of(path)?;
    let (metadata, file) = file;
    if !metadata.is_file() {
        return Err(Kind::NotText("is not a regular file".into()).of(path));
    }
    let too_big = || Kind::NotText(format!("is over {} GiB: not a config", MOST >> 30)).of(path);
    // Its size is asked first so that a huge file is refused unread; the read is still
    // bounded, for a file that grows while it is read.
    if metadata.len() > MOST {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    file.take(MOST + 1)
        .read_to_end(&mut bytes)
        .map_err(io(Doing::Read))
        .of(path)?;
    if bytes.len() as u64 > MOST {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|_| Kind::NotText("is not UTF-8 text".into()).of(path))
}
