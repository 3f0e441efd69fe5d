//! One command from request to result: parse, resolve, policy decision, confirmation, audit, run.
//!
//! Every caller (filter, chat loop, native tool calls, `skillpipe run`) goes through
//! [`Dispatcher`], so a blocked command is refused, and every decision audited, in one place.

use crate::audit::{AuditLog, Decision, Record};
use crate::command::{self, Argv0Kind, Target};
use crate::confirm::{self, Answer, AskError, Confirmer, Prompt, Verdict};
use crate::exec::{self, ExecError, RunResult, RunSpec};
use crate::policy::{self, AuditMode, ScriptPolicy};
use crate::sandbox::{LauncherError, SandboxSpec};
use crate::scan::Kind;
use crate::skills::{ResolvedScript, SkillSet, Tool, ToolInput};
use std::ffi::OsString;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Where a request came from; recorded as the audit line's `kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A `%{…}` directive.
    SideEffect,
    /// A `!{…}` directive.
    Capture,
    /// `skillpipe run`.
    Run,
    /// A native tool call.
    Tool,
    /// A `tools/call` from an MCP client (`skillpipe mcp`).
    Mcp,
}

impl Origin {
    /// The audit log's name for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::SideEffect => "side_effect",
            Origin::Capture => "capture",
            Origin::Run => "run",
            Origin::Tool => "tool",
            Origin::Mcp => "mcp",
        }
    }
}

impl From<Kind> for Origin {
    fn from(k: Kind) -> Origin {
        match k {
            Kind::SideEffect => Origin::SideEffect,
            Kind::Capture => Origin::Capture,
        }
    }
}

/// What happened to a request. Complete by nature (it ran, or it did not): a new kind of
/// refusal is a new [`Decision`], so this stays exhaustive.
#[derive(Debug, Clone)]
#[allow(
    clippy::large_enum_variant,
    reason = "a run is the common outcome: boxing it would allocate once per command for nothing"
)]
pub enum Outcome {
    /// It ran; see [`Ran`].
    Ran(Ran),
    /// Not run: denied, declined or invalid, with a one-line reason.
    Blocked {
        /// Which refusal it was.
        decision: Decision,
        /// Why, in one line (as the audit log and the model get it).
        reason: String,
        /// When the policy refused it: what and why, typed (the pattern, or one that would
        /// allow it).
        denied: Option<policy::Denied>,
    },
}

/// A command that ran.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Ran {
    /// Exit status, output, duration and the sandbox in force.
    pub result: RunResult,
    /// The skill whose script it was, if any.
    pub skill: Option<String>,
    /// The script's resolved path, if it was a script.
    pub script_path: Option<PathBuf>,
    /// The arguments (and stdin input) the audit log cut, with their length and digest, as
    /// its line says (`argv_cut`, `stdin_cut`).
    pub cut: Box<[crate::audit::Cut]>,
}

impl Outcome {
    /// True when the command ran and exited 0.
    pub fn succeeded(&self) -> bool {
        matches!(self, Outcome::Ran(r) if r.result.success())
    }
}

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
pub type Advisor = fn(&crate::exec::RunResult) -> Option<crate::exec::Advised>;

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
    /// What a failed run likely ran into, typed and worded (`RunResult::advice` and `hint`),
    /// from its facts: the front end's advisor (`crate::advice`); the core has none.
    pub(crate) advise: Advisor,
    /// A setting a sandbox message names (`RunResult::warnings`, `ExecError::Sandbox`).
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

/// Runs directives: parse, resolve, policy decision, confirmation, audit, sandboxed run.
///
/// Built with [`Dispatcher::builder`]; the launcher that sets up each command's sandbox is
/// settled (and checked) when it is built, see [`Launcher`].
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use skillpipe::{Dispatcher, Kind, Launcher, ScriptPolicy};
///
/// let policy = ScriptPolicy::allowing(["echo"]);
/// let dispatcher = Dispatcher::builder(policy)
///     .launcher(Launcher::Path("/usr/local/bin/skillpipe".into()))
///     .asker(|_prompt| Ok(skillpipe::confirm::Answer::Once))
///     .build()?;
/// let outcome = dispatcher.run_body(Kind::Capture, "echo hello").await;
/// assert!(outcome.succeeded());
/// # Ok(()) }
/// ```
pub struct Dispatcher {
    policy: ScriptPolicy,
    /// Its patterns, parsed once.
    compiled: policy::CompiledPolicy,
    skills: Arc<SkillSet>,
    audit: AuditLog,
    confirmer: Mutex<Confirmer>,
    /// One question at a time: concurrent calls queue for the user instead of talking over
    /// each other, and an "always" given meanwhile is honoured.
    asking: tokio::sync::Mutex<()>,
    asker: Box<AsyncAsker>,
    /// The asker is one of skillpipe's own terminal prompts, which read Ctrl-C as a key: its
    /// [`AskError::Interrupted`] is turned back into the SIGINT the terminal would have sent.
    /// A host's own asker gets no signal sent to its process: its `Interrupted` is a decline.
    asker_is_terminal: bool,
    agent: Option<String>,
    /// The inherited environment, already reduced to `env_passthrough`.
    base_env: Vec<(OsString, OsString)>,
    /// The sandbox launcher; `None`: the process default ([`crate::sandbox::launcher_path`]).
    launcher: Option<PathBuf>,
    wording: Wording,
    /// Per interpreter, whether it takes `-P` (Python 3.11 and later): asked it once, in the
    /// sandbox its runs get.
    safe_path: Mutex<std::collections::HashMap<OsString, bool>>,
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

    /// What a failed run is told (`RunResult::advice` and `hint`), from its facts: none
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

/// PATH used to find programs when the policy passes no PATH through.
const FALLBACK_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

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
            let ask: Box<AsyncAsker> = Box::new(|p| Box::pin(std::future::ready(default_ask(p))));
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

    /// The policy every request is judged by.
    pub fn policy(&self) -> &ScriptPolicy {
        &self.policy
    }

    /// The skills whose scripts may run.
    pub fn skills(&self) -> &Arc<SkillSet> {
        &self.skills
    }

    /// What a model writing for this dispatcher may be told (DESIGN §7): every directive when a
    /// script or command may run (the master switch on, and a skill with a script or a pattern
    /// for a command besides skill scripts); only the built-in skill read when skills are loaded
    /// but nothing may run; nothing at all otherwise.
    pub fn announced(&self) -> crate::scan::Announced {
        use crate::scan::Announced;
        let scripts =
            (self.skills.iter()).any(|s| !s.scripts().is_empty() || s.tools().next().is_some());
        let commands = (self.policy.allowed_commands.iter()).any(|p| !p.starts_with("scripts/"));
        if self.policy.allow_scripts && (scripts || commands) {
            Announced::Full
        } else if !self.skills.is_empty() {
            Announced::SkillReads
        } else {
            Announced::Nothing
        }
    }

