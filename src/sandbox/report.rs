//! What the launcher tells its parent over an inherited pipe, before it runs the command: the
//! restrictions in force, warnings, or the error that stopped it. One line per message; a
//! warning or error is a [`Message`] (the settings it names stay typed). Pure.

use super::message::Message;
use super::plan::Enforced;

/// Exit code of the launcher when it refused to run the command (like `env`'s 125).
pub const EXIT_LAUNCH_FAILED: i32 = 125;

/// Everything the launcher reported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// `None` if the launcher never got as far as reporting (it did not start, or is not
    /// skillpipe).
    pub enforced: Option<Enforced>,
    pub warnings: Vec<Message>,
    pub error: Option<Message>,
    /// The launcher joined the run's memory cgroup: `max_memory_mb` holds the run as a whole.
    pub memory_per_run: bool,
    /// Unix sockets the init's broker refused the command (not named in `allowed_sockets`).
    pub refused: Vec<std::path::PathBuf>,
}

pub fn warning_line(m: &Message) -> String {
    format!("warning {}\n", m.encode())
}

pub fn error_line(m: &Message) -> String {
    format!("error {}\n", m.encode())
}

/// Said when the launcher joined the run's memory cgroup.
pub const MEMORY_PER_RUN_LINE: &str = "memory per-run\n";

/// A socket the broker refused, as the command named it (a JSON string: one line).
pub fn refused_line(path: &[u8]) -> String {
    let text = String::from_utf8_lossy(path);
    format!("refused {}\n", serde_json::Value::from(text.as_ref()))
}

pub fn enforced_line(e: &Enforced) -> String {
    format!("enforced {}\n", e.summary())
}

/// Parse the launcher's report.
pub fn parse(bytes: &[u8]) -> Report {
    let mut report = Report::default();
    for line in String::from_utf8_lossy(bytes).lines() {
        let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
        match key {
            "warning" => report.warnings.push(Message::decode(rest)),
            "error" => report.error = Some(Message::decode(rest)),
            "refused" => {
                if let Ok(path) = serde_json::from_str::<String>(rest) {
                    report.refused.push(path.into());
                }
            }
            "memory" => report.memory_per_run = rest == "per-run",
            "enforced" => report.enforced = Some(Enforced::from_summary(rest)),
            _ => {}
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let e = Enforced {
            network: true,
            filesystem: true,
            pids: false,
            mounts: true,
            limits: true,
        };
        let text = warning_line(&"a\nb".into()) + &enforced_line(&e) + &error_line(&"bad".into());
        let r = parse(text.as_bytes());
        assert!(!r.memory_per_run);
        assert!(parse((text + MEMORY_PER_RUN_LINE).as_bytes()).memory_per_run);
        assert_eq!(r.enforced, Some(e));
        assert_eq!(r.warnings, [Message::text("a\nb")]);
        assert_eq!(r.error, Some(Message::text("bad")));
        // Nothing reported means no launcher; nothing in force is reported as such.
        assert_eq!(parse(b"").enforced, None);
        let none = enforced_line(&Enforced::default());
        assert_eq!(parse(none.as_bytes()).enforced, Some(Enforced::default()));
    }

    #[test]
    fn a_refused_socket_crosses_the_pipe_as_one_line() {
        let line = refused_line(b"/run/a\nb.sock");
        assert_eq!(line.matches('\n').count(), 1);
        let r = parse(format!("{line}enforced network\n").as_bytes());
        assert_eq!(r.refused, [std::path::PathBuf::from("/run/a\nb.sock")]);
        assert!(r.enforced.is_some_and(|e| e.network));
    }
}
