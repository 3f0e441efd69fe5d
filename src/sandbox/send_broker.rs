//! Sends that can name a destination, made by the run's init: `sendto(2)` with an address,
//! `sendmsg(2)` and `sendmmsg(2)` of the command, handed over by the filter of
//! `unix_sockets` when sockets are named (see `connect_broker`, which serves the listener).
//!
//! A datagram Unix socket reaches any socket path its `sendto`/`sendmsg` names, whatever it
//! is connected to, and Landlock (up to ABI 7) does not govern that. A filter sees `sendto`'s
//! address pointer but not the address, and nothing of `sendmsg`'s, which lives in memory the
//! caller can change after any check. So init makes every such call itself, on copies:
//! - the message (address, data, control data) is copied once out of the caller's memory;
//!   what the caller changes afterwards counts for nothing;
//! - the socket is a duplicate of the caller's (`pidfd_getfd`: the same open file, so its
//!   options, binding and non-blocking mode hold), taken once: a `dup2` over the caller's
//!   descriptor number changes nothing;
//! - an address naming a Unix socket by path is checked as for `connect` (a named socket, or
//!   one on the run's own `$TMPDIR`, by inode) and used through the checked descriptor; any
//!   other address is used as given, for the network namespace or the Landlock scope to
//!   decide; no address: where the socket is connected, which only the broker (or
//!   `socketpair`) can have set;
//! - control data passes only where init's privileges add nothing: descriptors
//!   (`SCM_RIGHTS`, each the caller's own, duplicated), credentials (`SCM_CREDENTIALS`, only
//!   the caller's own pid and ids), and the IP/IPv6/UDP options that need no privilege;
//!   any other control message is refused with EPERM.
//!
//! The receiver sees init as the sending process where it asks the kernel (`SO_PASSCRED`
//! without explicit credentials: init's pid, the same user and group). A datagram larger
//! than [`MAX_DATA`] fails with EMSGSIZE; a stream send is cut there, returning the count
//! sent, as a partial send may. `EPIPE` raises `SIGPIPE` in the caller, as the kernel would.

use super::caller::{Caller, Named, StatusIds, errno};
use std::os::fd::{AsRawFd, OwnedFd};

/// The most data init copies for one message (Unix datagrams are capped far below by the
/// send buffer, 208 KiB by default; UDP ones at 64 KiB).
const MAX_DATA: usize = 4 << 20;
/// The most control data for one message (the kernel's own cap, `optmem_max`, is smaller).
const MAX_CONTROL: usize = 64 << 10;
/// The most data buffers in one message, and messages in one `sendmmsg` (`UIO_MAXIOV`).
const MAX_IOV: usize = libc::UIO_MAXIOV as usize;
/// `UDP_SEGMENT` (linux/udp.h), missing from the libc crate for glibc.
const UDP_SEGMENT: i32 = 103;

/// The send the caller asked for, made by init: the bytes (or, for `sendmmsg`, messages)
/// sent, or the errno for the caller.
pub(super) fn send_for(caller: &Caller, named: &Named) -> Result<i64, i32> {
    let args = caller.req.data.args;
    let sock = caller.descriptor(args[0])?;
    let stream = socket_type(&sock)? == libc::SOCK_STREAM;
    match i64::from(caller.req.data.nr) {
        libc::SYS_sendto => {
            let [_, buf, len, flags, addr, addrlen] = args;
            let name = caller.sockaddr(addr, addrlen)?;
            let len = usize::try_from(len).map_err(|_| libc::EINVAL)?;
            let message = Message {
                name,
                data: read_data(caller, &[(buf, len)], stream)?,
                control: Vec::new(),
                _fds: Vec::new(),
            };
            send_one(caller, named, &sock, &message, flags)
        }
        libc::SYS_sendmsg => {
            let message = Message::copy(caller, args[1], stream)?;
            send_one(caller, named, &sock, &message, args[2])
        }
        libc::SYS_sendmmsg => {
            let [_, vec, vlen, flags, ..] = args;
            let size = std::mem::size_of::<libc::mmsghdr>() as u64;
            let len_at = std::mem::offset_of!(libc::mmsghdr, msg_len) as u64;
            let mut sent = 0u64;
            for i in 0..u64::from(vlen as u32).min(MAX_IOV as u64) {
                let at = vec.wrapping_add(i * size);
                let one = Message::copy(caller, at, stream)
                    .and_then(|m| send_one(caller, named, &sock, &m, flags));
                let n = match one {
                    Ok(n) => n,
                    Err(e) if sent == 0 => return Err(e),
                    Err(_) => break,
                };
                sent += 1;
                let len = (n as u32).to_ne_bytes();
                if caller.write(at.wrapping_add(len_at), &len).is_err() {
                    break;
                }
            }
            Ok(sent as i64)
        }
        _ => Err(libc::ENOSYS),
    }
}

