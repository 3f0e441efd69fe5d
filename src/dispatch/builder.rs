//! How a host sets a [`Dispatcher`] up: its skills, audit log, asker, wording and the launcher
//! that sandboxes each command, checked when it is built.

use super::Dispatcher;
use crate::audit::AuditLog;
use crate::confirm::{self, Answer, AskError, Confirmer, Prompt};
use crate::exec::ExecError;
use crate::policy::{self, AuditMode, ScriptPolicy};
use crate::sandbox::LauncherError;
use crate::skills::SkillSet;
use std::ffi::OsString;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

/// An answer that may take a while: a terminal key press, or a protocol peer's reply.
pub type AskFuture<'a> = Pin<Box<dyn Future<Output = Result<Answer, AskError>> + Send + 'a>>;

/// Asks the user whether a command may run, answered asynchronously (see
/// [`DispatcherBuilder::asker`]): what the dispatcher holds. An `Err` is a decline with that
/// reason (a host's own reason goes in [`AskError::Other`]). Only from skillpipe's own terminal
/// prompt is [`AskError::Interrupted`] more: the process is then sent the SIGINT the terminal
/// would have sent (see [`crate::exec::raise_interrupt`]); a host's asker never gets its process
/// signalled.
pub(crate) type AsyncAsker = dyn for<'a> Fn(&'a Prompt<'a>) -> AskFuture<'a> + Send + Sync;

/// Advice after a failed run, typed and worded, from its result (see
/// [`DispatcherBuilder::advise`]).
pub type Advisor = fn(&crate::exec::RunResult) -> Option<crate::exec::Advice>;

/// How a dispatcher words the refusals it reports (the outcome, hence the report, the audit
/// line and what the model is told). The library's is each reason's `Display`, in the
/// policy's terms; the `skillpipe` binary adds its command-line flags (`advice::cli`).
#[derive(Clone, Copy)]
pub(crate) struct Wording {
    /// A policy refusal.
    pub(crate) denied: fn(&policy::Denied) -> String,
    /// A confirmation that got no answer.
    pub(crate) ask: fn(&AskError) -> String,
    /// A command that could not be started (e.g. the sandbox cannot be set up).
    pub(crate) exec: fn(&ExecError) -> String,
    /// What a failed run likely ran into, typed and worded (`RunResult::advice`), from its
    /// facts: the front end's advisor (`crate::advice`); the core has none.
    pub(crate) advise: Advisor,
    /// A setting a sandbox message names (`RunSpec::settings`, `ExecError::Sandbox`).
    pub(crate) setting: fn(&crate::sandbox::Setting) -> String,
    /// An audit log that cannot be written, when `audit = "required"` refuses the run.
    pub(crate) audit: fn(&crate::audit::AuditError) -> String,
}

impl Default for Wording {
    fn default() -> Self {
        Wording {
            denied: |d| d.to_string(),
            ask: |e| e.to_string(),
            exec: |e| e.to_string(),
            advise: |_| None,
            setting: |s| s.to_string(),
            audit: |e| e.to_string(),
        }
    }
}

/// Which program sets up the sandbox of each command: a fresh single-threaded process that
/// applies the restrictions to itself, then execs the command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Launcher {
    /// This program if it called [`crate::sandbox::run_if_launcher`] (the `skillpipe` binary
    /// does), else the first `skillpipe` on `PATH` that answers the launcher handshake.
    #[default]
    Auto,
    /// This program. It must call [`crate::sandbox::run_if_launcher`] first thing in `main`,
    /// before any thread starts.
    ThisProgram,
    /// This skillpipe binary (checked with the launcher handshake).
    Path(PathBuf),
}

impl Launcher {
    /// The program to run as launcher, or why there is none.
    pub fn resolve(&self) -> Result<PathBuf, LauncherError> {
        crate::sandbox::check_not_in_failed_launcher()?;
        match self {
            Launcher::ThisProgram => crate::sandbox::this_program(),
            Launcher::Auto => crate::sandbox::auto_launcher(),
            Launcher::Path(p) => {
                crate::sandbox::handshake(p)?;
                Ok(p.clone())
            }
        }
    }
}

