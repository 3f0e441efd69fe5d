//! `skillpipe run SKILL SCRIPT`: run one skill script as a directive would.

use super::{PolicyFlags, SkillFlags, usage};
use crate::audit::Decision;
use crate::dispatch::{Origin, Outcome, result_json};
use crate::term::{for_terminal, sanitize};
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
    /// Print the result as JSON (DESIGN §3).
    #[arg(long)]
    pub json: bool,
    /// Arguments for the script (after `--`).
    #[arg(last = true)]
    pub args: Vec<String>,
    #[command(flatten)]
    pub policy: PolicyFlags,
    #[command(flatten)]
    pub skill_flags: SkillFlags,
}

pub fn run(args: RunArgs) -> anyhow::Result<i32> {
    let stdin = match &args.input {
        Some(text) => {
            let value: serde_json::Value = serde_json::from_str(text)
                .map_err(|e| usage(format!("--input is not valid JSON: {e}")))?;
            Some(serde_json::to_vec(&value)?)
        }
        None => None,
    };
    let setup = super::setup::build(&args.policy, &args.skill_flags, None, &[])?;
    let dispatcher = setup.dispatcher;
    let resolved = match dispatcher.skills().resolve_in(&args.skill, &args.script) {
        Ok(r) => r,
        Err(e) => {
            // The script name may come from a model (an agent harness): audit the refusal.
            let mut argv = vec![format!("{}/{}", args.skill, args.script)];
            argv.extend(args.args.iter().cloned());
            dispatcher.refuse(Origin::Run, &argv, Decision::Invalid, e.to_string());
            return Err(usage(e.to_string()));
        }
    };
    let mut argv = vec![format!("{}/{}", resolved.skill, resolved.rel_path)];
    argv.extend(args.args.iter().cloned());
    let rt = super::setup::runtime()?;
    super::interrupt::install(&rt)?;
    let outcome = rt.block_on(dispatcher.run_argv(Origin::Run, argv, stdin));
    if let Some(code) = super::interrupt::exit_code(&rt) {
        return Ok(code);
    }
    match outcome {
        Outcome::Ran(ran) => {
            let r = &ran.result;
            for w in &r.warnings {
                eprintln!("skillpipe: warning: {}", sanitize(w));
            }
            // The script's output is foreign: inert on a terminal, exact on a pipe.
            let tty_out = std::io::stdout().is_terminal();
            if args.json {
                let text = serde_json::to_string_pretty(&result_json(&ran))? + "\n";
                std::io::stdout().write_all(&for_terminal(text.as_bytes(), tty_out))?;
            } else {
                std::io::stdout().write_all(&for_terminal(&r.stdout, tty_out))?;
                let tty_err = std::io::stderr().is_terminal();
                std::io::stderr().write_all(&for_terminal(&r.stderr, tty_err))?;
                if let Some(h) = &r.hint {
                    eprintln!("skillpipe: {}", sanitize(h));
                }
            }
            Ok(exit_code_of(r))
        }
        Outcome::Blocked { reason, .. } => {
            eprintln!("skillpipe: not run: {}", sanitize(&reason));
            Ok(super::EXIT_STRICT)
        }
    }
}

/// The script's own exit code; a signal death maps to 128 + N as in a shell.
fn exit_code_of(r: &crate::exec::RunResult) -> i32 {
    if r.exit_code < 0 {
        128 - r.exit_code
    } else {
        r.exit_code
    }
}
