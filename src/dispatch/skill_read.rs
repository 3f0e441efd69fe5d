//! `skill NAME [FILE [PAGE]]`: a loaded skill read by skillpipe itself, no process started,
//! audited like a run.

use super::{Dispatcher, Origin, Outcome, Ran};
use crate::audit::Decision;
use crate::command::{self, Target};
use crate::exec::RunResult;
use crate::policy;
use crate::scan::SKILL_READ;
use std::time::Duration;

/// Room kept in a page of a skill file for the note that names the next page.
const PAGE_NOTE_ROOM: usize = 200;

pub(super) fn is_builtin_skill(argv: &[String]) -> bool {
    argv.first().is_some_and(|a| a == SKILL_READ)
}

impl Dispatcher {
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
            program: SKILL_READ,
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
        let end = &mut rec.end;
        end.exit_code = Some(0);
        end.duration_ms = Some(took.as_millis() as u64);
        end.bytes_out = Some(bytes as u64);
        end.bytes_err = Some(0);
        end.truncated = truncated;
        end.reason = Some("built-in: read by skillpipe, no process".into());
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
        let argv = [SKILL_READ.to_owned(), skill.to_owned(), rel.to_owned()];
        if let Some(Outcome::Blocked { reason, .. }) = self.skill_read_denied(origin, &argv, skill)
        {
            return Err(reason);
        }
        self.record_skill_read(origin, &argv, skill, bytes, Duration::ZERO, false);
        Ok(())
    }
}
