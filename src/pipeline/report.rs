//! The typed report of how a directive (or tool call) ended, in the one wording the filter, the
//! chat loop, the REPL and MCP results share; and the one rule for the text a capture hands back.

use crate::audit::Decision;
use crate::dispatch::Outcome;
use std::fmt;

/// How a directive (or tool call) ended, as a front end shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReportKind {
    /// Ran and exited 0.
    Ran,
    /// Ran and failed: exit code, signal or timeout (see [`Report::detail`]).
    Failed,
    /// Refused by the policy (or the sandbox could not be set up).
    Blocked,
    /// The user said no, or there was no terminal to ask.
    Declined,
    /// Not a runnable command (syntax, unknown script, not found).
    Invalid,
    /// A run-time note about a run that went ahead (e.g. output cut at `max_output_bytes`, or
    /// a change in a writable path that another program may run later).
    Warning,
    /// What a run wrote in its writable paths that nothing flagged (see `sandbox::changes`).
    Wrote,
}

/// One line's worth about a directive: what it was, how it ended, and why. Front ends choose
/// colours and prefixes from [`Report::kind`]; [`fmt::Display`] gives the one wording.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Report {
    /// How it ended.
    pub kind: ReportKind,
    /// The directive as written (`%{say hi}`) or `tool NAME`, on one line.
    pub what: String,
    /// The reason, exit status or warning text; empty for a plain success.
    pub detail: String,
    /// What the user might do about a failure (e.g. a sandbox setting to change).
    pub hint: Option<String>,
}

/// Widest a directive is shown in a report, in columns.
const MAX_WHAT_COLUMNS: usize = 240;

impl Report {
    /// True for anything `--strict` counts: blocked, declined, invalid or failed.
    pub fn is_problem(&self) -> bool {
        !matches!(
            self.kind,
            ReportKind::Ran | ReportKind::Warning | ReportKind::Wrote
        )
    }

    /// The reports for one outcome: its warnings, then how it ended.
    pub(crate) fn for_outcome(what: &[u8], outcome: &Outcome) -> Vec<Report> {
        // As the confirmation prompt shows a command: controls escaped, a long run of blanks
        // folded and counted, a very long directive cut in the middle with a count, so one
        // status line never fills the screen.
        let what = crate::confirm::shown::text(&String::from_utf8_lossy(what), MAX_WHAT_COLUMNS);
        let mut out = Vec::new();
        if let Outcome::Ran(ran) = outcome {
            let (flagged, wrote) = ran.result.changes.report();
            let notes = (ran.result.warnings.iter().cloned().chain(flagged))
                .map(|w| (ReportKind::Warning, w))
                .chain(wrote.map(|w| (ReportKind::Wrote, w)));
            for (kind, detail) in notes {
                out.push(Report {
                    kind,
                    what: what.clone(),
                    detail,
                    hint: None,
                });
            }
        }
        let hint = match outcome {
            Outcome::Ran(ran) if !ran.result.success() => {
                ran.result.advice.as_ref().map(|a| a.hint.clone())
            }
            _ => None,
        };
        let (kind, detail) = match outcome {
            Outcome::Blocked {
                decision, reason, ..
            } => {
                let kind = match decision {
                    Decision::Invalid => ReportKind::Invalid,
                    Decision::Declined => ReportKind::Declined,
                    // It started and was stopped (an interruption killed it): not a refusal.
                    Decision::Ran => ReportKind::Failed,
                    _ => ReportKind::Blocked,
                };
                (kind, reason.clone())
            }
            Outcome::Ran(ran) if ran.result.success() => (ReportKind::Ran, String::new()),
            Outcome::Ran(ran) => (ReportKind::Failed, failure_text(&ran.result)),
        };
        out.push(Report {
            kind,
            what,
            detail,
            hint,
        });
        out
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word = match self.kind {
            ReportKind::Ran => return write!(f, "ran {}", self.what),
            ReportKind::Failed => "failed",
            ReportKind::Blocked => "blocked",
            ReportKind::Declined => "declined",
            ReportKind::Invalid => "invalid",
            ReportKind::Warning => return write!(f, "warning: {}", self.detail),
            ReportKind::Wrote => return write!(f, "{}", self.detail),
        };
        if self.detail.is_empty() {
            write!(f, "{word}: {}", self.what)?;
        } else {
            write!(f, "{word}: {}: {}", self.what, self.detail)?;
        }
        match &self.hint {
            Some(h) => write!(f, "\n  {h}"),
            None => Ok(()),
        }
    }
}

/// How a run ended, in the words both modes use: `exit N`, `killed by SIGNAME`, `timed out`.
pub fn status_text(r: &crate::exec::RunResult) -> String {
    match (&r.signal, r.timed_out) {
        (_, true) => "timed out".to_string(),
        (Some(sig), _) => format!("killed by {sig}"),
        (None, _) => format!("exit {}", r.exit_code),
    }
}

