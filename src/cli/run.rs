//! `skillpipe run SKILL SCRIPT`: run one skill script as a directive would.

use super::{AgentFlag, PolicyFlags, SkillFlags, heading, usage};
use crate::app::HintKind;
use crate::audit::Decision;
use crate::dispatch::{Origin, Outcome, result_json};
use crate::term::{for_terminal, line, sanitize};
use clap::Args;
use std::io::{IsTerminal, Write};

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Skill name.
    pub skill: String,
    /// Script: `scripts/x.py`, `x.py` or `x`.
    pub script: String,
    /// JSON given to the script on stdin.
    #[arg(long, value_name = "JSON")]
    pub input: Option<String>,
    #[command(flatten)]
    pub agent: AgentFlag,
    /// Fill `{{var}}` in the agent's instructions (K=V).
    #[arg(long = "var", value_name = "K=V", help_heading = heading::SKILLS)]
    pub vars: Vec<String>,
    /// Arguments for the script (after `--`).
    #[arg(last = true)]
    pub args: Vec<String>,
    #[command(flatten)]
    pub policy: PolicyFlags,
    #[command(flatten)]
    pub skill_flags: SkillFlags,
    /// Print the result as one JSON object: success, exit code, signal, stdout, stderr, timing.
    #[arg(long, help_heading = heading::OUTPUT)]
    pub json: bool,
}

pub const EXAMPLES: &str = "\
Examples:
  skillpipe run calc calc --skills-dir skills --allow-scripts -y -- \"2 ** 10\"
  skillpipe run lookup lookup --skills-dir skills --json --allow-scripts -y -- serendipity
  skillpipe run data stats --json --allow-scripts -- --input-path x.csv";

pub fn run(args: RunArgs) -> anyhow::Result<i32> {
    let json = args.json;
    match run_inner(args) {
        Ok(code) => Ok(code),
        Err(e) => {
            // `--json` promises one JSON object on stdout, whatever happened.
            if json {
                let doc = serde_json::json!({"success": false, "error": format!("{e:#}")});
                writeln!(std::io::stdout(), "{}", serde_json::to_string_pretty(&doc)?)?;
            }
            Err(e)
        }
    }
}

/// Whether a command line the parser refused asked for `run --json` (`run` and the flag, in
/// any form, before a `--`; global flags may come first): its one JSON object is owed even
/// then.
pub fn json_requested(args: &[String]) -> bool {
    let before: Vec<&String> = args.iter().take_while(|a| *a != "--").collect();
    before.iter().any(|a| *a == "run")
        && before
            .iter()
            .any(|a| *a == "--json" || a.starts_with("--json="))
}

fn run_inner(args: RunArgs) -> anyhow::Result<i32> {
    let input: Option<serde_json::Value> = match &args.input {
        Some(text) => match serde_json::from_str(text) {
            Ok(v) => Some(v),
            Err(e) => return invalid_run(&args, format!("--input is not valid JSON: {e}"), None),
        },
        None => None,
    };
    // The one skill named: warnings about others (duplicates, skipped ones) are not this run's.
    let mut config = args.policy.app_config(
        &args.skill_flags,
        &[],
        args.agent.agent.as_deref(),
        &args.vars,
    );
    config.warn_only_about = vec![args.skill.clone()];
    let setup = crate::app::build(&config, crate::app::Asking::Default)?;
    super::warn_all(&setup.warnings);
    let dispatcher = setup.dispatcher;
    let resolved = match dispatcher.skills().resolve_in(&args.skill, &args.script) {
        Ok(r) => r,
        Err(e) => return not_resolved(&args, &config.skills_dirs, &dispatcher, e),
    };
    // A tool is run by its id, so that its input, timeout and env apply.
    let target = crate::chat::tools::target_of(&resolved);
    let mut argv = vec![target.reference.clone()];
    let stdin = match input {
        // Read as a native tool call's arguments: with or without the `input` wrapper, and
        // a plain script's `args` before the ones after `--`.
        Some(value @ serde_json::Value::Object(_)) => {
            match crate::chat::tools::parse_arguments(&value.to_string(), &target) {
                Ok((json_args, stdin)) => {
                    argv.extend(json_args);
                    stdin
                }
                Err(e) => return invalid_run(&args, format!("--input: {e}"), None),
            }
        }
        // Not an object (a list, a string): no wrapper to take off, given as it is.
        Some(other) => Some(serde_json::to_vec(&other)?),
        None => None,
    };
    argv.extend(args.args.iter().cloned());
    let rt = crate::app::runtime()?;
    if args.json {
        // One JSON object on stdout even when a signal stops the run.
        super::interrupt::on_stop(|signal| {
            // The keys of a result (the run's own output is not kept when it is cut short).
            let doc = serde_json::json!({
                "success": false,
                "exit_code": null,
                "signal": signal,
                "stdout": "",
                "stderr": "",
                "error": format!("stopped by {signal}"),
                "interrupted": signal,
            });
            let _ = writeln!(std::io::stdout(), "{doc}");
        });
    }
    super::interrupt::install(&rt)?;
    let outcome = rt.block_on(dispatcher.run_argv(Origin::Run, argv, stdin));
    if let Some(code) = super::interrupt::exit_code(&rt) {
        return Ok(code);
    }
    // One JSON object: from here on the result, not a signal's, is it (and after a signal's,
    // nothing).
    let _printing = match args.json {
        true => match super::interrupt::claim_last_words() {
            Some(guard) => Some(guard),
            None => return Ok(crate::exec::interrupted_by().map_or(1, |sig| 128 + sig)),
        },
        false => None,
    };
    print_outcome(&args, outcome)
}

