//! The steps after a plan: the user's answer, the process and its sandbox, the audit lines
//! while it runs (also when it is dropped) and the report of how it ended.

use super::view::named_paths;
use super::{Dispatcher, Origin, Outcome, Planned, Ran, Said};
use crate::audit::{AuditLog, Decision, Record};
use crate::command;
use crate::confirm::{self, AskError, Prompt, Verdict};
use crate::exec::{self, ExecError, RunResult, RunSpec};
use crate::policy::AuditMode;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::time::Duration;

impl Dispatcher {
    /// Step: the user's answer where the policy asks for one, then the audit log's readiness.
    /// Returns the paths outside the run's view its arguments name, when the user was asked
    /// about them (granted to this run only).
    pub(super) async fn confirm_planned(
        &self,
        origin: Origin,
        p: &Planned,
    ) -> Result<Vec<PathBuf>, Outcome> {
        // Waiting for the user is not work a signal's exit waits for.
        let _asking = Asking::enter();
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
        let (verdict, answered, for_model) = self.confirm(&prompt).await;
        let reads = match (verdict, answered) {
            (Verdict::Run, true) => named,
            (Verdict::Run, false) => Vec::new(),
            (Verdict::Declined(reason), _) => {
                let for_model = for_model.unwrap_or_else(|| reason.clone());
                let said = Said { reason, for_model };
                return Err(self.refuse_planned_as(origin, p, Decision::Declined, said));
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
            let why = |said: String| {
                format!("audit = \"required\" and the log cannot be written: {said}")
            };
            let said = Said {
                reason: why((self.wording.audit)(&e)),
                for_model: why(e.to_string()),
            };
            return Err(self.refuse_planned_as(origin, p, Decision::Denied, said));
        }
        Ok(reads)
    }

    /// Step: the process to start (environment, repository config kept out) and the sandbox
    /// around it, with the reads the user granted. Starts nothing.
    pub(super) fn run_spec(&self, p: &Planned, reads: &[PathBuf]) -> RunSpec {
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
            settings: self.wording.setting,
        }
    }