/// Why a run failed, for the user: [`status_text`], and for a plain exit the last line of its
/// stderr (usually the reason), sanitized and cut to 200 characters.
fn failure_text(r: &crate::exec::RunResult) -> String {
    let status = status_text(r);
    match (r.signal.is_none() && !r.timed_out)
        .then(|| last_line(&r.stderr))
        .flatten()
    {
        Some(why) => format!("{status}: {why}"),
        None => status,
    }
}

/// The last non-blank line of a command's stderr, sanitized and cut to 200 characters.
fn last_line(stderr: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(stderr);
    let line = text.lines().rev().map(str::trim).find(|l| !l.is_empty())?;
    Some(crate::command::cut_chars(&crate::term::sanitize(line), 201))
}

/// The text a capture hands back: the command's stdout with trailing newlines (`\n` or
/// `\r\n`) removed, as shell command substitution does; nothing when it did not run.
pub fn capture_text(outcome: &Outcome) -> &[u8] {
    match outcome {
        Outcome::Ran(ran) => {
            let mut out = &ran.result.stdout[..];
            while let Some(rest) = out.strip_suffix(b"\n") {
                out = rest.strip_suffix(b"\r").unwrap_or(rest);
            }
            out
        }
        Outcome::Blocked { .. } => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::Ran;
    use crate::exec::RunResult;

    fn ran(exit_code: i32, stdout: &[u8]) -> Outcome {
        Outcome::Ran(Ran {
            result: RunResult {
                exit_code,
                stdout: stdout.to_vec(),
                ..RunResult::default()
            },
            skill: None,
            script_path: None,
            cut: Box::default(),
        })
    }

    /// A run's flagged writes are warnings; the rest one `Wrote` line, which is no problem.
    #[test]
    fn writes_are_reported_flagged_ones_as_warnings() {
        use crate::sandbox::changes::{Change, ChangeKind, Changes, Why};
        let change = |p: &str, why: Option<Why>| Change {
            path: p.into(),
            kind: ChangeKind::Created,
            flagged: why.is_some(),
            why,
        };
        let mut o = ran(0, b"");
        if let Outcome::Ran(r) = &mut o {
            r.result.changes = Changes::new(vec![
                change("/p/.envrc", Some(Why::DotName)),
                change("/p/out/a.csv", None),
                change("/p/out/b.csv", None),
            ]);
        }
        let reports = Report::for_outcome(b"%{x}", &o);
        let kinds: Vec<_> = reports.iter().map(|r| r.kind.clone()).collect();
        assert_eq!(
            kinds,
            [ReportKind::Warning, ReportKind::Wrote, ReportKind::Ran]
        );
        assert!(reports[0].detail.contains("/p/.envrc (a dot-file"));
        assert_eq!(
            reports[1].to_string(),
            "the run created /p/out/a.csv, created /p/out/b.csv"
        );
        assert!(!reports.iter().any(Report::is_problem));
    }

    #[test]
    fn capture_text_drops_trailing_newlines_of_both_kinds() {
        assert_eq!(capture_text(&ran(0, b"a\r\n\n\r\n")), b"a");
        assert_eq!(capture_text(&ran(0, b"a\nb\n")), b"a\nb");
        assert_eq!(capture_text(&ran(0, b"a\r")), b"a\r");
        let blocked = Outcome::Blocked {
            decision: Decision::Denied,
            reason: "no".into(),
            for_model: "no".into(),
            denied: None,
        };
        assert_eq!(capture_text(&blocked), b"");
    }

    #[test]
    fn a_failure_says_why_with_its_last_stderr_line() {
        assert_eq!(
            last_line(b"warming up\nno speech engine found\n\n").as_deref(),
            Some("no speech engine found")
        );
        assert_eq!(
            last_line(b"bad \x1b]0;title\x07\n").as_deref(),
            Some("bad ␛]0;title␇")
        );
        assert_eq!(last_line(b" \n"), None);
        assert_eq!(
            last_line("x".repeat(300).as_bytes())
                .unwrap()
                .chars()
                .count(),
            201
        );
    }

    #[test]
    fn one_wording_for_every_outcome() {
        let show = |o: &Outcome| {
            Report::for_outcome(b"!{x \"a\nb\"}", o)
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(show(&ran(0, b"")), ["ran !{x \"a␊b\"}"]);
        assert_eq!(show(&ran(3, b"")), ["failed: !{x \"a␊b\"}: exit 3"]);
        let blocked = Outcome::Blocked {
            decision: Decision::Declined,
            reason: "the user said no".into(),
            for_model: "the user said no".into(),
            denied: None,
        };
        let r = Report::for_outcome(b"%{x}", &blocked);
        assert_eq!(r[0].kind, ReportKind::Declined);
        assert!(r[0].is_problem());
        assert_eq!(r[0].to_string(), "declined: %{x}: the user said no");
    }
}
