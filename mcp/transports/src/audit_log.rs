//! The audit log: the core's record of each call, appended to a file only its owner may
//! read, since it holds the model's reasons.

use crate::error::Error;
use crate::say::say;
use std::io::Write;
use std::path::Path;

/// An audit log open for appending, until it cannot be written.
pub(crate) struct AuditLog(Option<std::fs::File>);

impl AuditLog {
    /// The log at `path`, created 0600 if it is not there.
    pub(crate) fn open(path: &Path) -> Result<AuditLog, Error> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::File::options()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)
            .map_err(Error::system(format!(
                "cannot open the audit log {}",
                path.display()
            )))?;
        Ok(AuditLog(Some(file)))
    }

    /// Appends `record` as one line, in one write, so that a reader never sees half of
    /// one. A log that cannot be written is reported once and then left alone: never a
    /// reason to stop relaying.
    pub(crate) fn append(&mut self, record: &str) {
        let Some(file) = &mut self.0 else {
            return;
        };
        let line = format!("{record}\n");
        if let Err(error) = file.write_all(line.as_bytes()) {
            self.0 = None;
            say(&format!(
                "the audit log cannot be written ({error}); no more records"
            ));
        }
    }
}
