//! The one way tests start the built `skillpipe` (and the examples, and test binaries that do):
//! detached from the terminal the tests run in. The child starts a new session, so it has no
//! controlling terminal and cannot open `/dev/tty`: a confirmation prompt can never appear on
//! the developer's screen and wait there; it is refused as non-interactive, as in CI. Tests
//! that are about a terminal give skillpipe one of its own (a pty or tmux, `tests/repl/`).

use std::os::unix::process::CommandExt;
use std::process::Command;

/// The built binary.
pub const BIN: &str = env!("CARGO_BIN_EXE_skillpipe");

/// `cmd`, to be started in a new session (no controlling terminal).
pub fn detach(cmd: &mut Command) -> &mut Command {
    // SAFETY: setsid is async-signal-safe and touches only the child.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd
}

/// `program`, detached.
pub fn detached(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut c = Command::new(program);
    detach(&mut c);
    c
}

/// The built `skillpipe`, detached.
pub fn skillpipe() -> Command {
    detached(BIN)
}

/// [`skillpipe`] as an `assert_cmd` command.
pub fn skillpipe_cmd() -> assert_cmd::Command {
    assert_cmd::Command::from_std(skillpipe())
}