    /// Whether the policy's patterns could allow some call of the skill script or tool
    /// `reference` (`SKILL:ID`, `SKILL/scripts/x.py`); the master switch and confirmation are
    /// not looked at. One that does not resolve counts as could: its call says why it cannot.
    pub(crate) fn could_run(&self, reference: &str) -> bool {
        match self.skills.resolve(reference) {
            Ok(script) => self.compiled.could_allow(&script.policy_target(&[])),
            Err(_) => true,
        }
    }

    /// A directive body: parsed into argv (shell syntax is invalid), then as `Self::run_argv`.
    pub async fn run_body(&self, kind: Kind, body: &str) -> Outcome {
        let origin = Origin::from(kind);
        let parsed = command::parse_argv(body);
        if let Ok(argv) = &parsed
            && is_builtin_skill(argv)
        {
            // Reading a loaded skill runs nothing, so it needs no --allow-scripts.
            return self.read_skill(origin, argv, true);
        }
        if !self.policy.allow_scripts {
            // Nothing runs without the master switch; say so before judging the syntax.
            let argv = vec![body.to_string()];
            return self.denied(origin, &argv, None, None, policy::Denied::ScriptsOff);
        }
        match parsed {
            Ok(argv) => self.run_argv(origin, argv, None).await,
            Err(e) => {
                let mut why = e.to_string();
                // `$SKILL_DIR/scripts/x.py` as a SKILL.md wrote it: say what to write instead.
                let placeholder =
                    (e.offset()).and_then(|at| crate::skills::written::placeholder_at(body, at));
                if let Some(p) = placeholder {
                    why.push_str(&crate::skills::written::placeholder_advice(p));
                }
                self.refuse(origin, &[body.to_string()], Decision::Invalid, why)
            }
        }
    }

    /// Runs argv (`argv[0]` a skill script reference or a system command) if the policy allows.
    /// `stdin` is JSON input (`run --input`, a native tool call); for a tool that takes JSON
    /// without it, the directive's `--flags` become that input (see [`crate::skills::Tool`]).
    /// The steps: refuse early, plan (resolve and decide), confirm, build the run, run and
    /// report; each returns the refusal that ends it.
    pub(crate) async fn run_argv(
        &self,
        origin: Origin,
        argv: Vec<String>,
        stdin: Option<Vec<u8>>,
    ) -> Outcome {
        if let Some(refused) = self.refuse_early(origin, &argv, stdin.as_deref()) {
            return refused;
        }
        if is_builtin_skill(&argv) {
            return self.read_skill(origin, &argv, true);
        }
        let planned = match self.plan(origin, argv, stdin) {
            Ok(planned) => planned,
            Err(refused) => return refused,
        };
        let reads = match self.confirm_planned(origin, &planned).await {
            Ok(reads) => reads,
            Err(refused) => return refused,
        };
        let spec = self.run_spec(&planned, &reads);
        self.execute(origin, planned, spec).await
    }

    /// Step: what cannot be a command (empty, a word it cannot pass), or comes while skillpipe
    /// is stopping, is refused before anything is looked up.
    fn refuse_early(
        &self,
        origin: Origin,
        argv: &[String],
        input: Option<&[u8]>,
    ) -> Option<Outcome> {
        let (decision, why) = if argv.is_empty() {
            (Decision::Invalid, "empty command".to_string())
        } else if let Some(e) = argv.iter().find_map(|w| command::check_word(w).err()) {
            (Decision::Invalid, e.to_string())
        } else if let Some(sig) = crate::exec::interrupted_by() {
            // A signal is stopping skillpipe: nothing new starts (the runs under way are being
            // killed, and a command started now would be too, or outlive the exit).
            let why = format!(
                "not run: skillpipe is stopping ({})",
                crate::exec::signal_name(sig)
            );
            (Decision::Declined, why)
        } else {
            return None;
        };
        let rec = self.record(origin, decision, argv, None, input);
        Some(self.refused(rec, why, None))
    }

    /// Step: what `argv` runs and whether the policy allows it, decided before anything is
    /// asked or started: the skill script however it is written, or the system command.
    #[allow(clippy::result_large_err)] // A refusal: rare, and returned as it is.
    fn plan(
        &self,
        origin: Origin,
        argv: Vec<String>,
        stdin: Option<Vec<u8>>,
    ) -> Result<Planned, Outcome> {
        // The skill script it runs, however it is written (a function name, a path into a
        // skill's folder, an interpreter in front): one answer, `skills::request`.
        let request = (self.skills.script_request(&argv))
            .map_err(|e| self.refuse(origin, &argv, Decision::Invalid, e.to_string()))?;
        let args_from = request.args_from();
        let kind = match request.is_script() {
            true => Argv0Kind::ScriptRef,
            false => command::classify(&request.argv[0]),
        };
        let caller_dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let p = Planned {
            argv: request.argv.clone(),
            program: OsString::from(&request.argv[0]),
            args: request.argv[args_from..]
                .iter()
                .map(OsString::from)
                .collect(),
            cwd: caller_dir.clone(),
            caller_dir,
            stdin,
            timeout: Duration::from_secs(self.policy.timeout_seconds),
            ..Planned::default()
        };
        let args = &p.argv[args_from..];
        if kind != Argv0Kind::ScriptRef {
            let target = Target::System {
                program: &p.argv[0],
                args,
            };
            return match policy::decide(&self.compiled, &target) {
                Ok(_) => Ok(p),
                Err(d) => Err(self.denied(origin, &p.argv, None, p.stdin.as_deref(), d)),
            };
        }
        // `!{scripts/calc.py ...}`, copied from an explanation: the `...` stands for a value. A
        // skill script's only: to a system command (`grep -c '...'`) it may be a real one.
        if let Some(w) = args.iter().find(|w| command::is_left_out(w)) {
            let why = format!(
                "`{w}` is a placeholder, not a value: write the real argument (or show the \
                 directive in backticks)"
            );
            return Err(self.refuse_planned(origin, &p, Decision::Invalid, why));
        }
        match request.script(&self.skills).expect("a script") {
            Ok(resolved) => self.plan_script(origin, p, &resolved, args_from),
            Err(e) => Err(self.refuse_planned(origin, &p, Decision::Invalid, e.to_string())),
        }
    }

