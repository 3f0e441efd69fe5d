//! Audit log: one JSON line per decision (DESIGN §3).
//!
//! Each line is written with a single `write` on a file opened with `O_APPEND`, so lines from
//! concurrent skillpipe processes never interleave.

use serde::Serialize;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::command::cut_chars;
pub(crate) use crate::policy::Decision;

/// Longest argument in a record, in characters; a longer one is cut to this length, its last
/// character replaced by `…`.
const MAX_ARG_CHARS: usize = 256;

/// One audit line.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Record {
    /// When (RFC 3339, UTC, milliseconds).
    pub ts: String,
    /// The agent in use, if any.
    pub agent: Option<String>,
    /// The skill whose script it was, if any.
    pub skill: Option<String>,
    /// The command (arguments cut to 256 characters).
    pub argv: Vec<String>,
    /// Each argument that was cut: which, its whole length and digest.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub argv_cut: Vec<Cut>,
    /// JSON input given on stdin (a tool's arguments), cut like an argument.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdin: Option<String>,
    /// The stdin input's whole length and digest, when it was cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdin_cut: Option<Cut>,
    /// Where it came from: `side_effect`, `capture`, `run` or `tool`.
    pub kind: &'static str,
    /// What was decided.
    pub decision: Decision,
    /// How it ended.
    #[serde(flatten)]
    pub end: End,
}

/// How a decision ended: all empty on a refusal but its reason (and bound); set by a run.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct End {
    /// Why it was refused, or a note about the run (timed out, cancelled).
    pub reason: Option<String>,
    /// For a refusal at a per-answer bound: the policy key of the bound
    /// (`max_captures_per_turn`, `max_side_effects_per_turn`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<&'static str>,
    /// Exit code, when it ran.
    pub exit_code: Option<i32>,
    /// The signal that killed it, e.g. `SIGSEGV`.
    pub signal: Option<String>,
    /// How long it ran.
    pub duration_ms: Option<u64>,
    /// Bytes it wrote to stdout.
    pub bytes_out: Option<u64>,
    /// Bytes it wrote to stderr.
    pub bytes_err: Option<u64>,
    /// Some output was dropped at `max_output_bytes`.
    pub truncated: bool,
    /// The restrictions in force, when it ran.
    pub sandbox: Option<String>,
    /// The kernel killed some of its processes for going over `max_memory_mb` (as the run's
    /// memory cgroup counts them).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub oom_killed: bool,
    /// For a run: "started" (written before the command starts, so a run whose skillpipe is
    /// killed still leaves a trace) or "completed". Absent on refusals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<&'static str>,
    /// What the run created, changed, deleted or re-moded in its writable paths.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<crate::sandbox::changes::Change>,
    /// The walk for [`Self::changes`] stopped at its bound.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub changes_bound_hit: bool,
}

impl Record {
    /// A record stamped now, of `argv` and its `stdin` input (JSON), each cut to
    /// [`MAX_ARG_CHARS`]; the caller fills in the rest.
    pub fn new(
        kind: &'static str,
        decision: Decision,
        argv: &[String],
        stdin: Option<&[u8]>,
    ) -> Record {
        Record {
            ts: timestamp(SystemTime::now()),
            agent: None,
            skill: None,
            argv: argv.iter().map(|a| cut_chars(a, MAX_ARG_CHARS)).collect(),
            argv_cut: cuts(argv),
            stdin: stdin.map(|b| cut_chars(&String::from_utf8_lossy(b), MAX_ARG_CHARS)),
            stdin_cut: stdin.and_then(|b| Cut::of(None, b)),
            kind,
            decision,
            end: End::default(),
        }
    }
}

/// What the log keeps of a value it cut: the whole value's length and sha256, so that what
/// ran can be told from what the log shows (a long harmless start hides nothing after it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cut {
    /// Which argument (0 is the program); absent for the stdin input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arg: Option<usize>,
    /// Its length in characters (as the cut counts them).
    pub chars: usize,
    /// Its length in bytes.
    pub bytes: usize,
    /// `sha256:` and the hex digest of its bytes.
    pub sha256: String,
}

impl Cut {
    /// The record of `value` (argument `arg`, or stdin) when it is longer than the log keeps.
    fn of(arg: Option<usize>, value: &[u8]) -> Option<Cut> {
        let text = String::from_utf8_lossy(value);
        text.chars().nth(MAX_ARG_CHARS)?;
        let digest = ring::digest::digest(&ring::digest::SHA256, value);
        let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
        Some(Cut {
            arg,
            chars: text.chars().count(),
            bytes: value.len(),
            sha256: format!("sha256:{hex}"),
        })
    }
}

