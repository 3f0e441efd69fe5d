//! `skillpipe filter`: model output on stdin, processed text on stdout.

use super::{SessionFlags, SkillFlags, heading};
use clap::Args;
use std::io::IsTerminal;

#[derive(Debug, Clone, Args)]
pub struct FilterArgs {
    #[command(flatten)]
    pub session: SessionFlags,
    #[command(flatten)]
    pub skill_flags: SkillFlags,
    /// Also run directives inside Markdown code.
    #[arg(long, help_heading = heading::POLICY)]
    pub exec_in_code: bool,
    /// Exit 3 if any directive was blocked, invalid or failed.
    #[arg(long, help_heading = heading::OUTPUT)]
    pub strict: bool,
    /// Keep a directive that did not run (refused or invalid) in the output as the exact text
    /// it was, instead of stripping it; side effects then run one at a time.
    #[arg(long)]
    pub keep_refused: bool,
    /// Copy the output of side effects to stderr.
    #[arg(long, help_heading = heading::OUTPUT)]
    pub show_side_effects: bool,
    /// Write the output byte for byte even to a terminal (the default on a pipe or file).
    #[arg(long, conflicts_with = "sanitize", help_heading = heading::OUTPUT)]
    pub raw: bool,
    /// Show every terminal control in the output visibly escaped, even on a pipe (the default
    /// on a terminal).
    #[arg(long, help_heading = heading::OUTPUT)]
    pub sanitize: bool,
}

pub const EXAMPLES: &str = "\
Examples:
  printf 'Hi %%{echo x} !{echo there}\\n' | skillpipe filter --allow echo -y
  skillpipe filter --skills-dir skills --allow-scripts -y < examples/answer.md
  llm 'What is 12*37? Use !{scripts/calc.py EXPR}' | skillpipe filter --allow-scripts";

pub fn run(args: FilterArgs) -> anyhow::Result<i32> {
    let config = args.session.app_config(&args.skill_flags, &[]);
    let setup = crate::app::build(&config, crate::app::Asking::Default)?;
    super::warn_all(&setup.warnings);
    let rt = crate::app::runtime()?;
    super::interrupt::install(&rt)?;
    let opts = crate::filter::FilterOptions {
        scan: crate::scan::ScanOptions {
            exec_in_code: args.exec_in_code,
            ..Default::default()
        },
        sanitize: args.sanitize || (!args.raw && std::io::stdout().is_terminal()),
        keep_refused: args.keep_refused,
    };
    let reporter = std::sync::Arc::new(Stderr {
        show_side_effects: args.show_side_effects,
    });
    // Typed input on the terminal is read only while no confirmation prompt is up.
    let input = crate::confirm::TtyInput::new(raw_stdin()?);
    let report = crate::filter::run(
        rt.handle(),
        setup.dispatcher,
        opts,
        input,
        raw_stdout()?,
        reporter,
    )?;
    if let Some(code) = super::interrupt::exit_code(&rt) {
        return Ok(code);
    }
    Ok(if args.strict && report.problems {
        super::EXIT_STRICT
    } else {
        super::EXIT_OK
    })
}

/// Notices on stderr, one line each (`skillpipe: blocked: %{…}: why`).
struct Stderr {
    show_side_effects: bool,
}

impl crate::filter::Reporter for Stderr {
    fn report(&self, report: &crate::pipeline::Report) {
        // A success is not worth a line in a filter's stderr; everything else is.
        // Reasons and warnings may quote foreign text (a path, a program's name): shown inert.
        if report.kind != crate::pipeline::ReportKind::Ran {
            let text = report.to_string();
            let text = crate::term::sanitize(&text);
            crate::term::line::status(&format!("skillpipe: {text}"));
        }
    }

    fn side_effect_output(&self, stdout: &[u8], stderr: &[u8]) {
        if self.show_side_effects {
            let tty = std::io::stderr().is_terminal();
            for bytes in [stdout, stderr] {
                crate::term::line::stderr_raw(&crate::term::for_terminal(bytes, tty));
            }
        }
    }
}

/// Stdin without `Stdin`'s lock and buffer: the filter reads big chunks itself.
fn raw_stdin() -> anyhow::Result<std::fs::File> {
    use anyhow::Context;
    use std::os::fd::{AsFd, AsRawFd};
    use std::os::unix::fs::FileTypeExt;
    let fd = std::io::stdin().as_fd().try_clone_to_owned();
    let file = std::fs::File::from(fd.context("stdin")?);
    // A pipe's buffer is 64 KiB by default; one as big as a read chunk means fewer, fuller reads
    // and fewer wake-ups at both ends. Only ever grown, and best effort: the kernel may refuse
    // (per-user limits).
    if file.metadata().is_ok_and(|m| m.file_type().is_fifo()) {
        let fd = file.as_raw_fd();
        let want = crate::filter::CHUNK as libc::c_int;
        // SAFETY: fcntl on a descriptor we own; these commands take an int and touch no memory.
        unsafe {
            let size = libc::fcntl(fd, libc::F_GETPIPE_SZ);
            if (0..want).contains(&size) {
                libc::fcntl(fd, libc::F_SETPIPE_SZ, want);
            }
        }
    }
    Ok(file)
}

/// Unbuffered stdout: the filter writes whole scanned chunks, so a line buffer would only add
/// system calls and delay. Recorded, so that status lines on a shared terminal start a line.
fn raw_stdout() -> anyhow::Result<impl std::io::Write> {
    use crate::term::line::{Noted, Stream};
    use anyhow::Context;
    use std::os::fd::AsFd;
    let fd = std::io::stdout().as_fd().try_clone_to_owned();
    let fd = fd.context("stdout is not open (nowhere to write the output)")?;
    Ok(Noted::new(std::fs::File::from(fd), Stream::Stdout))
}