    /// Step (of [`Self::plan`]): a skill script's policy decision, its tool's settings (input,
    /// timeout, environment, confirmation) and the command that runs it.
    #[allow(clippy::result_large_err)] // A refusal: rare, and returned as it is.
    fn plan_script(
        &self,
        origin: Origin,
        mut p: Planned,
        resolved: &ResolvedScript,
        args_from: usize,
    ) -> Result<Planned, Outcome> {
        p.skill = Some(resolved.skill.clone());
        let args = p.argv[args_from..].to_vec();
        if let Err(d) = policy::decide(&self.compiled, &resolved.policy_target(&args)) {
            return Err(self.denied(origin, &p.argv, p.skill, p.stdin.as_deref(), d));
        }
        let mut script_args = &args[..];
        if let Some(tool) = &resolved.tool {
            let name = format!("{}:{}", resolved.skill, tool.id);
            if tool.confirm {
                p.tool_asks = Some(name.clone());
            }
            if let Some(t) = tool.timeout
                && t < p.timeout
            {
                // The policy's timeout is the user's bound; a tool may only shorten it.
                p.tool_timeout = Some((name, p.timeout));
                p.timeout = t;
            }
            let env = tool.env.iter();
            p.env
                .extend(env.map(|(k, v)| (OsString::from(k), OsString::from(v))));
            if tool.input == ToolInput::StdinJson {
                let json = tool_input(tool, &args, p.stdin.as_deref())
                    .map_err(|why| self.refuse_planned(origin, &p, Decision::Invalid, why))?;
                p.stdin = Some(json);
                script_args = &[];
            }
        }
        let cmd = resolved
            .command(
                script_args,
                &self.policy.allowed_interpreters,
                (self.inherited("PATH")).unwrap_or(FALLBACK_PATH.as_ref()),
                self.inherited("PYTHONPATH"),
            )
            .map_err(|e| self.refuse_planned(origin, &p, Decision::Denied, e.to_string()))?;
        p.script_path = Some(resolved.path.clone());
        p.skill_dir = Some(cmd.cwd.clone());
        // The skill's variables first; a tool's own `env` comes after them.
        p.env.splice(0..0, cmd.env);
        (p.program, p.args) = (cmd.program.into_os_string(), cmd.args);
        p.cwd = match self.policy.workdir {
            policy::Workdir::Skill => cmd.cwd,
            policy::Workdir::Caller => {
                if resolved.module.is_some() {
                    // Else Python imports `scripts.x` from the user's folder first. A Python
                    // that refuses the option fails closed (`takes_safe_path` then says why).
                    p.args.insert(0, "-P".into());
                    p.safe_path = true;
                }
                p.caller_dir.clone()
            }
        };
        Ok(p)
    }

    /// Step: the user's answer where the policy asks for one, then the audit log's readiness.
    /// Returns the paths outside the run's view its arguments name, when the user was asked
    /// about them (granted to this run only).
    async fn confirm_planned(&self, origin: Origin, p: &Planned) -> Result<Vec<PathBuf>, Outcome> {
        let named = named_paths(&p.argv[1..], &p.caller_dir, &p.cwd, p.skill_dir.as_deref());
        let mut grants = confirm::grants(&self.policy);
        grants.extend(
            named
                .iter()
                .map(|path| format!("reads, this run only if you answer yes: {}", path.display())),
        );
        let prompt = Prompt {
            argv: &p.argv,
            skill: p.skill.as_deref(),
            cwd: &p.cwd,
            grants: &grants,
            input: p.stdin.as_deref(),
            tool_asks: p.tool_asks.as_deref(),
        };
        let reads = match self.confirm(&prompt).await {
            (Verdict::Run, true) => named,
            (Verdict::Run, false) => Vec::new(),
            (Verdict::Declined(why), _) => {
                return Err(self.refuse_planned(origin, p, Decision::Declined, why));
            }
            (Verdict::Interrupted(why), _) => {
                // Audited first: the SIGINT may end the program before this returns.
                let outcome = self.refuse_planned(origin, p, Decision::Declined, why);
                if self.asker_is_terminal {
                    exec::raise_interrupt().await;
                }
                return Err(outcome);
            }
        };
        // The log exists before the sandbox is built (made now on the first run), so that the
        // run hides it from the script like skillpipe's other files: one it found missing, the
        // script could write to and move.
        let log_ready = self.audit.check_writable();
        if self.policy.audit == AuditMode::Required
            && let Err(e) = log_ready
        {
            let why = format!(
                "audit = \"required\" and the log cannot be written: {}",
                (self.wording.audit)(&e)
            );
            return Err(self.refuse_planned(origin, p, Decision::Denied, why));
        }
        Ok(reads)
    }

    /// Step: the process to start (environment, repository config kept out) and the sandbox
    /// around it, with the reads the user granted. Starts nothing.
    fn run_spec(&self, p: &Planned, reads: &[PathBuf]) -> RunSpec {
        let mut env = self.base_env.clone();
        env.push(("SKILLPIPE_VERSION".into(), env!("CARGO_PKG_VERSION").into()));
        env.push(("SKILLPIPE_CALLER_DIR".into(), p.caller_dir.clone().into()));
        env.extend(p.env.iter().cloned());
        // A system command (an allowed `git`, or one a wrapper starts) runs none of the
        // programs a repository's config names; a skill's script is the skill's to configure.
        if p.script_path.is_none() {
            let config = exec::git_config::repo_config(&p.cwd);
            let git = exec::git_config::env(&env, config.as_deref());
            env.extend(git.into_iter().map(|(k, v)| (k.into(), v.into())));
        }
        let sandbox = self.sandbox_spec(&p.cwd, p.skill_dir.as_deref(), reads);
        RunSpec {
            program: p.program.clone(),
            args: p.args.clone(),
            cwd: p.cwd.clone(),
            env,
            stdin: p.stdin.clone(),
            timeout: p.timeout,
            max_output_bytes: self.policy.max_output_bytes,
            sandbox,
            label: Some(match p.skill.as_deref() {
                Some(s) => format!("skill `{s}`, script `{}`", p.argv[0]),
                None => format!("command `{}`", p.argv[0]),
            }),
        }
    }