/// The arguments of `argv` the log cuts, each with its length and digest.
pub fn cuts(argv: &[String]) -> Vec<Cut> {
    argv.iter()
        .enumerate()
        .filter_map(|(i, a)| Cut::of(Some(i), a.as_bytes()))
        .collect()
}

/// Why the audit log could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuditError {
    /// Nowhere to log.
    #[error("no audit log location (set XDG_STATE_HOME or HOME, or give AuditLog::new a path)")]
    NoLocation,
    /// Creating, opening or writing the file failed.
    #[error("audit log {}: {source}", .path.display())]
    Io {
        /// The log file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Only part of a line was written.
    #[error("audit log: short write ({written} of {len} bytes)")]
    ShortWrite {
        /// Bytes written.
        written: usize,
        /// Bytes of the line.
        len: usize,
    },
    /// The record could not be encoded.
    #[error("audit log: cannot encode the record: {0}")]
    Encode(String),
    /// The file at the log's path is no longer the one skillpipe opened: moved, renamed or
    /// replaced (a script can rename a folder above it in a writable path). Lines go on in the
    /// file skillpipe opened, wherever it is now.
    #[error(
        "audit log {}: moved or replaced while skillpipe ran (a script in a writable path may \
         have done it); the file there now is not the log, and its lines go on in the file \
         skillpipe opened: look for it before trusting {}",
        .path.display(),
        .path.display()
    )]
    Moved {
        /// The log file.
        path: PathBuf,
    },
}

/// Told about a failed best-effort write.
type WarningSink = dyn Fn(&AuditError) + Send + Sync;

/// The append-only log. Opening is lazy so a run that decides nothing creates no file.
pub struct AuditLog {
    path: Option<PathBuf>,
    file: Mutex<Option<File>>,
    warned: std::sync::atomic::AtomicBool,
    /// Told (once) when a best-effort write fails; the library itself prints nothing.
    on_warning: Option<Box<WarningSink>>,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog")
            .field("path", &self.path)
            .finish()
    }
}

impl AuditLog {
    /// `path` None means there is nowhere to log (no HOME and no XDG_STATE_HOME).
    pub fn new(path: Option<PathBuf>) -> AuditLog {
        AuditLog {
            path,
            file: Mutex::new(None),
            warned: Default::default(),
            on_warning: None,
        }
    }

    /// Calls `f` with the first failure of a best-effort write (the `skillpipe` binary prints
    /// it as a warning). Without it such a failure is dropped: the run goes on unlogged, as
    /// `audit = "best-effort"` says; `audit = "required"` refuses instead.
    pub fn on_warning(mut self, f: impl Fn(&AuditError) + Send + Sync + 'static) -> AuditLog {
        self.on_warning = Some(Box::new(f));
        self
    }

    /// Where the log is appended, if anywhere.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Opens the log now (making it, mode 0600, if there is none yet), and checks that its path
    /// still leads to the file opened. A run calls it before its sandbox is built, so that the
    /// log is there to be hidden from the script like skillpipe's other files; `audit =
    /// "required"` refuses the run on an error.
    pub fn check_writable(&self) -> Result<(), AuditError> {
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        let f = self.open(&mut file)?;
        self.still_in_place(f)
    }

    /// `Moved` when the log's path does not lead to `file` (compared by device and inode).
    fn still_in_place(&self, file: &File) -> Result<(), AuditError> {
        use std::os::unix::fs::MetadataExt;
        let Some(path) = &self.path else {
            return Ok(());
        };
        let id = |m: &std::fs::Metadata| (m.dev(), m.ino());
        match (file.metadata(), std::fs::metadata(path)) {
            (Ok(open), Ok(there)) if id(&open) == id(&there) => Ok(()),
            // What cannot be looked at is reported by the writes themselves.
            (Err(_), _) => Ok(()),
            _ => Err(AuditError::Moved { path: path.clone() }),
        }
    }