/// One message, copied out of the caller.
struct Message {
    /// The destination address as the caller gave it (empty: none).
    name: Vec<u8>,
    data: Vec<u8>,
    /// Control data, checked, with the caller's descriptors replaced by init's duplicates.
    control: Vec<u8>,
    /// Those duplicates, held until the message is sent.
    _fds: Vec<OwnedFd>,
}

impl Message {
    /// Copy the `struct msghdr` at `at` in the caller, and what it points at.
    fn copy(caller: &Caller, at: u64, stream: bool) -> Result<Message, i32> {
        let mut raw = [0u8; std::mem::size_of::<libc::msghdr>()];
        caller.read(at, &mut raw)?;
        // SAFETY: any bytes are a valid msghdr of plain integers and pointers; the pointers
        // are the caller's addresses, only ever given back to process_vm_readv.
        let m: libc::msghdr = unsafe { std::ptr::read_unaligned(raw.as_ptr().cast()) };
        let name_len = (m.msg_namelen as usize).min(std::mem::size_of::<libc::sockaddr_storage>());
        let mut name = Vec::new();
        if !m.msg_name.is_null() && name_len > 0 {
            name = vec![0u8; name_len];
            caller.read(m.msg_name as u64, &mut name)?;
        }
        let iov_count = m.msg_iovlen;
        if iov_count > MAX_IOV {
            return Err(libc::EMSGSIZE);
        }
        let mut raw_iov = vec![0u8; iov_count * std::mem::size_of::<libc::iovec>()];
        caller.read(m.msg_iov as u64, &mut raw_iov)?;
        let iov: Vec<(u64, usize)> = raw_iov
            .chunks_exact(std::mem::size_of::<libc::iovec>())
            .map(|c| {
                let word = |i: usize| u64::from_ne_bytes(c[i..i + 8].try_into().expect("8 bytes"));
                (word(0), word(8) as usize)
            })
            .collect();
        let data = read_data(caller, &iov, stream)?;
        let mut control = Vec::new();
        let mut fds = Vec::new();
        if m.msg_controllen > 0 {
            if m.msg_controllen > MAX_CONTROL {
                return Err(libc::ENOBUFS);
            }
            control = vec![0u8; m.msg_controllen];
            caller.read(m.msg_control as u64, &mut control)?;
            fds = check_control(caller, &mut control)?;
        }
        Ok(Message {
            name,
            data,
            control,
            _fds: fds,
        })
    }
}

/// The data of the buffers `iov` (address, length) in the caller, up to [`MAX_DATA`]: beyond
/// it EMSGSIZE, or for a stream socket the first [`MAX_DATA`] bytes (a partial send).
fn read_data(caller: &Caller, iov: &[(u64, usize)], stream: bool) -> Result<Vec<u8>, i32> {
    let total = iov
        .iter()
        .try_fold(0usize, |sum, &(_, len)| {
            sum.checked_add(len).filter(|&s| s <= isize::MAX as usize)
        })
        .ok_or(libc::EINVAL)?;
    if total > MAX_DATA && !stream {
        return Err(libc::EMSGSIZE);
    }
    let mut left = total.min(MAX_DATA);
    let mut remote = Vec::new();
    for &(base, len) in iov {
        let take = len.min(left);
        if take > 0 {
            remote.push(libc::iovec {
                iov_base: base as *mut libc::c_void,
                iov_len: take,
            });
        }
        left -= take;
    }
    let mut data = Vec::new();
    data.try_reserve_exact(total.min(MAX_DATA))
        .map_err(|_| libc::ENOBUFS)?;
    data.resize(total.min(MAX_DATA), 0);
    caller.read_vectored(&remote, &mut data)?;
    Ok(data)
}