    /// Step: the run, audited as it starts and as it ends, also when this future is dropped
    /// (Ctrl-C kills the command; the log still says so).
    async fn execute(&self, origin: Origin, p: Planned, spec: RunSpec) -> Outcome {
        // A Python before 3.11 refuses -P (exit 2) before it imports anything: asked only then.
        let probe = p.safe_path.then(|| spec.clone());
        // A skill script runs in its skill's folder: a relative path meant for where the user
        // is would not be found there. Looked at before the run, said only if it then fails.
        let elsewhere = (p.ran_elsewhere())
            .then(|| relative_arg_elsewhere(&p.args, &p.cwd, &p.caller_dir))
            .flatten();
        let mut cancelled = self.run_record(origin, &p, Decision::Ran, "completed");
        cancelled.reason = Some("cancelled".into());
        let mut running = Running::enter(&self.audit, cancelled);
        let started = self.run_record(origin, &p, Decision::Ran, "started");
        self.audit.write_or_warn(&started);
        let cut: Box<[crate::audit::Cut]> = (started.argv_cut.iter().cloned())
            .chain(started.stdin_cut.clone())
            .collect();
        let ran = exec::run_with_launcher(spec, self.launcher.as_deref()).await;
        let ran_for = running.started.elapsed();
        running.cancelled = None;
        if let (Ok(r), Some(probe)) = (&ran, &probe)
            && r.exit_code == 2
            && self.takes_safe_path(probe).await == Some(false)
        {
            let why = format!(
                "`{}` with workdir = caller needs Python 3.11 or later: its -P keeps your \
                 folder off sys.path, so that the module is the skill's, not a file of yours \
                 with its name; `{} -P` fails here: run it with --workdir skill, or install a \
                 newer Python",
                p.argv.join(" "),
                p.program.to_string_lossy()
            );
            return self.end_with(origin, &p, Decision::Denied, why);
        }
        match ran {
            Ok(result) => self.report_ran(origin, p, result, cut, elsewhere),
            Err(e) => self.report_failed(origin, p, e, ran_for),
        }
    }

    /// Step: a run that ended, audited, with its warnings, facts and advice in this
    /// dispatcher's wording.
    fn report_ran(
        &self,
        origin: Origin,
        p: Planned,
        mut result: RunResult,
        cut: Box<[crate::audit::Cut]>,
        elsewhere: Option<String>,
    ) -> Outcome {
        let mut rec = self.run_record(origin, &p, Decision::Ran, "completed");
        rec.exit_code = Some(result.exit_code);
        rec.signal = result.signal.clone();
        rec.duration_ms = Some(result.duration.as_millis() as u64);
        rec.bytes_out = Some(result.stdout.len() as u64);
        rec.bytes_err = Some(result.stderr.len() as u64);
        rec.truncated = result.truncated_stdout || result.truncated_stderr;
        rec.sandbox = Some(result.enforced.summary());
        rec.oom_killed = result.memory.oom_killed;
        rec.changes = result.changes.list.clone();
        rec.changes_bound_hit = result.changes.capped.is_some();
        if result.timed_out {
            rec.reason = Some("timed out".into());
        }
        self.audit.write_or_warn(&rec);
        result.warnings = (result.warned.iter())
            .map(|w| w.word(self.wording.setting))
            .collect();
        result.facts.elsewhere = elsewhere.map(|arg| command::escape_controls(&arg));
        result.facts.caller = p.ran_elsewhere().then(|| p.caller_dir.clone());
        if result.timed_out {
            result.facts.stopped = Some(crate::exec::Stopped {
                after: p.timeout,
                tool: (p.tool_timeout).map(|(t, policy)| (t, policy.as_secs())),
            });
        }
        // The advice in this dispatcher's wording, from the run's facts.
        if !result.success()
            && let Some(said) = (self.wording.advise)(&result)
        {
            result.advice = Some(said.advice);
            result.hint = Some(said.hint);
            result.model_hint = Some(said.for_model);
        }
        Outcome::Ran(Ran {
            result,
            skill: p.skill,
            script_path: p.script_path,
            cut,
        })
    }

    /// Step: a run that could not start or was cut off; its `started` line is written, so
    /// these lines complete it.
    fn report_failed(
        &self,
        origin: Origin,
        p: Planned,
        e: ExecError,
        ran_for: Duration,
    ) -> Outcome {
        let end = |decision, why| self.end_with(origin, &p, decision, why);
        match e {
            ExecError::NotFound { .. } => end(
                Decision::Invalid,
                format!("command not found: {}", p.argv[0]),
            ),
            e @ ExecError::Sandbox(_) => end(Decision::Denied, (self.wording.exec)(&e)),
            e @ ExecError::Interrupted { enforced, .. } => {
                let mut rec = self.run_record(origin, &p, Decision::Ran, "completed");
                rec.duration_ms = Some(ran_for.as_millis() as u64);
                // Its process tree was killed when the run was dropped.
                rec.signal = enforced.map(|_| "SIGKILL".to_string());
                rec.sandbox = enforced.map(|e| e.summary());
                self.refused(rec, e.to_string(), None)
            }
            e => end(Decision::Invalid, e.to_string()),
        }
    }

    /// The audit line of the planned run `p` at `phase` (`started`, `completed`).
    fn run_record(&self, origin: Origin, p: &Planned, d: Decision, phase: &'static str) -> Record {
        let (argv, skill, input) = (&p.argv, p.skill.clone(), p.stdin.as_deref());
        let mut rec = self.record(origin, d, argv, skill, input);
        rec.phase = Some(phase);
        rec
    }

    /// A refusal of a planned run, before it starts.
    fn refuse_planned(&self, origin: Origin, p: &Planned, d: Decision, why: String) -> Outcome {
        let rec = self.record(origin, d, &p.argv, p.skill.clone(), p.stdin.as_deref());
        self.refused(rec, why, None)
    }

    /// A refusal of a run whose `started` line is written: its line has phase `completed`.
    fn end_with(&self, origin: Origin, p: &Planned, decision: Decision, reason: String) -> Outcome {
        self.refused(
            self.run_record(origin, p, decision, "completed"),
            reason,
            None,
        )
    }

