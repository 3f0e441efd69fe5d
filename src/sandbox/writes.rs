//! Landlock: reading and executing stay allowed everywhere (they are not handled by the
//! ruleset); every kind of write is denied except beneath the given paths, `/dev/null` and the
//! terminal. Applied by the launcher to itself, so the command and all its children inherit it.

use super::message::{Message, Setting};
use landlock::{
    ABI, AccessFs, PathBeneath, PathFd, RestrictionStatus, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus,
};
use std::path::{Path, PathBuf};

/// Always writable: the bit bucket and the controlling terminal.
const ALWAYS_WRITABLE: [&str; 2] = ["/dev/null", "/dev/tty"];

/// The ABI whose rights are handled: [`super::caps::MIN_LANDLOCK_ABI`] (3), or 5 where the
/// kernel has it, which adds `ioctl` on device files (allowed only on the writable paths).
fn abi_for(kernel_abi: Option<u32>) -> ABI {
    if kernel_abi.is_some_and(|v| v >= 5) {
        ABI::V5
    } else {
        ABI::V3
    }
}

/// Why a Landlock restriction is not in force.
#[derive(Debug, thiserror::Error)]
pub enum LandlockError {
    /// The kernel lacks what is needed (the text says what and how to get it).
    #[error("{0}")]
    Unavailable(String),
    /// The kernel has no Landlock scopes (ABI 6, Linux 6.12).
    #[error("{}", self.message())]
    NoScopes,
    /// Building or applying the ruleset failed.
    #[error("Landlock: {0}")]
    Ruleset(#[from] landlock::RulesetError),
    /// The kernel applied less than asked.
    #[error("{}", self.message())]
    NotEnforced {
        /// Which restriction.
        what: &'static str,
        /// The kernel's status, in words.
        status: &'static str,
    },
}

impl LandlockError {
    /// The error, with the setting that lets the run go on kept typed.
    pub fn message(&self) -> Message {
        match self {
            LandlockError::NoScopes => Message::text(
                "abstract Unix sockets cannot be closed: that needs Landlock ABI 6 (Linux 6.12); \
                 drop ",
            )
            .and_setting(Setting::AllowedSockets)
            .and(", or keep the network isolated"),
            LandlockError::NotEnforced { what, status } => Message::text(format!(
                "Landlock enforced {what} only partly or not at all (kernel status {status}); "
            ))
            .and_setting(Setting::BestEffort)
            .and(" runs without it, with a warning"),
            other => Message::text(other.to_string()),
        }
    }
}

/// Restrict this process (and its future children) to writing beneath `writable`.
/// Returns warnings (e.g. a writable path that does not exist); `Err` says what failed.
pub fn restrict_writes(writable: &[PathBuf]) -> Result<Vec<String>, LandlockError> {
    if let Some(problem) = super::caps::linux::landlock_problem(super::caps::linux::landlock_abi())
    {
        return Err(LandlockError::Unavailable(problem));
    }
    let mut warnings = Vec::new();
    let abi = abi_for(super::caps::linux::landlock_abi().ok());
    // Every write `abi` knows: create, remove, rename/link across directories, write,
    // truncate (and device ioctls); handled, so denied outside the rules.
    let rights = AccessFs::from_write(abi);
    let mut ruleset = Ruleset::default().handle_access(rights)?.create()?;
    let always = ALWAYS_WRITABLE.iter().map(|p| (Path::new(p), false));
    let given = writable.iter().map(|p| (p.as_path(), true));
    for (path, explicit) in always.chain(given) {
        let fd = match PathFd::new(path) {
            Ok(fd) => fd,
            Err(e) => {
                if explicit {
                    // The crate's own text quotes the path Rust-style: say it once, plainly.
                    let why = match &e {
                        landlock::PathFdError::OpenCall { source, .. } => source.to_string(),
                        other => other.to_string(),
                    };
                    warnings.push(format!(
                        "writable path `{}` is not usable (cannot open it: {why}); it stays read-only",
                        crate::command::escape_controls(&path.display().to_string())
                    ));
                }
                continue;
            }
        };
        let access = if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
            rights
        } else {
            rights & AccessFs::from_file(abi)
        };
        ruleset = ruleset.add_rule(PathBeneath::new(fd, access))?;
    }
    fully(ruleset.restrict_self()?, "the write restriction")?;
    Ok(warnings)
}

/// Landlock scope (ABI 6): no connecting to abstract Unix sockets made outside the sandbox
/// (the host's D-Bus session bus often is one). For runs that may use the network and some
/// named Unix sockets, where no network namespace separates the abstract ones.
pub fn scope_abstract_sockets() -> Result<(), LandlockError> {
    match super::caps::linux::landlock_abi() {
        Ok(v) if v >= 6 => {}
        _ => return Err(LandlockError::NoScopes),
    }
    let ruleset = Ruleset::default().scope(landlock::Scope::AbstractUnixSocket)?;
    fully(
        ruleset.create()?.restrict_self()?,
        "the scope for abstract sockets",
    )
}

/// `NotEnforced` unless the kernel enforced `what` in full.
fn fully(status: RestrictionStatus, what: &'static str) -> Result<(), LandlockError> {
    // The kernel's answer in words (not the crate's Rust names).
    let status = match status.ruleset {
        RulesetStatus::FullyEnforced => return Ok(()),
        RulesetStatus::PartiallyEnforced => "partly enforced",
        RulesetStatus::NotEnforced => "not enforced",
    };
    Err(LandlockError::NotEnforced { what, status })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_is_among_the_handled_writes() {
        let r = AccessFs::from_write(abi_for(Some(3)));
        assert!(r.contains(AccessFs::Truncate));
        assert!(!r.contains(AccessFs::IoctlDev));
        assert!(AccessFs::from_write(abi_for(Some(7))).contains(AccessFs::IoctlDev));
        assert!(r.contains(AccessFs::WriteFile));
        assert!(r.contains(AccessFs::MakeReg));
        assert!(!r.contains(AccessFs::ReadFile));
        assert!(!r.contains(AccessFs::Execute));
    }
}