    fn open<'a>(&self, slot: &'a mut Option<File>) -> Result<&'a mut File, AuditError> {
        if slot.is_none() {
            let path = self.path.as_ref().ok_or(AuditError::NoLocation)?;
            let io = |source| AuditError::Io {
                path: path.clone(),
                source,
            };
            use std::os::unix::fs::OpenOptionsExt;
            // The log holds every command and its input: for the user's eyes only.
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                crate::paths::create_private_dirs(dir).map_err(io)?;
            }
            let f = OpenOptions::new()
                .append(true)
                .create(true)
                .mode(0o600)
                .open(path)
                .map_err(io)?;
            *slot = Some(f);
        }
        Ok(slot.as_mut().expect("opened above"))
    }

    /// Appends one record. Errors are returned so `audit = "required"` callers can act on them.
    pub(crate) fn write(&self, record: &Record) -> Result<(), AuditError> {
        let mut line = serde_json::to_vec(record).map_err(|e| AuditError::Encode(e.to_string()))?;
        line.push(b'\n');
        let mut slot = self.file.lock().unwrap_or_else(|e| e.into_inner());
        let file = self.open(&mut slot)?;
        // One write call per line: O_APPEND makes it land whole at the end.
        match file.write(&line) {
            Ok(n) if n == line.len() => self.still_in_place(file),
            Ok(n) => Err(AuditError::ShortWrite {
                written: n,
                len: line.len(),
            }),
            Err(source) => Err(AuditError::Io {
                path: self.path.clone().unwrap_or_default(),
                source,
            }),
        }
    }

    /// Best-effort append: a failure is reported once, to [`AuditLog::on_warning`].
    pub(crate) fn write_or_warn(&self, record: &Record) {
        if let Err(e) = self.write(record)
            && !self.warned.swap(true, std::sync::atomic::Ordering::Relaxed)
            && let Some(f) = &self.on_warning
        {
            f(&e);
        }
    }
}

/// RFC 3339 UTC timestamp with milliseconds, without a date-time dependency.
pub(crate) fn timestamp(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, day) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// Days since 1970-01-01 → (year, month, day) in the proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps_are_rfc3339() {
        assert_eq!(timestamp(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_795_254_896_123);
        assert_eq!(timestamp(t), "2026-11-21T09:54:56.123Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(timestamp(leap), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn long_arguments_are_cut() {
        let r = Record::new(
            "capture",
            Decision::Ran,
            &["x".repeat(300), "é".repeat(256), "y".repeat(257)],
            None,
        );
        assert_eq!(r.argv[0], format!("{}…", "x".repeat(255)));
        assert_eq!(r.argv[1], "é".repeat(256), "exactly at the limit: kept");
        // The cut ones keep their whole length and digest (`printf x…x | sha256sum`).
        let arg: Vec<Option<usize>> = r.argv_cut.iter().map(|c| c.arg).collect();
        assert_eq!(arg, [Some(0), Some(2)]);
        assert_eq!((r.argv_cut[0].chars, r.argv_cut[0].bytes), (300, 300));
        assert_eq!(
            r.argv_cut[0].sha256,
            "sha256:0d4e2ca9e9cbced7a7a5380eb29e1a3783b9b6d0db72de36a1051038e1c1fbc7"
        );
        assert_eq!(r.argv[2].chars().count(), MAX_ARG_CHARS);
    }

    #[test]
    fn lines_are_appended_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/audit.jsonl");
        let log = AuditLog::new(Some(path.clone()));
        for i in 0..3 {
            let mut r = Record::new("side_effect", Decision::Denied, &[format!("cmd{i}")], None);
            r.end.reason = Some("not allowed".into());
            log.write(&r).unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[2]["argv"][0], "cmd2");
        assert_eq!(lines[0]["decision"], "denied");
    }

    #[test]
    fn a_new_log_is_private_and_a_moved_one_is_told_of() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/audit.jsonl");
        let log = AuditLog::new(Some(path.clone()));
        log.check_writable().unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&dir.path().join("state")), 0o700);
        let r = Record::new("run", Decision::Ran, &["x".to_string()], None);
        log.write(&r).unwrap();
        // Its folder renamed, and a stand-in put where it was.
        std::fs::rename(dir.path().join("state"), dir.path().join("moved")).unwrap();
        std::fs::create_dir(dir.path().join("state")).unwrap();
        std::fs::write(&path, "{\"decision\":\"FORGED\"}\n").unwrap();
        let err = log.write(&r).unwrap_err();
        assert!(matches!(err, AuditError::Moved { .. }), "{err}");
        assert!(log.check_writable().is_err());
        // Nothing lost: the line is in the file opened, not in the stand-in.
        let moved = std::fs::read_to_string(dir.path().join("moved/audit.jsonl")).unwrap();
        assert_eq!(moved.lines().count(), 2);
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 1);
    }

    #[test]
    fn unwritable_log_is_an_error() {
        let log = AuditLog::new(Some(PathBuf::from("/proc/no/such/audit.jsonl")));
        assert!(
            log.check_writable()
                .unwrap_err()
                .to_string()
                .contains("/proc/no/such")
        );
    }
}
