//! The crate's errors: what is wrong with a config file, or could not be done to it,
//! always with the file, so that a caller matches on what went wrong rather than on
//! words; and why a client's files cannot be named.

use std::fmt;
use std::path::{Path, PathBuf};

/// What went wrong with one config file.
#[derive(Debug)]
pub struct Error {
    /// The file.
    pub file: PathBuf,
    /// What is wrong with it, or could not be done to it.
    pub kind: Kind,
}

/// What is wrong with a file, or could not be done to it.
#[derive(Debug)]
pub enum Kind {
    /// Reading, writing or replacing it failed.
    Io {
        /// What was being done.
        doing: Doing,
        /// Why it failed.
        error: std::io::Error,
    },
    /// Its new copy could not be given the old one's owners (another user runs this).
    Owners {
        /// The old file's user.
        user: u32,
        /// The old file's group.
        group: u32,
        /// Why it failed.
        error: std::io::Error,
    },
    /// It is not text a config can be: why, said of the file (not a regular file, too
    /// large, not UTF-8).
    NotText(String),
    /// It does not parse as its format: the format, and the parser's words.
    Syntax {
        /// JSON, TOML or YAML.
        format: &'static str,
        /// What the parser says, and where.
        detail: String,
    },
    /// It parses, but is not a config wrap edits as it stands: why, said of the file.
    Unfit(String),
    /// A part of it is not what wrap edits: why, naming the part.
    Part(String),
    /// Not every server in it can run behind `reasons mcp`: each one, with why. Nothing
    /// was changed.
    Unwrappable(Vec<String>),
    /// It is read-only, with this mode: a file made so says "leave me".
    ReadOnly(u32),
    /// It changed while it was being edited (a client saving it): nothing was written.
    Changed,
    /// The edit did not pass wrap's own check of it: why, and the error that check
    /// met, if any. Nothing was written.
    Unchecked {
        /// What the edit would do.
        why: String,
        /// What reading the edit back met.
        met: Option<Box<Error>>,
    },
}

/// What was being done to a file when it failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Doing {
    /// Reading it.
    Read,
    /// Writing it.
    Write,
    /// Writing a new file into it, a folder.
    WriteInto,
    /// Putting a new file in its place.
    Replace,
}

impl Kind {
    /// This, of `file`.
    pub(crate) fn of(self, file: &Path) -> Error {
        Error {
            file: file.to_path_buf(),
            kind: self,
        }
    }
}

/// A result whose error is a [`Kind`], given its file.
pub(crate) trait Of<T> {
    /// The error, of `file`.
    fn of(self, file: &Path) -> Result<T, Error>;
}

impl<T> Of<T> for Result<T, Kind> {
    fn of(self, file: &Path) -> Result<T, Error> {
        self.map_err(|kind| kind.of(file))
    }
}

/// An I/O failure of `doing`, as a [`Kind`].
pub(crate) fn io(doing: Doing) -> impl FnOnce(std::io::Error) -> Kind {
    move |error| Kind::Io { doing, error }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.file.display();
        match &self.kind {
            Kind::Io { doing, .. } => {
                let doing = match doing {
                    Doing::Read => "read",
                    Doing::Write => "write",
                    Doing::WriteInto => "write into",
                    Doing::Replace => "replace",
                };
                write!(f, "cannot {doing} {file}")
            }
            Kind::Owners { user, group, .. } => write!(
                f,
                "cannot give the new {file} the old one's owners (user {user}, group \
                 {group}): run this as its owner"
            ),
            Kind::NotText(why) | Kind::Unfit(why) => write!(f, "{file} {why}"),
            Kind::Syntax { format, detail } => write!(f, "{file} is not {format}: {detail}"),
            Kind::Part(why) => write!(f, "{file}: {why}"),
            Kind::Unwrappable(servers) => write!(
                f,
                "{file} was not changed: not every server in it can run behind reasons mcp\n  {}",
                servers.join("\n  ")
            ),
            Kind::ReadOnly(mode) => write!(
                f,
                "{file} is read-only (mode {mode:o}): reasons leaves it as it is; make it \
                 writable (chmod u+w) to change it"
            ),
            Kind::Changed => write!(
                f,
                "{file} changed while reasons was editing it (a client saving it?); nothing \
                 was written to it: run this again"
            ),
            Kind::Unchecked { why, .. } => {
                write!(f, "the edit of {file} {why}; nothing was written")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            Kind::Io { error, .. } | Kind::Owners { error, .. } => Some(error),
            Kind::Unchecked { met: Some(met), .. } => Some(met.as_ref()),
            _ => None,
        }
    }
}

/// Why the config files of a client named by `--client` cannot be named.
#[derive(Debug, PartialEq, Eq)]
pub enum ClientError {
    /// Not on this system yet.
    Unsupported,
    /// `HOME` is not set.
    NoHome,
    /// No client goes by this name.
    Unknown(String),
    /// The client has no config here yet: where it keeps its servers, and where a
    /// project's are, when it reads those too.
    NoneYet {
        /// The client.
        client: String,
        /// Its user files, any of which it reads.
        places: Vec<PathBuf>,
        /// Where a project's file is, said in words, when it reads one.
        project: Option<&'static str>,
    },
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Unsupported => {
                f.write_str("--client is not supported on Windows yet: name the file with --config")
            }
            ClientError::NoHome => f.write_str("HOME is not set"),
            ClientError::Unknown(client) => write!(
                f,
                "no known client `{client}`: {} (or name any file with --config)",
                crate::KNOWN
            ),
            ClientError::NoneYet {
                client,
                places,
                project,
            } => {
                let places: Vec<String> =
                    places.iter().map(|at| at.display().to_string()).collect();
                let project = project.map(|at| format!(" ({at})")).unwrap_or_default();
                write!(
                    f,
                    "{client} has no config here yet: it keeps its servers in {}{project}, and \
                     there is none, so there is nothing to do. Add a server to {client} first \
                     (or name a file with --config), then run this again",
                    places.join(" or ")
                )
            }
        }
    }
}

impl std::error::Error for ClientError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_names_its_file_and_keeps_its_cause() {
        let error = io(Doing::Read)(std::io::Error::from(std::io::ErrorKind::NotFound))
            .of(Path::new("/c/mcp.json"));
        assert_eq!(error.to_string(), "cannot read /c/mcp.json");
        let cause = std::error::Error::source(&error).expect("the I/O error");
        assert_eq!(cause.to_string(), "entity not found");
        let parts = Kind::Part("the server a is not a JSON object".into());
        assert_eq!(
            parts.of(Path::new("x.json")).to_string(),
            "x.json: the server a is not a JSON object"
        );
        let inner = Kind::Syntax {
            format: "JSON",
            detail: "no".into(),
        };
        let unchecked = Kind::Unchecked {
            why: "would not read back".into(),
            met: Some(Box::new(inner.of(Path::new("x.json")))),
        }
        .of(Path::new("x.json"));
        assert_eq!(
            unchecked.to_string(),
            "the edit of x.json would not read back; nothing was written"
        );
        let met = std::error::Error::source(&unchecked).expect("what the check met");
        assert_eq!(met.to_string(), "x.json is not JSON: no");
    }
}
