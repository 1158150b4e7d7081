//! A server the proxy starts and speaks to over stdio.

use crate::ended::Ended;
use crate::error::Error;
use crate::event::Ending;
use crate::outbox::{Backlog, Outbox};
use crate::settings::GRACE;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The server: a child in a process group of its own, so that a signal reaches it and
/// whatever it started (an `npx` and its `node`), and none reaches it twice.
pub struct Process {
    child: Child,
    /// Its stdin, written on a thread of its own (`outbox.rs`).
    stdin: Outbox,
}

impl Process {
    /// Starts `program` with `arguments`: the server, and its stdout to read.
    pub fn start(
        program: &OsString,
        arguments: &[OsString],
    ) -> Result<(Process, ChildStdout), Error> {
        let mut command = Command::new(program);
        command
            .args(arguments)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .process_group(0);
        #[cfg(target_os = "linux")]
        // SAFETY: prctl is async-signal-safe, which is all that may run between fork and exec.
        unsafe {
            // Should the proxy itself be killed outright, the kernel ends the server.
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = command.spawn().map_err(Error::system(format!(
            "cannot start the MCP server {program:?}"
        )))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let stdin = Outbox::at_once(child.stdin.take().expect("stdin is piped"));
        Ok((Process { stdin, child }, stdout))
    }

    /// Queues one line for the server's stdin; a server whose stdin is closed has exited
    /// or soon will, and its end says why.
    pub fn send(&mut self, line: &[u8]) {
        self.stdin.send(line);
    }

    /// Closes the server's stdin, once what was queued for it is written.
    pub fn close_stdin(&mut self) {
        self.stdin.close();
    }

    /// What waits for the server's stdin.
    pub fn backlog(&self) -> Backlog {
        self.stdin.backlog()
    }

    /// Since when the server has not taken a line written to its stdin, if it has one.
    pub fn stalled_since(&self) -> Option<std::time::Instant> {
        self.stdin.stalled_since()
    }

    /// Signals the server's process group; it may already be gone.
    fn signal(&self, signal: i32) {
        let group = self.child.id() as libc::pid_t;
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            libc::kill(-group, signal);
        }
    }

    /// Ends the server, in the order MCP's stdio transport gives: its stdin closed, then
    /// SIGTERM, then SIGKILL, each after a grace period it did not use to exit. A signal
    /// the proxy got is passed on first.
    pub fn end(&mut self, how: Ending) -> Ended {
        self.close_stdin();
        let signal = match how {
            Ending::Signal(signal) => Some(signal),
            Ending::Closed | Ending::Overdue => None,
        };
        let mut status = match how {
            Ending::Signal(signal) => {
                self.signal(signal);
                self.wait(GRACE)
            }
            Ending::Closed => self.wait(GRACE),
            Ending::Overdue => None,
        };
        if status.is_none() && signal != Some(libc::SIGTERM) {
            self.signal(libc::SIGTERM);
            status = self.wait(GRACE);
        }
        if status.is_none() {
            self.signal(libc::SIGKILL);
            status = self.child.wait().ok();
        }
        // What the server started and left behind ends with it.
        self.signal(libc::SIGKILL);
        Ended::Process { status, signal }
    }

    fn wait(&mut self, grace: Duration) -> Option<ExitStatus> {
        let until = Instant::now() + grace;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(10)),
                _ => return None,
            }
        }
    }
}
