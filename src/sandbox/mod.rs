//! OS enforcement of the policy's restrictions. The decision lives in `policy`; this module only
//! applies what it is told to, and fails closed when it cannot.

use std::path::PathBuf;

/// Restrictions requested for one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxSpec {
    /// Fresh network namespace: no route out.
    pub isolate_network: bool,
    /// Landlock: write only to `writable` paths.
    pub restrict_filesystem: bool,
    /// Paths that stay writable under `restrict_filesystem` (the per-run TMPDIR first).
    pub writable: Vec<PathBuf>,
    /// Refuse (instead of warn) when a restriction cannot be enforced.
    pub required: bool,
}

/// Arguments of the hidden launcher subcommand.
#[derive(Debug, Clone, clap::Args)]
pub struct LaunchArgs {
    /// The command and its arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub argv: Vec<std::ffi::OsString>,
}

pub fn launch(_args: LaunchArgs) -> anyhow::Result<i32> {
    anyhow::bail!("the sandbox launcher is not built yet")
}