/// One control message in a control buffer: level, type, and where its data lies.
#[derive(Debug, PartialEq, Eq)]
struct Cmsg {
    level: i32,
    kind: i32,
    data: std::ops::Range<usize>,
}

/// The control messages in `buf`, walked as the kernel walks them; EINVAL for a malformed one.
fn control_messages(buf: &[u8]) -> Result<Vec<Cmsg>, i32> {
    let header = std::mem::size_of::<libc::cmsghdr>();
    let align = |n: usize| n.div_ceil(std::mem::size_of::<usize>()) * std::mem::size_of::<usize>();
    let mut out = Vec::new();
    let mut at = 0;
    while buf.len().saturating_sub(at) >= header {
        // SAFETY: `header` bytes from `at` are in `buf`; a cmsghdr is plain integers.
        let h: libc::cmsghdr = unsafe { std::ptr::read_unaligned(buf[at..].as_ptr().cast()) };
        let len = h.cmsg_len as usize;
        if len < header || len > buf.len() - at {
            return Err(libc::EINVAL);
        }
        out.push(Cmsg {
            level: h.cmsg_level,
            kind: h.cmsg_type,
            data: at + header..at + len,
        });
        at += align(len);
    }
    Ok(out)
}

/// Check the control data copied from the caller, replacing its descriptors with init's
/// duplicates (returned, to be held until sent). See the module docs for what passes.
fn check_control(caller: &Caller, buf: &mut [u8]) -> Result<Vec<OwnedFd>, i32> {
    let mut fds = Vec::new();
    for c in control_messages(buf)? {
        match (c.level, c.kind) {
            (libc::SOL_SOCKET, libc::SCM_RIGHTS) => {
                let end = c.data.end;
                for at in c.data.step_by(4).take_while(|at| at + 4 <= end) {
                    let theirs = i32::from_ne_bytes(buf[at..at + 4].try_into().expect("4"));
                    let ours = caller
                        .descriptor(theirs as u32 as u64)
                        .map_err(|_| libc::EBADF)?;
                    buf[at..at + 4].copy_from_slice(&ours.as_raw_fd().to_ne_bytes());
                    fds.push(ours);
                }
            }
            (libc::SOL_SOCKET, libc::SCM_CREDENTIALS) => {
                let d = &buf[c.data];
                if d.len() != std::mem::size_of::<libc::ucred>() {
                    return Err(libc::EINVAL);
                }
                let word = |i: usize| u32::from_ne_bytes(d[i..i + 4].try_into().expect("4"));
                let (pid, uid, gid) = (word(0) as i32, word(4), word(8));
                if !credentials_are_the_callers(&caller.ids()?, pid, uid, gid) {
                    return Err(libc::EPERM);
                }
            }
            (libc::IPPROTO_IP, libc::IP_PKTINFO | libc::IP_TOS | libc::IP_TTL)
            | (
                libc::IPPROTO_IPV6,
                libc::IPV6_PKTINFO | libc::IPV6_HOPLIMIT | libc::IPV6_TCLASS | libc::IPV6_DONTFRAG,
            )
            | (libc::SOL_UDP, UDP_SEGMENT) => {}
            _ => return Err(libc::EPERM),
        }
    }
    Ok(fds)
}

/// What the kernel lets an unprivileged process claim: its own pid, one of its user and
/// group ids. (init could claim more, having privileges in the run's namespaces.)
fn credentials_are_the_callers(ids: &StatusIds, pid: i32, uid: u32, gid: u32) -> bool {
    pid == ids.tgid && ids.uids.contains(&uid) && ids.gids.contains(&gid)
}

/// `SO_TYPE` of a socket; ENOTSOCK for any other descriptor.
fn socket_type(sock: &OwnedFd) -> Result<i32, i32> {
    let mut kind: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt into an int of the size given.
    let r = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TYPE,
            (&raw mut kind).cast(),
            &mut len,
        )
    };
    if r == 0 { Ok(kind) } else { Err(errno()) }
}