/// Why a [`Dispatcher`] could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The policy is not valid.
    #[error("script policy: {0}")]
    Policy(#[from] crate::policy::PolicyError),
    /// Commands may run but no sandbox launcher can be used.
    #[error(transparent)]
    Launcher(#[from] LauncherError),
    /// The policy says `audit = "required"` but there is no log to write: nothing could run.
    #[error(
        "the policy requires an audit log (audit = \"required\") but none was given \
         (DispatcherBuilder::audit with a path), so no command could run"
    )]
    NoAuditLog,
}

/// Builds a [`Dispatcher`]; see [`Dispatcher::builder`].
///
/// A launcher that cannot be used fails [`build`](Self::build), never a directive later on; a
/// policy that runs nothing needs no launcher at all.
///
/// ```
/// use skillpipe::dispatch::BuildError;
/// use skillpipe::policy::Decision;
/// use skillpipe::{Dispatcher, Kind, Launcher, Outcome, ScriptPolicy};
///
/// let policy = ScriptPolicy::allowing(["echo"]);
/// let built = Dispatcher::builder(policy)
///     .launcher(Launcher::Path("/nonexistent/skillpipe".into()))
///     .build();
/// let Err(err @ BuildError::Launcher(_)) = built else {
///     panic!("a launcher that does not exist must fail the build");
/// };
/// assert!(err.to_string().contains("/nonexistent/skillpipe"));
///
/// // The default policy runs nothing: every directive is blocked, with the reason.
/// let dispatcher = Dispatcher::builder(ScriptPolicy::default())
///     .launcher(Launcher::ThisProgram)
///     .build()?;
/// let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
/// match rt.block_on(dispatcher.run_body(Kind::SideEffect, "say hi")) {
///     Outcome::Blocked { decision, reason, .. } => {
///         assert_eq!(decision, Decision::Denied);
///         assert!(reason.contains("allow_scripts"));
///     }
///     Outcome::Ran(_) => panic!("nothing may run under the default policy"),
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct DispatcherBuilder {
    policy: ScriptPolicy,
    skills: Arc<SkillSet>,
    audit: AuditLog,
    asker: Option<(Box<AsyncAsker>, bool)>,
    agent: Option<String>,
    launcher: Launcher,
    wording: Wording,
}

impl DispatcherBuilder {
    /// The skills whose scripts directives may name (default: none).
    pub fn skills(mut self, skills: Arc<SkillSet>) -> Self {
        self.skills = skills;
        self
    }

    /// Where each decision is logged (default: no log).
    pub fn audit(mut self, audit: AuditLog) -> Self {
        self.audit = audit;
        self
    }

    /// The agent named in audit lines.
    pub fn agent(mut self, agent: impl Into<String>) -> Self {
        self.agent = Some(agent.into());
        self
    }

