//! Why `reasons mcp` could not start: a setting it was given, the layer, or the system.

use reasons_host::plugin::ConfigureError;
use std::fmt;

/// Why the proxy could not start, or a session of the front could not open.
///
/// Each says its cause in its own words, so that one line tells the whole story wherever
/// it is shown (the command's message, the error a client is answered with); the cause
/// is kept as a value too, for a program to look at.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A setting (a flag, or the variable a flag names) is missing or wrong, in words
    /// naming it and the fault; never a secret's value.
    Setting(String),
    /// The layer refused its options.
    Layer(ConfigureError),
    /// The system would not do what the proxy needs.
    System {
        /// What the proxy was doing ("cannot listen on 127.0.0.1:8931").
        doing: String,
        /// Why not.
        error: std::io::Error,
    },
}

impl Error {
    /// The system's `error` at what the proxy was `doing`.
    pub(crate) fn system(doing: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
        let doing = doing.into();
        move |error| Error::System { doing, error }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Setting(words) => f.write_str(words),
            Error::Layer(error) => error.fmt(f),
            Error::System { doing, error } => write!(f, "{doing}: {error}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<ConfigureError> for Error {
    fn from(error: ConfigureError) -> Error {
        Error::Layer(error)
    }
}
