//! How a session ended, which the proxy's exit status and its last words repeat.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

/// How the session ended, which the proxy's exit status repeats.
#[derive(Debug)]
pub enum Ended {
    /// A server the proxy started: its exit status, when it could be waited for, and the
    /// signal that ended the proxy, if one did.
    Process {
        /// The server's exit status.
        status: Option<ExitStatus>,
        /// The signal the proxy got.
        signal: Option<i32>,
    },
    /// A server at a URL: the session was closed, or a signal ended the proxy.
    Remote {
        /// The signal the proxy got.
        signal: Option<i32>,
    },
}

impl Ended {
    /// The proxy's exit code: the server's own code, or 128 + the signal that ended it
    /// (or the proxy), as a shell reports it.
    pub fn code(&self) -> u8 {
        let code = match *self {
            Ended::Process {
                signal: Some(signal),
                ..
            }
            | Ended::Remote {
                signal: Some(signal),
            } => 128 + signal,
            Ended::Remote { signal: None } => 0,
            Ended::Process {
                status: Some(status),
                ..
            } => match (status.code(), status.signal()) {
                (Some(code), _) => code,
                (None, Some(signal)) => 128 + signal,
                (None, None) => 1,
            },
            Ended::Process { status: None, .. } => 1,
        };
        u8::try_from(code).unwrap_or(1)
    }

    /// What ended the server, when it did not end well, for the human on stderr. A
    /// server that ends as the signal the proxy passed on asks (it exits, or the signal
    /// ends it) ended well: that is how clients close a stdio server.
    pub(crate) fn failure(&self) -> Option<String> {
        match *self {
            Ended::Process {
                status: Some(status),
                signal: Some(signal),
            } if status.success()
                || status.signal() == Some(signal)
                || status.code() == Some(128 + signal) =>
            {
                None
            }
            Ended::Process {
                status: Some(status),
                ..
            } if status.success() => None,
            Ended::Remote { .. } => None,
            _ => Some(self.describe()),
        }
    }

    /// How the server ended, for the requests it never answered.
    pub(crate) fn describe(&self) -> String {
        match *self {
            Ended::Process {
                status,
                signal: Some(signal),
            } => format!(
                "was ended after the proxy got signal {signal} ({})",
                status.map_or("not waited for".into(), |status| status.to_string())
            ),
            Ended::Process {
                status: Some(status),
                ..
            } if !status.success() => format!("exited ({status})"),
            Ended::Process { status: None, .. } => "could not be waited for".into(),
            Ended::Process { .. } => "exited".into(),
            Ended::Remote {
                signal: Some(signal),
            } => format!("session was ended after the proxy got signal {signal}"),
            Ended::Remote { signal: None } => "session was closed".into(),
        }
    }
}
