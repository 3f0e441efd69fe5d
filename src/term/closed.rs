//! Whether the reader of one of this process's output streams has gone (`skillpipe … | head -1`,
//! an MCP client that exited): its pipe then has no reading end, which `poll` reports as
//! POLLERR (a socket as POLLHUP) without anything being written.

use std::os::fd::RawFd;
use std::time::Duration;

/// True if the reading end of `fd` (a pipe or socket) is closed, waiting up to `wait` for it
/// (`None`: until it happens). A file or a terminal never reports it; an invalid descriptor
/// is false.
pub(crate) fn reader_gone(fd: RawFd, wait: Option<Duration>) -> bool {
    let ms = wait.map_or(-1, |d| d.as_millis().min(i32::MAX as u128) as i32);
    loop {
        // No events asked for: poll reports only POLLERR, POLLHUP and POLLNVAL.
        let mut p = libc::pollfd {
            fd,
            events: 0,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let rc = unsafe { libc::poll(&mut p, 1, ms) };
        if rc < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return false;
        }
        return p.revents & libc::POLLNVAL == 0 && p.revents & (libc::POLLERR | libc::POLLHUP) != 0;
    }
}

/// True if `error` is a write that failed because standard output's reader has gone: a
/// broken pipe on stdout ends a command quietly, as the end of its output (DESIGN §9).
pub(crate) fn stdout_reader_gone(error: &std::io::Error) -> bool {
    error.kind() == std::io::ErrorKind::BrokenPipe
        && reader_gone(libc::STDOUT_FILENO, Some(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_pipe_without_its_reader_is_seen_as_gone() {
        let (reader, writer) = std::io::pipe().unwrap();
        let fd = writer.as_raw_fd();
        // Positive control: with its reader open, nothing is reported.
        assert!(!reader_gone(fd, Some(Duration::ZERO)));
        drop(reader);
        assert!(reader_gone(fd, Some(Duration::ZERO)));
        assert!(reader_gone(fd, None), "does not wait once gone");
        assert!(!reader_gone(-1, Some(Duration::ZERO)));
    }
}