/// Send `m` on `sock` (the caller's socket), to its address if it has one, once checked.
fn send_one(
    caller: &Caller,
    named: &Named,
    sock: &OwnedFd,
    m: &Message,
    flags: u64,
) -> Result<i64, i32> {
    let dest = (!m.name.is_empty())
        .then(|| caller.destination(&m.name, named))
        .transpose()?;
    // All read: it was the caller's only if its call still waits (its thread id not reused).
    caller.still_waiting()?;
    let mut address = dest.as_ref().map(|d| d.address()).unwrap_or_default();
    let mut iov = libc::iovec {
        iov_base: m.data.as_ptr() as *mut libc::c_void,
        iov_len: m.data.len(),
    };
    let mut control = m.control.clone();
    // SAFETY: a zeroed msghdr is valid; every pointer set below is into a buffer alive for
    // the call, with its length.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    if !address.is_empty() {
        msg.msg_name = address.as_mut_ptr().cast();
        msg.msg_namelen = address.len() as libc::socklen_t;
    }
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if !control.is_empty() {
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = control.len();
    }
    let flags = flags as libc::c_int;
    // MSG_NOSIGNAL: a SIGPIPE is the caller's, not init's.
    // SAFETY: see above.
    let n = unsafe { libc::sendmsg(sock.as_raw_fd(), &msg, flags | libc::MSG_NOSIGNAL) };
    if n >= 0 {
        return Ok(n as i64);
    }
    let e = errno();
    if e == libc::EPIPE
        && flags & libc::MSG_NOSIGNAL == 0
        && let Ok(ids) = caller.ids()
    {
        // SAFETY: a signal to the waiting thread, checked to be the caller just now.
        unsafe { libc::syscall(libc::SYS_tgkill, ids.tgid, caller.tid, libc::SIGPIPE) };
    }
    Err(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_must_be_the_callers_own() {
        let ids = StatusIds {
            tgid: 7,
            uids: [1000, 1000, 1000],
            gids: [100, 100, 100],
        };
        // The caller's own, then another pid, user, group.
        let claims = [(7, 1000, 100), (1, 1000, 100), (7, 0, 100), (7, 1000, 0)];
        for (i, (pid, uid, gid)) in claims.into_iter().enumerate() {
            assert_eq!(credentials_are_the_callers(&ids, pid, uid, gid), i == 0);
        }
    }

    fn cmsg(level: i32, kind: i32, data: &[u8]) -> Vec<u8> {
        let header = std::mem::size_of::<libc::cmsghdr>();
        let mut out = vec![0u8; header];
        out[..8].copy_from_slice(&((header + data.len()) as u64).to_ne_bytes());
        out[8..12].copy_from_slice(&level.to_ne_bytes());
        out[12..16].copy_from_slice(&kind.to_ne_bytes());
        out.extend_from_slice(data);
        while !out.len().is_multiple_of(8) {
            out.push(0);
        }
        out
    }

    #[test]
    fn control_messages_are_walked_as_the_kernel_does() {
        let mut buf = cmsg(libc::SOL_SOCKET, libc::SCM_RIGHTS, &[1, 0, 0, 0]);
        buf.extend(cmsg(libc::IPPROTO_IP, libc::IP_TTL, &[9, 0, 0, 0]));
        let got = control_messages(&buf).unwrap();
        assert_eq!(
            got,
            [
                Cmsg {
                    level: libc::SOL_SOCKET,
                    kind: libc::SCM_RIGHTS,
                    data: 16..20
                },
                Cmsg {
                    level: libc::IPPROTO_IP,
                    kind: libc::IP_TTL,
                    data: 40..44
                }
            ]
        );
        // Trailing bytes shorter than a header are ignored, as the kernel does.
        buf.extend([0u8; 8]);
        assert_eq!(control_messages(&buf).unwrap().len(), 2);
        // A length past the end, or shorter than the header, is malformed.
        let mut bad = cmsg(libc::SOL_SOCKET, libc::SCM_RIGHTS, &[1, 0, 0, 0]);
        bad[0] = 200;
        assert_eq!(control_messages(&bad), Err(libc::EINVAL));
        bad[0] = 4;
        assert_eq!(control_messages(&bad), Err(libc::EINVAL));
        assert!(control_messages(&[]).unwrap().is_empty());
    }
}
