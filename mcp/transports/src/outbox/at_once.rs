//! A line written without waiting: while nothing waits in an outbox, the session's loop
//! writes a line to the peer itself when the peer's pipe or socket takes all of it at
//! once. Handing each line to the outbox's thread cost two thread wake-ups a hop, four
//! a round trip: profiled, the proxy spent most of its time on a call switching threads,
//! not reading or editing it.
//!
//! The loop must never wait on a peer (see [`super`]), so a line is written here only
//! where the write cannot block: into a pipe with room for it, counted in the kernel's
//! pages, or into a socket with `MSG_DONTWAIT`, which takes what fits. Anything else (a
//! file, a terminal, a pipe in packet mode, a full one) goes through the outbox's thread.
//! The proxy is the one writer of its pipes; were another process writing into the same
//! pipe, a write here could wait as long as the reader takes to make room.

use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{FileType, OFlags};
use rustix::io::Errno;
use rustix::net::SendFlags;

/// A pipe holds what is written to it in pages. A write goes into the last page only
/// when all of it that is not whole pages fits there, else it starts a page of its own:
/// a page may be left nearly empty, but two pages in a row always hold more than one
/// page's bytes (a write that did not fit in the first starts the second with at least
/// what did not fit, or with a whole page).
const PAGE: usize = 4096;

/// A peer's end that the loop may write to itself.
pub(super) enum AtOnce {
    /// A pipe, whose size is asked of the kernel at each write: its reader may change
    /// it (F_SETPIPE_SZ) at any time, to less than it holds.
    Pipe(OwnedFd),
    Socket(OwnedFd),
}

impl AtOnce {
    /// `to`'s end, when it is a pipe in byte mode or a socket. It is a second handle of
    /// the same end: the peer sees the end closed only once this is dropped too.
    pub(super) fn of(to: impl AsFd) -> Option<AtOnce> {
        let kind = FileType::from_raw_mode(rustix::fs::fstat(&to).ok()?.st_mode);
        let end = to.as_fd().try_clone_to_owned().ok()?;
        match kind {
            // In packet mode each write takes pages of its own, which the count of
            // unread bytes does not tell.
            FileType::Fifo if !rustix::fs::fcntl_getfl(&end).ok()?.contains(OFlags::DIRECT) => {
                Some(AtOnce::Pipe(end))
            }
            FileType::Socket => Some(AtOnce::Socket(end)),
            _ => None,
        }
    }