    /// `skill NAME [FILE]`: a loaded skill's SKILL.md body or one of its files, read by
    /// skillpipe itself (no process, no sandbox needed), audited like a run. A denied pattern
    /// that matches `skill …` still wins. `with_scripts` (a directive's read) appends, after a body, the table of
    /// the skill's scripts in directive form (MCP has its own: tool names, resource URIs).
    /// Hidden files and what the sandbox hides from scripts are refused (one rule with MCP's
    /// resources: [`crate::skills::files::readable`]).
    pub(crate) fn read_skill(
        &self,
        origin: Origin,
        argv: &[String],
        with_scripts: bool,
    ) -> Outcome {
        let usage = "usage: skill NAME [FILE [PAGE]] (FILE relative to the skill folder)";
        let (name, file, page) = match argv {
            [_, name] => (name, None, None),
            [_, name, file] => (name, Some(file.as_str()), None),
            [_, name, file, page] if with_scripts => match page.parse::<usize>() {
                Ok(n) if n > 0 => (name, Some(file.as_str()), Some(n)),
                _ => return self.refuse(origin, argv, Decision::Invalid, usage.into()),
            },
            _ => return self.refuse(origin, argv, Decision::Invalid, usage.into()),
        };
        if let Some(refused) = self.skill_read_denied(origin, argv, name) {
            return refused;
        }
        let started = std::time::Instant::now();
        let hidden = self.read_hidden();
        let max = self.policy.max_output_bytes;
        let mut text = match self.skills.read_skill_text(name, file, max, &hidden) {
            Ok(t) => t,
            Err(e) => return self.refuse(origin, argv, Decision::Invalid, e.to_string()),
        };
        // The scripts are listed only where the model was told how to run them.
        let runs = self.announced() == crate::scan::Announced::Full;
        let table =
            if with_scripts && runs && file.is_none_or(|f| f == "SKILL.md") && !text.truncated {
                crate::agents::catalog::loaded_scripts(&self.skills, &text.skill)
            } else {
                String::new()
            };
        if with_scripts {
            // Longer than a capture may be, a file comes in pages that each fit, the script
            // table on the first, each saying how to read the next: the capture limit would
            // otherwise drop its middle, which the model could not ask for.
            let size = self
                .policy
                .max_capture_bytes
                .saturating_sub(table.len() + PAGE_NOTE_ROOM)
                .max(1024);
            let wanted = page.unwrap_or(1);
            let Some((part, count)) = crate::skills::files::page(&text.bytes, size, wanted) else {
                let count = crate::skills::files::page(&text.bytes, size, 1).map_or(1, |p| p.1);
                let why = format!("there is no page {wanted}: the file has {count}");
                return self.refuse(origin, argv, Decision::Invalid, why);
            };
            let mut bytes = part.to_vec();
            if wanted < count {
                // Quoted as directive words are (a `}` would end the directive).
                let shown_file = crate::command::quote_word(file.unwrap_or("SKILL.md"));
                let note = format!(
                    "\n[page {wanted} of {count}: !{{skill {name} {shown_file} {}}} reads the next]\n",
                    wanted + 1
                );
                bytes.extend_from_slice(note.as_bytes());
            }
            if wanted == 1 {
                bytes.extend_from_slice(table.as_bytes());
            }
            text.bytes = bytes;
        }
        let took = started.elapsed();
        self.record_skill_read(
            origin,
            argv,
            &text.skill,
            text.bytes.len(),
            took,
            text.truncated,
        );
        let result = RunResult {
            stdout: text.bytes,
            truncated_stdout: text.truncated,
            duration: took,
            ..Default::default()
        };
        Outcome::Ran(Ran {
            result,
            skill: Some(text.skill),
            script_path: None,
            cut: Box::default(),
        })
    }

    /// A denied pattern that matches `skill …` wins over any read: the refusal, audited.
    fn skill_read_denied(&self, origin: Origin, argv: &[String], name: &str) -> Option<Outcome> {
        let target = Target::System {
            program: BUILTIN_SKILL,
            args: &argv[1..],
        };
        // The patterns parsed once, with the dispatcher.
        let text = self.compiled.denied_by(&target)?;
        let why = policy::Denied::Pattern {
            command: target.display(),
            pattern: command::escape_controls(text),
        }
        .to_string();
        let rec = self.record(origin, Decision::Denied, argv, Some(name.to_owned()), None);
        Some(self.refused(rec, why, None))
    }

    fn record_skill_read(
        &self,
        origin: Origin,
        argv: &[String],
        skill: &str,
        bytes: usize,
        took: Duration,
        truncated: bool,
    ) {
        let mut rec = self.record(origin, Decision::Ran, argv, Some(skill.to_owned()), None);
        rec.exit_code = Some(0);
        rec.duration_ms = Some(took.as_millis() as u64);
        rec.bytes_out = Some(bytes as u64);
        rec.bytes_err = Some(0);
        rec.truncated = truncated;
        rec.reason = Some("built-in: read by skillpipe, no process".into());
        self.audit.write_or_warn(&rec);
    }

    /// A skill file served from elsewhere (MCP's resources, read once at start under the same
    /// rule as [`Self::read_skill`]): checked against the denied patterns and audited as
    /// `skill NAME FILE`, like a read. `Err` is the refusal's reason.
    pub(crate) fn serve_skill_file(
        &self,
        origin: Origin,
        skill: &str,
        rel: &str,
        bytes: usize,
    ) -> Result<(), String> {
        let argv = [BUILTIN_SKILL.to_owned(), skill.to_owned(), rel.to_owned()];
        if let Some(Outcome::Blocked { reason, .. }) = self.skill_read_denied(origin, &argv, skill)
        {
            return Err(reason);
        }
        self.record_skill_read(origin, &argv, skill, bytes, Duration::ZERO, false);
        Ok(())
    }

    /// Audits and returns a refusal decided before the policy could be asked (an unknown tool,
    /// unusable tool arguments, a script that does not resolve, a per-turn limit), so that
    /// these too leave their line in the audit log.
    pub(crate) fn refuse(
        &self,
        origin: Origin,
        argv: &[String],
        decision: Decision,
        reason: String,
    ) -> Outcome {
        let rec = self.record(origin, decision, argv, None, None);
        self.refused(rec, reason, None)
    }

    /// A refusal because a per-answer bound (`key`, e.g. `max_side_effects_per_turn`) was
    /// reached: denied, its audit line naming the bound in `limit`.
    pub(crate) fn refuse_over_limit(
        &self,
        origin: Origin,
        argv: &[String],
        key: &'static str,
        reason: String,
    ) -> Outcome {
        let mut rec = self.record(origin, Decision::Denied, argv, None, None);
        rec.limit = Some(key);
        self.refused(rec, reason, None)
    }

