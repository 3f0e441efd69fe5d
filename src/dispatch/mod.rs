//! One command from request to result: parse, resolve, policy decision, confirmation, audit, run.
//!
//! Every caller (filter, chat loop, native tool calls, `skillpipe run`) goes through
//! [`Dispatcher`], so a blocked command is refused, and every decision audited, in one place.
//! This file takes a request to its plan (what runs, and whether the policy allows it); the
//! steps after it have a file each: `run` (confirmation, the process, its audit lines and
//! report), `view` (what of the machine the run sees, from the grants), `skill_read` (the
//! built-in `skill` read) and `builder` (how a host sets a dispatcher up).

mod builder;
mod run;
mod skill_read;
mod view;

pub use builder::{Advisor, AskFuture, BuildError, DispatcherBuilder, Launcher};
pub(crate) use builder::{AsyncAsker, Wording};
pub(crate) use run::{InFlight, wait_idle};

use crate::audit::{AuditLog, Decision, Record};
use crate::command::{self, Target};
use crate::confirm::Confirmer;
use crate::exec::{self, RunResult};
use crate::policy::{self, ScriptPolicy};
use crate::scan::Kind;
use crate::skills::{ResolvedScript, SkillSet, Tool, ToolInput};
use skill_read::is_builtin_skill;
use std::ffi::OsString;
use std::path::PathBuf;
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
        /// Why, in one line, in the dispatcher's wording (as the audit log and the user get it).
        reason: String,
        /// Why, as the model is told it: without what only the user can change (a flag), which
        /// the model cannot pass.
        for_model: String,
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

/// PATH used to find programs when the policy passes no PATH through.
const FALLBACK_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

impl Dispatcher {
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
        if !request.is_script() {
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

    /// The audit line of the planned run `p` at `phase` (`started`, `completed`).
    fn run_record(&self, origin: Origin, p: &Planned, d: Decision, phase: &'static str) -> Record {
        let (argv, skill, input) = (&p.argv, p.skill.clone(), p.stdin.as_deref());
        let mut rec = self.record(origin, d, argv, skill, input);
        rec.end.phase = Some(phase);
        rec
    }

    /// A refusal of a planned run, before it starts.
    fn refuse_planned(&self, origin: Origin, p: &Planned, d: Decision, why: String) -> Outcome {
        self.refuse_planned_as(origin, p, d, Said::plain(why))
    }

    /// [`Self::refuse_planned`], told to the model in its own words.
    fn refuse_planned_as(&self, origin: Origin, p: &Planned, d: Decision, said: Said) -> Outcome {
        let rec = self.record(origin, d, &p.argv, p.skill.clone(), p.stdin.as_deref());
        self.refused_as(rec, said, None)
    }

    /// A refusal of a run whose `started` line is written: its line has phase `completed`.
    fn end_with(&self, origin: Origin, p: &Planned, decision: Decision, said: Said) -> Outcome {
        let rec = self.run_record(origin, p, decision, "completed");
        self.refused_as(rec, said, None)
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
        rec.end.limit = Some(key);
        self.refused(rec, reason, None)
    }

    fn inherited(&self, name: &str) -> Option<&std::ffi::OsStr> {
        exec::env_value(&self.base_env, name)
    }

    fn record(
        &self,
        origin: Origin,
        decision: Decision,
        argv: &[String],
        skill: Option<String>,
        stdin: Option<&[u8]>,
    ) -> Record {
        let mut rec = Record::new(origin.as_str(), decision, argv, stdin);
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
        let said = Said {
            reason: (self.wording.denied)(&denied),
            for_model: denied.refused(),
        };
        self.refused_as(rec, said, Some(denied))
    }

    /// `rec` audited with `reason`, and the outcome that says it (to the model too).
    fn refused(&self, rec: Record, reason: String, denied: Option<policy::Denied>) -> Outcome {
        self.refused_as(rec, Said::plain(reason), denied)
    }

    /// `rec` audited with `said.reason`, and the outcome that says it, to the model in its own
    /// words.
    fn refused_as(&self, mut rec: Record, said: Said, denied: Option<policy::Denied>) -> Outcome {
        rec.end.reason = Some(said.reason.clone());
        self.audit.write_or_warn(&rec);
        Outcome::Blocked {
            decision: rec.decision,
            reason: said.reason,
            for_model: said.for_model,
            denied,
        }
    }
}

/// A refusal's reason for the user (and the audit log), and for the model: the front end's
/// wording may name a flag the model cannot pass.
struct Said {
    reason: String,
    for_model: String,
}

impl Said {
    /// The same words for both.
    fn plain(reason: String) -> Said {
        Said {
            for_model: reason.clone(),
            reason,
        }
    }
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
        "hint": r.advice.as_ref().map(|a| &a.hint),
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

    /// The front end's words go to the user and the audit log; the model is told the policy's
    /// refusal without what lifts it, which only the user can do.
    #[tokio::test]
    async fn a_refusal_reaches_the_model_without_the_front_ends_flags() {
        let wording = Wording {
            denied: |d| format!("{d} (pass --allow-scripts)"),
            ..Wording::default()
        };
        // Scripts off: no launcher is needed.
        let d = (Dispatcher::builder(ScriptPolicy::default()).wording(wording))
            .build()
            .unwrap();
        let Outcome::Blocked {
            reason, for_model, ..
        } = d.run_body(Kind::Capture, "echo hi").await
        else {
            panic!("nothing runs under the default policy");
        };
        assert!(reason.ends_with("(pass --allow-scripts)"), "{reason}");
        assert_eq!(for_model, "scripts are not allowed");
    }
}