    /// Writes what of `bytes` the peer takes without waiting: how many bytes that was.
    /// A pipe takes all of them or none; a socket may take a part.
    pub(super) fn write(&self, bytes: &[u8]) -> usize {
        match self {
            AtOnce::Pipe(end) => {
                let Ok(capacity) = rustix::pipe::fcntl_getpipe_size(end) else {
                    return 0;
                };
                let Ok(unread) = rustix::io::ioctl_fionread(end) else {
                    return 0;
                };
                // The pages what is unread may take: two for every page's worth of it,
                // and the first, partly read; and the pages the line may take.
                let unread = usize::try_from(unread).unwrap_or(usize::MAX / 4);
                let held = 2 * unread.div_ceil(PAGE) + 1;
                let needed = bytes.len().div_ceil(PAGE) + 1;
                if (held + needed) * PAGE > capacity {
                    return 0;
                }
                let mut written = 0;
                while written < bytes.len() {
                    match rustix::io::write(end, &bytes[written..]) {
                        Ok(count) => written += count,
                        Err(Errno::INTR) => {}
                        // The reader is gone: the outbox's thread finds it so too.
                        Err(_) => break,
                    }
                }
                written
            }
            AtOnce::Socket(end) => {
                let flags = SendFlags::DONTWAIT | SendFlags::NOSIGNAL;
                rustix::net::send(end, bytes, flags).unwrap_or(0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::net::UnixStream;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Runs `write` on a thread and waits far longer than any write without waiting
    /// takes: a write that waited for a reader that never reads fails the test.
    fn without_waiting(write: impl FnOnce() -> usize + Send + 'static) -> usize {
        let (done, written) = mpsc::channel();
        std::thread::spawn(move || done.send(write()));
        written
            .recv_timeout(Duration::from_secs(10))
            .expect("the write returned without waiting for the reader")
    }

    #[test]
    fn a_pipe_with_room_takes_the_whole_line() {
        let (mut reader, writer) = std::io::pipe().unwrap();
        let at_once = AtOnce::of(&writer).expect("a pipe in byte mode");
        assert_eq!(at_once.write(b"{\"id\":1}\n"), 9);
        drop((at_once, writer));
        let mut read = String::new();
        reader.read_to_string(&mut read).unwrap();
        assert_eq!(read, "{\"id\":1}\n");
    }

    #[test]
    fn a_pipe_without_room_takes_nothing_and_does_not_wait() {
        let (_reader, writer) = std::io::pipe().unwrap();
        let at_once = AtOnce::of(&writer).expect("a pipe in byte mode");
        let capacity = rustix::pipe::fcntl_getpipe_size(&writer).unwrap();
        // Half the pipe full: a line of half its size does not fit with the pages'
        // margin, however the kernel lays them out.
        let half = vec![b'x'; capacity / 2];
        assert_eq!(at_once.write(&half), half.len());
        let written = without_waiting(move || at_once.write(&half));
        assert_eq!(written, 0);
    }

    #[test]
    fn lines_that_waste_the_pipes_pages_are_never_written_into_a_full_pipe() {
        // Lines just over half a page each take a page of their own; a short line and
        // a long one in turn leave every other page nearly empty. Written into a pipe
        // that is never read, each is taken while there is room and then refused: no
        // write waits.
        let patterns: [&[usize]; 4] = [&[2049], &[100, 4000], &[1, 4096], &[1071]];
        for pattern in patterns {
            let (_reader, writer) = std::io::pipe().unwrap();
            let at_once = AtOnce::of(&writer).expect("a pipe in byte mode");
            let sizes = pattern.to_vec();
            let taken = without_waiting(move || {
                let mut taken = 0;
                for size in sizes.iter().cycle() {
                    match at_once.write(&vec![b'x'; *size]) {
                        0 => break,
                        written => taken += written,
                    }
                }
                taken
            });
            assert!(taken > 0, "an empty pipe took nothing of {pattern:?}");
        }
    }

    #[test]
    fn a_pipe_in_packet_mode_is_left_to_the_thread() {
        let (_reader, writer) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::DIRECT).unwrap();
        assert!(AtOnce::of(&writer).is_none());
    }

    #[test]
    fn a_file_is_left_to_the_thread() {
        let file = tempfile::tempfile().unwrap();
        assert!(AtOnce::of(&file).is_none());
    }

    #[test]
    fn a_socket_that_is_not_read_takes_what_fits_and_does_not_wait() {
        let (_peer, ours) = UnixStream::pair().unwrap();
        let at_once = AtOnce::of(&ours).expect("a socket");
        let line = vec![b'x'; 64 << 20];
        let written = without_waiting(move || at_once.write(&line));
        assert!(
            written < 64 << 20,
            "{written} bytes of 64 MiB into a socket no one reads"
        );
    }

    #[test]
    fn a_pipe_its_reader_shrinks_is_asked_its_size_again_and_not_waited_on() {
        // The server shrinks its stdin's pipe to one page after the proxy looked at it,
        // and stops reading: a line of two pages is not written into it (it would wait
        // for ever), but left to the thread.
        let (reader, writer) = std::io::pipe().unwrap();
        let at_once = AtOnce::of(&writer).expect("a pipe in byte mode");
        rustix::pipe::fcntl_setpipe_size(&reader, PAGE).unwrap();
        let line = vec![b'x'; 2 * PAGE];
        let written = without_waiting(move || at_once.write(&line));
        assert_eq!(written, 0);
        drop(reader);
    }
}