    /// How to ask before a run when the policy says `confirm = "ask"`. Default: with the `cli`
    /// feature (on by default), a single key press on `/dev/tty`, declined where there is no
    /// terminal; without it, every confirmation is declined ([`AskError::NoAsker`]), so a
    /// library never draws on a terminal it was not given.
    pub fn asker(
        self,
        asker: impl Fn(&Prompt<'_>) -> Result<Answer, AskError> + Send + Sync + 'static,
    ) -> Self {
        self.async_asker(move |p| Box::pin(std::future::ready(asker(p))))
    }

    /// An asker already boxed (the app layer passes the REPL's terminal prompt, which reads
    /// Ctrl-C as a key, or an MCP client's).
    pub(crate) fn boxed_asker(mut self, asker: Box<AsyncAsker>, terminal: bool) -> Self {
        self.asker = Some((asker, terminal));
        self
    }

    /// How refusals are worded (the binary's adds its flags).
    pub(crate) fn wording(mut self, wording: Wording) -> Self {
        self.wording = wording;
        self
    }

    /// What a failed run is told (`RunResult::advice`), from its facts: none
    /// unless given, e.g. `skillpipe::advice::for_library`.
    pub fn advise(mut self, advise: Advisor) -> Self {
        self.wording.advise = advise;
        self
    }

    /// [`DispatcherBuilder::asker`] answered asynchronously (e.g. by a protocol peer).
    pub fn async_asker(
        mut self,
        asker: impl for<'a> Fn(&'a Prompt<'a>) -> AskFuture<'a> + Send + Sync + 'static,
    ) -> Self {
        self.asker = Some((Box::new(asker), false));
        self
    }

    /// The sandbox launcher (default [`Launcher::Auto`]).
    pub fn launcher(mut self, launcher: Launcher) -> Self {
        self.launcher = launcher;
        self
    }

    /// Checks the policy and, when it lets anything run, the rest of the setup: a launcher
    /// that cannot be used (not found, not a launcher, this program without the hook or with
    /// the hook called after threads started) and a required audit log with no path are errors
    /// now rather than a refusal at every directive.
    pub fn build(self) -> Result<Dispatcher, BuildError> {
        let compiled = self.policy.compile()?;
        if self.policy.allow_scripts
            && self.policy.audit == AuditMode::Required
            && self.audit.path().is_none()
        {
            return Err(BuildError::NoAuditLog);
        }
        let launcher = if self.policy.allow_scripts {
            Some(self.launcher.resolve()?)
        } else {
            None
        };
        Ok(Dispatcher::assemble(self, compiled, launcher))
    }
}

/// The asker when the host gives none: with the `cli` feature (the `skillpipe` binary's), a key
/// press on `/dev/tty`; without it, a decline: a library never takes over a terminal unasked.
fn default_ask(p: &Prompt<'_>) -> Result<Answer, AskError> {
    #[cfg(feature = "cli")]
    return confirm::ask_tty(p);
    #[cfg(not(feature = "cli"))]
    {
        let _ = p;
        Err(AskError::NoAsker)
    }
}

/// Runs the default prompt, which blocks for a key press: on a multi-thread runtime its worker's
/// other tasks (a signal's handler among them) move to another thread meanwhile, so a signal
/// still stops skillpipe while the prompt waits. (A host's own asker is called as it is.)
fn blocking<T>(ask: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(ask),
        _ => ask(),
    }
}

impl Dispatcher {
    /// Starts building a dispatcher for `policy`.
    pub fn builder(policy: ScriptPolicy) -> DispatcherBuilder {
        DispatcherBuilder {
            policy,
            skills: Arc::default(),
            audit: AuditLog::new(None),
            asker: None,
            agent: None,
            launcher: Launcher::Auto,
            wording: Wording::default(),
        }
    }

    /// A dispatcher using the process's default launcher (for tests inside the crate).
    /// Panics on a policy that does not compile (tests only ever pass valid ones).
    #[cfg(test)]
    pub(crate) fn new(policy: ScriptPolicy, skills: Arc<SkillSet>, audit: AuditLog) -> Dispatcher {
        let compiled = policy.compile().expect("a valid policy");
        Dispatcher::assemble(
            Dispatcher::builder(policy).skills(skills).audit(audit),
            compiled,
            None,
        )
    }

    /// The dispatcher `b` describes, its policy compiled and its launcher resolved.
    fn assemble(
        b: DispatcherBuilder,
        compiled: policy::CompiledPolicy,
        launcher: Option<PathBuf>,
    ) -> Dispatcher {
        let policy = b.policy;
        let passed = |k: &OsString| policy.env_passthrough.iter().any(|p| k == p.as_str());
        let base_env = std::env::vars_os().filter(|(k, _)| passed(k)).collect();
        let (asker, asker_is_terminal) = b.asker.unwrap_or_else(|| {
            let ask: Box<AsyncAsker> =
                Box::new(|p| Box::pin(std::future::ready(blocking(|| default_ask(p)))));
            (ask, cfg!(feature = "cli"))
        });
        Dispatcher {
            confirmer: Mutex::new(Confirmer::new(policy.confirm)),
            asking: tokio::sync::Mutex::new(()),
            policy,
            compiled,
            skills: b.skills,
            audit: b.audit,
            asker,
            asker_is_terminal,
            agent: b.agent,
            base_env,
            launcher,
            wording: b.wording,
            safe_path: Mutex::default(),
        }
    }

    /// Replaces the terminal prompt (tests inside the crate).
    #[cfg(test)]
    pub(crate) fn with_asker(
        mut self,
        asker: impl Fn(&Prompt<'_>) -> Result<Answer, AskError> + Send + Sync + 'static,
    ) -> Self {
        self.asker = Box::new(move |p| Box::pin(std::future::ready(asker(p))));
        self.asker_is_terminal = false;
        self
    }
}