    /// The confirmation step: asks (one question at a time) unless the mode or an earlier
    /// "always" covers the command. A tool whose tool.yaml asks is asked about under any mode;
    /// when no one can answer, the refusal says so rather than advise `-y`, which cannot help.
    /// The verdict, and whether the user answered this very prompt (what it listed as granted
    /// for this run only is granted then, never on an earlier "always" or `-y`).
    async fn confirm(&self, prompt: &Prompt<'_>) -> (Verdict, bool) {
        let needs_asking = |d: &Dispatcher| {
            let confirmer = d.confirmer.lock().unwrap_or_else(|e| e.into_inner());
            confirmer.needs_asking(prompt.argv, prompt.tool_asks.is_some())
        };
        if !needs_asking(self) {
            return (Verdict::Run, false);
        }
        let _turn = self.asking.lock().await;
        if !needs_asking(self) {
            return (Verdict::Run, false);
        }
        let answer = (self.asker)(prompt).await;
        if let (
            Some(tool),
            Err(e @ (AskError::NoTerminal | AskError::Terminal(_) | AskError::NoAsker)),
        ) = (prompt.tool_asks, &answer)
        {
            let why = format!(
                "tool `{tool}` asks to be confirmed before each run (execution.confirm in its \
                 tool.yaml; -y does not lift that), and it could not be asked: {e}"
            );
            return (Verdict::Declined(why), false);
        }
        let answered = answer.is_ok();
        let mut confirmer = self.confirmer.lock().unwrap_or_else(|e| e.into_inner());
        (
            confirmer.settle(prompt.argv, answer, self.wording.ask),
            answered,
        )
    }

    /// Whether the interpreter of `spec` takes `-P`: its exit status running nothing with it
    /// (`-S -P -c ""`) in the same sandbox, asked once per interpreter, after a module run
    /// ended with status 2 (Python's for a command line it refuses). `None` when the probe did
    /// not run to an exit (the sandbox, a limit, the timeout): then the run is told as it
    /// ended, and asked again next time.
    async fn takes_safe_path(&self, spec: &RunSpec) -> Option<bool> {
        if let Some(known) = self.safe_path.lock().unwrap().get(&spec.program) {
            return Some(*known);
        }
        let probe = RunSpec {
            args: ["-S", "-P", "-c", ""].map(OsString::from).to_vec(),
            stdin: None,
            timeout: std::time::Duration::from_secs(10),
            label: None,
            ..spec.clone()
        };
        let r = exec::run_with_launcher(probe, self.launcher.as_deref())
            .await
            .ok()?;
        if r.signal.is_some() || r.timed_out {
            return None;
        }
        let takes = r.exit_code == 0;
        (self.safe_path.lock().unwrap()).insert(spec.program.clone(), takes);
        Some(takes)
    }

    fn inherited(&self, name: &str) -> Option<&std::ffi::OsStr> {
        exec::env_value(&self.base_env, name)
    }

    /// `reads`: the paths a confirmed prompt granted for this run.
    fn sandbox_spec(
        &self,
        cwd: &std::path::Path,
        skill_dir: Option<&Path>,
        reads: &[PathBuf],
    ) -> SandboxSpec {
        use crate::sandbox::view::{Grant, Why};
        let p = &self.policy;
        // What of the user's the run sees besides `cwd` (with writes allowed anywhere there is
        // no view: all of it).
        let shown: Vec<PathBuf> = (p.writable_paths.iter().chain(&p.allow_read).chain(reads))
            .cloned()
            .chain(skill_dir.map(Path::to_path_buf))
            .collect();
        let view = (!p.allow_filesystem).then_some(shown.as_slice());
        let (hide, hide_notice) =
            crate::sandbox::secrets::hidden_and_notice(cwd, &self.deny_read(), &p.allow_read, view);
        let (kept, protected) = self.kept_and_protected();
        SandboxSpec {
            isolate_network: !p.allow_network,
            restrict_filesystem: !p.allow_filesystem,
            writable: p.writable_paths.clone(),
            required: p.sandbox == policy::SandboxMode::Required,
            // Lifting restrictions never lifts these: what a command starts dies with it, it
            // sees only its own /dev, /proc and $TMPDIR, and secrets stay hidden (with both
            // network and writes allowed, where the machine can; see `sandbox::plan`).
            contain_processes: true,
            private_mounts: true,
            hide,
            hide_notice,
            read: skill_dir
                .map(|d| Grant {
                    path: d.to_path_buf(),
                    why: Why::Skill,
                })
                .into_iter()
                .chain(p.allow_read.iter().chain(reads).map(|a| Grant {
                    path: a.clone(),
                    why: Why::Granted,
                }))
                .collect(),
            protect: kept,
            own_places: crate::paths::own_places(),
            own_places_lock: crate::paths::state_dir().map(|d| d.join("own-places.lock")),
            protected,
            limits: p.limits(),
            sockets: self.allowed_sockets(),
        }
    }

