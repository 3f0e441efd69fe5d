//! The names a run touches in the folders of its writable paths, as the kernel tells them
//! (inotify), so the change report stats only those instead of every file.
//!
//! Watches are on inodes: a write the run makes through its own mount namespace's bind mount
//! of a watched folder is seen from skillpipe's process.

use super::caller::new_fd;
use std::collections::HashMap;
use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// Everything that can change a folder's entries or a file's content or metadata.
const MASK: u32 = libc::IN_CREATE
    | libc::IN_DELETE
    | libc::IN_MODIFY
    | libc::IN_CLOSE_WRITE
    | libc::IN_ATTRIB
    | libc::IN_MOVED_FROM
    | libc::IN_MOVED_TO
    | libc::IN_DELETE_SELF
    | libc::IN_MOVE_SELF
    | libc::IN_ONLYDIR
    | libc::IN_EXCL_UNLINK;

/// What one event said, its folder resolved to the path it was watched at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    /// The watched folder (empty for a queue overflow).
    pub dir: PathBuf,
    /// The entry in it, or none when the event is about the folder itself.
    pub name: Option<OsString>,
    /// The `IN_*` bits.
    pub mask: u32,
}

impl Event {
    /// The kernel's queue overflowed: events after this point were lost.
    pub fn overflowed(&self) -> bool {
        self.mask & libc::IN_Q_OVERFLOW != 0
    }
}

/// One inotify instance and the folders it watches.
pub(crate) struct Watches {
    fd: OwnedFd,
    dirs: HashMap<i32, PathBuf>,
}

impl Watches {
    pub fn new() -> io::Result<Watches> {
        // SAFETY: inotify_init1 makes a new descriptor, or fails.
        let fd =
            unsafe { new_fd(libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC).into())? };
        Ok(Watches {
            fd,
            dirs: HashMap::new(),
        })
    }

    /// Watch the folder `dir` (a link is followed only when `follow`: a writable path given as
    /// a link is where it leads). `ENOSPC` means the user's watches are used up.
    pub fn add(&mut self, dir: &Path, follow: bool) -> io::Result<()> {
        let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let mask = if follow {
            MASK
        } else {
            MASK | libc::IN_DONT_FOLLOW
        };
        // SAFETY: `c` is a NUL-terminated path that outlives the call.
        let wd = unsafe { libc::inotify_add_watch(self.fd.as_raw_fd(), c.as_ptr(), mask) };
        if wd < 0 {
            return Err(io::Error::last_os_error());
        }
        self.dirs.insert(wd, dir.to_path_buf());
        Ok(())
    }

    /// Every event queued so far.
    pub fn drain(&self) -> Vec<Event> {
        let mut out = Vec::new();
        // Aligned for `inotify_event`; large enough for many events per read.
        let mut buf = vec![0u64; 8192];
        loop {
            // SAFETY: `buf` is writable for its length in bytes.
            let n = unsafe {
                libc::read(
                    self.fd.as_raw_fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len() * std::mem::size_of::<u64>(),
                )
            };
            if n <= 0 {
                // EAGAIN: the queue is empty (EINTR cannot happen on a non-blocking read of
                // an inotify descriptor with events pending; anything else ends the drain).
                break;
            }
            // SAFETY: the kernel wrote `n` bytes into `buf`.
            let bytes =
                unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), n as usize) };
            parse(bytes, &self.dirs, &mut out);
        }
        out
    }
}

/// The events in one read's `bytes` (each an `inotify_event` followed by its NUL-padded name).
fn parse(bytes: &[u8], dirs: &HashMap<i32, PathBuf>, out: &mut Vec<Event>) {
    const HEAD: usize = std::mem::size_of::<libc::inotify_event>();
    let field = |at: usize| u32::from_ne_bytes(bytes[at..at + 4].try_into().unwrap_or([0; 4]));
    let mut at = 0;
    while at + HEAD <= bytes.len() {
        let wd = field(at) as i32;
        let mask = field(at + 4);
        let len = field(at + 12) as usize;
        let name_bytes = bytes.get(at + HEAD..at + HEAD + len).unwrap_or(&[]);
        at += HEAD + len;
        if mask & libc::IN_IGNORED != 0 {
            continue;
        }
        let name = name_bytes
            .split(|b| *b == 0)
            .next()
            .filter(|n| !n.is_empty());
        let dir = match dirs.get(&wd) {
            Some(d) => d.clone(),
            None if mask & libc::IN_Q_OVERFLOW != 0 => PathBuf::new(),
            None => continue,
        };
        out.push(Event {
            dir,
            name: name.map(|n| OsString::from_vec(n.to_vec())),
            mask,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_through_the_kernel_is_an_event_on_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = Watches::new().unwrap();
        w.add(dir.path(), true).unwrap();
        std::fs::write(dir.path().join("a.txt"), "x").unwrap();
        let events = w.drain();
        let on_a: u32 = events
            .iter()
            .filter(|e| e.dir == dir.path() && e.name.as_deref() == Some("a.txt".as_ref()))
            .fold(0, |m, e| m | e.mask);
        assert_ne!(on_a & libc::IN_CREATE, 0, "{events:?}");
        assert_ne!(on_a & libc::IN_CLOSE_WRITE, 0, "{events:?}");
        // Drained: nothing more.
        assert!(w.drain().is_empty());
    }

    #[test]
    fn an_overflow_is_kept_and_unknown_watches_dropped() {
        let mut raw = Vec::new();
        for (wd, mask, name) in [
            (-1i32, libc::IN_Q_OVERFLOW, &b""[..]),
            (7, libc::IN_CREATE, b"x\0\0\0"),
            (1, libc::IN_MODIFY, b"f\0\0\0\0\0\0\0"),
            (1, libc::IN_IGNORED, b""),
        ] {
            raw.extend_from_slice(&wd.to_ne_bytes());
            raw.extend_from_slice(&mask.to_ne_bytes());
            raw.extend_from_slice(&0u32.to_ne_bytes());
            raw.extend_from_slice(&(name.len() as u32).to_ne_bytes());
            raw.extend_from_slice(name);
        }
        let dirs = HashMap::from([(1, PathBuf::from("/p"))]);
        let mut out = Vec::new();
        parse(&raw, &dirs, &mut out);
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(out[0].overflowed());
        assert_eq!(out[1].dir, Path::new("/p"));
        assert_eq!(out[1].name.as_deref(), Some("f".as_ref()));
    }
}