    /// Step: the run, audited as it starts and as it ends, also when this future is dropped
    /// (Ctrl-C kills the command; the log still says so).
    pub(super) async fn execute(&self, origin: Origin, p: Planned, spec: RunSpec) -> Outcome {
        // A Python before 3.11 refuses -P (exit 2) before it imports anything: asked only then.
        let probe = p.safe_path.then(|| spec.clone());
        // A skill script runs in its skill's folder: a relative path meant for where the user
        // is would not be found there. Looked at before the run, said only if it then fails.
        let elsewhere = (p.ran_elsewhere())
            .then(|| relative_arg_elsewhere(&p.args, &p.cwd, &p.caller_dir))
            .flatten();
        let mut cancelled = self.run_record(origin, &p, Decision::Ran, "completed");
        cancelled.end.reason = Some("cancelled".into());
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
            let e = ExecError::SafePathRefused {
                command: p.argv.join(" "),
                program: p.program.to_string_lossy().into_owned(),
            };
            return self.end_with(origin, &p, Decision::Denied, self.exec_said(&e));
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
        let end = &mut rec.end;
        end.exit_code = Some(result.exit_code);
        end.signal = result.signal.clone();
        end.duration_ms = Some(result.duration.as_millis() as u64);
        end.bytes_out = Some(result.stdout.len() as u64);
        end.bytes_err = Some(result.stderr.len() as u64);
        end.truncated = result.truncated_stdout || result.truncated_stderr;
        end.sandbox = Some(result.enforced.summary());
        end.oom_killed = result.memory.oom_killed;
        end.changes = result.changes.list.clone();
        end.changes_bound_hit = result.changes.capped.is_some();
        end.reason = result.timed_out.then(|| "timed out".into());
        self.audit.write_or_warn(&rec);
        result.facts.elsewhere = elsewhere.map(|arg| command::escape_controls(&arg));
        result.facts.caller = p.ran_elsewhere().then(|| p.caller_dir.clone());
        if result.timed_out {
            result.facts.stopped = Some(crate::exec::Stopped {
                after: p.timeout,
                tool: (p.tool_timeout).map(|(t, policy)| (t, policy.as_secs())),
            });
        }
        // The advice in this dispatcher's wording, from the run's facts.
        if !result.success() {
            result.advice = (self.wording.advise)(&result);
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
                Said::plain(format!("command not found: {}", p.argv[0])),
            ),
            e @ ExecError::Sandbox(_) => end(Decision::Denied, self.exec_said(&e)),
            e @ ExecError::Interrupted { enforced, .. } => {
                let mut rec = self.run_record(origin, &p, Decision::Ran, "completed");
                rec.end.duration_ms = Some(ran_for.as_millis() as u64);
                // Its process tree was killed when the run was dropped.
                rec.end.signal = enforced.map(|_| "SIGKILL".to_string());
                rec.end.sandbox = enforced.map(|e| e.summary());
                self.refused(rec, e.to_string(), None)
            }
            e => end(Decision::Invalid, Said::plain(e.to_string())),
        }
    }

    /// A command that could not start, in this dispatcher's wording and the model's (the
    /// library's: it names policy keys, not flags).
    fn exec_said(&self, e: &ExecError) -> Said {
        Said {
            reason: (self.wording.exec)(e),
            for_model: e.to_string(),
        }
    }

    /// The confirmation step: asks (one question at a time) unless the mode or an earlier
    /// "always" covers the command. A tool whose tool.yaml asks is asked about under any mode;
    /// when no one can answer, the refusal says so rather than advise `-y`, which cannot help.
    /// The verdict, whether the user answered this very prompt (what it listed as granted for
    /// this run only is granted then, never on an earlier "always" or `-y`), and a failed
    /// question's reason in the model's words.
    async fn confirm(&self, prompt: &Prompt<'_>) -> (Verdict, bool, Option<String>) {
        let needs_asking = |d: &Dispatcher| {
            let confirmer = d.confirmer.lock().unwrap_or_else(|e| e.into_inner());
            confirmer.needs_asking(prompt.argv, prompt.tool_asks.is_some())
        };
        if !needs_asking(self) {
            return (Verdict::Run, false, None);
        }
        let _turn = self.asking.lock().await;
        if !needs_asking(self) {
            return (Verdict::Run, false, None);
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
            return (Verdict::Declined(why), false, None);
        }
        let answered = answer.is_ok();
        // The library's wording for the model: the binary's names `-y`, which it cannot pass.
        let for_model = answer.as_ref().err().map(ToString::to_string);
        let mut confirmer = self.confirmer.lock().unwrap_or_else(|e| e.into_inner());
        let verdict = confirmer.settle(prompt.argv, answer, self.wording.ask);
        (verdict, answered, for_model)
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

/// Runs between their "started" and their completed audit line, and outcomes a front end has
/// not reported yet, in this process.
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
/// Of those, the commands waiting for the user's answer.
static ASKING: AtomicUsize = AtomicUsize::new(0);

/// Counted in [`IN_FLIGHT`] while held: a run between its audit lines, or a front end's command
/// from its dispatch until its outcome is reported, so that a signal's exit ([`wait_idle`])
/// comes after the report too.
pub(crate) struct InFlight(());

impl InFlight {
    pub(crate) fn enter() -> InFlight {
        IN_FLIGHT.fetch_add(1, SeqCst);
        InFlight(())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(1, SeqCst);
    }
}

/// Counted in [`ASKING`] while a command waits for the user (or for the SIGINT it raised).
struct Asking(());

impl Asking {
    fn enter() -> Asking {
        ASKING.fetch_add(1, SeqCst);
        Asking(())
    }
}

impl Drop for Asking {
    fn drop(&mut self) {
        ASKING.fetch_sub(1, SeqCst);
    }
}

/// A run between its "started" and its completed audit line. Dropped with `cancelled` still
/// set (the run's future was dropped), it writes that record, stamped when it ended, with how
/// long it ran.
struct Running<'a> {
    log: &'a AuditLog,
    cancelled: Option<Record>,
    started: std::time::Instant,
    _counted: InFlight,
}

impl Running<'_> {
    fn enter(log: &AuditLog, cancelled: Record) -> Running<'_> {
        Running {
            log,
            cancelled: Some(cancelled),
            started: std::time::Instant::now(),
            _counted: InFlight::enter(),
        }
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        if let Some(mut rec) = self.cancelled.take() {
            rec.ts = crate::audit::timestamp(std::time::SystemTime::now());
            rec.end.duration_ms = Some(self.started.elapsed().as_millis() as u64);
            self.log.write_or_warn(&rec);
        }
    }
}

/// Wait (up to `limit`) until everything [`InFlight`] is waiting for the user, if anything:
/// after [`crate::exec::interrupt`], so that skillpipe exits with every interrupted run
/// audited and reported.
pub(crate) async fn wait_idle(limit: Duration) {
    let deadline = tokio::time::Instant::now() + limit;
    while IN_FLIGHT.load(SeqCst) > ASKING.load(SeqCst) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