    /// The loaded skills' folders that stay read-only to scripts: their scripts are what the
    /// model runs, so a run that changed one would change what later runs do (a `--skills-dir`
    /// collection, a trusted project's `skills/`). One the user made writable itself (a
    /// writable path inside it or the folder itself: someone working on that skill) is left as
    /// given. A folder holding two or more of them, or named `skills` (a collection, a
    /// project's `skills/`), is kept whole — a new skill cannot be added there either, and it
    /// is one mount instead of one per skill — unless a writable path or the working directory
    /// lies in it.
    fn skill_folders(&self, writable: &[PathBuf], cwd: Option<&Path>) -> Vec<PathBuf> {
        let open_inside = |dir: &Path| writable.iter().any(|w| w.starts_with(dir));
        let mut dirs: Vec<PathBuf> = Vec::new();
        for skill in self.skills.iter() {
            let dir = real(&skill.dir);
            if !open_inside(&dir) && !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        let mut out: Vec<PathBuf> = Vec::new();
        for dir in &dirs {
            let whole = dir.parent().filter(|parent| {
                (dirs.iter().filter(|d| d.parent() == Some(parent)).count() > 1
                    || parent.file_name().is_some_and(|n| n == "skills"))
                    && !open_inside(parent)
                    && !cwd.is_some_and(|c| c.starts_with(parent))
            });
            let keep = whole.map_or_else(|| dir.clone(), Path::to_path_buf);
            if !out.contains(&keep) {
                out.push(keep);
            }
        }
        out
    }

    /// What every run keeps read-only (skillpipe's own policy files and the loaded skills'
    /// folders, bound over themselves), and the places a refused write is told as protected
    /// ([`policy::protected_places`], where a linked policy file leads, the loaded skills'
    /// folders). One look at the file system for both.
    fn kept_and_protected(&self) -> (Vec<PathBuf>, Vec<(PathBuf, String)>) {
        let policy_places = crate::paths::policy_places();
        // Where a linked agents folder, skill or config file leads (a dotfiles checkout).
        let linked: Vec<PathBuf> = (policy_places.iter().filter(|p| p.is_symlink()))
            .filter_map(|p| std::fs::canonicalize(p).ok())
            .collect();
        // Links followed: a skill or a writable path may be reached through one.
        let writable: Vec<PathBuf> = self.policy.writable_paths.iter().map(|w| real(w)).collect();
        let cwd = std::env::current_dir().map(|d| real(&d)).ok();
        let skills = self.skill_folders(&writable, cwd.as_deref());
        let projects = self.project_places_in_writable(&writable, cwd.as_deref());
        let mut protected = policy::protected_places();
        for (dirs, why) in [
            (
                &linked,
                "a link in skillpipe's config or your skill folders leads here: \
                       skillpipe reads it as yours",
            ),
            (&skills, "loaded skills, whose scripts the model runs"),
            (
                &projects,
                "a project's skills or agents, which skillpipe loads when you trust \
                         the project",
            ),
        ] {
            protected.extend(dirs.iter().map(|d| (d.clone(), why.to_string())));
        }
        ([policy_places, skills, projects].concat(), protected)
    }

    /// The folders skillpipe would load a project's skills and agents from
    /// ([`crate::paths::project_places`]) that exist at the top of a writable path or of a
    /// folder directly in one (a folder of projects, a repository's submodules): read-only in
    /// the run, as the loaded skills' folders are, or a script could plant a skill that a later
    /// session offers. One the user made writable itself (a writable path inside it or the
    /// folder itself: someone working on that skill) is left as given. With writes allowed
    /// anywhere (`allow_filesystem`), those of the working directory itself.
    fn project_places_in_writable(&self, writable: &[PathBuf], cwd: Option<&Path>) -> Vec<PathBuf> {
        let roots: Vec<PathBuf> = match self.policy.allow_filesystem {
            true => cwd.map(Path::to_path_buf).into_iter().collect(),
            false => writable.to_vec(),
        };
        let places = crate::paths::project_places();
        let mut out: Vec<PathBuf> = Vec::new();
        for root in &roots {
            // With writes allowed anywhere, the working directory's own: the search path's.
            let subdirs = std::fs::read_dir(root)
                .into_iter()
                .flatten()
                .flatten()
                .filter(|_| !self.policy.allow_filesystem);
            let tops = std::iter::once(root.clone()).chain(
                subdirs
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .map(|e| e.path()),
            );
            for top in tops {
                for place in &places {
                    let dir = top.join(place);
                    if dir.is_dir()
                        && !writable.iter().any(|w| w.starts_with(&dir))
                        && !out.contains(&dir)
                    {
                        out.push(dir);
                    }
                }
            }
        }
        out
    }

    /// What the sandbox hides from scripts (run in the caller's folder): skill files there are
    /// not read for the model either.
    pub(crate) fn read_hidden(&self) -> Vec<std::path::PathBuf> {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        crate::sandbox::secrets::hidden(&cwd, &self.deny_read(), &self.policy.allow_read)
    }

    /// `deny_read` and the audit log, wherever it is kept (it holds every command and its
    /// input, as private as skillpipe's state folder).
    fn deny_read(&self) -> Vec<std::path::PathBuf> {
        // A file only (not `/dev/stderr`); absolute, as the launcher runs in the command's
        // working directory.
        let audit = self
            .audit
            .path()
            .filter(|a| std::fs::metadata(a).is_ok_and(|m| m.is_file()))
            .and_then(|a| std::path::absolute(a).ok());
        self.policy.deny_read.iter().cloned().chain(audit).collect()
    }

    /// `allowed_sockets` with `~/` and `$VAR/` expanded (from the environment scripts get), the
    /// existing ones.
    fn allowed_sockets(&self) -> Vec<PathBuf> {
        let home = crate::paths::home();
        let var = |name: &str| {
            (self.inherited(name).map(OsString::from)).or_else(|| std::env::var_os(name))
        };
        self.policy
            .allowed_sockets
            .iter()
            .filter_map(|p| crate::sandbox::secrets::expand(p, home.as_deref(), var))
            .filter(|p| p.exists())
            .collect()
    }

    fn record(
        &self,
        origin: Origin,
        decision: Decision,
        argv: &[String],
        skill: Option<String>,
        stdin: Option<&[u8]>,
    ) -> Record {
        let mut rec = Record::new(origin.as_str(), decision, argv).with_stdin(stdin);
        rec.agent = self.agent.clone();
        rec.skill = skill;
        // `sandbox` says what was in force, so only a run sets it.
        rec
    }

    /// A policy refusal: audited and reported in the dispatcher's wording, and kept typed.
    fn denied(
        &self,
        origin: Origin,
        argv: &[String],
        skill: Option<String>,
        stdin: Option<&[u8]>,
        denied: policy::Denied,
    ) -> Outcome {
        let rec = self.record(origin, Decision::Denied, argv, skill, stdin);
        self.refused(rec, (self.wording.denied)(&denied), Some(denied))
    }

    /// `rec` audited with `reason`, and the outcome that says it.
    fn refused(&self, mut rec: Record, reason: String, denied: Option<policy::Denied>) -> Outcome {
        rec.reason = Some(reason.clone());
        self.audit.write_or_warn(&rec);
        Outcome::Blocked {
            decision: rec.decision,
            reason,
            denied,
        }
    }
}

/// The existing paths `args` name (absolute, `~/…`, or relative to where the user is) that the
/// run would not see anyway (in its working directory, its skill's folder or the system trees).
/// Never `/`, `$HOME` or a folder holding it: answering a prompt grants files and projects, not
/// the whole home.
fn named_paths(args: &[String], caller: &Path, cwd: &Path, skill: Option<&Path>) -> Vec<PathBuf> {
    use crate::sandbox::view;
    let home = crate::paths::home();
    let mut out: Vec<PathBuf> = Vec::new();
    for a in args {
        let p = match a.strip_prefix("~/") {
            Some(rest) => match &home {
                Some(h) => h.join(rest),
                None => continue,
            },
            None => view::lexical(caller, Path::new(a)),
        };
        let seen = p.starts_with(cwd)
            || skill.is_some_and(|s| p.starts_with(s))
            || view::SYSTEM_TREES.iter().any(|t| p.starts_with(t));
        let too_wide = p.parent().is_none() || home.as_ref().is_some_and(|h| h.starts_with(&p));
        if !seen && !too_wide && p.symlink_metadata().is_ok() && !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// `p` with its links followed, or as it is when it cannot be.
fn real(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// The first argument (or `--flag=VALUE`'s value) that is a relative path found under
/// `caller` but not under `cwd` (where the script runs), or `.` itself (`--repo .`), which both
/// have but which means another folder there. Called only when the two differ.
fn relative_arg_elsewhere(
    args: &[OsString],
    cwd: &std::path::Path,
    caller: &std::path::Path,
) -> Option<String> {
    args.iter()
        .filter_map(|a| a.to_str())
        .filter_map(|a| match a.strip_prefix('-') {
            Some(flag) => flag.split_once('=').map(|(_, value)| value),
            None => Some(a),
        })
        .filter(|a| !a.is_empty() && !a.starts_with('-') && !a.starts_with('/'))
        .find(|a| matches!(*a, "." | "./") || (caller.join(a).exists() && !cwd.join(a).exists()))
        .map(str::to_string)
}

/// The built-in command that reads a loaded skill (progressive disclosure, DESIGN §4).
pub(crate) const BUILTIN_SKILL: &str = crate::scan::SKILL_READ;

/// Room kept in a page of a skill file for the note that names the next page.
const PAGE_NOTE_ROOM: usize = 200;

fn is_builtin_skill(argv: &[String]) -> bool {
    argv.first().is_some_and(|a| a == BUILTIN_SKILL)
}

/// The JSON a tool gets on stdin: `given` (from `run --input` or a native tool call), else the
/// directive's flags, validated against the tool's schema. The error names the field.
fn tool_input(tool: &Tool, args: &[String], given: Option<&[u8]>) -> Result<Vec<u8>, String> {
    let value = match given {
        Some(bytes) => {
            if !args.is_empty() {
                return Err(format!(
                    "tool `{}` takes its input as JSON on stdin; arguments as well are not accepted",
                    tool.id
                ));
            }
            let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
                format!("invalid input for tool `{}`: not valid JSON: {e}", tool.id)
            })?;
            tool.validate(&value).map_err(|e| e.to_string())?;
            value
        }
        None => tool.input_from_flags(args).map_err(|e| e.to_string())?,
    };
    serde_json::to_vec(&value).map_err(|e| e.to_string())
}

/// A command the policy allows, decided by [`Dispatcher::plan`]: what runs, where, with what,
/// for which skill. Nothing is asked or started yet.
#[derive(Default)]
struct Planned {
    /// The argv as the policy reads it (audited, shown in the prompt).
    argv: Vec<String>,
    skill: Option<String>,
    /// The skill script's file (`None`: a system command).
    script_path: Option<PathBuf>,
    /// The running skill's folder: in the run's view wherever it works.
    skill_dir: Option<PathBuf>,
    program: OsString,
    args: Vec<OsString>,
    cwd: PathBuf,
    /// Where the user is.
    caller_dir: PathBuf,
    /// The skill's variables, then a tool's own.
    env: Vec<(OsString, OsString)>,
    stdin: Option<Vec<u8>>,
    timeout: Duration,
    /// The tool whose tool.yaml shortened the timeout, and the policy's.
    tool_timeout: Option<(String, Duration)>,
    /// The tool whose tool.yaml asks to be confirmed before each run.
    tool_asks: Option<String>,
    /// `python -P -m …` (workdir = caller): an old Python's refusal of -P is explained.
    safe_path: bool,
}

impl Planned {
    /// A skill script that runs in its skill's folder, away from where the user is.
    fn ran_elsewhere(&self) -> bool {
        self.script_path.is_some() && self.cwd != self.caller_dir
    }
}

/// Runs between their "started" and their completed audit line, in this process.
static IN_FLIGHT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A run between its "started" and its completed audit line, counted in [`IN_FLIGHT`]. Dropped
/// with `cancelled` still set (the run's future was dropped), it writes that record, stamped
/// when it ended, with how long it ran.
struct Running<'a> {
    log: &'a AuditLog,
    cancelled: Option<Record>,
    started: std::time::Instant,
}

impl Running<'_> {
    fn enter(log: &AuditLog, cancelled: Record) -> Running<'_> {
        IN_FLIGHT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let started = std::time::Instant::now();
        Running {
            log,
            cancelled: Some(cancelled),
            started,
        }
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        if let Some(mut rec) = self.cancelled.take() {
            rec.ts = crate::audit::timestamp(std::time::SystemTime::now());
            rec.duration_ms = Some(self.started.elapsed().as_millis() as u64);
            self.log.write_or_warn(&rec);
        }
        IN_FLIGHT.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Wait (up to `limit`) until no run is between its "started" and completed audit lines: after
/// [`crate::exec::interrupt`], so that skillpipe exits with every interrupted run audited.
pub(crate) async fn wait_idle(limit: Duration) {
    let deadline = tokio::time::Instant::now() + limit;
    while IN_FLIGHT.load(std::sync::atomic::Ordering::SeqCst) > 0
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The result object of DESIGN §3 (`skillpipe run --json`, tool results).
pub(crate) fn result_json(ran: &Ran) -> serde_json::Value {
    let r = &ran.result;
    serde_json::json!({
        "success": r.success(),
        "exit_code": r.exit_code,
        "signal": r.signal,
        "stdout": String::from_utf8_lossy(&r.stdout),
        "stderr": String::from_utf8_lossy(&r.stderr),
        "outputs": crate::skills::outputs_of(&r.stdout),
        "duration_ms": r.duration.as_millis() as u64,
        "truncated": {"stdout": r.truncated_stdout, "stderr": r.truncated_stderr},
        "script_path": ran.script_path,
        "hint": r.hint,
        "advice": r.advice,
        "cut": ran.cut,
        "memory": r.memory,
        "changes": r.changes.list,
        "changes_bound_hit": r.changes.capped.is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_offers_only_existing_paths_outside_the_view_and_never_home() {
        let dir = tempfile::tempdir().unwrap();
        let (user, skill) = (dir.path().join("user"), dir.path().join("skill"));
        for d in [&user, &skill, &dir.path().join("data")] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(dir.path().join("data/a.csv"), "x").unwrap();
        let args: Vec<String> = [
            "../data/a.csv",
            "missing.txt",
            "-n",
            "/usr/bin/env",
            "/",
            ".",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let got = named_paths(&args, &user, &skill, Some(&skill));
        assert_eq!(got, [dir.path().join("data/a.csv"), user.clone()]);
        // Run where the user is: `.` is in view already.
        assert_eq!(
            named_paths(&args, &user, &user, Some(&skill)),
            [dir.path().join("data/a.csv")]
        );
    }
}