/// A step of `run_inner`: a skill or script that does not resolve, audited (the name may
/// come from a model) and said with a hint when one applies.
fn not_resolved(
    args: &RunArgs,
    skills_dirs: &[std::path::PathBuf],
    dispatcher: &crate::dispatch::Dispatcher,
    e: crate::skills::ResolveError,
) -> anyhow::Result<i32> {
    // The script name may come from a model (an agent harness): audit the refusal.
    let mut argv = vec![format!("{}/{}", args.skill, args.script)];
    argv.extend(args.args.iter().cloned());
    dispatcher.refuse(Origin::Run, &argv, Decision::Invalid, e.to_string());
    // The same hint in both forms: as a typed field of the JSON, appended to the text.
    let searched =
        (dispatcher.skills().is_empty()).then(|| crate::trust::skill_search_path(skills_dirs));
    let hint =
        crate::app::unknown_skill_hint(std::slice::from_ref(&args.skill), searched.as_deref());
    invalid_run(args, e.to_string(), hint)
}

/// A step of `run_inner`: the outcome shown (the script's output, or why it did not run)
/// and its exit code.
fn print_outcome(args: &RunArgs, outcome: Outcome) -> anyhow::Result<i32> {
    match outcome {
        Outcome::Ran(ran) => {
            let r = &ran.result;
            let (flagged, wrote) = r.changes.report();
            for w in r.warnings.iter().chain(&flagged) {
                line::status(&format!("skillpipe: warning: {}", sanitize(w)));
            }
            if let Some(w) = wrote {
                line::status(&format!("skillpipe: {}", sanitize(&w)));
            }
            // The script's output is foreign: inert on a terminal, exact on a pipe.
            let tty_out = std::io::stdout().is_terminal();
            let mut out = line::Noted::new(std::io::stdout(), line::Stream::Stdout);
            if args.json {
                let text = serde_json::to_string_pretty(&result_json(&ran))? + "\n";
                out.write_all(&for_terminal(text.as_bytes(), tty_out))?;
            } else {
                out.write_all(&for_terminal(&r.stdout, tty_out))?;
                out.flush()?;
                let tty_err = std::io::stderr().is_terminal();
                line::stderr_raw(&for_terminal(&r.stderr, tty_err));
                if let Some(a) = &r.advice {
                    line::status(&format!("skillpipe: {}", sanitize(&a.hint)));
                }
            }
            // A signal death maps to 128 + N as in a shell.
            Ok(if r.exit_code < 0 {
                128 - r.exit_code
            } else {
                r.exit_code
            })
        }
        Outcome::Blocked {
            decision, reason, ..
        } => {
            if args.json {
                print_refusal(decision, &reason, None)?;
            }
            line::status(&format!("skillpipe: not run: {}", sanitize(&reason)));
            Ok(super::EXIT_STRICT)
        }
    }
}

/// A run that is invalid (an `--input` that cannot be given to the script, a skill or script
/// that does not resolve), with the hint the text appends: with `--json`, the refusal object
/// (as a model's bad tool call is); else a usage error.
fn invalid_run(
    args: &RunArgs,
    why: String,
    hint: Option<(HintKind, String)>,
) -> anyhow::Result<i32> {
    let text = crate::app::with_hint(&why, hint.as_ref());
    if !args.json {
        return Err(usage(text));
    }
    print_refusal(Decision::Invalid, &why, hint.as_ref())?;
    eprintln!("skillpipe: {}", sanitize(&text));
    Ok(super::EXIT_USAGE)
}

/// The `--json` object of a command that did not run: `refused` says why, `decision` is the
/// audit log's (`denied`, `declined`, `invalid`); with the hint the text form appends, `hint`
/// (the same words) and `hint_kind`.
fn print_refusal(
    decision: Decision,
    reason: &str,
    hint: Option<&(HintKind, String)>,
) -> anyhow::Result<()> {
    let mut doc = serde_json::json!({
        "success": false,
        "decision": decision,
        "refused": reason,
    });
    if let Some((kind, text)) = hint {
        doc["hint"] = serde_json::Value::String(text.clone());
        doc["hint_kind"] = serde_json::to_value(kind)?;
    }
    writeln!(std::io::stdout(), "{}", serde_json::to_string_pretty(&doc)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn json_is_requested_by_run_with_the_flag_before_the_scripts_arguments() {
        for (args, json) in [
            ("run s x --json", true),
            ("run --json --workdir b", true),
            ("run s x -- --json", false),
            ("filter --json", false),
            ("--skills-dir c run --json --bogus", true),
            ("run --json=true x", true),
        ] {
            let args: Vec<String> = args.split(' ').map(String::from).collect();
            assert_eq!(super::json_requested(&args), json, "{args:?}");
        }
    }
}
